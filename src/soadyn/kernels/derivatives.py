"""Analytical derivatives of inverse and forward dynamics: ∂τ/∂q, ∂τ/∂v, M and
∂q̈/∂q, ∂q̈/∂v, M⁻¹ for trees, O(N d) (d the depth of the tree) plus the products with M⁻¹.

The scheme of [Carpentier18] (the derivatives of the RNEA with every quantity in
world axes at the world origin, where the composite quantities of a subtree add without
transforms), written for soadyn's joints; the derivation and the equations are in
``docs/derivatives.md``. With s_c the world column of dof c, V, α the world velocity and
acceleration of a body (α(world) = −g), B_c and A_c the velocity and acceleration of the
frame that dof c moves from (its body's parent for a one-frame joint; the sub-hinge frame
before it for a composite joint):

forward, per dof c (:func:`_forward_step`)::

    ψ_c = B_c × s_c                       ∂V/∂q_c − s_c × V   (for every body c moves)
    η_c = A_c × s_c + B_c × ψ_c           ∂α/∂q_c − s_c × α + V × ψ_c
    ζ_c = W_c × s_c + ψ_c                 ∂α/∂v_c − s_c × V    (W_c: the frame s_c is fixed in)

per body: the world inertia Y(k), its rate Ẏ(k) = V ×* Y − Y V×, the momentum h(k) = Y V
and the force f(k) = Yα + V ×* h − f_ext(k); backward, the subtree sums Y^c, Ẏ^c, h^c, F
and per dof c of body k (:func:`_backward_step`), with B^c x = Ẏ^c x + x ×* h^c::

    ∂F/∂q_c = s_c ×* F + Y^c η_c + B^c ψ_c,    ∂F/∂v_c = Y^c ζ_c + B^c s_c,    ∂F/∂a_c = Y^c s_c

so that for a dof r of an ancestor of k
    ∂τ_r/∂q_c = s_rᵀ ∂F/∂q_c,   ∂τ_c/∂q_r = (Y^c s_c)ᵀ η_r + (B^cᵀ s_c)ᵀ ψ_r
and the same with (ζ, s) for v and (s, 0) for the mass matrix; between two dofs of k's own
joint the second form where r moves c, the first where it does not (a later sub-hinge).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core.jit import helper, kernel
from ..core.joints import COMPOSITE
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .aba import aba_into
from .kinematics import configuration_status, forces_shape_ok, joint_placements, rates_shape_ok, state_status, \
    world_poses
from .ltdl import factor_and_invert, ltdl_solve
from .primitives import (add_rigid_inertia_to_parent, cross_force6, cross_motion6, force_to_world, inertia_rate,
                         joint_column_to_world, rigid_inertia_times)

#: The per-call arrays of the derivative passes, carved from one buffer of
#: :func:`derivative_size` floats that the kernel allocates (O(N), thread-local) and passes
#: down (borrowed views, see :func:`~soadyn.core.layout.carve`: no reference counting in
#: the loops). Per dof c (nv, 6), world axes at the world origin: ``psi`` ψ_c, ``eta`` η_c,
#: ``zeta`` ζ_c; ``u`` = Y^c s_c and ``w`` = B^cᵀ s_c of its body's subtree; ``dFq``,
#: ``dFv`` the derivatives ∂F/∂q_c, ∂F/∂v_c of the force its body's hinge transmits. Per
#: body (nb, 6): velocity ``V``, acceleration ``A`` (α(world) = −g), momentum ``h``, force
#: ``F`` (body, then subtree); (nb, 10): inertia ``Y`` and its rate ``Ydot`` in the
#: 10-parameter form of ``ModelTables.rigid`` (body, then subtree).
DerivativeViews = namedtuple("DerivativeViews", ("psi", "eta", "zeta", "u", "w", "dFq", "dFv",
                                                 "V", "A", "h", "F", "Y", "Ydot"))


@helper(forceinline=True)
def derivative_size(nb, nv):
    """Length of the buffer of :func:`derivative_views`."""
    return 7 * 6 * nv + nb * (4 * 6 + 2 * 10)


@helper(forceinline=True)
def derivative_views(buf, nb, nv):
    """Named views of ``buf`` (:class:`DerivativeViews`; borrowed: ``buf`` must outlive them)."""
    o = 0
    psi = carve(buf, o, (nv, 6)); o += 6 * nv
    eta = carve(buf, o, (nv, 6)); o += 6 * nv
    zeta = carve(buf, o, (nv, 6)); o += 6 * nv
    u = carve(buf, o, (nv, 6)); o += 6 * nv
    w = carve(buf, o, (nv, 6)); o += 6 * nv
    dFq = carve(buf, o, (nv, 6)); o += 6 * nv
    dFv = carve(buf, o, (nv, 6)); o += 6 * nv
    V = carve(buf, o, (nb, 6)); o += 6 * nb
    A = carve(buf, o, (nb, 6)); o += 6 * nb
    h = carve(buf, o, (nb, 6)); o += 6 * nb
    F = carve(buf, o, (nb, 6)); o += 6 * nb
    Y = carve(buf, o, (nb, 10)); o += 10 * nb
    Ydot = carve(buf, o, (nb, 10))
    return DerivativeViews(psi, eta, zeta, u, w, dFq, dFv, V, A, h, F, Y, Ydot)


# --------------------------------------------------------------------------- 6-vectors as scalars
@helper(forceinline=True)
def _dot(X, i, Y, j):
    return (X[i, 0] * Y[j, 0] + X[i, 1] * Y[j, 1] + X[i, 2] * Y[j, 2]
            + X[i, 3] * Y[j, 3] + X[i, 4] * Y[j, 4] + X[i, 5] * Y[j, 5])


@helper(forceinline=True)
def _store(X, i, x0, x1, x2, x3, x4, x5):
    X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5] = x0, x1, x2, x3, x4, x5


@helper(forceinline=True)
def _times(Y, k, X, c):
    """Y[k] X[c]: a 10-parameter inertia (or inertia rate) times a motion, 6 scalars."""
    return rigid_inertia_times(Y, k, X[c, 0], X[c, 1], X[c, 2], X[c, 3], X[c, 4], X[c, 5])


# --------------------------------------------------------------------------- forward
@helper(forceinline=True)
def _forward_step(m, w, d, i, v, a, fext, gravity):
    """Body i's world columns s_c, ψ_c, η_c, ζ_c, its V, α, Y, Ẏ, h and f (its parent's
    V and α must be known). An empty ``v``, ``a`` or ``fext`` means zero."""
    p = m.parent[i]
    if p >= 0:
        v0, v1, v2, v3, v4, v5 = d.V[p, 0], d.V[p, 1], d.V[p, 2], d.V[p, 3], d.V[p, 4], d.V[p, 5]
        a0, a1, a2, a3, a4, a5 = d.A[p, 0], d.A[p, 1], d.A[p, 2], d.A[p, 3], d.A[p, 4], d.A[p, 5]
    else:
        v0 = v1 = v2 = v3 = v4 = v5 = 0.0
        a0 = a1 = a2 = 0.0
        if gravity:
            a3, a4, a5 = -m.gravity[0], -m.gravity[1], -m.gravity[2]
        else:
            a3 = a4 = a5 = 0.0
    # (b, e): velocity and acceleration of the frame the next dof moves from — the
    # parent's for a one-frame joint, advanced sub-hinge by sub-hinge for a composite one
    b0, b1, b2, b3, b4, b5 = v0, v1, v2, v3, v4, v5
    e0, e1, e2, e3, e4, e5 = a0, a1, a2, a3, a4, a5
    composite = m.joint_type[i] == COMPOSITE
    has_v, has_a = v.shape[0] > 0, a.shape[0] > 0
    vi = m.v_index[i]
    n = m.joint_nv[i]
    Sw = w.Sw
    for c in range(vi, vi + n):
        s0, s1, s2, s3, s4, s5 = joint_column_to_world(m.axis_code[i], i, w.S, c, w.Rw, w.pw)
        _store(Sw, c, s0, s1, s2, s3, s4, s5)
        p0, p1, p2, p3, p4, p5 = cross_motion6(b0, b1, b2, b3, b4, b5, s0, s1, s2, s3, s4, s5)
        _store(d.psi, c, p0, p1, p2, p3, p4, p5)
        x0, x1, x2, x3, x4, x5 = cross_motion6(e0, e1, e2, e3, e4, e5, s0, s1, s2, s3, s4, s5)
        y0, y1, y2, y3, y4, y5 = cross_motion6(b0, b1, b2, b3, b4, b5, p0, p1, p2, p3, p4, p5)
        _store(d.eta, c, x0 + y0, x1 + y1, x2 + y2, x3 + y3, x4 + y4, x5 + y5)
        qd = v[c] if has_v else 0.0
        qdd = a[c] if has_a else 0.0
        # V += s q̇, α += s q̈ + (W × s) q̇ with W × s = ψ (the sum of the W_c × s_c q̇_c
        # over a one-frame joint's dofs is V_p × S q̇ too)
        v0 += s0 * qd
        v1 += s1 * qd
        v2 += s2 * qd
        v3 += s3 * qd
        v4 += s4 * qd
        v5 += s5 * qd
        a0 += s0 * qdd + p0 * qd
        a1 += s1 * qdd + p1 * qd
        a2 += s2 * qdd + p2 * qd
        a3 += s3 * qdd + p3 * qd
        a4 += s4 * qdd + p4 * qd
        a5 += s5 * qdd + p5 * qd
        if composite:
            b0, b1, b2, b3, b4, b5 = v0, v1, v2, v3, v4, v5
            e0, e1, e2, e3, e4, e5 = a0, a1, a2, a3, a4, a5
    _store(d.V, i, v0, v1, v2, v3, v4, v5)
    _store(d.A, i, a0, a1, a2, a3, a4, a5)
    for c in range(vi, vi + n):
        # ζ = W × s + ψ: W = B for a sub-hinge (ζ = 2ψ), W = V for a one-frame joint
        if composite:
            z0, z1, z2, z3, z4, z5 = d.psi[c, 0], d.psi[c, 1], d.psi[c, 2], d.psi[c, 3], d.psi[c, 4], d.psi[c, 5]
        else:
            z0, z1, z2, z3, z4, z5 = cross_motion6(v0, v1, v2, v3, v4, v5, Sw[c, 0], Sw[c, 1], Sw[c, 2],
                                                   Sw[c, 3], Sw[c, 4], Sw[c, 5])
        _store(d.zeta, c, z0 + d.psi[c, 0], z1 + d.psi[c, 1], z2 + d.psi[c, 2], z3 + d.psi[c, 3],
               z4 + d.psi[c, 4], z5 + d.psi[c, 5])
    # body: world inertia, its rate, momentum and force
    Y = d.Y
    for k in range(10):
        Y[i, k] = 0.0
    add_rigid_inertia_to_parent(w.Rw, w.pw, i, m.rigid, Y, i)
    inertia_rate(Y, d.Ydot, i, v0, v1, v2, v3, v4, v5)
    h0, h1, h2, h3, h4, h5 = rigid_inertia_times(Y, i, v0, v1, v2, v3, v4, v5)
    _store(d.h, i, h0, h1, h2, h3, h4, h5)
    f0, f1, f2, f3, f4, f5 = rigid_inertia_times(Y, i, a0, a1, a2, a3, a4, a5)
    g0, g1, g2, g3, g4, g5 = cross_force6(v0, v1, v2, v3, v4, v5, h0, h1, h2, h3, h4, h5)
    if fext.shape[0] > 0:
        x0, x1, x2, x3, x4, x5 = force_to_world(w.Rw, w.pw, i, fext[i, 0], fext[i, 1], fext[i, 2],
                                                fext[i, 3], fext[i, 4], fext[i, 5])
    else:
        x0 = x1 = x2 = x3 = x4 = x5 = 0.0
    _store(d.F, i, f0 + g0 - x0, f1 + g1 - x1, f2 + g2 - x2, f3 + g3 - x3, f4 + g4 - x4, f5 + g5 - x5)


# --------------------------------------------------------------------------- backward
@helper(forceinline=True)
def _subtree_columns(d, Sw, i, c):
    """u_c = Y^c s_c, w_c = B^cᵀ s_c = Ẏ^c s_c − s_c ×* h^c and the force derivatives
    ∂F/∂q_c, ∂F/∂v_c of dof c of body i (B^c: x ↦ Ẏ^c x + x ×* h^c; its transpose is
    Ẏ^c − (· ×* h^c), Ẏ^c being symmetric and x ↦ x ×* h antisymmetric)."""
    Y, Yd = d.Y, d.Ydot
    hn0, hn1, hn2, hf0, hf1, hf2 = d.h[i, 0], d.h[i, 1], d.h[i, 2], d.h[i, 3], d.h[i, 4], d.h[i, 5]
    s0, s1, s2, s3, s4, s5 = Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5]
    u0, u1, u2, u3, u4, u5 = _times(Y, i, Sw, c)
    _store(d.u, c, u0, u1, u2, u3, u4, u5)
    r0, r1, r2, r3, r4, r5 = _times(Yd, i, Sw, c)
    x0, x1, x2, x3, x4, x5 = cross_force6(s0, s1, s2, s3, s4, s5, hn0, hn1, hn2, hf0, hf1, hf2)
    _store(d.w, c, r0 - x0, r1 - x1, r2 - x2, r3 - x3, r4 - x4, r5 - x5)
    # ∂F/∂v_c = Y^c ζ_c + Ẏ^c s_c + s_c ×* h^c
    z0, z1, z2, z3, z4, z5 = _times(Y, i, d.zeta, c)
    _store(d.dFv, c, z0 + r0 + x0, z1 + r1 + x1, z2 + r2 + x2, z3 + r3 + x3, z4 + r4 + x4, z5 + r5 + x5)
    # ∂F/∂q_c = s_c ×* F + Y^c η_c + Ẏ^c ψ_c + ψ_c ×* h^c
    a0, a1, a2, a3, a4, a5 = cross_force6(s0, s1, s2, s3, s4, s5, d.F[i, 0], d.F[i, 1], d.F[i, 2],
                                          d.F[i, 3], d.F[i, 4], d.F[i, 5])
    e0, e1, e2, e3, e4, e5 = _times(Y, i, d.eta, c)
    y0, y1, y2, y3, y4, y5 = _times(Yd, i, d.psi, c)
    g0, g1, g2, g3, g4, g5 = cross_force6(d.psi[c, 0], d.psi[c, 1], d.psi[c, 2], d.psi[c, 3], d.psi[c, 4],
                                          d.psi[c, 5], hn0, hn1, hn2, hf0, hf1, hf2)
    _store(d.dFq, c, a0 + e0 + y0 + g0, a1 + e1 + y1 + g1, a2 + e2 + y2 + g2, a3 + e3 + y3 + g3,
           a4 + e4 + y4 + g4, a5 + e5 + y5 + g5)


@helper(forceinline=True)
def _backward_step(m, w, d, i, dq, dv, M):
    """The rows and columns of body i's dofs against its own and its ancestors' dofs (its
    subtree sums must be complete), then its subtree sums added to its parent's."""
    Sw = w.Sw
    vi = m.v_index[i]
    n = m.joint_nv[i]
    for c in range(vi, vi + n):
        _subtree_columns(d, Sw, i, c)
    composite = m.joint_type[i] == COMPOSITE
    for c in range(vi, vi + n):
        for r in range(vi, vi + n):
            # entry (c, r): dof r moves dof c unless r is a later sub-hinge of a composite joint
            if r <= c:
                x = _dot(d.u, c, Sw, r)
                M[c, r] = x
                M[r, c] = x
            dv[c, r] = _dot(d.u, c, d.zeta, r) + _dot(d.w, c, Sw, r)
            if composite and r > c:
                dq[c, r] = _dot(Sw, c, d.dFq, r)
            else:
                dq[c, r] = _dot(d.u, c, d.eta, r) + _dot(d.w, c, d.psi, r)
        # against every ancestor dof r; the vectors of c are read once (the stores into
        # the outputs could alias them, so the compiler would read them again per r)
        u0, u1, u2, u3, u4, u5 = d.u[c, 0], d.u[c, 1], d.u[c, 2], d.u[c, 3], d.u[c, 4], d.u[c, 5]
        w0, w1, w2, w3, w4, w5 = d.w[c, 0], d.w[c, 1], d.w[c, 2], d.w[c, 3], d.w[c, 4], d.w[c, 5]
        q0, q1, q2, q3, q4, q5 = d.dFq[c, 0], d.dFq[c, 1], d.dFq[c, 2], d.dFq[c, 3], d.dFq[c, 4], d.dFq[c, 5]
        g0, g1, g2, g3, g4, g5 = d.dFv[c, 0], d.dFv[c, 1], d.dFv[c, 2], d.dFv[c, 3], d.dFv[c, 4], d.dFv[c, 5]
        j = m.parent[i]
        while j >= 0:
            for r in range(m.v_index[j], m.v_index[j] + m.joint_nv[j]):
                s0, s1, s2, s3, s4, s5 = Sw[r, 0], Sw[r, 1], Sw[r, 2], Sw[r, 3], Sw[r, 4], Sw[r, 5]
                x = u0 * s0 + u1 * s1 + u2 * s2 + u3 * s3 + u4 * s4 + u5 * s5
                M[c, r] = x
                M[r, c] = x
                dq[r, c] = s0 * q0 + s1 * q1 + s2 * q2 + s3 * q3 + s4 * q4 + s5 * q5
                dv[r, c] = s0 * g0 + s1 * g1 + s2 * g2 + s3 * g3 + s4 * g4 + s5 * g5
                dv[c, r] = (w0 * s0 + w1 * s1 + w2 * s2 + w3 * s3 + w4 * s4 + w5 * s5
                            + u0 * d.zeta[r, 0] + u1 * d.zeta[r, 1] + u2 * d.zeta[r, 2] + u3 * d.zeta[r, 3]
                            + u4 * d.zeta[r, 4] + u5 * d.zeta[r, 5])
                dq[c, r] = (u0 * d.eta[r, 0] + u1 * d.eta[r, 1] + u2 * d.eta[r, 2] + u3 * d.eta[r, 3]
                            + u4 * d.eta[r, 4] + u5 * d.eta[r, 5]
                            + w0 * d.psi[r, 0] + w1 * d.psi[r, 1] + w2 * d.psi[r, 2] + w3 * d.psi[r, 3]
                            + w4 * d.psi[r, 4] + w5 * d.psi[r, 5])
            j = m.parent[j]
    p = m.parent[i]
    if p >= 0:
        for k in range(10):
            d.Y[p, k] += d.Y[i, k]
            d.Ydot[p, k] += d.Ydot[i, k]
        for k in range(6):
            d.h[p, k] += d.h[i, k]
            d.F[p, k] += d.F[i, k]


