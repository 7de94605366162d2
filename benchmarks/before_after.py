"""Per-call time of public functions with this tree's code against another tree's, interleaved
(issue 44: "speed otherwise unchanged"), each against Pinocchio in the same worker.

    PYTHONPATH=src python benchmarks/before_after.py --before /tmp/base/src \\
        [--before-benchmarks /tmp/base/benchmarks] [--rounds 120] [--output benchmarks/results]

One worker process per tree, both alive for the whole run. Each loads the robots with its
own tree's ``benchmarks/peers.py``: the loaders' options changed between versions, so
``--before-benchmarks`` names the other tree's copy. The driver asks them in turn for one
sample of a case: a ``timeit`` burst of about ``--sample`` seconds of the worker thread's
CPU time, ``time.thread_time``, because on a shared machine wall-clock samples mostly
measure descheduling. The cases come in a shuffled order each round, and the two trees in a
shuffled order per case (:func:`timing.sample_workers`). Reported per case: the median time
over rounds [µs], and the medians and quartiles of the per-round ratio after / before. The
ratio to Pinocchio's ``aba``, sampled by the same worker in the same round, shows that the
two workers ran at the same speed. ``--output DIR`` writes ``before_after.md`` and its JSON
twin.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, HERE)
from numba_patches import CASES as PATCH_CASES, PEER, contact_namespace  # noqa: E402

#: the public calls compared: numba_patches.py's (whose kernels every version has) and two on talos
CASES = {**PATCH_CASES, "rnea (talos)": "sd.rnea(t, qt, vt, taut)", "aba (talos)": "sd.aba(t, qt, vt, taut)"}


def worker(sample, benchmarks):
    """Serve samples of :data:`CASES` with the soadyn of PYTHONPATH, the robots loaded by the
    ``peers.py`` of ``benchmarks``."""
    sys.path.insert(0, benchmarks)
    sys.path.insert(1, HERE)  # (timing.serve_samples: this tree's)
    import pinocchio as pin

    import soadyn as sd
    from peers import load_pair

    rng = np.random.default_rng(0)
    pair, talos = load_pair("ur5"), load_pair("talos")
    m, t = pair.sd, talos.sd
    q, qt = sd.random_configuration(m, rng), sd.random_configuration(t, rng)
    v, tau = rng.normal(size=(2, m.nv))
    vt, taut = rng.normal(size=(2, t.nv))
    four_bar = sd.models.four_bar_linkage()
    y, yd = sd.closed.embedding.random_independent_state(four_bar, rng, 0.6)
    qc, vc = sd.spanning_state(four_bar, y, yd)
    ns = dict(sd=sd, pin=pin, m=m, pm=pair.pm, pd=pair.pd, q=q, v=v, tau=tau, qp=pair.q_to_pin(q),
              vp=pair.v_to_pin(v), frame=m.frames[-1].name, t=t, qt=qt, vt=vt, taut=taut, four_bar=four_bar,
              qc=qc, vc=vc, tc=rng.normal(size=four_bar.nv))
    # the C-ABA case of PATCH_CASES (benchmarks/numba_patches.py's own worker builds the same)
    cheetah = sd.models.mini_cheetah()
    yc, ydc = sd.closed.embedding.random_independent_state(cheetah, rng)
    ns.update(cheetah=cheetah, yc=yc, ydc=ydc, tyc=rng.normal(size=len(ydc)))
    ns.update(contact_namespace(sd))  # (the scenes of the contact_step.py first on the path)
    sys.path.remove(benchmarks)
    sys.modules.pop("timing", None)  # (the other tree's timing.py may lack serve_samples)
    from timing import serve_samples

    serve_samples(CASES, ns, sample, timer=time.thread_time)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the src directory of the code to compare with (required)")
    parser.add_argument("--before-benchmarks", default=None,
                        help="that tree's benchmarks directory (default: beside --before)")
    parser.add_argument("--label", default=None, help="the name of the code before (default: its directory)")
    parser.add_argument("--rounds", type=int, default=120)
    parser.add_argument("--sample", type=float, default=0.02, help="seconds of CPU time per sample")
    parser.add_argument("--output", default=None)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.sample, args.worker)
        return
    if not args.before:
        parser.error("--before: expected the src directory of the code to compare with")
    sys.path.insert(0, HERE)
    from timing import machine_description, sample_workers

    before = os.path.abspath(args.before)
    bench_before = os.path.abspath(args.before_benchmarks or os.path.join(os.path.dirname(before), "benchmarks"))
    trees = {"before": before, "after": SRC}
    benchmarks = {"before": bench_before, "after": HERE}
    samples = sample_workers(__file__, trees, lambda name: ["--sample", str(args.sample), "--worker", benchmarks[name]],
                             {name: CASES for name in trees}, args.rounds)
    label = args.label or before
    lines = ["# Per call, this tree against the code before", "",
             f"`benchmarks/before_after.py`: two worker processes (before: {label}; after: this tree), sampled in "
             f"turn, {args.rounds} rounds of the cases in a shuffled order, {args.sample * 1e3:.0f} ms of the worker "
             "thread's CPU time per sample; medians over rounds, the ratios medians (and quartiles) of the "
             "per-round ratios.", "",
             "| call | before [µs] | after [µs] | after / before | quartiles | before / Pinocchio | after / Pinocchio |",
             "|---|---|---|---|---|---|---|"]
    for key in CASES:
        b, a = np.array(samples["before"][key]), np.array(samples["after"][key])
        r = a / b
        pb, pa = np.array(samples["before"][PEER]), np.array(samples["after"][PEER])
        q1, q3 = np.percentile(r, [25, 75])
        lines.append(f"| {key} | {np.median(b) * 1e6:.3f} | {np.median(a) * 1e6:.3f} | {np.median(r):.3f} | "
                     f"{q1:.3f}–{q3:.3f} | {np.median(b / pb):.3f} | {np.median(a / pa):.3f} |")
    lines += ["", "```", machine_description(), "```", ""]
    text = "\n".join(lines)
    print(text)
    if args.output:
        path = os.path.join(args.output, "before_after.md")
        with open(path, "w") as f:
            f.write(text)
        import results_json
        results_json.write_twin(path)


if __name__ == "__main__":
    main()
