"""Where a C-ABA, C-RNEA or C-EFPA call goes: the Python front (lookups, allocation, Numba's
dispatch of the kernel's arguments) against the kernel, and inside the kernel each stage
of [Chignoli23, Alg. 1] timed in a compiled loop of many calls (no dispatch); for C-EFPA
the backward pass against the whole kernel (the rest: the force propagators and Ω).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/cluster_breakdown.py [model]   # default mini_cheetah

Prints µs per call (medians of 5 loops); nothing is written. The machine's load average
is printed with the numbers: on a shared machine compare the stages of one run.
"""
from __future__ import annotations

import os
import sys
import time
import timeit

import numpy as np
from soadyn.core.jit import kernel

import soadyn as sd
from soadyn.closed.embedding.algorithms import _plain_call
from soadyn.closed.embedding.compiled import cluster_workspace_buffer, packed_clusters
from soadyn.core.call import NO_FORCES
from soadyn.core.compile import derived
from soadyn.core.layout import model_tables
from soadyn.dynamics.frames import frame_set
from soadyn.kernels.cluster.aba import articulated_cluster_pass, cluster_aba_kernel, cluster_acceleration_pass
from soadyn.kernels.cluster.explicit import apply_explicit_map, apply_explicit_map_transpose
from soadyn.kernels.cluster.inertia import init_cluster_inertias
from soadyn.kernels.cluster.kinematics import cluster_state_status, cluster_subspaces, output_poses, positions_pass
from soadyn.kernels.cluster.layout import cluster_tables, cluster_workspace
from soadyn.kernels.cluster.efpa import cluster_efpa_kernel
from soadyn.kernels.cluster.rnea import cluster_rnea_kernel, cluster_rnea_plain_kernel
from soadyn.kernels.kinematics import absent, no_forces
from soadyn.kernels.kinematics import body_velocities, joint_placements
from soadyn.kernels.rnea import rnea_passes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chignoli23 import state  # noqa: E402

#: calls per compiled loop
N = 20000


@kernel(cache=False)
def _status(mi, mf, ci, y, yd, tau, fext, ny, n):
    s = 0
    for _ in range(n):
        s += cluster_state_status(mi, mf, ci, y, yd, tau, fext, ny)
    return s


@kernel(cache=False)
def _explicit(mi, mf, ci, cf, cws, y, yd, n):
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    for _ in range(n):
        apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)
        apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)


@kernel(cache=False)
def _placements(mi, mf, ws, ci, cws, n):
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    for _ in range(n):
        joint_placements(mi, mf, ws, w.q)


@kernel(cache=False)
def _velocities(mi, mf, ws, ci, cws, n):
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    for _ in range(n):
        body_velocities(mi, mf, ws, w.qd)


@kernel(cache=False)
def _poses(mi, mf, ws, ci, cws, n):
    for _ in range(n):
        output_poses(mi, mf, ws, ci, cws)


@kernel(cache=False)
def _subspaces(mi, mf, ws, ci, cf, cws, n):
    for _ in range(n):
        cluster_subspaces(mi, mf, ws, ci, cf, cws, True, True)


@kernel(cache=False)
def _positions(mi, mf, ws, ci, cf, cws, y, yd, n):
    for _ in range(n):
        positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True, True, False)  # (no forces: pair rotors apart; the tree not placed yet)


@kernel(cache=False)
def _init(mi, mf, ws, ci, cws, fext, n):
    for _ in range(n):
        init_cluster_inertias(mi, mf, ws, ci, cws, True, fext, True)


@kernel(cache=False)
def _backward(mi, mf, ws, ci, cf, cws, tau, fext, n):
    for _ in range(n):
        init_cluster_inertias(mi, mf, ws, ci, cws, True, fext, True)
        articulated_cluster_pass(mi, mf, ws, ci, cf, cws, tau, True, True)


@kernel(cache=False)
def _forward(mi, mf, ws, ci, cws, out, n):
    for _ in range(n):
        cluster_acceleration_pass(mi, mf, ws, ci, cws, True, out, True)


@kernel(cache=False)
def _aba(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, out, n):
    for _ in range(n):
        cluster_aba_kernel(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, True, out)


@kernel(cache=False)
def _rnea(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, out, n):
    for _ in range(n):
        cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, True, out)


@kernel(cache=False)
def _tree_rnea(mi, mf, ws, ci, cws, fext, out, n):
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    for _ in range(n):
        rnea_passes(mi, mf, ws, w.q, w.qd, w.qdd, fext, True, out)


@kernel(cache=False)
def _rnea_maps(mi, mf, ci, cf, cws, y, yd, ydd, T, tau, n):
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    for _ in range(n):
        apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)
        apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)
        apply_explicit_map(mi, mf, ci, cf, cws, ydd, w.qdd, False, True)
        apply_explicit_map_transpose(mi, mf, ci, cf, cws, T, tau)


@kernel(cache=False)
def _rnea_plain(tables, y, yd, ydd, out, n):
    for _ in range(n):
        cluster_rnea_plain_kernel(tables, y, yd, ydd, True, out)


@kernel(cache=False)
def _efpa(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega, n):
    for _ in range(n):
        cluster_efpa_kernel(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega)


@kernel(cache=False)
def _efpa_backward(mi, mf, ws, y, ci, cf, cws, n):
    for _ in range(n):
        positions_pass(mi, mf, ws, ci, cf, cws, y, y, False, False, False, False)
        init_cluster_inertias(mi, mf, ws, ci, cws, False, no_forces(ws), False)
        articulated_cluster_pass(mi, mf, ws, ci, cf, cws, absent(ws), False, False)


