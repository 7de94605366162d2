"""The Coriolis matrix C(q, q̇) (nv, nv): C q̇ the velocity-product forces of the RNEA and
Ṁ − 2C skew-symmetric, the factorization consistent with the Christoffel symbols of M
([Echeandia21]).

With every quantity in world axes at the world origin (as in [Carpentier18]), the mass
matrix is M = Σ_k J_kᵀ Y_k J_k, J_k the columns s_j of the joints that support body k and
Y_k body k's inertia; the columns move with ṡ_j = W_j × s_j (W_j: the velocity of the frame
s_j is fixed in — the body's own for a one-frame joint, the sub-hinge frame's for a
composite one), so J̇_k has the columns ṡ_j and Ẏ_k = V_k ×* Y_k − Y_k V_k×. Then

    C = Σ_k J_kᵀ (Y_k J̇_k + B_k J_k),   B_k x = ½ (Ẏ_k x + x ×* h_k),   h_k = Y_k V_k

gives C q̇ = Σ_k J_kᵀ (Y_k J̇_k q̇ + V_k ×* h_k) (B_k V_k = V_k ×* h_k: the RNEA's
velocity terms) and Ṁ − 2C = Σ_k (J̇_kᵀ Y_k J_k − J_kᵀ Y_k J̇_k) + J_kᵀ (Ẏ_k − 2B_k) J_k, skew
(x ↦ x ×* h is skew); the ½ splits V ×* h between its two arguments as the Christoffel
symbols split ∂M/∂q, so that C = ½ ∂(C q̇)/∂q̇ where q̇ are coordinate rates (Pinocchio's
``computeCoriolisMatrix`` makes the same choice). Grouped by subtrees, with the sums
Y^c, Ẏ^c, h^c over the subtree of i (which add without transforms in world axes), the
entries between dof s of body i and a dof r of i's joint or of an ancestor are

    C[r, s] = s_rᵀ (Y^c ṡ_s + B^c s_s),    C[s, r] = ṡ_rᵀ Y^c s_s + s_rᵀ B^cᵀ s_s  (r above i),

B^cᵀ x = ½ (Ẏ^c x − x ×* h^c); entries of dofs on different branches are zero. O(N d), d
the depth of the tree, like the mass matrix.
"""
from __future__ import annotations

from collections import namedtuple

from ..core.jit import helper, kernel
from ..core.joints import COMPOSITE
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, OK
from .kinematics import (configuration_status, joint_sincos, matrix_result_status, nonfinite, rates_shape_ok,
                         world_pose_step)
from .primitives import (add_rigid_inertia_to_parent, cross_force6, cross_motion6, inertia_rate,
                         joint_column_to_world, rigid_inertia_times)

#: The per-call arrays of the Coriolis passes, carved from the workspace's ``aux`` (world axes
#: at the world origin): ``V`` (nb, 6) body velocities; ``Y``, ``Ydot`` (nb, 10) inertias and
#: their rates in the 10-parameter form of ``ModelTables.rigid``, ``h`` (nb, 6) momenta (the
#: body's, then the subtree's); ``Sdot`` (nv, 6) the rates ṡ of the joint-map columns (the
#: columns themselves are the workspace's ``Sw``).
CoriolisViews = namedtuple("CoriolisViews", ("V", "Y", "Ydot", "h", "Sdot"))


@helper(forceinline=True)
def coriolis_size(nb, nv):
    """Floats of ``aux`` that :func:`coriolis_views` takes."""
    return nb * (6 + 10 + 10 + 6) + 6 * nv


@helper(forceinline=True)
def coriolis_views(buf, nb, nv):
    """Named views of ``buf`` (:class:`CoriolisViews`; borrowed: ``buf`` must outlive them)."""
    o = 0
    V = carve(buf, o, (nb, 6)); o += 6 * nb
    Y = carve(buf, o, (nb, 10)); o += 10 * nb
    Ydot = carve(buf, o, (nb, 10)); o += 10 * nb
    h = carve(buf, o, (nb, 6)); o += 6 * nb
    Sdot = carve(buf, o, (nv, 6))
    return CoriolisViews(V, Y, Ydot, h, Sdot)


@kernel(nogil=True)
def coriolis_kernel(mi, mf, ws, q, v, C):
    """C(q, q̇) (nv, nv) into ``C`` (:func:`_coriolis_state`; an empty ``v`` means zero), for
    B = len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`).
    Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _coriolis_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(C, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _coriolis_state(mi, mf, ws, q, v, C):
    """C (nv, nv) of one state: the forward pass (:func:`_forward_step`), then the subtree
    sums and the entries tips to base (:func:`_backward_step`)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    nv = m.nv
    if not rates_shape_ok(m, v) or C.shape[0] != nv or C.shape[1] != nv:
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    w = workspace_views(ws, m)
    d = coriolis_views(w.aux, m.nb, nv)
    sc = joint_sincos(w, q)
    for i in range(m.nb):
        _forward_step(m, w, d, i, q, sc, v)
    C[:, :] = 0.0
    for i in range(m.nb - 1, -1, -1):
        _backward_step(m, w, d, i, C)
    return matrix_result_status(C)


