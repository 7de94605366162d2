"""Inverse dynamics by the recursive Newton–Euler algorithm (RNEA).

Seed 002 eq. 14–15, the Newton–Euler factorisation of the equations of motion:

    V = φ*H*θ̇,   α = φ*(H*θ̈ + a),   f = φ(Mα + b),   T = H f

evaluated as a base-to-tips scatter for V and α followed by a tips-to-base gather
for f (eq. 12: f(k) = Σ_{j ∈ children(k)} φ(k, j) f(j) + M(k)α(k) + b(k)).
Gravity enters as the base acceleration α(world) = −g; external forces ``f_ext(k)``
(body frame) are subtracted from body k's force balance.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _validation as val
from ._layout import NV, PARENT, VIDX, batch_chunks, model_views, workspace_views
from ._primitives import (add_cross_force, add_force_to_parent, gravity_to_child,
                          inertia_times_motion, motion_to_child)
from .kinematics import body_velocities, check_quaternions, joint_placements, nonfinite

__all__ = ["rnea", "bias_forces", "generalized_gravity"]


@njit(cache=True)
def rnea_kernel(mi, mf, q, v, a, fext, ws, nv, gravity, tau):
    """τ = M(q)a + C(q, v) − Σ J_kᵀ f_ext(k); ``v``/``a`` of length 0 mean zero."""
    if nonfinite(q):
        return val.BAD_FIRST
    if nonfinite(v):
        return val.BAD_SECOND
    if nonfinite(a):
        return val.BAD_THIRD
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    has_v = v.shape[0] > 0
    has_a = a.shape[0] > 0
    if has_v:
        body_velocities(mi, S, v, R, t, V, C)
    for i in range(nb):
        p = mi[i, PARENT]
        if p >= 0:
            motion_to_child(R, t, i, A, p, A, i)
        elif gravity:
            gravity_to_child(R, t, i, g, A, i)
        else:
            for k in range(6):
                A[i, k] = 0.0
        vi = mi[i, VIDX]
        if has_a:
            for c in range(mi[i, NV]):
                x = a[vi + c]
                for k in range(6):
                    A[i, k] += S[vi + c, k] * x
        if has_v:
            for k in range(6):
                A[i, k] += C[i, k]
        # f(k) = M(k)α(k) + b(k) − f_ext(k), with b(k) = V(k) ×* M(k)V(k)
        inertia_times_motion(inertia, i, A, i, F, i)
        if has_v:
            inertia_times_motion(inertia, i, V, i, pb, i)
            add_cross_force(V, i, pb, i, F, i)
        if fext is not None:  # None or an (nb, 6) array; (0, 6) also means no forces
            if fext.shape[0] > 0:
                for k in range(6):
                    F[i, k] -= fext[i, k]
    for i in range(nb - 1, -1, -1):
        vi = mi[i, VIDX]
        for c in range(mi[i, NV]):
            acc = 0.0
            for k in range(6):
                acc += S[vi + c, k] * F[i, k]
            tau[vi + c] = acc
        p = mi[i, PARENT]
        if p >= 0:
            add_force_to_parent(R, t, i, F, i, F, p)
    return val.OK


@njit(parallel=True, cache=True)
def _rnea_batch(mi, mf, Q, Vq, Aq, Fext, wss, nv, gravity, tau, status):
    B = Q.shape[0]
    nch = wss.shape[0]
    for ch in prange(nch):
        for b in range(ch * B // nch, (ch + 1) * B // nch):
            status[b] = rnea_kernel(mi, mf, Q[b], Vq[b], Aq[b], Fext[b], wss[ch], nv, gravity, tau[b])


_NO_STATE = np.zeros(0)


def _call(model, q, v, a, f_ext, gravity, out, workspace, names):
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    v = _NO_STATE if v is None else val.vector(v, c.nv, names[1])
    a = _NO_STATE if a is None else val.vector(a, c.nv, names[2])
    ws = workspace if workspace is not None else model.workspace()
    if q.ndim == 1:
        if v.ndim != 1 or a.ndim != 1:
            val.same_batch(q, (names[1], v), (names[2], a))
        f_ext = val.external_forces(f_ext, c.nb, None)
        tau = val.output(out, (c.nv,))
        st = rnea_kernel(c.mi, c.mf, q, v, a, f_ext, ws.buffer, c.nv, gravity, tau)
        if st:
            val.raise_status(st, names)
        return tau
    B = q.shape[0]
    if v.size == 0:
        v = np.zeros((B, 0))
    if a.size == 0:
        a = np.zeros((B, 0))
    val.same_batch(q, (names[1], v), (names[2], a))
    f_ext = val.external_forces(f_ext, c.nb, B)
    if f_ext is None:
        f_ext = np.zeros((B, 0, 6))
    tau = val.output(out, (B, c.nv))
    status = np.zeros(B, dtype=np.int64)
    _rnea_batch(c.mi, c.mf, q, v, a, f_ext, ws.batch_buffers(batch_chunks(B)), c.nv, gravity, tau, status)
    val.check_batch_status(status, names)
    return tau


def rnea(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Inverse dynamics: generalized forces τ = M(q)a + C(q, v) − Σ_k J_kᵀ f_ext(k).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v, a : (nv,) or (B, nv) velocity [rad/s, m/s] and acceleration [rad/s², m/s²].
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on each
        body, in the body frame at the body origin [N m, N].
    gravity : include the model's gravity (default True).
    out : optional output array; workspace : optional :class:`Workspace`.

    Returns τ, (nv,) or (B, nv) [N m, N].
    """
    return _call(model, q, v, a, f_ext, gravity, out, workspace, ("q", "v", "a"))


def bias_forces(model, q, v, *, gravity=True, out=None, workspace=None):
    """Bias forces C(q, v) = Hφ(Mφ*a + b) (seed 002 eq. 17), gravity included unless
    ``gravity=False``: the RNEA with zero acceleration. (nv,) or (B, nv)."""
    return _call(model, q, v, None, None, gravity, out, workspace, ("q", "v", "a"))


def generalized_gravity(model, q, *, out=None, workspace=None):
    """Generalized gravity forces g(q) (nv,): the RNEA at zero velocity and acceleration."""
    return _call(model, q, None, None, None, True, out, workspace, ("q", "v", "a"))
