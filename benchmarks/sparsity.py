"""The mass-matrix sparsity of the bench robots ([Jain12, §7]): the pattern the topology
predicts (``soadyn.mass_matrix_sparsity``), the entries nonzero at 16 random
configurations, and the geometric zeros between them — entries the topology allows but
the geometry (orthogonal axes, masses on axes, the free joint's mass block) keeps at zero,
which no topological prediction can see. Writes ``results/sparsity.md`` and the picture
of one humanoid, ``results/sparsity_talos.png``.

    PYTHONPATH=src python benchmarks/sparsity.py
"""
from __future__ import annotations

import os
import time
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import soadyn as sd  # noqa: E402
from peers import ROBOTS, robot_path  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rows = ["| robot | nv | entries | allowed by the topology | nonzero at 16 samples | zero by geometry | "
            "examples (row, column: joint names) |", "|---|---|---|---|---|---|---|"]
    for name, (_, floating) in ROBOTS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mimic='ignore': the tree's M (panda's fingers independent)
            model = sd.load_urdf(robot_path(name), floating_base=floating, mimic="ignore")
        d = sd.plot.sparsity_data(model, samples=16)
        names = [None] * model.nv
        for b in model.bodies:
            for e in range(b.joint.nv):
                names[b.joint.v_index + e] = f"{b.joint.name}[{e}]" if b.joint.nv > 1 else b.joint.name
        pairs = [(r, c) for r, c in zip(*d.geometric_zeros.nonzero()) if r < c][:3]
        example = "; ".join(f"({r}, {c}: {names[r]}, {names[c]})" for r, c in pairs)
        rows.append(f"| {name} | {model.nv} | {model.nv ** 2} | {int(d.predicted.sum())} | {int(d.observed.sum())} | "
                    f"{int(d.geometric_zeros.sum())} | {example} |")
        if name == "talos":
            fig = sd.plot.sparsity(model)
            fig.savefig(os.path.join(HERE, "results", "sparsity_talos.png"), dpi=110)
            plt.close(fig)
    text = "\n".join([f"# Mass-matrix sparsity of the bench robots ({time.strftime('%Y-%m-%d')})", "",
                      "`allowed by the topology`: entries `soadyn.mass_matrix_sparsity` marks as possibly nonzero "
                      "([Jain12, §7]: the blocks of two bodies neither of which is on the other's path to the root "
                      "are zero at every configuration). Every entry it marks zero was exactly zero at every sample "
                      "(`tests/test_sparsity.py`). `zero by geometry`: allowed by the topology, yet below 1e-12 of "
                      "max |M| at all 16 random configurations (`soadyn.plot.sparsity_data`). Picture of talos: "
                      "`sparsity_talos.png` (`soadyn info FILE --sparsity`).", ""] + rows + [
                      "", "On the floating robots the geometric zeros are mostly in the free joint's own 6 × 6 "
                      "block, in body coordinates [ω; v]: the diagonal of the angular–linear block m[c]× (a "
                      "skew matrix) and the off-diagonal of the linear block, the total mass times the identity; "
                      "on the arms, pairs of joints with orthogonal axes (ur5: wrist_2 and wrist_3; "
                      "panda: joint7 and the prismatic fingers), which the examples column lists.", ""])
    with open(os.path.join(HERE, "results", "sparsity.md"), "w") as f:
        f.write(text)
    import results_json
    from timing import machine_description
    results_json.write_twin(os.path.join(HERE, "results", "sparsity.md"), machine_description())
    print(text)


if __name__ == "__main__":
    main()
