"""Rollouts: a control sequence integrated in one compiled call.

Each step evaluates the forward dynamics by the articulated-body kernel
(:func:`soadyn.kernels.aba.aba_into`, [Jain23p, eq. 7]) and moves the configuration on its
manifold by the configuration-space kernel of :func:`soadyn.integrate`
(:func:`soadyn.core.configuration.integrate_into`): neither is repeated here. With
τ_k held over the step [t_k, t_k + dt], f(q, v, τ) = q̈ the forward dynamics and
q ⊕ u = q exp(u) (per joint: u added for vector joints, the exponential of SO(3) or SE(3)
in the child frame for spherical and free joints):

semi-implicit (symplectic) Euler::

    v_{k+1} = v_k + dt f(q_k, v_k, τ_k),    q_{k+1} = q_k ⊕ dt v_{k+1}

classical Runge–Kutta (RK4) in the Runge–Kutta–Munthe-Kaas form ([MuntheKaas99], the
RKMK method with the coefficients of classical RK4): the stages are points
q_k ⊕ u_i of one chart around q_k and the stage slopes K̃_i are the rates of those
exponential coordinates, u̇ = dexp⁻¹_{−u}(v), not the velocities themselves::

    a1 = f(q_k, v_k),                           K̃1 = v_k
    u2 = dt/2 K̃1,  v2 = v_k + dt/2 a1,  a2 = f(q_k ⊕ u2, v2),  K̃2 = dexp⁻¹_{−u2}(v2)
    u3 = dt/2 K̃2,  v3 = v_k + dt/2 a2,  a3 = f(q_k ⊕ u3, v3),  K̃3 = dexp⁻¹_{−u3}(v3)
    u4 = dt K̃3,    v4 = v_k + dt a3,    a4 = f(q_k ⊕ u4, v4),  K̃4 = dexp⁻¹_{−u4}(v4)
    q_{k+1} = q_k ⊕ dt (K̃1 + 2 K̃2 + 2 K̃3 + K̃4)/6,   v_{k+1} = v_k + dt (a1 + 2 a2 + 2 a3 + a4)/6

dexp⁻¹_{−u}(w) = w + ½[u, w] + 1/12 [u, [u, w]] + O(|u|⁴|w|) (:func:`exponential_coordinate_rate`)
keeps the fourth order; summing the velocities v_i themselves in the tangent space at q_k
(u_i = c_i dt v_{i−1}) — what a vector-space RK4 does — is of second order in q on
SO(3) and SE(3), since the stage velocities live in the tangent spaces of the stage points.
"""
from __future__ import annotations

import numpy as np

from ..core.jit import helper, kernel
from ..core.configuration import integrate_into
from ..core.joints import FREE, SPHERICAL
from ..core.layout import carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_FIRST, BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK, OVERFLOW, SINGULAR
from .aba import aba_into
from .kinematics import configuration_status, no_forces, nonfinite
from .primitives import cross_motion6

#: the integrator codes of :func:`rollout_kernel`
SEMI_IMPLICIT_EULER, RK4 = 0, 1


