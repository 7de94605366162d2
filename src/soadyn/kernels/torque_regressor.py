"""The joint-torque regressor Y(q, q̇, q̈) (nv, 10 nb): rnea(q, q̇, q̈) = Y π ([Atkeson86]).

π stacks each body's 10 dynamic parameters in Pinocchio's order (m, m c_x, m c_y, m c_z,
I_xx, I_xy, I_yy, I_xz, I_yz, I_zz), the rotational inertia I about the body origin in
body axes (:mod:`soadyn.core.parameters`). The RNEA's force on body k, f(k) = M(k)α(k) +
V(k) ×* M(k)V(k) [Jain12, eq. 14], is linear in body k's parameters: f(k) = A_k π_k with,
for V = [ω; v], α = [α_ω; α_v] (gravity entering as α(world) = −g) and a = α_v + ω × v
(the classical acceleration of the body origin), the columns [n; f]

    m:      [0; a]
    m c_j:  [e_j × a; α_ω × e_j + ω × (ω × e_j)]
    I_ab:   [L_ab(α_ω) + ω × L_ab(ω); 0],   L_ab(x) = ∂(I x)/∂I_ab.

The hinge forces gather them tips to base, T = H φ f [Jain12, eq. 12], so the block of
body k in the row of dof r of an ancestor j ⪯ k is s_rᵀ X_{O,k}* A_k: with A_k taken once
to world axes at the world origin (X_{O,k}*) and the columns s_r of the joints in the same
axes, each entry is one 6-term dot product. Entries of dofs that do not support body k are
zero. O(N d) for a tree of depth d.
"""
from __future__ import annotations

from ..core.jit import helper, kernel
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import checked_motion
from .primitives import force_to_world, joint_column_to_world


@kernel(nogil=True)
def torque_regressor_kernel(mi, mf, ws, q, v, a, gravity, Y):
    """Y(q, q̇, q̈) (nv, 10 nb) into ``Y`` (:func:`_torque_regressor_state`; an empty ``v`` or
    ``a`` means zero), for B = len(q) / nq states stored one after another
    (:func:`~soadyn.core.layout.state_of`). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _torque_regressor_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B), gravity,
                                     state_of(Y, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _torque_regressor_state(mi, mf, ws, q, v, a, gravity, Y):
    """Y of one state: the RNEA's kinematics (body frames), world poses and columns, then
    body by body its ten force columns in world axes and their projections on the columns
    of the joints that support it (:func:`_body_columns`)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
    st = checked_motion(mi, mf, ws, q, v, a, True, gravity)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    if Y.shape[0] != m.nv or Y.shape[1] != 10 * m.nb:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    Sw = w.Sw
    for i in range(m.nb):
        vi = m.v_index[i]
        for c in range(vi, vi + m.joint_nv[i]):
            Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5] = joint_column_to_world(
                m.axis_code[i], i, w.S, c, w.Rw, w.pw)
    Y[:, :] = 0.0  # entries of dofs that do not support a body stay zero
    F = carve(w.scratch, 0, (10, 6))
    for k in range(m.nb):
        _body_columns(m, w, k, F)
        j = k
        while j >= 0:
            for r in range(m.v_index[j], m.v_index[j] + m.joint_nv[j]):
                s0, s1, s2, s3, s4, s5 = Sw[r, 0], Sw[r, 1], Sw[r, 2], Sw[r, 3], Sw[r, 4], Sw[r, 5]
                for e in range(4):
                    Y[r, 10 * k + e] = (s0 * F[e, 0] + s1 * F[e, 1] + s2 * F[e, 2] + s3 * F[e, 3] + s4 * F[e, 4]
                                        + s5 * F[e, 5])
                for e in range(4, 10):  # the rotational parameters' columns are pure moments
                    Y[r, 10 * k + e] = s0 * F[e, 0] + s1 * F[e, 1] + s2 * F[e, 2]
            j = m.parent[j]
    return OK


@helper(forceinline=True)
def _body_columns(m, w, k, F):
    """F[e] = X_{O,k}* A_k[:, e] (10, 6): body k's force columns (module docstring) in world
    axes at the world origin, from its body-frame V and α (``w.V``, ``w.alpha``); of the
    six rotational columns (e ≥ 4) only the moments."""
    w0, w1, w2 = w.V[k, 0], w.V[k, 1], w.V[k, 2]
    u0, u1, u2 = w.V[k, 3], w.V[k, 4], w.V[k, 5]
    b0, b1, b2 = w.alpha[k, 0], w.alpha[k, 1], w.alpha[k, 2]
    # a = α_v + ω × v: the acceleration of the body origin
    c0 = w.alpha[k, 3] + w1 * u2 - w2 * u1
    c1 = w.alpha[k, 4] + w2 * u0 - w0 * u2
    c2 = w.alpha[k, 5] + w0 * u1 - w1 * u0
    ww = w0 * w0 + w1 * w1 + w2 * w2
    _store_world(w, k, F, 0, 0.0, 0.0, 0.0, c0, c1, c2)
    # m c_j: [e_j × a; α_ω × e_j + ω ω_j − |ω|² e_j]
    _store_world(w, k, F, 1, 0.0, -c2, c1, w0 * w0 - ww, b2 + w1 * w0, -b1 + w2 * w0)
    _store_world(w, k, F, 2, c2, 0.0, -c0, -b2 + w0 * w1, w1 * w1 - ww, b0 + w2 * w1)
    _store_world(w, k, F, 3, -c1, c0, 0.0, b1 + w0 * w2, -b0 + w1 * w2, w2 * w2 - ww)
    # I_ab: L_ab(α_ω) + ω × L_ab(ω), in Pinocchio's order xx, xy, yy, xz, yz, zz
    _store_rotational(w, k, F, 4, b0, 0.0, 0.0, w0, 0.0, 0.0, w0, w1, w2)
    _store_rotational(w, k, F, 5, b1, b0, 0.0, w1, w0, 0.0, w0, w1, w2)
    _store_rotational(w, k, F, 6, 0.0, b1, 0.0, 0.0, w1, 0.0, w0, w1, w2)
    _store_rotational(w, k, F, 7, b2, 0.0, b0, w2, 0.0, w0, w0, w1, w2)
    _store_rotational(w, k, F, 8, 0.0, b2, b1, 0.0, w2, w1, w0, w1, w2)
    _store_rotational(w, k, F, 9, 0.0, 0.0, b2, 0.0, 0.0, w2, w0, w1, w2)


@helper(forceinline=True)
def _store_world(w, k, F, e, n0, n1, n2, f0, f1, f2):
    """F[e] = the force [n; f] on body k (body axes, about its origin) in world axes about
    the world origin."""
    F[e, 0], F[e, 1], F[e, 2], F[e, 3], F[e, 4], F[e, 5] = force_to_world(w.Rw, w.pw, k, n0, n1, n2, f0, f1, f2)


@helper(forceinline=True)
def _store_rotational(w, k, F, e, x0, x1, x2, y0, y1, y2, w0, w1, w2):
    """F[e, :3] = the moment x + ω × y in world axes (x = L(α_ω), y = L(ω) of one rotational
    parameter): a pure moment, which only turns (its force part, zero, is not stored: the
    projections read the first three entries only)."""
    n0 = x0 + w1 * y2 - w2 * y1
    n1 = x1 + w2 * y0 - w0 * y2
    n2 = x2 + w0 * y1 - w1 * y0
    R = w.Rw
    for a in range(3):
        F[e, a] = R[k, a, 0] * n0 + R[k, a, 1] * n1 + R[k, a, 2] * n2
