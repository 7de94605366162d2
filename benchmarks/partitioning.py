"""Partitioned against unpartitioned ABA ([Jain23p, eq. 8] against eq. 7) on chains of
multi-dof hinges.

``python benchmarks/partitioning.py`` writes ``benchmarks/results/partitioning.md``.

Models: serial chains of n bodies (random inertias, random hinge placements) whose hinges
are all spherical, all universal or all gimbal, n bodies on a free base with spherical
hinges otherwise, and, as controls, chains of 1-dof revolute hinges (about coordinate
axes, and about random axes); n = 4, 16, 64; and robots of example-robot-data (1-dof
hinges; talos on a free base). Three ways to get the same q̈ at the same random state:

* ``unpartitioned``: the ATBI recursion of [Jain23p, eq. 7] — the block passes of
  :mod:`soadyn.kernels.aba` (``articulated_body_pass``, ``acceleration_pass``), driven here
  as ``aba_kernel`` drove them before it was routed through the partitioned passes: one
  block step per hinge, D(k) = H(k)P(k)H*(k) of size n_k × n_k, its Cholesky factor and
  inverse;
* ``partitioned``: ``aba_kernel`` (what ``sd.aba`` runs), the partitioned recursion of
  [Jain23p, eq. 8] (:mod:`soadyn.kernels.partitioned_aba`): n_k scalar steps per hinge,
  sub-bodies at the body frame (φ(k′, k) = I), no transform between them;
* ``aba(partition_hinges)``: ``aba_kernel`` on the explicitly partitioned model
  (:func:`soadyn.partition_hinges`: mass-less bodies at the physical sub-frames, n_k bodies
  per hinge, each with its own joint transform and inertia transform), in its coordinates.

Each is timed as the compiled kernel called directly (``kernel(mi, mf, ws, q, v, tau, fext,
gravity, out)``, the same checks of the arguments inside, the same dispatch cost), per
call, over interleaved rounds in shuffled order (:func:`bench.time_interleaved`): medians
and minima (the machine is shared; the minimum is the uncontended cost).
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import machine_description, time_interleaved  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.core import joints as jt  # noqa: E402
from soadyn.core.compile import derived  # noqa: E402
from numba import njit  # noqa: E402
from soadyn.core.layout import model_tables  # noqa: E402
from soadyn.core.status import BAD_SHAPE, OK, SINGULAR  # noqa: E402
from soadyn.kernels.aba import aba_kernel, acceleration_pass, articulated_body_pass  # noqa: E402
from soadyn.kernels.kinematics import (body_velocities, configuration_status, forces_shape_ok,  # noqa: E402
                                       joint_placements, rates_shape_ok, state_status)
from soadyn.models import random_rigid_inertia  # noqa: E402


@njit(cache=True)
def unpartitioned_aba_kernel(mi, mf, ws, q, v, tau, fext, gravity, qdd):
    """The unpartitioned ABA ([Jain23p, eq. 7]): ``aba_kernel`` with the block passes."""
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
    if not articulated_body_pass(mi, mf, ws, tau, fext, has_v):
        return SINGULAR
    acceleration_pass(mi, mf, ws, gravity, has_v, qdd)
    return OK

KINDS = {"spherical": jt.Spherical, "universal": lambda: jt.Universal("x", "y"),
         "gimbal": lambda: jt.Gimbal(("z", "y", "x")), "free + spherical": jt.Spherical,
         # controls: 1-dof hinges, where both recursions take one scalar step per hinge
         "revolute x, y, z": None, "revolute, random axes": None}
_XYZ = "xyz"


def chain(kind, n, rng):
    """A serial chain of n bodies on ``kind`` hinges (the first on a free joint for
    ``"free + spherical"``)."""
    m = sd.Model(f"{kind} chain {n}")
    for k in range(n):
        mass, com, inertia = random_rigid_inertia(rng)
        if kind == "free + spherical" and k == 0:
            joint = jt.Free()
        elif kind == "revolute x, y, z":
            joint = jt.Revolute(_XYZ[k % 3])
        elif kind == "revolute, random axes":
            joint = jt.Revolute(rng.normal(size=3))
        else:
            joint = KINDS[kind]()
        placement = (sd.spatial.exp3(0.3 * rng.normal(size=3)), np.array([0.0, 0.0, 0.3 if k else 0.0]))
        m.add_body(f"link{k}", joint, None if k == 0 else k - 1, placement, mass=mass, com=com, inertia=inertia)
    return m


def kernel_case(kernel, model, q, v, tau):
    """A ``timeit`` statement calling ``kernel`` on the packed ``model`` at (q, v, tau)."""
    d = derived(model)
    ns = {"k": kernel, "mi": d.compiled.mi, "mf": d.compiled.mf, "ws": d.buffer(), "q": q, "v": v, "tau": tau,
          "f": np.zeros((0, 6)), "out": np.empty(model.nv)}
    return "k(mi, mf, ws, q, v, tau, f, True, out)", ns


def robot(name):
    from peers import robot_path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias in some description files
        return sd.load_urdf(robot_path(name), floating_base=name in ("talos", "solo12"), mimic="ignore")


def measure(kind, n, rounds, sample_seconds, seed):
    rng = np.random.default_rng(seed)
    model = chain(kind, n, rng) if kind in KINDS else robot(kind)
    n = model.nbodies
    best = None
    for _ in range(20):  # away from the gimbal/universal singularities: the best conditioned of 20
        q = sd.random_configuration(model, rng)
        cond = np.linalg.cond(sd.mass_matrix(model, q))
        if best is None or cond < best[0]:
            best = (cond, q)
    cond, q = best
    v, tau = rng.normal(size=(2, model.nv))
    part = sd.partition_hinges(model, q)
    s = sd.partitioned_state(model, part, q, v, tau=tau)
    cases = {"unpartitioned": kernel_case(unpartitioned_aba_kernel, model, q, v, tau),
             "partitioned": kernel_case(aba_kernel, model, q, v, tau),
             "aba(partition_hinges)": kernel_case(aba_kernel, part, s.q, s.v, s.tau)}
    results = {}
    for key, (stmt, ns) in cases.items():
        assert eval(stmt, ns) == OK, key
        results[key] = ns["out"].copy()
    a = results["unpartitioned"]
    agree = max(np.abs(results["partitioned"] - a).max(),
                np.abs(sd.unpartitioned_state(model, part, s.q, s.v, results["aba(partition_hinges)"]).a - a).max()
                ) / np.abs(a).max()
    times = time_interleaved(cases, rounds, sample_seconds, rng)
    return {"kind": kind, "n": n, "nv": model.nv, "bodies_partitioned": part.nbodies, "agree": agree, "cond": cond,
            "t": {k: t[0] for k, t in times.items()}, "tmin": {k: t[1] for k, t in times.items()}}


def _cell(r, key):
    return f"{1e6 * r['t'][key]:.2f} [{1e6 * r['tmin'][key]:.2f}]"


def _ratio(r, key):
    return f"{r['t'][key] / r['t']['unpartitioned']:.2f} [{r['tmin'][key] / r['tmin']['unpartitioned']:.2f}]"


def report(rows, header):
    lines = ["# Partitioned against unpartitioned ABA", "", "```", header, "```", "",
             "Time per call of the compiled kernel [µs]: median over interleaved rounds, and in brackets the "
             "minimum (the machine is shared by other jobs; the minimum is the uncontended cost). Ratios to "
             "`unpartitioned` (< 1: faster), of the medians and [of the minima]. `partitioned` is what `sd.aba` "
             "runs; `aba(partition_hinges)` runs it on the model with explicit mass-less sub-bodies (its number of "
             "bodies in brackets). Δq̈: largest difference of the other two results from `unpartitioned` (in the "
             "original coordinates), relative to max |q̈|, next to the condition number of M at the state (the best "
             "conditioned of 20 random configurations): the recursions round differently, to about cond(M)·ε.", "",
             "| hinges | bodies | nv | unpartitioned [µs] | partitioned [µs] | ratio | aba(partition_hinges) [µs] "
             "| ratio | Δq̈ | cond(M) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kind']} | {r['n']} | {r['nv']} | {_cell(r, 'unpartitioned')} | {_cell(r, 'partitioned')} | "
                     f"{_ratio(r, 'partitioned')} | {_cell(r, 'aba(partition_hinges)')} ({r['bodies_partitioned']}) | "
                     f"{_ratio(r, 'aba(partition_hinges)')} | {r['agree']:.1e} | {r['cond']:.1e} |")
    ranges = {}
    for r in rows:
        ranges.setdefault(r["kind"] if r["kind"] in KINDS else "robots", []).append(
            r["t"]["partitioned"] / r["t"]["unpartitioned"])
    lines += ["", "## Which wins, and why", "",
              "Partitioned / unpartitioned (medians), per model family: " + "; ".join(
                  f"{k} {min(v):.2f}–{max(v):.2f}" for k, v in ranges.items()) + ".", "",
              "The partitioned recursion wins wherever a hinge has more than one dof, and ties on 1-dof hinges "
              "about a coordinate axis, where both run the same scalar step. A block step of the unpartitioned "
              "recursion forms U = P H* (6 × n_k), D = H U (n_k × n_k), a Cholesky factor of D and its explicit "
              "inverse, G* = D⁻¹Uᵀ and P − U G*, all in loops whose length n_k is known only at run time; the "
              "partitioned recursion takes n_k rank-one steps, each one division, and for the unit rows of "
              "spherical and free hinges reads U as a column of P instead of multiplying (hence 0.5–0.7×). On "
              "1-dof hinges about a random axis it also wins, by skipping the general block path with n_k = 1 "
              "(the unpartitioned pass has a fast path only for coordinate axes). The explicitly partitioned "
              "model (`aba(partition_hinges)`) pays a 6 × 6 inertia congruence per mass-less sub-body: on "
              "universal and gimbal chains that is still cheaper than the block step, on spherical and free "
              "hinges (unit rows, no sub-frame motion to exploit) it is not. Hence `sd.aba` runs the partitioned "
              "recursion with the sub-bodies at the body frame (φ(k′, k) = I), and no model is rebuilt."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[4, 16, 64])
    ap.add_argument("--robots", nargs="*", default=["ur5", "panda", "talos"],
                    help="example-robot-data robots (1-dof hinges, free base for talos)")
    ap.add_argument("--rounds", type=int, default=101)
    ap.add_argument("--sample-seconds", type=float, default=0.002)
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                     "partitioning.md"))
    args = ap.parse_args(argv)
    rows = []
    for kind, n in [(k, n) for k in KINDS for n in args.sizes] + [(name, 0) for name in args.robots]:
        r = measure(kind, n, args.rounds, args.sample_seconds, seed=n)
        t, m = r["t"], r["tmin"]
        print(f"{kind:22s} {r['n']:3d} bodies: partitioned / unpartitioned {t['partitioned'] / t['unpartitioned']:.2f}"
              f" (minima {m['partitioned'] / m['unpartitioned']:.2f})", flush=True)
        rows.append(r)
    text = report(rows, machine_description())
    with open(args.output, "w") as f:
        f.write(text)
    import results_json
    results_json.write_twin(args.output)  # the machine block is in the text
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