@helper(forceinline=True)
def exponential_coordinate_rate(m, u, s, w, out):
    """out = dexp⁻¹_{−s u}(w) ≈ w + ½[s u, w] + 1/12 [s u, [s u, w]], joint by joint: the
    rate of the exponential coordinates x of q = q_k ⊕ x (x = s u here) when q moves with
    the velocity w ([MuntheKaas99]; the series of dexp⁻¹ has the Bernoulli numbers as
    coefficients, B₁ = −½ taken at −x, B₂ = 1/6 over 2!, B₃ = 0: the first term left out is
    of order |x|⁴|w|, beyond what a fourth-order method needs). The bracket is that of
    so(3) (x × w) for a spherical joint and that of se(3) (the motion cross product
    [x_ω × w_ω; x_ω × w_v + x_v × w_ω]) for a free joint, whose ⊕ is the SE(3)
    exponential of :func:`~soadyn.core.configuration.integrate_into`; the algebra of
    every other joint is commutative (out = w). ``out`` may be ``u``."""
    for i in range(m.nb):
        jtype = m.joint_type[i]
        vi = m.v_index[i]
        if jtype == FREE:
            x0, x1, x2, x3, x4, x5 = s * u[vi], s * u[vi + 1], s * u[vi + 2], s * u[vi + 3], s * u[vi + 4], s * u[vi + 5]
            w0, w1, w2, w3, w4, w5 = w[vi], w[vi + 1], w[vi + 2], w[vi + 3], w[vi + 4], w[vi + 5]
            c0, c1, c2, c3, c4, c5 = cross_motion6(x0, x1, x2, x3, x4, x5, w0, w1, w2, w3, w4, w5)
            d0, d1, d2, d3, d4, d5 = cross_motion6(x0, x1, x2, x3, x4, x5, c0, c1, c2, c3, c4, c5)
            out[vi], out[vi + 1], out[vi + 2] = w0 + c0 / 2 + d0 / 12, w1 + c1 / 2 + d1 / 12, w2 + c2 / 2 + d2 / 12
            out[vi + 3], out[vi + 4], out[vi + 5] = w3 + c3 / 2 + d3 / 12, w4 + c4 / 2 + d4 / 12, w5 + c5 / 2 + d5 / 12
        elif jtype == SPHERICAL:
            # the angular rows of the motion cross product: so(3)'s bracket
            x0, x1, x2 = s * u[vi], s * u[vi + 1], s * u[vi + 2]
            w0, w1, w2 = w[vi], w[vi + 1], w[vi + 2]
            c0, c1, c2, _, _, _ = cross_motion6(x0, x1, x2, 0.0, 0.0, 0.0, w0, w1, w2, 0.0, 0.0, 0.0)
            d0, d1, d2, _, _, _ = cross_motion6(x0, x1, x2, 0.0, 0.0, 0.0, c0, c1, c2, 0.0, 0.0, 0.0)
            out[vi], out[vi + 1], out[vi + 2] = w0 + c0 / 2 + d0 / 12, w1 + c1 / 2 + d1 / 12, w2 + c2 / 2 + d2 / 12
        else:
            for k in range(m.joint_nv[i]):
                out[vi + k] = w[vi + k]


@kernel
def exponential_coordinate_rate_kernel(mi, mf, ws, u, w, dt, out):
    """The kernel of :func:`soadyn.dynamics.rollout.exponential_coordinate_rate`:
    out = dexp⁻¹_{−u dt}(w) (:func:`exponential_coordinate_rate`); returns a status."""
    m = model_tables(mi, mf)
    if u.shape[0] != m.nv or w.shape[0] != m.nv or out.shape[0] != m.nv:
        return BAD_SHAPE
    if nonfinite(u):
        return BAD_FIRST
    if nonfinite(w):
        return BAD_SECOND
    exponential_coordinate_rate(m, u, dt, w, out)
    return OVERFLOW if nonfinite(out) else OK


@helper
def _diverged(qs, vs, k):
    """Rows k.. of the trajectory as NaN: the state left the finite numbers at step k."""
    for r in range(k, qs.shape[0]):
        for j in range(qs.shape[1]):
            qs[r, j] = np.nan
        for j in range(vs.shape[1]):
            vs[r, j] = np.nan


@helper
def _euler_step(mi, mf, ws, q, v, tau, dt, fext, a, q1, v1):
    """(q1, v1) one semi-implicit Euler step from (q, v); returns the ABA status."""
    status = aba_into(mi, mf, ws, q, v, tau, fext, True, a)
    if status != OK:
        return status
    for j in range(v.shape[0]):
        v1[j] = v[j] + dt * a[j]
    return integrate_into(mi, mf, ws, q, v1, dt, q1)