@helper(forceinline=True)
def _forward_step(m, w, d, i, q, sc, v):
    """Body i's world pose, columns s_c and their rates ṡ_c, its velocity V, inertia Y, Ẏ and
    momentum h (its parent's V must be known)."""
    world_pose_step(m, w, i, q, sc, w.Rw, w.pw)
    p = m.parent[i]
    if p >= 0:
        v0, v1, v2, v3, v4, v5 = d.V[p, 0], d.V[p, 1], d.V[p, 2], d.V[p, 3], d.V[p, 4], d.V[p, 5]
    else:
        v0 = v1 = v2 = v3 = v4 = v5 = 0.0
    composite = m.joint_type[i] == COMPOSITE
    has_v = v.shape[0] > 0
    Sw, Sd = w.Sw, d.Sdot
    vi = m.v_index[i]
    n = m.joint_nv[i]
    for c in range(vi, vi + n):
        s0, s1, s2, s3, s4, s5 = joint_column_to_world(m.axis_code[i], i, w.S, c, w.Rw, w.pw)
        Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5] = s0, s1, s2, s3, s4, s5
        if composite:  # ṡ_c = W × s_c, W the velocity of the sub-hinge frame before (or after) c
            (Sd[c, 0], Sd[c, 1], Sd[c, 2], Sd[c, 3], Sd[c, 4], Sd[c, 5]) = cross_motion6(
                v0, v1, v2, v3, v4, v5, s0, s1, s2, s3, s4, s5)
        x = v[c] if has_v else 0.0
        v0 += s0 * x
        v1 += s1 * x
        v2 += s2 * x
        v3 += s3 * x
        v4 += s4 * x
        v5 += s5 * x
    d.V[i, 0], d.V[i, 1], d.V[i, 2], d.V[i, 3], d.V[i, 4], d.V[i, 5] = v0, v1, v2, v3, v4, v5
    if not composite:  # ṡ_c = V × s_c: the columns are fixed in the body
        for c in range(vi, vi + n):
            (Sd[c, 0], Sd[c, 1], Sd[c, 2], Sd[c, 3], Sd[c, 4], Sd[c, 5]) = cross_motion6(
                v0, v1, v2, v3, v4, v5, Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5])
    Y = d.Y
    for k in range(10):
        Y[i, k] = 0.0
    add_rigid_inertia_to_parent(w.Rw, w.pw, i, m.rigid, Y, i)  # body i's inertia in world axes about O
    inertia_rate(Y, d.Ydot, i, v0, v1, v2, v3, v4, v5)
    d.h[i, 0], d.h[i, 1], d.h[i, 2], d.h[i, 3], d.h[i, 4], d.h[i, 5] = rigid_inertia_times(
        Y, i, v0, v1, v2, v3, v4, v5)


@helper(forceinline=True)
def _backward_step(m, w, d, i, C):
    """The entries between body i's dofs and its own and its ancestors' dofs (its subtree
    sums complete), then its subtree sums added to its parent's."""
    Sw, Sd = w.Sw, d.Sdot
    hn0, hn1, hn2, hf0, hf1, hf2 = d.h[i, 0], d.h[i, 1], d.h[i, 2], d.h[i, 3], d.h[i, 4], d.h[i, 5]
    vi = m.v_index[i]
    n = m.joint_nv[i]
    for c in range(vi, vi + n):
        s0, s1, s2, s3, s4, s5 = Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5]
        y0, y1, y2, y3, y4, y5 = rigid_inertia_times(d.Y, i, Sd[c, 0], Sd[c, 1], Sd[c, 2], Sd[c, 3], Sd[c, 4],
                                                     Sd[c, 5])
        r0, r1, r2, r3, r4, r5 = rigid_inertia_times(d.Ydot, i, s0, s1, s2, s3, s4, s5)
        x0, x1, x2, x3, x4, x5 = cross_force6(s0, s1, s2, s3, s4, s5, hn0, hn1, hn2, hf0, hf1, hf2)
        # a = Y^c ṡ_c + B^c s_c,  u = Y^c s_c,  b = B^cᵀ s_c
        a0, a1, a2 = y0 + 0.5 * (r0 + x0), y1 + 0.5 * (r1 + x1), y2 + 0.5 * (r2 + x2)
        a3, a4, a5 = y3 + 0.5 * (r3 + x3), y4 + 0.5 * (r4 + x4), y5 + 0.5 * (r5 + x5)
        b0, b1, b2 = 0.5 * (r0 - x0), 0.5 * (r1 - x1), 0.5 * (r2 - x2)
        b3, b4, b5 = 0.5 * (r3 - x3), 0.5 * (r4 - x4), 0.5 * (r5 - x5)
        u0, u1, u2, u3, u4, u5 = rigid_inertia_times(d.Y, i, s0, s1, s2, s3, s4, s5)
        for r in range(vi, vi + n):  # the joint's own block: C[r, c] = s_rᵀ a
            C[r, c] = (Sw[r, 0] * a0 + Sw[r, 1] * a1 + Sw[r, 2] * a2 + Sw[r, 3] * a3 + Sw[r, 4] * a4
                       + Sw[r, 5] * a5)
        j = m.parent[i]
        while j >= 0:
            for r in range(m.v_index[j], m.v_index[j] + m.joint_nv[j]):
                t0, t1, t2, t3, t4, t5 = Sw[r, 0], Sw[r, 1], Sw[r, 2], Sw[r, 3], Sw[r, 4], Sw[r, 5]
                C[r, c] = t0 * a0 + t1 * a1 + t2 * a2 + t3 * a3 + t4 * a4 + t5 * a5
                C[c, r] = (Sd[r, 0] * u0 + Sd[r, 1] * u1 + Sd[r, 2] * u2 + Sd[r, 3] * u3 + Sd[r, 4] * u4
                           + Sd[r, 5] * u5 + t0 * b0 + t1 * b1 + t2 * b2 + t3 * b3 + t4 * b4 + t5 * b5)
            j = m.parent[j]
    p = m.parent[i]
    if p >= 0:
        for k in range(10):
            d.Y[p, k] += d.Y[i, k]
            d.Ydot[p, k] += d.Ydot[i, k]
        for k in range(6):
            d.h[p, k] += d.h[i, k]
