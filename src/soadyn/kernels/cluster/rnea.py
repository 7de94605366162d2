"""C-RNEA: constrained inverse dynamics by the cluster-based recursive Newton–Euler
algorithm [Chignoli23, §VI]:

    τ_ind = Gᵀ (M(q)(G ÿ + g) + C(q, G ẏ)),   q = γ(y)   [Chignoli23, eq. 31, 35].

The cluster forward pass (eq. 33–34) gives each body the acceleration the spanning tree
gives it at q̈ = G ÿ + g — a cluster's transform chain is its bodies' tree transforms, and
S_k ÿ_k + c_k is their joints' motion — and the backward pass (eq. 35) followed by
τ_k = S_kᵀ f^J_k (eq. 31) is Gᵀ applied to the tree's joint forces. So the kernel runs
the explicit map, the tree RNEA (:func:`~soadyn.kernels.rnea.rnea_passes`, the one RNEA
recursion of the library) at (γ(y), G ẏ, G ÿ + g), and Gᵀ cluster by cluster: the same
result with the tree's per-body step, which needs no cluster subspaces S_k.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...core.layout import (borrow, carve, model_float_size, model_int_size, model_tables, split_model_tables,
                            workspace_size, workspace_views)
from ...core.status import BAD_QUATERNION, BAD_SHAPE, OK
from ..kinematics import body_accelerations, body_velocities, joint_placements, quaternions_ok
from ..primitives import add_cross_force
from ..rnea import body_forces_pass, generalized_forces_pass, rnea_passes
from .explicit import apply_explicit_map, apply_explicit_map_transpose
from .implicit import prepare_implicit
from .kinematics import cluster_state_status
from .layout import HEADER, cluster_scratch, cluster_tables, cluster_workspace, rotor_constants


@njit(cache=True)
def cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau):
    """τ_ind from (y, ẏ, ÿ) into ``tau`` (the nonlinear clusters prepared in the
    workspace: their γ, G and g); returns a status."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, ci, cf, cws = borrow(mi), borrow(mf), borrow(ws), borrow(ci), borrow(cf), borrow(cws)
    y, yd, ydd, tau = borrow(y), borrow(yd), borrow(ydd), borrow(tau)
    st = cluster_state_status(mi, mf, ci, y, yd, ydd, fext, tau.shape[0])
    if st != OK:
        return st
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)  # q = γ(y): rigid and linear clusters
    apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)  # q̇ = G ẏ
    apply_explicit_map(mi, mf, ci, cf, cws, ydd, w.qdd, False, True)  # q̈ = G ÿ + g
    if not quaternions_ok(m, w.q):
        return BAD_QUATERNION
    T = carve(w.flat, w.scratch_offsets[0], m.nv)  # the tree's joint forces, in a scratch area (≥ 6 nb rows)
    st = rnea_passes(mi, mf, ws, w.q, w.qd, w.qdd, fext, gravity, T)
    if st != OK:
        return st
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, T, tau)  # τ_ind = Gᵀ T
    return OK


