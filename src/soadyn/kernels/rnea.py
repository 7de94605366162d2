"""Inverse dynamics by the recursive Newton–Euler algorithm (RNEA).

[Jain12, eq. 14–15], the Newton–Euler factorisation of the equations of motion:

    V = φ*H*θ̇,   α = φ*(H*θ̈ + a),   f = φ(Mα + b),   T = H f

evaluated as a base-to-tips scatter for V and α followed by a tips-to-base gather for f
(eq. 12: f(k) = Σ_{j ∈ children(k)} φ(k, j) f(j) + M(k)α(k) + b(k)). Gravity enters as
the base acceleration α(world) = −g; external forces f_ext(k) (body frame) are
subtracted from body k's force balance.
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, state_count, state_of, workspace_size, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import (body_accelerations, body_velocities, configuration_status, forces_shape_ok,
                         joint_placements, rates_shape_ok, result_status, state_status)
from .primitives import add_bias_force, add_force_to_parent, rigid_times_motion


@helper
def body_forces_pass(mi, mf, ws, fext, has_v):
    """f(k) = M(k)α(k) + b(k) − f_ext(k) into ``w.f``, b(k) = V(k) ×* M(k)V(k)
    [Jain12, eq. 14]. Needs ``w.alpha`` (and ``w.V`` when ``has_v``)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        force_step(m, w, i, fext, has_v)


@helper(forceinline=True)
def force_step(m, w, i, fext, has_v):
    """Body i's step of :func:`body_forces_pass`."""
    rigid_times_motion(m.rigid, i, w.alpha, i, w.f, i)
    if has_v:
        add_bias_force(m.rigid, i, w.V, i, w.f, i)
    if fext.shape[0] > 0:  # (nb, 6), or (0, 6): no forces
        for k in range(6):
            w.f[i, k] -= fext[i, k]


@helper
def generalized_forces_pass(mi, mf, ws, tau):
    """The tips-to-base gather f(℘(k)) += φ(℘(k), k) f(k) and T(k) = H(k) f(k) into
    ``tau`` [Jain12, eq. 12]."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb - 1, -1, -1):
        gather_step(m, w, i, tau)


@helper(forceinline=True)
def gather_step(m, w, i, tau):
    """Body i's step of :func:`generalized_forces_pass` (its children's forces already
    gathered into ``w.f[i]``)."""
    F, S = w.f, w.S
    vi = m.v_index[i]
    code = m.axis_code[i]
    if code != 0:
        x = F[i, abs(code) - 1]
        tau[vi] = x if code > 0 else -x
    else:
        for c in range(m.joint_nv[i]):
            acc = 0.0
            for k in range(6):
                acc += S[vi + c, k] * F[i, k]
            tau[vi + c] = acc
    p = m.parent[i]
    if p >= 0:
        add_force_to_parent(w.R, w.t, i, F, i, F, p)


@helper
def rnea_passes(mi, mf, ws, q, v, a, fext, gravity, tau):
    """The RNEA: τ into ``tau`` and the hinge forces f(k) in ``w.f``; returns a status."""
    mi, mf, ws, q, v, a, tau = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a), borrow(tau)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if tau.shape[0] != m.nv or not rates_shape_ok(m, v) or not rates_shape_ok(m, a) or not forces_shape_ok(m, fext):
        return BAD_SHAPE
    st = state_status(q, v, a, fext)
    if st != OK:
        return st
    joint_placements(mi, mf, ws, q)
    has_v = v.shape[0] > 0
    if has_v:
        body_velocities(mi, mf, ws, v)
    body_accelerations(mi, mf, ws, a, gravity, has_v)
    body_forces_pass(mi, mf, ws, fext, has_v)
    generalized_forces_pass(mi, mf, ws, tau)
    return result_status(tau)


@kernel
def rnea_kernel(mi, mf, ws, q, v, a, fext, gravity, tau):
    """τ = M(q)a + C(q, v) − Σ J_kᵀ f_ext(k) into ``tau``; an empty ``v`` or ``a`` means zero."""
    return rnea_passes(mi, mf, ws, q, v, a, fext, gravity, tau)


@kernel(nogil=True)
def hinge_forces_kernel(mi, mf, ws, q, v, a, fext, gravity, f):
    """The hinge forces f(k) (nb, 6) of :func:`_hinge_forces_state`, for B = len(q) / nq
    states stored one after another (:func:`~soadyn.core.layout.state_of`: one state for a
    call, a block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _hinge_forces_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B), state_of(fext, b,
                                 B), gravity, state_of(f, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _hinge_forces_state(mi, mf, ws, q, v, a, fext, gravity, f):
    """The spatial force f(k) (nb, 6) that each body's hinge transmits from its parent, in
    the body frame — the gathered forces of the RNEA [Jain12, eq. 12] — into ``f``."""
    m = model_tables(mi, mf)
    if f.shape[0] != m.nb or f.shape[1] != 6 or ws.shape[0] < workspace_size(m.nb, m.nv):
        return BAD_SHAPE
    w = workspace_views(ws, m)
    st = rnea_passes(mi, mf, ws, q, v, a, fext, gravity, w.eps)  # τ, not needed here, into the ABA's ε (the RNEA leaves it alone)
    if st != OK:
        return st
    for i in range(m.nb):
        for k in range(6):
            f[i, k] = w.f[i, k]
    return OK


@kernel(nogil=True)
def rnea_batch(mi, mf, ws, Q, Vq, Aq, Fext, gravity, tau, status, start, stop):
    """:func:`rnea_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = rnea_kernel(mi, mf, ws, Q[b], Vq[b], Aq[b], Fext[b], gravity, tau[b])
