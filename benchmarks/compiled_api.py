"""Per-state time of soadyn's kernels called from a user's own Numba loop (soadyn.compiled)
against soadyn's public call and Pinocchio's Python call, interleaved medians.

    PYTHONPATH=src python benchmarks/compiled_api.py [--output benchmarks/results]

For each robot and function: a ``numba.njit`` loop over B = 1000 states calling the kernel
(``soadyn.compiled``; time / B), the public function on one state, and Pinocchio's function
on one state (its Python binding: ``pin.rnea``, ``pin.aba``, ``pin.crba``,
``pin.computeMinverse``; the last two fill the upper triangle only). The ratios are
soadyn / Pinocchio per round, then the median over rounds.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

import soadyn as sd
from soadyn import compiled

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import load_pair  # noqa: E402
from timing import time_interleaved  # noqa: E402

ROBOTS = ("ur5", "panda", "talos")
FUNCTIONS = ("rnea", "aba", "mass_matrix", "mass_matrix_inverse")
B = 1000


@numba.njit
def rnea_loop(k, Q, V, A, OUT):
    for i in range(Q.shape[0]):
        compiled.rnea(k, Q[i], V[i], A[i], OUT[i])


@numba.njit
def aba_loop(k, Q, V, T, OUT):
    for i in range(Q.shape[0]):
        compiled.aba(k, Q[i], V[i], T[i], OUT[i])


@numba.njit
def mass_matrix_loop(k, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.mass_matrix(k, Q[i], OUT[i])


@numba.njit
def mass_matrix_inverse_loop(k, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.mass_matrix_inverse(k, Q[i], OUT[i])


def cases(name, rounds):
    import pinocchio as pin
    pair = load_pair(name)
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(0)
    Q = np.array([sd.random_configuration(m, rng) for _ in range(B)])
    V, A = rng.normal(size=(2, B, m.nv))
    T = sd.rnea(m, Q, V, A)
    k = compiled.arguments(m)
    # state 0 in Pinocchio's conventions (its free-flyer velocity is [v; ω], ours [ω; v])
    qp = pair.q_to_pin(Q[0])
    vp, ap, tp = (pair.v_to_pin(x[0]) for x in (V, A, T))
    out_v, out_m = np.empty((B, m.nv)), np.empty((B, m.nv, m.nv))
    q0, v0, a0, t0 = Q[0], V[0], A[0], T[0]
    ns = dict(sd=sd, pin=pin, m=m, pm=pm, pd=pd, k=k, Q=Q, V=V, A=A, T=T, out_v=out_v, out_m=out_m, q0=q0, v0=v0,
              a0=a0, t0=t0, qp=qp, vp=vp, ap=ap, tp=tp, rnea_loop=rnea_loop, aba_loop=aba_loop,
              mass_matrix_loop=mass_matrix_loop, mass_matrix_inverse_loop=mass_matrix_inverse_loop)
    stmts = {
        "rnea": ("rnea_loop(k, Q, V, A, out_v)", "sd.rnea(m, q0, v0, a0)", "pin.rnea(pm, pd, qp, vp, ap)"),
        "aba": ("aba_loop(k, Q, V, T, out_v)", "sd.aba(m, q0, v0, t0)", "pin.aba(pm, pd, qp, vp, tp)"),
        "mass_matrix": ("mass_matrix_loop(k, Q, out_m)", "sd.mass_matrix(m, q0)", "pin.crba(pm, pd, qp)"),
        "mass_matrix_inverse": ("mass_matrix_inverse_loop(k, Q, out_m)", "sd.mass_matrix_inverse(m, q0)",
                                "pin.computeMinverse(pm, pd, qp)"),
    }
    rows = []
    for f in FUNCTIONS:
        loop, public, peer = stmts[f]
        times = time_interleaved({"loop": (loop, ns), "public": (public, ns), "pin": (peer, ns)}, rounds, 2e-3,
                                 np.random.default_rng(1))
        rows.append((name, m.nv, f, times["loop"][0] / B, times["public"][0], times["pin"][0]))
    return rows


def pin_version():
    import pinocchio as pin
    return pin.__version__


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args(argv)
    start = os.getloadavg()
    rows = [r for name in ROBOTS for r in cases(name, args.rounds)]
    lines = ["# Kernels from your own Numba loop (`soadyn.compiled`)", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} logical cores, Pinocchio {pin_version()}; load average at the start "
             f"{start[0]:.2f}, at the end {os.getloadavg()[0]:.2f}.", "",
             f"µs per state, interleaved medians of {args.rounds} rounds: a `numba.njit` loop over {B} states calling "
             "`soadyn.compiled` (time / B), the public function on one state, Pinocchio's Python call on one "
             "state (`crba` and `computeMinverse` fill the upper triangle only).", "",
             "| robot | nv | function | compiled loop | public call | Pinocchio | loop / Pinocchio | public / Pinocchio |",
             "|---|---|---|---|---|---|---|---|"]
    for name, nv, f, loop, public, peer in rows:
        lines.append(f"| {name} | {nv} | {f} | {loop * 1e6:.2f} | {public * 1e6:.2f} | {peer * 1e6:.2f} | "
                     f"{loop / peer:.2f} | {public / peer:.2f} |")
        print(lines[-1], flush=True)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "compiled_api.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
