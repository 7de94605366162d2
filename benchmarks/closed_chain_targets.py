"""The closed-chain issue's targets, every one measured in one run: a table of goal,
measured value and whether it is met.

    PYTHONPATH=src python benchmarks/closed_chain_targets.py [--output DIR]

Each target is a same-run ratio (interleaved medians) taken from the measurements of the
scripts that own them — ``chignoli23.py`` (C-ABA / C-RNEA against Pinocchio's ABA / RNEA,
against GRBDA's C++ times, Table III's ordering on the paper's robots),
``closed_chain_methods.py`` (chains of 1, 4 and 16 four-bar loops; our default method
against Pinocchio 4's ``lcaba`` and ``constraintDynamics``) and ``embedding_batches.py``
(10 000 Mini Cheetah states in one call against a loop of single calls) — called here one
after the other in one process. Takes about five minutes; writes
``closed_chain_targets.{json,md}`` to ``--output`` (default ``benchmarks/results``).

The goals (the issue's words, shortened):

1. C-ABA ≤ 1.5× Pinocchio's ABA on the same tree without rotors, C-RNEA ≤ 1.5× its RNEA
   (Mini Cheetah, MIT Humanoid, JVRC-1); Tello's C-ABA ≤ 2.5× Pinocchio's ABA on its
   spanning tree.
2. Every cluster algorithm (C-ABA, C-RNEA, C-EFPA) ≥ 3× faster than GRBDA's times
   (``chignoli23.GRBDA``: measured once by the issue, not in this run).
3. [Chignoli23]'s ordering: embedding (C-ABA) faster than projection and than Lagrange
   multipliers (``method="direct"``) on every robot of its Table III and on chains of 1,
   4 and 16 four-bar loops.
4. Our default method at or below the faster of Pinocchio's two loop solvers on every
   mechanism of the issue.
5. Batched embedding forward dynamics on 10 000 Mini Cheetah states ≥ 3× a Python loop of
   single calls.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import results_json  # noqa: E402

import chignoli23  # noqa: E402  (sets single-threaded BLAS before numpy's first use)
import closed_chain_methods  # noqa: E402
import embedding_batches  # noqa: E402


def target(group, case, measured, goal, below, detail=""):
    """One row: ``measured`` against ``goal`` (met when below it, or above it when
    ``below`` is False)."""
    met = measured <= goal if below else measured >= goal
    return {"target": group, "case": case, "measured": float(measured), "goal": ("≤ " if below else "≥ ") + f"{goal:g}",
            "met": bool(met), "detail": detail}


def pinocchio_targets(res):
    rows = []
    for name, r in res["robots"].items():
        t = r["times_us"]
        tree = r["pinocchio_tree"]
        rows.append(target("C-ABA / Pinocchio ABA", f"{name} ({tree})", r["ratio_aba"], r["goal"], True,
                           f"{t['C-ABA']:.2f} / {t['Pinocchio ABA']:.2f} µs"))
        if name != "Tello Humanoid":  # (the RNEA goal is stated for the rotor robots)
            rows.append(target("C-RNEA / Pinocchio RNEA", f"{name} ({tree})", r["ratio_rnea"], r["goal"], True,
                               f"{t['C-RNEA']:.2f} / {t['Pinocchio RNEA']:.2f} µs"))
    return rows


def grbda_targets(res):
    rows = []
    for name, r in res.items():
        for alg in ("C-ABA", "C-RNEA", "C-EFPA"):
            ours, cpp = r["times_us"][alg], r["grbda_us"][alg]
            kernel = r["kernel_us"].get(alg)
            detail = f"{ours:.2f} µs against GRBDA's {cpp:g}"
            if kernel is not None:
                detail += f"; the kernel alone {kernel:.2f} µs ({cpp / kernel:.1f}×)"
            rows.append(target("speed-up over GRBDA (public call)", f"{name} {alg}", cpp / ours, 3.0, False, detail))
    return rows


def ordering_targets(tables_res, chains):
    rows = []
    for name, r in tables_res.items():
        t = r["times_us"]
        for other in ("projection method", "Lagrange multiplier"):
            rows.append(target(f"C-ABA / {other}", name, t["C-ABA"] / t[other], 1.0, True,
                               f"{t['C-ABA']:.1f} / {t[other]:.1f} µs"))
    for r in chains:
        case = f"chain of {r['loops']} four-bar loop{'s' if r['loops'] > 1 else ''}"
        for other in ("projection", "direct"):
            rows.append(target(f"embedding / {other}", case, r["embedding_us"] / r[f"{other}_us"], 1.0, True,
                               f"{r['embedding_us']:.1f} / {r[f'{other}_us']:.1f} µs"))
    return rows


def peer_targets(peers):
    rows = []
    for r in peers:
        fastest = min(("pin_lcaba", "pin_constraintDynamics"),
                      key=lambda k: r[f"{k}_us"] if np.isfinite(r[f"{k}_us"]) else np.inf)
        rows.append(target("default method / Pinocchio's faster loop solver", r["mechanism"], r["default_vs_pinocchio"],
                           1.0, True, f"{r['default']} {r[r['default'] + '_us']:.1f} µs against "
                           f"{fastest.removeprefix('pin_')} {r[fastest + '_us']:.1f} µs"))
    return rows


def batch_targets(res, B):
    rows = []
    for (name, case), (batch, loop) in res.items():
        rows.append(target("batch / loop of single calls", f"{name}, {B} states, `{case}`", loop / batch, 3.0, False,
                           f"{B / batch:,.0f} against {B / loop:,.0f} states/s"))
    return rows


def markdown(rows, meta):
    lines = [f"# The closed-chain issue's targets, one run ({meta['date']}, {meta['seconds']:.0f} s)", "",
             "Ratios are same-run (interleaved medians); GRBDA's times are the issue's (not re-measured). "
             f"Machine: {meta['machine']}, Python {meta['python']}, {meta['cores']} cores, load average "
             f"{meta['loadavg_start'][0]:.2f} at the start, {meta['loadavg_end'][0]:.2f} at the end. "
             "Met: "
             f"{sum(r['met'] for r in rows)} of {len(rows)}.", "",
             "| target | case | measured | goal | met | detail |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['target']} | {r['case']} | {r['measured']:.2f} | {r['goal']} | "
                     f"{'yes' if r['met'] else '**no**'} | {r['detail']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    ap.add_argument("--states", type=int, default=10000, help="states of the batch target")
    args = ap.parse_args(argv)
    t0, load_start = time.time(), os.getloadavg()
    rng = np.random.default_rng(0)
    rows = pinocchio_targets(chignoli23.pinocchio())
    rows += grbda_targets(chignoli23.grbda())
    chains = [closed_chain_methods.measure(k, 0, 40, 0.003, rng) for k in (1, 4, 16)]
    rows += ordering_targets(chignoli23.tables(), chains)
    rows += peer_targets(closed_chain_methods.measure_peers(40, 0.003, rng))
    rows += batch_targets(embedding_batches.run(args.states, 5, {"Mini Cheetah": embedding_batches.ROBOTS["Mini Cheetah"]},
                                                cases=("embedding",)), args.states)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "seconds": time.time() - t0, "machine": platform.platform(),
            "python": platform.python_version(), "cores": os.cpu_count(), "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(), "commit": results_json.git_commit()}
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "closed_chain_targets.json"), "w") as f:
        json.dump({"meta": meta, "targets": rows}, f, indent=1)
    text = markdown(rows, meta)
    with open(os.path.join(args.output, "closed_chain_targets.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