def rotor_free_tables(mi, mf, ci):
    """``(mi, mf, index)``: the packed spanning tree without the rotors of the link–rotor
    pairs (those hinged to a body: a rotor on the world stays), and the index (nb,) of
    every body in it (−1: a rotor taken out): the tree of :func:`cluster_rnea_plain_kernel`.
    Its joints keep their q and v indices (the rotors' entries of q, v are then unused)."""
    m, c = model_tables(mi, mf), cluster_tables(ci)
    rotor = np.zeros(m.nb, dtype=bool)
    for k in range(c.n):
        if c.rotor_offset[k] >= 0:
            i = c.bodies[c.body_start[k] + c.rotor_local[k]]
            rotor[i] = c.output_body[i] >= 0
    keep = np.flatnonzero(~rotor)
    index = np.full(m.nb, -1, dtype=np.int64)
    index[keep] = np.arange(len(keep))
    mi2, mf2 = np.zeros(model_int_size(len(keep)), dtype=np.int64), np.zeros(model_float_size(len(keep)))
    mi2[:3] = len(keep), m.nq, m.nv
    m2 = model_tables(mi2, mf2)
    for name in m._fields[3:]:
        if name != "gravity":
            getattr(m2, name)[:] = getattr(m, name)[keep]
    m2.gravity[:] = m.gravity
    m2.parent[:] = np.where(m2.parent >= 0, index[np.maximum(m2.parent, 0)], -1)  # rotors are leaves: no orphans
    return mi2, mf2, index


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rotor_step(c, cf, w, k, A, V, F, yd, ydd):
    """The rotor of link–rotor pair k in the frame of its output body Λ (whose velocity
    ``V``, acceleration ``A`` and force ``F``, (6,), are given): with the pair's constants
    I_r, s_r (:func:`~.layout.rotor_constants`; the rotor's inertia is constant in Λ's
    frame) and ẏ_k, ÿ_k,

        v_r = V + s_r ẏ_k,   a_r = A + s_r ÿ_k + V × s_r ẏ_k,   f_r = I_r a_r + v_r ×* I_r v_r

    [Jain12, eq. 14]; F += f_r, and s_rᵀ f_r (the rotor's share of τ_k, [Chignoli23,
    eq. 31]) is returned."""
    I_r, s, _ = rotor_constants(c, cf, k)
    x, xa = yd[c.yv_start[k]], ydd[c.yv_start[k]]
    vr, ar, h = w.vec[0], w.vec[1], w.vec[2]
    w0, w1, w2, l0, l1, l2 = V[0], V[1], V[2], V[3], V[4], V[5]
    s0, s1, s2, t0, t1, t2 = s[0] * x, s[1] * x, s[2] * x, s[3] * x, s[4] * x, s[5] * x
    ar[0] = w1 * s2 - w2 * s1  # V × (s ẏ)
    ar[1] = w2 * s0 - w0 * s2
    ar[2] = w0 * s1 - w1 * s0
    ar[3] = w1 * t2 - w2 * t1 + l1 * s2 - l2 * s1
    ar[4] = w2 * t0 - w0 * t2 + l2 * s0 - l0 * s2
    ar[5] = w0 * t1 - w1 * t0 + l0 * s1 - l1 * s0
    for e in range(6):
        vr[e] = V[e] + s[e] * x
        ar[e] += A[e] + s[e] * xa
    for r in range(6):
        acc_h, acc_f = 0.0, 0.0
        for e in range(6):
            acc_h += I_r[r, e] * vr[e]
            acc_f += I_r[r, e] * ar[e]
        h[r] = acc_h
        w.vec[3, r] = acc_f
    add_cross_force(w.vec, 0, w.vec, 2, w.vec, 3)  # f_r = I_r a_r + v_r ×* h
    acc = 0.0
    for e in range(6):
        F[e] += w.vec[3, e]
        acc += s[e] * w.vec[3, e]
    return acc


