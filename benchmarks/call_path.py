"""What the rendered fast path saves (issue 44 item 2): the public calls ``sd.aba``,
``sd.rnea``, ``sd.mass_matrix`` and ``sd.forward_kinematics`` (poses) per call with this
tree's code (their positional call rendered from ``soadyn.core.fast_path.TEMPLATE``), with
the ordinary path of the same tree (``soadyn.core.fast_path.call``, plain Python: the same
public function, calling it with its state and parameters as tuples) and with another
tree's code (``--before``, e.g. the source of the commit before), each against Pinocchio's
same algorithm on the same robot in the same process.

    PYTHONPATH=src python benchmarks/call_path.py --before /tmp/base/src [--rounds 30] [--output benchmarks/results]

One worker process per code tree, both alive for the whole run: the driver asks them for
one sample each (a ``timeit`` burst of about ``--sample`` seconds of the worker thread's
CPU time, ``time.thread_time``: on a shared machine wall-clock samples mostly measure how
often the worker was descheduled) of one case right after the other, case after case in a
shuffled order per round. Reported per case: the median and the minimum over rounds of the
per-call time [µs], the medians of the per-round ratios after / before and rendered /
ordinary, and of the ratio to Pinocchio's call sampled by the same worker in the same
round. ``--output DIR`` writes ``call_path.md`` and its JSON twin ``call_path.json``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
ROBOTS = ("ur5", "solo12", "talos")
#: public call → (statement with {r} for the robot, the Pinocchio statement it is divided by)
CALLS = {
    "aba": ("sd.aba(P[{r}].sd, q[{r}], v[{r}], T[{r}])", "pin.aba(P[{r}].pm, P[{r}].pd, Q[{r}], V[{r}], T[{r}])"),
    "rnea": ("sd.rnea(P[{r}].sd, q[{r}], v[{r}], T[{r}])", "pin.rnea(P[{r}].pm, P[{r}].pd, Q[{r}], V[{r}], T[{r}])"),
    "mass_matrix": ("sd.mass_matrix(P[{r}].sd, q[{r}])", "pin.crba(P[{r}].pm, P[{r}].pd, Q[{r}])"),
    "forward_kinematics": ("sd.forward_kinematics(P[{r}].sd, q[{r}])",
                           "pin.forwardKinematics(P[{r}].pm, P[{r}].pd, Q[{r}])"),
}
#: the same public functions through the ordinary path (this tree only)
ORDINARY = {"aba": "ordinary.aba", "rnea": "ordinary.rnea", "mass_matrix": "ordinary.mass_matrix",
            "forward_kinematics": "ordinary.forward_kinematics"}


def cases(ordinary):
    """key → (statement, the key of the Pinocchio case it is divided by, or None)."""
    out = {}
    for robot in ROBOTS:
        r = repr(robot)
        for name, (stmt, peer) in CALLS.items():
            out[f"pinocchio {name} ({robot})"] = (peer.format(r=r), None)
            out[f"{name} ({robot})"] = (stmt.format(r=r), f"pinocchio {name} ({robot})")
            if ordinary:
                out[f"{name}, ordinary path ({robot})"] = (stmt.format(r=r).replace(f"sd.{name}", ORDINARY[name]),
                                                           f"pinocchio {name} ({robot})")
    return out


class Ordinary:
    """The public functions of the measured calls written on the ordinary path
    (:func:`soadyn.core.fast_path.call`): the same arguments and checks as ``sd.aba`` etc.,
    the state and parameters passed as tuples instead of a rendered positional call."""

    def __init__(self):
        from soadyn.core import validation as val
        from soadyn.core.fast_path import call
        from soadyn.dynamics.aba import _ABA
        from soadyn.dynamics.crba import _CRBA
        from soadyn.dynamics.kinematics import _POSES, KinematicsResult
        from soadyn.dynamics.rnea import _RNEA

        def aba(model, q, v, tau, f_ext=None, *, gravity=True, out=None, workspace=None):
            if gravity is not True and gravity is not False:
                gravity = val.GRAVITY(gravity)
            return call(_ABA, model, (q, v, tau, f_ext), (gravity,), out, workspace)

        def rnea(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
            if gravity is not True and gravity is not False:
                gravity = val.GRAVITY(gravity)
            return call(_RNEA, model, (q, v, a, f_ext), (gravity,), out, workspace)

        def mass_matrix(model, q, *, method="crba", out=None, workspace=None):
            if method == "crba":
                return call(_CRBA, model, (q,), (), out, workspace)
            raise ValueError(method)

        def forward_kinematics(model, q, v=None, a=None, *, gravity=False, workspace=None):
            if gravity is not True and gravity is not False:
                gravity = val.GRAVITY(gravity)
            if v is None and a is None:
                R, p = call(_POSES, model, (q,), (), None, workspace)
                return KinematicsResult(R, p, None, None)
            raise ValueError("poses only")

        self.aba, self.rnea, self.mass_matrix, self.forward_kinematics = aba, rnea, mass_matrix, forward_kinematics


def worker(sample, ordinary):
    """Answer "<case>" lines on stdin with the per-call seconds of one sample, on the
    soadyn of ``sys.path``."""
    sys.path.insert(0, HERE)
    import pinocchio as pin

    import soadyn as sd
    from peers import robot_states

    ns = dict(sd=sd, pin=pin, ordinary=Ordinary() if ordinary else None, **robot_states(ROBOTS))
    from timing import serve_samples

    serve_samples({key: stmt for key, (stmt, _) in cases(ordinary).items()}, ns, sample, timer=time.thread_time)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src directory of the code to compare with")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sample", type=float, default=0.02, help="seconds per sample")
    parser.add_argument("--output", default=None)
    parser.add_argument("--worker", choices=("before", "after"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.sample, ordinary=args.worker == "after")
        return
    sys.path.insert(0, HERE)
    from timing import sample_workers

    trees = {"before": os.path.abspath(args.before), "after": SRC}
    all_cases = cases(ordinary=True)
    served = {"before": cases(ordinary=False), "after": all_cases}
    samples = sample_workers(__file__, trees, lambda name: ["--before", args.before, "--sample", str(args.sample),
                                                            "--worker", name], served, args.rounds)
    rows = {}
    for key, (_, peer) in all_cases.items():
        row = {}
        for n in trees:
            if key in samples[n]:
                t = np.array(samples[n][key])
                row[f"{n}_us"], row[f"{n}_min_us"] = float(np.median(t) * 1e6), float(t.min() * 1e6)
                if peer is not None:
                    row[f"{n}_over_pinocchio"] = float(np.median(t / np.array(samples[n][peer])))
        if "before_us" in row:
            row["after_over_before"] = float(np.median(np.array(samples["after"][key])
                                                       / np.array(samples["before"][key])))
        rows[key] = row
    for key in all_cases:  # rendered against ordinary, same worker, same round
        if ", ordinary path" in key:
            rendered = key.replace(", ordinary path", "")
            rows[rendered]["rendered_over_ordinary"] = float(np.median(np.array(samples["after"][rendered])
                                                                       / np.array(samples["after"][key])))
            rows[rendered]["ordinary_minus_rendered_us"] = float(np.median(
                np.array(samples["after"][key]) - np.array(samples["after"][rendered])) * 1e6)

    def cell(r, k, f="{:.3f}"):
        return f.format(r[k]) if k in r else "—"

    lines = ["| case | before [µs] | after [µs] | before, min [µs] | after, min [µs] | after / before "
             "| before / Pinocchio | after / Pinocchio | rendered / ordinary | ordinary − rendered [µs] |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key, r in rows.items():
        lines.append(" | ".join([f"| {key}", cell(r, "before_us"), cell(r, "after_us"), cell(r, "before_min_us"),
                                 cell(r, "after_min_us"), cell(r, "after_over_before"),
                                 cell(r, "before_over_pinocchio"), cell(r, "after_over_pinocchio"),
                                 cell(r, "rendered_over_ordinary"), cell(r, "ordinary_minus_rendered_us")]) + " |")
    sys.path.insert(0, HERE)
    import numba
    import pinocchio

    from timing import machine_description
    machine = machine_description()
    text = "\n".join(["# The call path: rendered fast path, ordinary path, before", "",
                      f"Two worker processes (the code before: `{args.before}`; after: this tree, which also serves "
                      "the ordinary-path rows), sampled in turn, "
                      f"{args.rounds} rounds of the cases in a shuffled order, the two trees one right after the other, "
                      f"{args.sample * 1e3:.0f} ms of CPU time per sample (the worker thread's CPU time, not wall "
                      "time); medians (and minima) over rounds; the ratios are medians of the per-round ratios. "
                      "The ordinary-path rows call the same kernels through `soadyn.core.fast_path.call` (tuples); "
                      "the plain rows through the positional call rendered from `fast_path.TEMPLATE`. "
                      "Pinocchio's own rows are the same library in both workers, a measure of the noise.", "",
                      *lines, "", f"Pinocchio {pinocchio.__version__}, Numba {numba.__version__}.", "",
                      "```", machine, "```", ""])
    print(text)
    if args.output:
        from results_json import write_twin
        md = os.path.join(args.output, "call_path.md")
        with open(md, "w") as f:
            f.write(text)
        write_twin(md, machine)  # call_path.json


if __name__ == "__main__":
    main()
