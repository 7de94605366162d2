"""Per-call time of the closed-chain forward-dynamics methods (``soadyn.closed.METHODS``).

Models: ``soadyn.models.four_bar_chain(k, tail)`` — k four-bar loops stacked into a
spatial chain (3k bodies, k revolute cut joints of 5 rows each, rank 2k) followed by a
serial tail. Two sweeps:

* loops: k = 1, 2, 4, 8, 16 with no tail (the tree grows with the loops);
* tree:  k = 2 loops with a tail of 0 … 512 bodies (where the O(N) augmented method
  overtakes the dense ones).

Every method registered in ``METHODS`` is timed (the best of ``--repeat`` runs of
``--number`` calls of ``constrained_forward_dynamics``: the machine is shared, the minimum
is the least disturbed), together with the constraint
evaluation alone (G_c, 𝔘̊: shared by all methods) and the tree ABA for scale. Results go
to ``benchmarks/results/closed_chain_methods.{json,md}``.

    PYTHONPATH=src python benchmarks/closed_chain_methods.py [--quick]

BLAS runs single-threaded (``OPENBLAS_NUM_THREADS=1`` unless set): the matrices are small
and spinning BLAS threads only steal the cores from the recursions.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.closed import METHODS, evaluate_constraints  # noqa: E402
from soadyn.models import four_bar_chain, four_bar_linkage  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def closed_state(k, tail, rng):
    """A consistent state: every module is the same four-bar in its own frame, so one
    closed four-bar configuration, repeated, closes all loops."""
    single = four_bar_linkage()
    q1, _ = sd.close_loops(single, [0.7, 1.0, 1.6])
    model = four_bar_chain(k, tail)
    guess = np.concatenate([np.tile(q1, k), rng.normal(size=tail) * 0.3])
    q, v = sd.close_loops(model, guess, rng.normal(size=model.nv))
    return model, q, v


def per_call(fn, number, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return float(np.min(times)) * 1e6


def measure(k, tail, number, repeat, rng):
    model, q, v = closed_state(k, tail, rng)
    number = max(5, int(number * 16 / max(16, model.nbodies)))  # keep the large sizes affordable
    tau = rng.normal(size=model.nv)
    row = {"loops": k, "tail": tail, "bodies": model.nbodies, "nv": model.nv,
           "rows": int(sd.constraint_jacobian(model, q).shape[0])}
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    row["rank"] = ref.n_independent
    tree = model.spanning_tree()  # the open tree's ABA, asked for explicitly
    row["aba_us"] = per_call(lambda: sd.aba(tree, q, v, tau), number, repeat)
    row["constraints_us"] = per_call(lambda: evaluate_constraints(model, q, v), number, repeat)
    for name in METHODS:
        res = sd.constrained_forward_dynamics(model, q, v, tau, method=name)
        assert np.allclose(res.qdd, ref.qdd, atol=1e-8 * (1 + np.abs(ref.qdd).max())), name
        row[f"{name}_us"] = per_call(lambda: sd.constrained_forward_dynamics(model, q, v, tau, method=name),
                                     number, repeat)
    return row


def table(rows, methods):
    head = ["loops", "tail", "bodies", "nv", "rows", "rank", "aba_us", "constraints_us"] + [f"{m}_us" for m in methods]
    lines = ["| " + " | ".join(h.replace("_us", " [µs]") for h in head) + " |",
             "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[h]:.1f}" if h.endswith("_us") else str(r[h]) for h in head) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sweep, few calls")
    ap.add_argument("--number", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    number, repeat = (20, 3) if args.quick else (args.number, args.repeat)
    loops = [1, 2, 4] if args.quick else [1, 2, 4, 8, 16]
    tails = [0, 8] if args.quick else [0, 8, 32, 128, 512]
    rng = np.random.default_rng(0)
    methods = list(METHODS)
    sweeps = {"loops": [measure(k, 0, number, repeat, rng) for k in loops],
              "tree": [measure(2, t, number, repeat, rng) for t in tails]}
    meta = {"methods": methods, "number": number, "repeat": repeat, "python": platform.python_version(),
            "machine": platform.machine(), "numpy": np.__version__, "soadyn": sd.__version__,
            "date": time.strftime("%Y-%m-%d")}
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "closed_chain_methods.json"), "w") as f:
        json.dump({"meta": meta, **sweeps}, f, indent=1)
    md = [f"# Closed-chain forward dynamics: per-call time ({meta['date']})", "",
          "Best of {repeat} runs of {number} calls (fewer above 16 bodies; single-threaded BLAS); chains of four-bar loops "
          "(`soadyn.models.four_bar_chain`). `constraints` = evaluation of G_c and the bias "
          "alone (shared by every method); `aba` = the spanning tree's unconstrained ABA.".format(**meta), "",
          "## Growing number of loops (tree grows with them)", "", table(sweeps["loops"], methods), "",
          "## Two loops, growing serial tail", "", table(sweeps["tree"], methods), ""]
    text = "\n".join(md)
    with open(os.path.join(args.output, "closed_chain_methods.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
