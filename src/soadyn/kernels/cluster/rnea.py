"""C-RNEA: constrained inverse dynamics by the cluster-based recursive Newton–Euler
algorithm [Chignoli23, §VI]: forward pass eq. 33–34 (the C-ABA forward pass with ÿ given),
body forces f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i, backward pass eq. 35 gathering them
on the output bodies, and τ_k = S_kᵀ f^J_k (eq. 31).
"""
from __future__ import annotations

from numba import njit

from ...core.layout import model_tables, workspace_views
from ...core.status import OK
from ..kinematics import state_status
from ..primitives import add_cross_force, add_force_to_parent, inertia_times_motion
from .aba import cluster_acceleration_pass
from .implicit import prepare_implicit
from .kinematics import positions_pass
from .layout import cluster_bodies, cluster_tables, cluster_workspace, motion_subspace


@njit(cache=True)
def cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau):
    """τ_ind from (y, ẏ, ÿ) into ``tau`` (the nonlinear clusters prepared in the
    workspace); returns a status."""
    st = state_status(y, yd, ydd, fext)
    if st != OK:
        return st
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True)
    if st != OK:
        return st
    cluster_acceleration_pass(mi, mf, ws, ci, cws, gravity, ydd, False)
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    F = t.f
    for i in range(m.nb):  # f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i
        inertia_times_motion(m.inertia, i, t.alpha, i, F, i)
        inertia_times_motion(m.inertia, i, t.V, i, t.z, i)
        add_cross_force(t.V, i, t.z, i, F, i)
        if fext.shape[0] > 0:
            for e in range(6):
                F[i, e] -= fext[i, e]
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for i in range(m.nb - 1, -1, -1):  # f^J_Λ(i) += ^ΛX*_i f^J_i: forces gathered on output bodies
        o = c.output_body[i]
        if o >= 0:
            add_force_to_parent(w.Ro, w.to, i, F, i, F, o)
    for k in range(c.n):  # τ_k = S_kᵀ f^J_k
        S = motion_subspace(c, w, k)
        bodies = cluster_bodies(c, k)
        for j in range(c.n_y[k]):
            acc = 0.0
            for a in range(bodies.shape[0]):
                for e in range(6):
                    acc += S[j, a, e] * F[bodies[a], e]
            tau[c.yv_start[k] + j] = acc
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
