"""Batched closed-chain forward dynamics by constraint embedding: one multi-threaded call
of ``constrained_forward_dynamics(model, Q, V, T, method="embedding")`` on B states against
a Python loop of single calls, and the same for ``cluster_aba`` (C-ABA from (y, ẏ), the
position solve of the implicit clusters included).

    PYTHONPATH=src python benchmarks/embedding_batches.py [--states 10000] [--rounds 5]

Writes ``benchmarks/results/embedding_batches.md``: seconds per batch (medians of the
interleaved rounds), states per second and the ratio loop / batch (the closed-chain
issue's goal: ≥ 3 on 10 000 Mini Cheetah states).
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import soadyn as sd
from soadyn.closed.embedding.clusters import random_independent_state
from soadyn.core.batch import batch_threads

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOTS = {"Mini Cheetah": sd.models.mini_cheetah, "Tello Humanoid": sd.models.tello,
          "four-bar leg": sd.models.planar_leg_linkage}


def states(model, B, seed=0):
    rng = np.random.default_rng(seed)
    Y, YD = map(np.array, zip(*[random_independent_state(model, rng) for _ in range(B)]))
    Q, V = map(np.array, zip(*[sd.spanning_state(model, y, yd) for y, yd in zip(Y, YD)]))
    return Y, YD, Q, V, rng.normal(size=(B, model.nv)), rng.normal(size=YD.shape)


def run(B, rounds, robots=None, cases=("embedding", "cluster_aba")):
    """``{(robot, case): (batch seconds, loop seconds)}``, medians of ``rounds`` interleaved
    rounds, for ``robots`` (default :data:`ROBOTS`) and ``cases`` (either or both of
    "embedding" and "cluster_aba")."""
    out = {}
    for name, make in (ROBOTS if robots is None else robots).items():
        m = make()
        Y, YD, Q, V, T, TI = states(m, B)
        functions = {
            "embedding": (lambda: sd.constrained_forward_dynamics(m, Q, V, T, method="embedding").qdd,
                          lambda: np.array([sd.constrained_forward_dynamics(m, Q[b], V[b], T[b],
                                                                            method="embedding").qdd
                                            for b in range(B)])),
            "cluster_aba": (lambda: sd.cluster_aba(m, Y, YD, TI),
                            lambda: np.array([sd.cluster_aba(m, Y[b], YD[b], TI[b]) for b in range(B)])),
        }
        for case, (batch, loop) in functions.items():
            if case not in cases:
                continue
            assert np.array_equal(batch(), loop())  # also warms up (compilation)
            tb, tl = [], []
            for _ in range(rounds):  # interleaved
                t0 = time.perf_counter()
                batch()
                t1 = time.perf_counter()
                loop()
                tl.append(time.perf_counter() - t1)
                tb.append(t1 - t0)
            b, lp = float(np.median(tb)), float(np.median(tl))
            out[(name, case)] = (b, lp)
            print(f"{name} {case}: batch {b:.3f} s ({B / b:,.0f} states/s), loop {lp:.3f} s ({B / lp:,.0f} "
                  f"states/s), ratio {lp / b:.2f}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--output", default=os.path.join(HERE, "results", "embedding_batches.md"))
    args = ap.parse_args()
    res = run(args.states, args.rounds)
    lines = [f"### Batched constraint embedding: {args.states} states, {batch_threads()} threads, medians of "
             f"{args.rounds} interleaved rounds\n",
             "| robot | function | batch [s] | states/s | loop of single calls [s] | states/s | loop / batch |",
             "|---|---|---|---|---|---|---|"]
    for (name, case), (b, lp) in res.items():
        fn = "constrained_forward_dynamics(method=\"embedding\")" if case == "embedding" else "cluster_aba"
        lines.append(f"| {name} | `{fn}` | {b:.3f} | {args.states / b:,.0f} | {lp:.3f} | {args.states / lp:,.0f} "
                     f"| **{lp / b:.2f}** |")
    lines.append(f"\nBatched results equal the single calls bit for bit (asserted). Machine: {platform.platform()}, "
                 f"load average {os.getloadavg()} at the end of the run.\n")
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    import sys
    sys.path.insert(0, HERE)
    import results_json
    from timing import machine_description
    results_json.write_twin(args.output, machine_description())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