# --------------------------------------------------------------------------- passes and kernels
@helper
def rnea_derivative_passes(mi, mf, ws, buf, v, a, fext, gravity, dq, dv, M):
    """∂τ/∂q, ∂τ/∂v and M into ``dq``, ``dv``, ``M`` (nv, nv), given the joint placements
    (``joint_placements`` first); ``buf``: :func:`derivative_size` floats of scratch.
    Entries of dofs on different branches are zero."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    world_poses(mi, mf, ws)
    d = derivative_views(buf, m.nb, m.nv)
    for i in range(m.nb):
        _forward_step(m, w, d, i, v, a, fext, gravity)
    dq[:, :] = 0.0
    dv[:, :] = 0.0
    M[:, :] = 0.0
    for i in range(m.nb - 1, -1, -1):
        _backward_step(m, w, d, i, dq, dv, M)


@kernel(nogil=True)
def rnea_derivatives_kernel(mi, mf, ws, q, v, a, fext, gravity, dtau_dq, dtau_dv, M):
    """∂τ/∂q (tangent space), ∂τ/∂v and M(q) of τ = rnea(q, v, a, f_ext) into the three
    (nv, nv) outputs; an empty ``v`` or ``a`` means zero. B = len(q) / nq states stored one
    after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a block of
    a batch's). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _rnea_derivatives_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B),
                                     state_of(fext, b, B), gravity, state_of(dtau_dq, b, B), state_of(dtau_dv, b, B),
                                     state_of(M, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _rnea_derivatives_state(mi, mf, ws, q, v, a, fext, gravity, dtau_dq, dtau_dv, M):
    """:func:`rnea_derivatives_kernel` on one state."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    nv = m.nv
    if not rates_shape_ok(m, v) or not rates_shape_ok(m, a) or not forces_shape_ok(m, fext):
        return BAD_SHAPE
    if dtau_dq.shape != (nv, nv) or dtau_dv.shape != (nv, nv) or M.shape != (nv, nv):
        return BAD_SHAPE
    st = state_status(q, v, a, fext)
    if st != OK:
        return st
    joint_placements(mi, mf, ws, q)
    buf = carve(workspace_views(ws, m).aux, 0, derivative_size(m.nb, nv))
    rnea_derivative_passes(mi, mf, ws, buf, v, a, fext, gravity, dtau_dq, dtau_dv, M)
    return OK


# compiled with reference counting (_nrt=True; the kernels are not, soadyn.core.jit): it
# allocates q̈ and the sparse factors of M, (nv, nv), which the O(N) workspace does not hold.
# Safe beside the kernels without it: every array it hands to a pass is a borrowed view
# (no reference to count) or its own allocation, and no pass returns an array it was given
@kernel(nogil=True, _nrt=True)
def aba_derivatives_kernel(mi, mf, ws, q, v, tau, fext, gravity, dqdd_dq, dqdd_dv, Minv):
    """∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ = M⁻¹ of q̈ = aba(q, v, τ, f_ext) into the three (nv, nv)
    outputs (:func:`_aba_derivatives_state`), for B = len(q) / nq states stored one after
    another (:func:`~soadyn.core.layout.state_of`). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _aba_derivatives_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(tau, b, B),
                                    state_of(fext, b, B), gravity, state_of(dqdd_dq, b, B), state_of(dqdd_dv, b, B),
                                    state_of(Minv, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _aba_derivatives_state(mi, mf, ws, q, v, tau, fext, gravity, dqdd_dq, dqdd_dv, Minv):
    """∂q̈/∂q = −M⁻¹ ∂τ/∂q, ∂q̈/∂v = −M⁻¹ ∂τ/∂v (the RNEA's derivatives at a = q̈) and
    ∂q̈/∂τ = M⁻¹ of q̈ = aba(q, v, τ, f_ext) into the three (nv, nv) outputs: q̈ by the ABA,
    the products with M⁻¹ by solves with the sparse LTDL factors of the M the derivative
    passes give ([Featherstone05]). Returns a status."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, tau = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(tau)
    m = model_tables(mi, mf)
    nv = m.nv
    qdd = np.empty(nv)
    st = aba_into(mi, mf, ws, q, v, tau, fext, gravity, qdd)  # checks every argument
    if st != OK:
        return st
    if dqdd_dq.shape != (nv, nv) or dqdd_dv.shape != (nv, nv) or Minv.shape != (nv, nv):
        return BAD_SHAPE
    LD = np.empty((nv, nv))
    buf = carve(workspace_views(ws, m).aux, 0, derivative_size(m.nb, nv))
    rnea_derivative_passes(mi, mf, ws, buf, v, qdd, fext, gravity, dqdd_dq, dqdd_dv, LD)
    lam = np.empty((2, nv), dtype=np.int64)  # λ and the subtree ends
    if not factor_and_invert(mi, mf, LD, lam, Minv):
        return SINGULAR
    # ∂τ/∂q, ∂τ/∂v have the sparsity of M: their rows end where M's do
    ltdl_solve(LD, lam[0], dqdd_dq, lam[1])
    ltdl_solve(LD, lam[0], dqdd_dv, lam[1])
    for r in range(nv):
        for c in range(nv):
            dqdd_dq[r, c] = -dqdd_dq[r, c]
            dqdd_dv[r, c] = -dqdd_dv[r, c]
    return OK
