"""Rollouts: a control sequence integrated in one compiled call.

Each step evaluates the forward dynamics by the articulated-body kernel
(:func:`soadyn.kernels.aba.aba_kernel`, [Jain23p, eq. 7]) and moves the configuration on its
manifold by the configuration-space kernel of :func:`soadyn.integrate`
(:func:`soadyn.core.configuration.integrate_kernel`): neither is repeated here. With
τ_k held over the step [t_k, t_k + dt] and f(q, v, τ) = q̈ the forward dynamics:

semi-implicit (symplectic) Euler::

    v_{k+1} = v_k + dt f(q_k, v_k, τ_k),    q_{k+1} = q_k ⊕ dt v_{k+1}

classical Runge–Kutta (RK4) on the manifold (stages move q by ⊕ from q_k, as
:func:`soadyn.simulate` does)::

    a1 = f(q_k, v_k),            v2 = v_k + dt/2 a1,  q2 = q_k ⊕ dt/2 v_k
    a2 = f(q2, v2),              v3 = v_k + dt/2 a2,  q3 = q_k ⊕ dt/2 v2
    a3 = f(q3, v3),              v4 = v_k + dt a3,    q4 = q_k ⊕ dt v3
    a4 = f(q4, v4)
    q_{k+1} = q_k ⊕ dt (v_k + 2 v2 + 2 v3 + v4)/6,   v_{k+1} = v_k + dt (a1 + 2 a2 + 2 a3 + a4)/6
"""
from __future__ import annotations

import numpy as np

from ..core.jit import njit
from ..core.configuration import integrate_kernel
from ..core.layout import carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK, SINGULAR
from .aba import aba_kernel
from .kinematics import configuration_status, no_forces, nonfinite

#: the integrator codes of :func:`rollout_kernel`
SEMI_IMPLICIT_EULER, RK4 = 0, 1


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _diverged(qs, vs, k):
    """Rows k.. of the trajectory as NaN: the state left the finite numbers at step k."""
    for r in range(k, qs.shape[0]):
        for j in range(qs.shape[1]):
            qs[r, j] = np.nan
        for j in range(vs.shape[1]):
            vs[r, j] = np.nan


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _euler_step(mi, mf, ws, q, v, tau, dt, fext, a, q1, v1):
    """(q1, v1) one semi-implicit Euler step from (q, v); returns the ABA status."""
    status = aba_kernel(mi, mf, ws, q, v, tau, fext, True, a)
    if status != OK:
        return status
    for j in range(v.shape[0]):
        v1[j] = v[j] + dt * a[j]
    return integrate_kernel(mi, mf, ws, q, v1, dt, q1)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rk4_step(mi, mf, ws, q, v, tau, dt, fext, s, q1, v1):
    """(q1, v1) one RK4 step from (q, v) (module docstring), with the scratch rows ``s``
    (5, max(nq, nv)); returns the first nonzero ABA status, or OK."""
    nq, nv = q.shape[0], v.shape[0]
    qt, vt, vsum, asum, a = s[0, :nq], s[1, :nv], s[2, :nv], s[3, :nv], s[4, :nv]
    h = 0.5 * dt
    for j in range(nv):
        vsum[j] = v[j]
        vt[j] = v[j]
    for stage in range(4):
        if stage == 0:
            for j in range(q.shape[0]):
                qt[j] = q[j]
        status = aba_kernel(mi, mf, ws, qt, vt, tau, fext, True, a)
        if status != OK:
            return status
        w = 1.0 if stage == 0 or stage == 3 else 2.0  # weights 1, 2, 2, 1 of a1..a4 (and v, v2, v3, v4)
        step = dt if stage == 2 else h  # the next stage's offset: dt/2, dt/2, dt
        for j in range(nv):
            asum[j] = a[j] if stage == 0 else asum[j] + w * a[j]
        if stage == 3:
            break
        # the next stage: q_{s+1} = q_k ⊕ step·v_s, v_{s+1} = v_k + step·a_s
        status = integrate_kernel(mi, mf, ws, q, vt, step, qt)
        if status != OK:
            return status
        wn = 1.0 if stage == 2 else 2.0  # the weight of the next stage's velocity
        for j in range(nv):
            vt[j] = v[j] + step * a[j]
            vsum[j] += wn * vt[j]
    for j in range(nv):
        vsum[j] *= 1.0 / 6.0
        v1[j] = v[j] + dt / 6.0 * asum[j]
    return integrate_kernel(mi, mf, ws, q, vsum, dt, q1)


@njit(nogil=True, cache=True)
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


@njit(inline="always", cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rollout_state(mi, mf, ws, q0, v0, tau, dt, integrator, qs, vs):
    """The trajectory from (q0, v0) under the controls ``tau`` (T, nv) into ``qs``
    (T + 1, nq) and ``vs`` (T + 1, nv), ``integrator`` one of ``SEMI_IMPLICIT_EULER``,
    ``RK4``; returns a status code. A trajectory that leaves the finite numbers (an
    overflow from too large a step) continues as NaN rows from that step on."""
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
    s = carve(workspace_views(ws, m).aux, 0, (5, max(m.nq, m.nv)))  # the stages' vectors
    for k in range(T):
        if integrator == RK4:
            status = _rk4_step(mi, mf, ws, qs[k], vs[k], tau[k], dt, fext, s, qs[k + 1], vs[k + 1])
        else:
            status = _euler_step(mi, mf, ws, qs[k], vs[k], tau[k], dt, fext, s[0, :m.nv], qs[k + 1], vs[k + 1])
        if status == SINGULAR:
            return status
        if status != OK:  # inputs were checked above: a non-finite state reached at step k
            _diverged(qs, vs, k + 1)
            return OK
    return OK