@helper
def _rk4_step(mi, mf, ws, q, v, tau, dt, fext, s, q1, v1):
    """(q1, v1) one RK4 step in the Runge–Kutta–Munthe-Kaas form from (q, v) (module
    docstring), with the scratch rows ``s`` (6, max(nq, nv)); returns the first nonzero
    status of the stages, or OK."""
    m = model_tables(mi, mf)
    nq, nv = q.shape[0], v.shape[0]
    qt, vt, kt, ksum, asum, a = s[0, :nq], s[1, :nv], s[2, :nv], s[3, :nv], s[4, :nv], s[5, :nv]
    status = aba_into(mi, mf, ws, q, v, tau, fext, True, a)
    if status != OK:
        return status
    for j in range(nv):
        kt[j] = v[j]  # K̃1 = v_k: dexp⁻¹ at u = 0 is the identity
        ksum[j] = v[j]
        asum[j] = a[j]
    for stage in range(1, 4):
        c = dt if stage == 3 else 0.5 * dt  # u_i = c K̃_{i−1}: the nodes ½, ½, 1 of classical RK4
        weight = 1.0 if stage == 3 else 2.0  # the weights 2, 2, 1 of stages 2, 3, 4
        status = integrate_into(mi, mf, ws, q, kt, c, qt)  # q_k ⊕ u_i
        if status != OK:
            return status
        for j in range(nv):
            vt[j] = v[j] + c * a[j]  # v_i = v_k + c a_{i−1}
        status = aba_into(mi, mf, ws, qt, vt, tau, fext, True, a)
        if status != OK:
            return status
        exponential_coordinate_rate(m, kt, c, vt, kt)  # K̃_i = dexp⁻¹_{−u_i}(v_i)
        for j in range(nv):
            ksum[j] += weight * kt[j]
            asum[j] += weight * a[j]
    for j in range(nv):
        v1[j] = v[j] + dt / 6.0 * asum[j]
    return integrate_into(mi, mf, ws, q, ksum, dt / 6.0, q1)


@kernel(nogil=True)
def rollout_kernel(mi, mf, ws, q0, v0, tau, dt, integrator, qs, vs):
    """The trajectories of :func:`_rollout_state`, for B = len(q0) / nq states stored one
    after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a block of a
    batch's rows). Returns the first status other than OK."""
    B = state_count(q0.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _rollout_state(mi, mf, ws, state_of(q0, b, B), state_of(v0, b, B), state_of(tau, b, B), dt, integrator,
                            state_of(qs, b, B), state_of(vs, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _rollout_state(mi, mf, ws, q0, v0, tau, dt, integrator, qs, vs):
    """The trajectory from (q0, v0) under the controls ``tau`` (T, nv) into ``qs``
    (T + 1, nq) and ``vs`` (T + 1, nv), ``integrator`` one of ``SEMI_IMPLICIT_EULER``,
    ``RK4``; returns a status code. A trajectory that leaves the finite numbers (an
    overflow from too large a step) continues as NaN rows from that step on (the public
    function raises, or returns them on request)."""
    m = model_tables(mi, mf)
    status = configuration_status(m, q0, ws)
    if status != OK:
        return status
    T = tau.shape[0]
    if (v0.shape[0] != m.nv or tau.shape[1] != m.nv or qs.shape[0] != T + 1 or vs.shape[0] != T + 1
            or qs.shape[1] != m.nq or vs.shape[1] != m.nv):
        return BAD_SHAPE
    if nonfinite(v0):
        return BAD_SECOND
    for k in range(T):
        if nonfinite(tau[k]):
            return BAD_THIRD
    for j in range(m.nq):
        qs[0, j] = q0[j]
    for j in range(m.nv):
        vs[0, j] = v0[j]
    fext = no_forces(ws)
    s = carve(workspace_views(ws, m).aux, 0, (6, max(m.nq, m.nv)))  # the stages' vectors
    for k in range(T):
        if integrator == RK4:
            status = _rk4_step(mi, mf, ws, qs[k], vs[k], tau[k], dt, fext, s, qs[k + 1], vs[k + 1])
        else:
            status = _euler_step(mi, mf, ws, qs[k], vs[k], tau[k], dt, fext, s[0, :m.nv], qs[k + 1], vs[k + 1])
        if status == SINGULAR:
            return status
        # the inputs were checked above: any other status, or a state that is not finite
        # (an acceleration that overflowed reaches v_{k+1} without a status), is a state
        # that left the finite numbers at step k
        if status != OK or nonfinite(qs[k + 1]) or nonfinite(vs[k + 1]):
            _diverged(qs, vs, k + 1)
            return OK
    return OK
