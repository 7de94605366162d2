"""What the overflow check of aba's and rnea's results costs (issue 45, item 7): the kernels
return OVERFLOW when a result of finite arguments holds inf or NaN, one pass over the nv
outputs (``soadyn.kernels.kinematics.result_status``).

Measured in one process, so that the two variants see the same load: the kernels as they
are, against copies of them compiled here that skip the check (the same passes in the
same order, returning OK), called with the same arguments in a compiled loop of
``--calls`` calls per sample, the four variants taking turns for ``--rounds`` rounds in a
shuffled order. Also the public ``soadyn.aba``/``soadyn.rnea`` per call (timeit), for the
size of the check against a whole call.

    PYTHONPATH=src python benchmarks/overflow_check.py [--rounds 60] [--output benchmarks/results]

Writes ``overflow_check.md`` and ``overflow_check.json`` to ``--output``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import timeit

import numpy as np
from soadyn.core import jit  # the kernels' decorators (no reference counting, contraction)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import soadyn as sd  # noqa: E402
from soadyn.core.call import NO_FORCES  # noqa: E402
from soadyn.core.layout import borrow, model_tables  # noqa: E402
from soadyn.core.status import BAD_SHAPE, OK, SINGULAR  # noqa: E402
from soadyn.kernels.aba import aba_kernel  # noqa: E402
from soadyn.kernels.kinematics import (body_velocities, configuration_status,  # noqa: E402
                                       forces_shape_ok, joint_placements, rates_shape_ok, state_status)
from soadyn.kernels.aba import (no_record, partitioned_acceleration_pass,  # noqa: E402
                                            partitioned_articulated_pass)
from timing import machine_description  # noqa: E402


@jit.kernel(cache=False)
def aba_unchecked(mi, mf, ws, q, v, tau, fext, gravity, qdd):
    """aba_kernel as it is, except that it returns OK without the result's check."""
    mi, mf, ws, q, v, tau, qdd = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(tau), borrow(qdd)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if not rates_shape_ok(m, v) or tau.shape[0] != m.nv or qdd.shape[0] != m.nv or not forces_shape_ok(m, fext):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    joint_placements(mi, mf, ws, q)
    has_v = v.shape[0] > 0
    if has_v:
        body_velocities(mi, mf, ws, v)
    empty = no_record(ws)
    if not partitioned_articulated_pass(mi, mf, ws, tau, fext, has_v, empty, empty):
        return SINGULAR
    partitioned_acceleration_pass(mi, mf, ws, gravity, has_v, qdd)
    return OK


def _loop(kernel):
    @jit.kernel(cache=False)
    def run(n, mi, mf, ws, q, v, x, fext, out):
        s = 0
        for _ in range(n):
            s += kernel(mi, mf, ws, q, v, x, fext, True, out)
        return s
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    from peers import load_pair
    m = load_pair("ur5").sd
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, x = rng.normal(size=m.nv), rng.normal(size=m.nv)
    d = sd.core.compile.derived(m)
    c, ws = d.compiled, d.buffer()
    fext = NO_FORCES
    out = np.empty(m.nv)
    # checked and unchecked agree bit for bit (the check only reads the result)
    o1, o2 = np.empty(m.nv), np.empty(m.nv)
    assert aba_kernel(c.mi, c.mf, ws, q, v, x, fext, True, o1) == 0
    assert aba_unchecked(c.mi, c.mf, ws, q, v, x, fext, True, o2) == 0 and np.array_equal(o1, o2)
    loops = {"aba kernel (checked)": _loop(aba_kernel), "aba kernel (unchecked)": _loop(aba_unchecked)}
    for run in loops.values():
        run(10, c.mi, c.mf, ws, q, v, x, fext, out)  # compile
    public = {"sd.aba (ur5)": lambda: sd.aba(m, q, v, x), "sd.rnea (ur5)": lambda: sd.rnea(m, q, v, x)}
    samples = {key: [] for key in (*loops, *public)}
    order = list(samples)
    for _ in range(args.rounds):
        rng.shuffle(order)
        for key in order:
            if key in loops:
                t = time.perf_counter()
                loops[key](args.calls, c.mi, c.mf, ws, q, v, x, fext, out)
                samples[key].append((time.perf_counter() - t) / args.calls)
            else:
                samples[key].append(timeit.timeit(public[key], number=args.calls) / args.calls)
    med = {key: float(np.median(s)) for key, s in samples.items()}
    ratio = {f: float(np.median(np.array(samples[f"{f} kernel (checked)"])
                                / np.array(samples[f"{f} kernel (unchecked)"]))) for f in ("aba",)}
    lines = ["| case | median per call [µs] |", "| --- | --- |"]
    lines += [f"| {key} | {med[key] * 1e6:.3f} |" for key in samples]
    lines += ["", "| kernel | checked / unchecked (median of per-round ratios) | check's cost [ns] | "
              "share of the public call |", "| --- | --- | --- | --- |"]
    for f in ("aba",):
        cost = med[f"{f} kernel (checked)"] - med[f"{f} kernel (unchecked)"]
        lines.append(f"| {f} | {ratio[f]:.4f} | {cost * 1e9:.1f} | {cost / med[f'sd.{f} (ur5)'] * 100:.2f} % |")
    machine = machine_description()
    text = "\n".join(["# The overflow check of aba's result: the cost", "",
                      f"One process (ur5, one state), {args.rounds} rounds in a shuffled order, {args.calls} calls per "
                      "sample: the kernel against a copy of it compiled here without the result's check (the same "
                      "argument checks and passes), in a compiled loop; the public calls by timeit. Medians over "
                      "rounds.", "",
                      *lines, "", "```", machine, "```", ""])
    print(text)
    if args.output:
        with open(os.path.join(args.output, "overflow_check.md"), "w") as f:
            f.write(text)
        with open(os.path.join(args.output, "overflow_check.json"), "w") as f:
            json.dump({"rounds": args.rounds, "calls": args.calls, "median_s": med, "checked_over_unchecked": ratio,
                       "samples_s": samples, "machine": machine}, f, indent=1)


if __name__ == "__main__":
    main()
