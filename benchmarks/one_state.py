"""What one model state per call costs (issue 45: every call works on one snapshot of the
model's derived data): the public calls whose path the snapshot touches, with this
tree's code and with another tree's (``--before``, e.g. the source of the commit before),
each against Pinocchio's ``aba`` on the same robot in the same process.

    PYTHONPATH=src python benchmarks/one_state.py --before /tmp/base/src [--rounds 40]

One worker process per code tree, both alive for the whole run: the driver asks them in
turn, case by case in a shuffled order per round, for one sample (a ``timeit`` burst of
about ``--sample`` seconds), so that the two trees see the same load (the machine is
shared). Reported per case: the median over rounds of the per-call time [µs] and of its
ratio to Pinocchio's ``aba`` sampled by the same worker in the same round.
``--output DIR`` writes ``<name>.md`` and ``<name>.json`` there (``--name``, default
``one_state``; ``--title`` the heading).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

CASES = {
    "pinocchio aba (ur5)": "pin.aba(pm, pd, qp, vp, tau)",
    "aba (ur5)": "sd.aba(m, q, v, tau)",
    "rnea (ur5)": "sd.rnea(m, q, v, tau)",
    "mass_matrix (ur5)": "sd.mass_matrix(m, q)",
    "frame_jacobian (ur5)": "sd.frame_jacobian(m, q, frame)",
    "constrained_forward_dynamics (four-bar)": "sd.constrained_forward_dynamics(four_bar, qc, vc, tc)",
}
PEER = "pinocchio aba (ur5)"


def worker(sample):
    """Answer "<case>" lines on stdin with the per-call seconds of one sample, on the
    soadyn of ``sys.path``."""
    sys.path.insert(0, HERE)
    import pinocchio as pin

    import soadyn as sd
    from peers import load_pair

    pair = load_pair("ur5")
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, tau = rng.normal(size=(2, m.nv))
    four_bar = sd.models.four_bar_linkage()
    y, yd = sd.closed.embedding.random_independent_state(four_bar, rng, 0.6)
    qc, vc = sd.spanning_state(four_bar, y, yd)
    ns = dict(sd=sd, pin=pin, m=m, pm=pm, pd=pd, q=q, v=v, tau=tau, qp=pair.q_to_pin(q), vp=pair.v_to_pin(v),
              frame=m.frames[-1].name, four_bar=four_bar, qc=qc, vc=vc, tc=rng.normal(size=four_bar.nv))
    from timing import serve_samples

    serve_samples(CASES, ns, sample)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src directory of the code to compare with")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--sample", type=float, default=0.02, help="seconds per sample")
    parser.add_argument("--output", default=None)
    parser.add_argument("--name", default="one_state", help="the result files' stem")
    parser.add_argument("--title", default="One model state per call: the cost")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.sample)
        return
    trees = {"before": os.path.abspath(args.before), "after": SRC}
    procs = {}
    for name, src in trees.items():
        procs[name] = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--before", args.before, "--sample", str(args.sample),
             "--worker"], env=dict(os.environ, PYTHONPATH=src), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
    for p in procs.values():
        assert p.stdout.readline().strip() == "ready"
    samples = {name: {key: [] for key in CASES} for name in trees}
    rng = np.random.default_rng(0)
    order = [(name, key) for name in trees for key in CASES]
    for _ in range(args.rounds):
        rng.shuffle(order)
        for name, key in order:
            procs[name].stdin.write(key + "\n")
            procs[name].stdin.flush()
            samples[name][key].append(json.loads(procs[name].stdout.readline()))
    for p in procs.values():
        p.stdin.close()
        p.wait()
    lines = ["| case | before [µs] | after [µs] | after / before | before / Pinocchio aba | after / Pinocchio aba |",
             "| --- | --- | --- | --- | --- | --- |"]
    for key in CASES:
        t = {n: np.array(samples[n][key]) for n in trees}
        ratio = {n: np.median(t[n] / np.array(samples[n][PEER])) for n in trees}
        lines.append(f"| {key} | {np.median(t['before']) * 1e6:.3f} | {np.median(t['after']) * 1e6:.3f} | "
                     f"{np.median(t['after'] / t['before']):.3f} | {ratio['before']:.3f} | {ratio['after']:.3f} |")
    sys.path.insert(0, HERE)
    from timing import machine_description
    text = "\n".join([f"# {args.title}", "",
                      f"Two worker processes (the code before: `{args.before}`; after: this tree), sampled in turn, "
                      f"{args.rounds} rounds of the cases in a shuffled order, {args.sample * 1e3:.0f} ms per sample; "
                      "medians over rounds (after / before: of the per-round ratios).", "",
                      *lines, "", "```", machine_description(), "```", ""])
    print(text)
    if args.output:
        with open(os.path.join(args.output, f"{args.name}.md"), "w") as f:
            f.write(text)
        summary = {key: {"before_us": float(np.median(samples["before"][key]) * 1e6),
                         "after_us": float(np.median(samples["after"][key]) * 1e6),
                         "after_over_before": float(np.median(np.array(samples["after"][key])
                                                              / np.array(samples["before"][key])))}
                   for key in CASES}
        with open(os.path.join(args.output, f"{args.name}.json"), "w") as f:
            json.dump({"before": args.before, "rounds": args.rounds, "sample_s": args.sample, "cases": summary,
                       "samples_s": samples, "machine": machine_description()}, f, indent=1)


if __name__ == "__main__":
    main()
