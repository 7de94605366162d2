"""Per-call time of C-ABA (``soadyn.cluster_aba``) on transmissions written three ways.

Mechanism: the n-link planar chain of [Chignoli23, Fig. 8f] in pairs A–B, both rotors of a
pair on the pair's parent; rotor A drives link A (q̇_rA = N q̇_A), rotor B drives link B
through a two-stage belt with *different* per-stage ratios, q̇_rB = N (r_A q̇_A + r_B q̇_B)
(N = 6, r_A = 1.5, r_B = 0.7). Written

* with ``Model.add_rotor`` / ``Model.add_transmission``: constant-G (LINEAR) clusters;
* as sympy user constraints on the same joints (``symbolic_constraint``): NONLINEAR
  clusters, compiled (instruction tapes), solved by Newton iteration on every call;
* as Python callables on the same joints (``HolonomicConstraint`` with ``joints=``, an
  analytic Jacobian and a zero bias): NONLINEAR clusters prepared in Python on every call
  (what a constraint the compiled path cannot take costs);

and, for scale, ``soadyn.models.geared_chain(n)`` (URDF+ couplings). Reported: the best of
``--repeat`` runs of ``--number`` calls (the machine is shared: the minimum is the least
disturbed), in µs per call.

    PYTHONPATH=src python benchmarks/transmissions.py [--n 12]
"""
from __future__ import annotations

import argparse
import os
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import sympy  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn import joints as jt  # noqa: E402
from soadyn.closed.embedding.clusters import random_independent_state  # noqa: E402

LINK_I = np.diag([0.5, 0.5, 1.0])
ROTOR_I = np.diag([0.5e-4, 0.5e-4, 1e-4])


def per_stage_belt_chain(n=12, how="transmission", ratio=6.0, stages=(1.5, 0.7)):
    m = sd.Model(f"per_stage_belt_{how}{n}", gravity=(9.81, 0.0, 0.0))
    parent = None
    rA, rB = stages
    for k in range(n // 2):
        at = (np.eye(3), np.array([0.0 if k == 0 else 1.0, 0.0, 0.0]))
        a, b = f"A{k}", f"B{k}"
        m.add_body(a, jt.Revolute("z"), parent, at, mass=1.0, com=(0.5, 0.0, 0.0), inertia=LINK_I)
        if how == "transmission":
            m.add_rotor(f"rA{k}", parent, "z", ROTOR_I, ratio, drives=a, placement=at)
            m.add_body(f"rB{k}", jt.Revolute("z"), parent, at, inertia=ROTOR_I)
        else:
            for r in (f"rA{k}", f"rB{k}"):
                j = jt.Revolute("z")
                j.independent = False
                m.add_body(r, j, parent, at, inertia=ROTOR_I)
        m.add_body(b, jt.Revolute("z"), a, (np.eye(3), np.array([1.0, 0.0, 0.0])), mass=1.0, com=(0.5, 0.0, 0.0),
                   inertia=LINK_I)
        if how == "transmission":
            m.add_transmission(f"belt{k}", [f"rB{k}", a, b], [1.0, -ratio * rA, -ratio * rB])
        elif how == "python":
            m.add_constraint(_linear_constraint(f"gear{k}", [f"rA{k}", a], [1.0, -ratio]))
            m.add_constraint(_linear_constraint(f"belt{k}", [f"rB{k}", a, b], [1.0, -ratio * rA, -ratio * rB]))
        else:
            s = sympy.symbols("r a b")
            m.add_constraint(sd.symbolic_constraint(f"gear{k}", [f"rA{k}", a], [s[0] - ratio * s[1]], s[:2]))
            m.add_constraint(sd.symbolic_constraint(f"belt{k}", [f"rB{k}", a, b],
                                                    [s[0] - ratio * (rA * s[1] + rB * s[2])], s))
        parent = b
    return m


def _linear_constraint(name, joints, coefficients):
    """Σ coefficients · q_joints = 0 as a holonomic constraint of Python callables."""
    c = np.array(coefficients)
    return sd.HolonomicConstraint(name, lambda q, t: np.array([c @ q]), lambda q, t: c[None, :], joints=joints,
                                  bias=lambda q, v, t: np.zeros(1))


def time_cluster_aba(model, number, repeat):
    y, yd = random_independent_state(model, np.random.default_rng(0), scale=0.5)
    tau = np.random.default_rng(1).normal(size=len(yd))
    ydd = sd.cluster_aba(model, y, yd, tau)  # compile / warm up
    t = min(timeit.repeat(lambda: sd.cluster_aba(model, y, yd, tau), number=number, repeat=repeat)) / number
    return t * 1e6, ydd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="number of links (even)")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rows = []
    t_tr, ydd_tr = time_cluster_aba(per_stage_belt_chain(args.n), 2000, args.repeat)
    rows.append(("per-stage belt chain, add_rotor + add_transmission (LINEAR)", t_tr))
    t_us, ydd_us = time_cluster_aba(per_stage_belt_chain(args.n, "user"), 50, args.repeat)
    rows.append(("per-stage belt chain, symbolic user constraints (NONLINEAR)", t_us))
    t_py, ydd_py = time_cluster_aba(per_stage_belt_chain(args.n, "python"), 20, args.repeat)
    rows.append(("per-stage belt chain, Python-callable constraints (NONLINEAR, in Python)", t_py))
    rows.append((f"geared_chain({args.n}), URDF+ couplings (LINEAR)",
                 time_cluster_aba(sd.models.geared_chain(args.n), 2000, args.repeat)[0]))
    width = max(len(r[0]) for r in rows)
    print(f"cluster_aba, n = {args.n} links, µs per call (best of {args.repeat})")
    for name, t in rows:
        print(f"  {name:<{width}s} {t:9.1f}")
    print(f"  user constraint / transmission: {t_us / t_tr:.0f}x, Python callables / transmission: "
          f"{t_py / t_tr:.0f}x;  max |ÿ difference| {max(np.abs(ydd_tr - ydd_us).max(), np.abs(ydd_tr - ydd_py).max()):.1e}")


if __name__ == "__main__":
    main()
