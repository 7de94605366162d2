"""The Jacobian of the centre of mass, J_c(q) (3, nv): ċ = J_c q̇, world axes.

With m the total mass, c = Σ_k m_k c_k / m, so the column of J_c for dof s of body i is the
velocity that dof gives the subtree's centre of mass, weighted by the subtree's mass:

    J_c[:, s] = (m_i^c v_s + ω_s × g_i^c) / m,

for the joint-map column s_w = [ω_s; v_s] in world axes at the world origin (v_s the
velocity of the body point at the origin), m_i^c = Σ_{k ⪰ i} m_k the subtree's mass and
g_i^c = Σ_{k ⪰ i} m_k c_k its first moment (world): the linear rows of the centroidal
momentum matrix (:mod:`.centroidal_map`) over m, from the four mass parameters of each
body instead of ten. O(N): world poses base to tips, the sums and the columns tips to base.
"""
from __future__ import annotations

from ..core.jit import njit
from ..core.layout import borrow, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, NO_MASS, OK
from .kinematics import configuration_status, joint_sincos, world_pose_step
from .primitives import joint_column_to_world


@njit(nogil=True, cache=True)
def com_jacobian_kernel(mi, mf, ws, q, J):
    """J_c(q) (3, nv) into ``J`` (:func:`_com_jacobian_state`), for B = len(q) / nq states
    stored one after another (:func:`~soadyn.core.layout.state_of`). Returns the first
    status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _com_jacobian_state(mi, mf, ws, state_of(q, b, B), state_of(J, b, B))
        if st != OK:
            return st
    return OK


@njit(inline="always", cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _com_jacobian_state(mi, mf, ws, q, J):
    """J_c (3, nv) of one configuration; NO_MASS for a system without mass."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if J.shape[0] != 3 or J.shape[1] != m.nv:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    Rw, pw = w.Rw, w.pw
    G = w.crb  # columns 0..3: the subtree's mass m^c and first moment g^c (world)
    sc = joint_sincos(w, q)
    mass = 0.0
    for i in range(m.nb):
        world_pose_step(m, w, i, q, sc, Rw, pw)
        mk, h0, h1, h2 = m.rigid[i, 0], m.rigid[i, 1], m.rigid[i, 2], m.rigid[i, 3]
        G[i, 0] = mk
        for a in range(3):  # m_k c_k = m_k p_k + R_k h_k (h_k = m_k c_k in the body frame)
            G[i, 1 + a] = mk * pw[i, a] + Rw[i, a, 0] * h0 + Rw[i, a, 1] * h1 + Rw[i, a, 2] * h2
        mass += mk
    if not mass > 0.0:
        return NO_MASS
    inv = 1.0 / mass
    for i in range(m.nb - 1, -1, -1):  # i's subtree complete: its columns, then its sums to its parent
        mc, g0, g1, g2 = G[i, 0], G[i, 1], G[i, 2], G[i, 3]
        vi = m.v_index[i]
        for col in range(vi, vi + m.joint_nv[i]):
            w0, w1, w2, l0, l1, l2 = joint_column_to_world(m.axis_code[i], i, w.S, col, Rw, pw)
            J[0, col] = (mc * l0 + w1 * g2 - w2 * g1) * inv
            J[1, col] = (mc * l1 + w2 * g0 - w0 * g2) * inv
            J[2, col] = (mc * l2 + w0 * g1 - w1 * g0) * inv
        p = m.parent[i]
        if p >= 0:
            for k in range(4):
                G[p, k] += G[i, k]
    return OK