def per_call(loop, *args):
    """Median µs per call of a compiled loop ``loop(*args, n)``."""
    loop(*args, 10)
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        loop(*args, N)
        runs.append((time.perf_counter() - t0) / N * 1e6)
    return float(np.median(runs))


#: the frames of C-EFPA per robot (those of benchmarks/chignoli23.py)
FRAMES = {"mini_cheetah": ["FR_foot", "FL_foot", "HR_foot", "HL_foot"],
          "mit_humanoid": ["right_foot", "left_foot", "right_hand", "left_hand"],
          "jvrc1_humanoid": ["left-foot", "right-foot", "left-hand", "right-hand"]}


def main(name="mini_cheetah"):
    model = getattr(sd.models, name)()
    y, yd, ydd, tau = state(model)
    frames = FRAMES.get(name, [model.frames[-1].name])
    sd.cluster_aba(model, y, yd, tau)
    sd.cluster_rnea(model, y, yd, ydd)
    sd.cluster_efpa(model, y, frames)
    fs = frame_set(model, frames)
    Z, Omega = np.empty((2 * len(frames), len(yd), 6)), np.empty((6 * len(frames), 6 * len(frames)))
    packed = packed_clusters(model)
    c = model.compiled
    ws = derived(model).buffer()
    cws = cluster_workspace_buffer(model, packed)
    ci, cf = packed.ci, packed.cf
    out = np.empty(len(yd))
    T = np.random.default_rng(0).normal(size=model.nv)
    tables, _, _ = _plain_call(model)  # (the rotor robots are explicit: the plain kernel, not the solving one)
    print(f"{name}, load average {os.getloadavg()}")
    calls = {"sd.cluster_aba (public)": lambda: sd.cluster_aba(model, y, yd, tau),
             "C-ABA kernel called from Python": lambda: cluster_aba_kernel(c.mi, c.mf, ws, y, yd, tau, NO_FORCES, ci, cf,
                                                                           cws, True, out),
             "sd.cluster_rnea (public)": lambda: sd.cluster_rnea(model, y, yd, ydd),
             "C-RNEA kernel called from Python": lambda: cluster_rnea_kernel(c.mi, c.mf, ws, y, yd, ydd, NO_FORCES, ci,
                                                                             cf, cws, True, out),
             "C-RNEA plain kernel called from Python": lambda: cluster_rnea_plain_kernel(tables, y, yd, ydd, True,
                                                                                         out),
             "sd.cluster_efpa (public)": lambda: sd.cluster_efpa(model, y, frames),
             "C-EFPA kernel called from Python": lambda: cluster_efpa_kernel(c.mi, c.mf, ws, y, fs.body, fs.rotation,
                                                                             fs.translation, Z, ci, cf, cws, Omega)}
    for label, f in calls.items():
        f()
        runs = [timeit.timeit(f, number=N) / N * 1e6 for _ in range(5)]
        print(f"  {label:40s} {np.median(runs):7.2f} µs")
    stages = [
        ("C-ABA kernel (compiled loop)", _aba, (c.mi, c.mf, ws, y, yd, tau, NO_FORCES, ci, cf, cws, out)),
        ("  argument status", _status, (c.mi, c.mf, ci, y, yd, tau, NO_FORCES, len(yd))),
        ("  positions pass (the five below)", _positions, (c.mi, c.mf, ws, ci, cf, cws, y, yd)),
        ("    explicit map q, q̇", _explicit, (c.mi, c.mf, ci, cf, cws, y, yd)),
        ("    joint placements", _placements, (c.mi, c.mf, ws, ci, cws)),
        ("    body velocities", _velocities, (c.mi, c.mf, ws, ci, cws)),
        ("    output poses", _poses, (c.mi, c.mf, ws, ci, cws)),
        ("    S_k and c_k", _subspaces, (c.mi, c.mf, ws, ci, cf, cws)),
        ("  cluster inertias I^A_k, p^A_k", _init, (c.mi, c.mf, ws, ci, cws, NO_FORCES)),
        ("  cluster inertias + backward pass", _backward, (c.mi, c.mf, ws, ci, cf, cws, tau, NO_FORCES)),
        ("  forward pass", _forward, (c.mi, c.mf, ws, ci, cws, out)),
        ("C-RNEA kernel (compiled loop)", _rnea, (c.mi, c.mf, ws, y, yd, ydd, NO_FORCES, ci, cf, cws, out)),
        ("  explicit maps q, q̇, q̈ and Gᵀ", _rnea_maps, (c.mi, c.mf, ci, cf, cws, y, yd, ydd, T, out)),
        ("  tree RNEA of the spanning tree", _tree_rnea, (c.mi, c.mf, ws, ci, cws, NO_FORCES, T)),
        ("C-RNEA plain kernel (compiled loop)", _rnea_plain, (tables, y, yd, ydd, out)),
        ("C-EFPA kernel (compiled loop)", _efpa, (c.mi, c.mf, ws, y, fs.body, fs.rotation, fs.translation, Z, ci, cf,
                                                  cws, Omega)),
        ("  positions, inertias, backward pass", _efpa_backward, (c.mi, c.mf, ws, y, ci, cf, cws)),
    ]
    for label, loop, args in stages:
        print(f"  {label:40s} {per_call(loop, *args):7.2f} µs")


if __name__ == "__main__":
    main(*sys.argv[1:])
