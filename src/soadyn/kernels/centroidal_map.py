"""The centroidal momentum matrix A_G(q) by composite rigid bodies ([Orin13]), and its
linear rows over the mass, the Jacobian of the centre of mass J_c(q).

The system's spatial momentum about its centre of mass c, in world axes, is
h_G = Σ_k X_G,k* M(k) V(k) = A_G(q) q̇ (angular first: h_G = [k_G; l_G]). Grouping the sum
by joints, the column of A_G for dof s of body i is the momentum of the composite body of
i's subtree moving with that dof's joint-map column alone:

    A_G[:, s] = X_G,O* R^w(i) s_w,

with s_w the column in world axes at the world origin O, R^w(i) the subtree's composite
rigid-body inertia in the same axes, about O (in world axes the composites add without
transforms: R^w(i) = Σ_{k ⪰ i} R^w_k, [Jain24, topic 4] for the composite inertias), and
X_G,O* the shift of a force from O to c: [n; f] ↦ [n − c × f; f]. One base-to-tips pass
(world poses and world inertias), one tips-to-base pass (the sums and the columns): O(N).

The linear rows are the subtree's linear momentum, m_i^c v_s + ω_s × g_i^c for s_w =
[ω_s; v_s], m_i^c the subtree's mass and g_i^c = Σ_{k ⪰ i} m_k c_k its first moment; over the
total mass m they are J_c (ċ = J_c q̇), which needs only these four of each body's ten
parameters.
"""
from __future__ import annotations

from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, NO_MASS, OK
from .kinematics import configuration_status, joint_sincos, world_pose_step
from .primitives import add_rigid_inertia_to_parent, joint_column_to_world, rigid_inertia_times


@kernel(nogil=True)
def centroidal_map_kernel(mi, mf, ws, q, A):
    """A_G(q) into ``A`` of 6 rows per state, or J_c(q) into ``A`` of 3 rows per state (the
    output says which: a flag would be a constant that the plain-call kernel's compilation
    folds, with other roundings than this kernel's; :func:`_centroidal_map_state`), for B =
    len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`: one
    state for a call, a block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _centroidal_map_state(mi, mf, ws, state_of(q, b, B), state_of(A, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _centroidal_map_state(mi, mf, ws, q, A):
    """A_G into ``A`` (6, nv), or J_c into ``A`` (3, nv), of one configuration; NO_MASS for a
    system without mass."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    com_jacobian = A.shape[0] == 3
    if not (com_jacobian or A.shape[0] == 6) or A.shape[1] != m.nv:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    Rw, pw, Y = w.Rw, w.pw, w.crb  # Y: the composite inertias R^w(i), world axes about O
    sc = joint_sincos(w, q)
    n = 4 if com_jacobian else 10  # the mass and first moment only, or every parameter
    for i in range(m.nb):
        world_pose_step(m, w, i, q, sc, Rw, pw)
        if com_jacobian:  # m_k and m_k c_k = m_k p_k + R_k h_k (h_k = m_k c_k in the body frame)
            mk, h0, h1, h2 = m.rigid[i, 0], m.rigid[i, 1], m.rigid[i, 2], m.rigid[i, 3]
            Y[i, 0] = mk
            for a in range(3):
                Y[i, 1 + a] = mk * pw[i, a] + Rw[i, a, 0] * h0 + Rw[i, a, 1] * h1 + Rw[i, a, 2] * h2
        else:  # body i's own inertia in world axes about O
            for k in range(10):
                Y[i, k] = 0.0
            add_rigid_inertia_to_parent(Rw, pw, i, m.rigid, Y, i)
    mass = g0 = g1 = g2 = 0.0  # total mass and first moment Σ m_k c_k (world)
    for i in range(m.nb):
        mass += Y[i, 0]
        g0 += Y[i, 1]
        g1 += Y[i, 2]
        g2 += Y[i, 3]
    if not mass > 0.0:
        return NO_MASS
    c0, c1, c2 = g0 / mass, g1 / mass, g2 / mass
    inv = 1.0 / mass
    for i in range(m.nb - 1, -1, -1):  # i's subtree complete: its columns, then its sums to its parent
        vi = m.v_index[i]
        for col in range(vi, vi + m.joint_nv[i]):
            s0, s1, s2, s3, s4, s5 = joint_column_to_world(m.axis_code[i], i, w.S, col, Rw, pw)
            if com_jacobian:
                mc, h0, h1, h2 = Y[i, 0], Y[i, 1], Y[i, 2], Y[i, 3]
                A[0, col] = (mc * s3 + s1 * h2 - s2 * h1) * inv
                A[1, col] = (mc * s4 + s2 * h0 - s0 * h2) * inv
                A[2, col] = (mc * s5 + s0 * h1 - s1 * h0) * inv
                continue
            n0, n1, n2, f0, f1, f2 = rigid_inertia_times(Y, i, s0, s1, s2, s3, s4, s5)
            A[0, col] = n0 - (c1 * f2 - c2 * f1)
            A[1, col] = n1 - (c2 * f0 - c0 * f2)
            A[2, col] = n2 - (c0 * f1 - c1 * f0)
            A[3, col] = f0
            A[4, col] = f1
            A[5, col] = f2
        p = m.parent[i]
        if p >= 0:
            for k in range(n):
                Y[p, k] += Y[i, k]
    return OK
