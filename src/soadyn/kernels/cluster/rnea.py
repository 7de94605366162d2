"""C-RNEA: constrained inverse dynamics by the cluster-based recursive Newton–Euler
algorithm [Chignoli23, §VI]:

    τ_ind = Gᵀ (M(q)(G ÿ + g) + C(q, G ẏ)),   q = γ(y)   [Chignoli23, eq. 31, 35].

The cluster forward pass (eq. 33–34) gives each body the acceleration the spanning tree
gives it at q̈ = G ÿ + g — a cluster's transform chain is its bodies' tree transforms, and
S_k ÿ_k + c_k is their joints' motion — and the backward pass (eq. 35) followed by
τ_k = S_kᵀ f^J_k (eq. 31) is Gᵀ applied to the tree's joint forces. So the kernel runs
the explicit map, the tree RNEA (the passes of :func:`~soadyn.kernels.rnea.rnea_passes`, the
one RNEA recursion of the library) at (γ(y), G ẏ, G ÿ + g), and Gᵀ cluster by cluster: the same
result with the tree's per-body step, which needs no cluster subspaces S_k.
"""
from __future__ import annotations

from numba import njit

from ...core.layout import borrow, carve, model_tables, workspace_size
from ...core.status import BAD_QUATERNION, BAD_SHAPE, OK
from ..kinematics import body_accelerations, body_velocities, joint_placements, quaternions_ok
from ..rnea import body_forces_pass, generalized_forces_pass
from .explicit import apply_explicit_map, apply_explicit_map_transpose
from .implicit import prepare_implicit
from .kinematics import cluster_state_status
from .layout import cluster_tables, cluster_workspace, split_plain_tables


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
    if ws.shape[0] != workspace_size(m.nb, m.nv):
        return BAD_SHAPE
    # the passes of the tree RNEA (rnea_passes without its argument checks: q, q̇, q̈ come
    # from the checked y, ẏ, ÿ)
    joint_placements(mi, mf, ws, w.q)
    body_velocities(mi, mf, ws, w.qd)
    body_accelerations(mi, mf, ws, w.qdd, gravity, True)
    body_forces_pass(mi, mf, ws, fext, True)
    T = carve(w.flat, w.scratch_offsets[0], m.nv)  # the tree's joint forces, in a scratch area (≥ 6 nb rows)
    generalized_forces_pass(mi, mf, ws, T)
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, T, tau)  # τ_ind = Gᵀ T
    return OK


@njit(cache=True)
def cluster_rnea_plain_kernel(mci, mcf, wcws, y, yd, ydd, gravity, tau):
    """:func:`cluster_rnea_kernel` for the plain call (no external forces) with its tables
    in three arrays, ``mci`` = [mi | ci], ``mcf`` = [mf | cf] and ``wcws`` = [ws | cws]
    (:func:`~.layout.split_plain_tables`; Numba's dispatcher costs ~0.15 µs per array
    argument). Returns a status."""
    ok, mi, mf, ws, ci, cf, cws = split_plain_tables(mci, mcf, wcws)
    if not ok:
        return BAD_SHAPE
    return cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, carve(mcf, 0, (0, 6)), ci, cf, cws, gravity, tau)


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