@njit(cache=True)
def cluster_rnea_plain_kernel(mci, mcf, wcws, y, yd, ydd, gravity, tau):
    """:func:`cluster_rnea_kernel` for the plain call (no external forces), with the
    link–rotor pairs' rotors taken out of the tree pass: the tree RNEA runs on the
    spanning tree without them (:func:`rotor_free_tables`) and each rotor is one constant
    inertia in its output body's frame (:func:`_rotor_step`) — no joint placement, no
    transform per rotor. Its tables in three arrays (Numba's dispatcher costs ~0.15 µs per
    array argument): ``mci`` = [mi | mi of that tree | each body's index in it (nb,) | ci],
    ``mcf`` = [mf | mf of that tree | cf] and ``wcws`` = [that tree's workspace | cws].
    Returns a status."""
    # the model, then the rotor-free tree, each as [mi | rest], [mf | rest]
    ok, mi, mf, rest_i, rest_f = split_model_tables(mci, mcf)
    ok_r, mir, mfr, rest_i, cf = split_model_tables(rest_i, rest_f)
    nb = mi[0]
    if not (ok and ok_r and rest_i.shape[0] >= nb + len(HEADER) and 0 <= mir[0] <= nb):
        return BAD_SHAPE
    index, ci = carve(rest_i, 0, nb), carve(rest_i, nb, rest_i.shape[0] - nb)
    nws = workspace_size(mir[0], mir[2])
    if wcws.shape[0] != nws + ci[3] or ci[1] != nb:
        return BAD_SHAPE
    ws, cws = carve(wcws, 0, nws), carve(wcws, nws, ci[3])
    y, yd, ydd, tau = borrow(y), borrow(yd), borrow(ydd), borrow(tau)
    st = cluster_state_status(mi, mf, ci, y, yd, ydd, carve(mcf, 0, (0, 6)), tau.shape[0])
    if st != OK:
        return st
    if yd.shape[0] == 0 or ydd.shape[0] == 0:  # the front passes vectors; anything else: the validated kernel
        return BAD_SHAPE
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)  # q = γ(y): rigid and linear clusters
    apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)  # q̇ = G ẏ
    apply_explicit_map(mi, mf, ci, cf, cws, ydd, w.qdd, False, True)  # q̈ = G ÿ + g
    if not quaternions_ok(m, w.q):
        return BAD_QUATERNION
    joint_placements(mir, mfr, ws, w.q)  # the tree RNEA's passes on the rotor-free tree
    body_velocities(mir, mfr, ws, w.qd)
    body_accelerations(mir, mfr, ws, w.qdd, gravity, True)
    body_forces_pass(mir, mfr, ws, carve(mcf, 0, (0, 6)), True)
    t = workspace_views(ws, model_tables(mir, mfr))
    T = carve(w.flat, w.scratch_offsets[0], m.nv)  # the tree's joint forces, in a scratch area (≥ 6 nb rows)
    for k in range(c.n):
        if c.rotor_offset[k] >= 0 and index[c.bodies[c.body_start[k] + c.rotor_local[k]]] < 0:
            rotor = c.bodies[c.body_start[k] + c.rotor_local[k]]
            lam = index[c.output_body[rotor]]
            T[m.v_index[rotor]] = 0.0  # (the rotor-free tree leaves the rotor's entry alone)
            cluster_scratch(c, w, k)[0][0] = _rotor_step(c, cf, w, k, t.alpha[lam], t.V[lam], t.f[lam], yd, ydd)
    generalized_forces_pass(mir, mfr, ws, T)
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, T, tau)  # τ_ind = Gᵀ T
    for k in range(c.n):  # + the rotors' shares
        if c.rotor_offset[k] >= 0 and index[c.bodies[c.body_start[k] + c.rotor_local[k]]] < 0:
            tau[c.yv_start[k]] += cluster_scratch(c, w, k)[0][0]
    return OK


@njit(cache=True)
def cluster_rnea_state_kernel(mi, mf, ws, y, yd, ydd, fext, q, ci, cf, cws, gravity, mode, tau):
    """:func:`cluster_rnea_kernel` after :func:`~.implicit.prepare_implicit` (``q``,
    ``mode`` as for :func:`~.aba.cluster_aba_state_kernel`): one state of a batch."""
    st = prepare_implicit(mi, mf, ws, ci, cf, cws, y, yd, q, mode, True)
    if st != OK:
        return st
    return cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau)


@njit(nogil=True, cache=True)
def cluster_rnea_batch(mi, mf, ws, Y, YD, YDD, FEXT, Q, ci, cf, cws, gravity, mode, TAU, status, start, stop):
    """:func:`cluster_rnea_state_kernel` on states ``start`` to ``stop − 1`` of a batch, with
    this block's own copy of the cluster workspace (see :func:`soadyn.core.call.run_blocks`)."""
    local = cws.copy()
    for b in range(start, stop):
        status[b] = cluster_rnea_state_kernel(mi, mf, ws, Y[b], YD[b], YDD[b], FEXT[b], Q[b], ci, cf, local, gravity,
                                               mode, TAU[b])
