"""What deriving the flat layouts from one field list costs (issue 44 item 7): ``sd.aba``
and ``sd.rnea`` per call with this tree's code and with another tree's (``--before``,
e.g. the source of the commit before), each against Pinocchio's same algorithm on the same
robot in the same process.

    PYTHONPATH=src python benchmarks/layouts.py --before /tmp/base/src [--rounds 40] [--output benchmarks/results]

One worker process per code tree, both alive for the whole run: the driver asks them for
one sample each (a ``timeit`` burst of about ``--sample`` seconds) of one case right after
the other (in a random order), case after case in a shuffled order per round, so that the
two trees see the same load (the machine is shared). Times are the worker thread's CPU
time (``time.thread_time``), not wall time: on a machine shared by more runnable processes
than cores, wall-clock samples mostly measure how often the worker was descheduled. Reported
per case: the median and the
minimum over rounds of the per-call time [µs], the median of the after/before ratio of the
pairs, and the median of the ratio to Pinocchio's call sampled by the same worker in the
same round. ``--output DIR`` writes ``layouts.md`` and ``layouts.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
ROBOTS = ("ur5", "talos")
#: case → (statement, the Pinocchio case it is divided by)
CASES = {}
for _robot in ROBOTS:
    CASES[f"pinocchio aba ({_robot})"] = (f"pin.aba(P['{_robot}'].pm, P['{_robot}'].pd, Q['{_robot}'], V['{_robot}'], "
                                          f"T['{_robot}'])", None)
    CASES[f"pinocchio rnea ({_robot})"] = (f"pin.rnea(P['{_robot}'].pm, P['{_robot}'].pd, Q['{_robot}'], "
                                           f"V['{_robot}'], T['{_robot}'])", None)
    CASES[f"aba ({_robot})"] = (f"sd.aba(P['{_robot}'].sd, q['{_robot}'], v['{_robot}'], T['{_robot}'])",
                                f"pinocchio aba ({_robot})")
    CASES[f"rnea ({_robot})"] = (f"sd.rnea(P['{_robot}'].sd, q['{_robot}'], v['{_robot}'], T['{_robot}'])",
                                 f"pinocchio rnea ({_robot})")


def worker(sample):
    """Answer "<case>" lines on stdin with the per-call seconds of one sample, on the
    soadyn of ``sys.path``."""
    sys.path.insert(0, HERE)
    import pinocchio as pin

    import soadyn as sd
    from peers import robot_states

    ns = dict(sd=sd, pin=pin, **robot_states(ROBOTS))
    from timing import serve_samples

    serve_samples({key: stmt for key, (stmt, _) in CASES.items()}, ns, sample, timer=time.thread_time)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src directory of the code to compare with")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--sample", type=float, default=0.02, help="seconds per sample")
    parser.add_argument("--output", default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.sample)
        return
    sys.path.insert(0, HERE)
    from timing import sample_workers

    trees = {"before": os.path.abspath(args.before), "after": SRC}
    samples = sample_workers(__file__, trees, lambda name: ["--before", args.before, "--sample", str(args.sample),
                                                            "--worker"], {name: CASES for name in trees}, args.rounds)
    rows = {}
    for key, (_, peer) in CASES.items():
        t = {n: np.array(samples[n][key]) for n in trees}
        row = {"before_us": float(np.median(t["before"]) * 1e6), "after_us": float(np.median(t["after"]) * 1e6),
               "before_min_us": float(t["before"].min() * 1e6), "after_min_us": float(t["after"].min() * 1e6),
               "after_over_before": float(np.median(t["after"] / t["before"]))}
        if peer is not None:
            for n in trees:
                row[f"{n}_over_pinocchio"] = float(np.median(t[n] / np.array(samples[n][peer])))
        rows[key] = row
    lines = ["| case | before [µs] | after [µs] | before, min [µs] | after, min [µs] | after / before "
             "| before / Pinocchio | after / Pinocchio |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key, r in rows.items():
        peer = (f"{r['before_over_pinocchio']:.3f} | {r['after_over_pinocchio']:.3f}" if "after_over_pinocchio" in r
                else "— | —")
        lines.append(f"| {key} | {r['before_us']:.3f} | {r['after_us']:.3f} | {r['before_min_us']:.3f} | "
                     f"{r['after_min_us']:.3f} | {r['after_over_before']:.3f} | {peer} |")
    sys.path.insert(0, HERE)
    import numba
    import pinocchio

    from timing import machine_description
    machine = machine_description()
    text = "\n".join(["# Layouts from one field list: the cost", "",
                      f"Two worker processes (the code before: `{args.before}`; after: this tree), sampled in turn, "
                      f"{args.rounds} rounds of the cases in a shuffled order, the two trees one right after the other, "
                      f"{args.sample * 1e3:.0f} ms of CPU time per sample (the worker thread's CPU time, not wall time); medians (and minima) over rounds (after / before and "
                      "the ratios to Pinocchio: medians of the per-round ratios; "
                      "Pinocchio's own rows are the same library in both workers, a measure of the noise).", "",
                      *lines, "", f"Pinocchio {pinocchio.__version__}, Numba {numba.__version__}.", "",
                      "```", machine, "```", ""])
    print(text)
    if args.output:
        with open(os.path.join(args.output, "layouts.md"), "w") as f:
            f.write(text)
        with open(os.path.join(args.output, "layouts.json"), "w") as f:
            json.dump({"before": args.before, "rounds": args.rounds, "sample_seconds": args.sample,
                       "pinocchio": pinocchio.__version__, "numba": numba.__version__, "machine": machine,
                       "cases": rows}, f, indent=1)


if __name__ == "__main__":
    main()
