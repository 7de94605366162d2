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
from numba import get_thread_id, njit, parallel_chunksize, prange

from .. import _validation as val
from ._fastcall import ExactCall
from ._layout import (AXIS, NV, PARENT, VIDX, BATCH_BLOCK, batch_blocks, batch_row,
                      batch_workspaces, model_extra_views, sizes_match, workspace_views)
from ._primitives import add_bias_force, add_force_to_parent, rigid_times_motion
from .kinematics import (body_accelerations, body_velocities, check_quaternions,
                         joint_placements, nonfinite, state_status)

__all__ = ["rnea", "bias_forces", "generalized_gravity"]


@njit(cache=True)
def rnea_kernel(mi, mf, q, v, a, fext, ws, nv, gravity, tau):
    """τ = M(q)a + C(q, v) − Σ J_kᵀ f_ext(k) into ``tau``; ``v``/``a`` None mean zero.

    Returns a status code (``BAD_SHAPE`` for wrong lengths)."""
    if not sizes_match(mi, q, nv, ws) or tau.shape[0] != nv:
        return val.BAD_SHAPE
    if (v is not None and v.shape[0] != nv) or (a is not None and a.shape[0] != nv):
        return val.BAD_SHAPE
    if fext is not None and (fext.shape[0] not in (0, mi.shape[0]) or fext.shape[1] != 6):
        return val.BAD_SHAPE
    st = state_status(q, v, a, fext)
    if st != val.OK:
        return st
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    rigid = model_extra_views(mf, nb)[0]
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    has_v = v is not None
    if has_v:
        body_velocities(mi, S, v, R, t, V, C)
    body_accelerations(mi, mf, S, a, R, t, C, A, gravity, has_v)
    for i in range(nb):
        # f(k) = M(k)α(k) + b(k) − f_ext(k), with b(k) = V(k) ×* M(k)V(k)
        rigid_times_motion(rigid, i, A, i, F, i)
        if has_v:
            add_bias_force(rigid, i, V, i, F, i)
        if fext is not None:  # None or an (nb, 6) array; (0, 6) also means no forces
            if fext.shape[0] > 0:
                for k in range(6):
                    F[i, k] -= fext[i, k]
    for i in range(nb - 1, -1, -1):
        vi = mi[i, VIDX]
        code = mi[i, AXIS]
        if code != 0:
            f = F[i, abs(code) - 1]
            tau[vi] = f if code > 0 else -f
        else:
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
    for blk in prange(batch_blocks(B)):
        ws = wss[get_thread_id()]
        for b in range(blk * BATCH_BLOCK, min(B, (blk + 1) * BATCH_BLOCK)):
            status[b] = rnea_kernel(mi, mf, Q[b], batch_row(Vq, b), batch_row(Aq, b),
                                    batch_row(Fext, b), ws, nv, gravity, tau[b])


_RNEA = ExactCall(rnea_kernel)
_rnea_fast = _RNEA.fast
_empty = np.empty
_NAMES = ("q", "v", "a")


def _general(model, q, v, a, f_ext, gravity, out, workspace):
    """Validated path: conversions, clear errors (also for what the fast call rejected), batches."""
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    v = None if v is None else val.vector(v, c.nv, "v")
    a = None if a is None else val.vector(a, c.nv, "a")
    gravity = bool(gravity)
    if q.ndim == 1:
        if (v is not None and v.ndim != 1) or (a is not None and a.ndim != 1):
            val.same_batch(q, ("v", v), ("a", a))
        f_ext = val.external_forces(f_ext, c.nb, None)
        tau = val.output(out, (c.nv,))
        st = _RNEA(c.mi, c.mf, q, v, a, f_ext, val.workspace_buffer(model, workspace), c.nv,
                   gravity, tau)
        if st:
            val.raise_status(st, _NAMES)
        return tau
    B = q.shape[0]
    val.same_batch(q, ("v", v), ("a", a))
    f_ext = val.external_forces(f_ext, c.nb, B)
    tau = val.output(out, (B, c.nv))
    status = np.zeros(B, dtype=np.int64)
    val.workspace_buffer(model, workspace)
    ws = workspace if workspace is not None else model.workspace()
    with parallel_chunksize(1):
        _rnea_batch(c.mi, c.mf, q, v, a, f_ext, batch_workspaces(ws), c.nv, gravity, tau, status)
    val.check_batch_status(status, _NAMES)
    return tau



def rnea(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Inverse dynamics: generalized forces τ = M(q)a + C(q, v) − Σ_k J_kᵀ f_ext(k).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v, a : (nv,) or (B, nv) velocity [rad/s, m/s] and acceleration [rad/s², m/s²];
        None means zero.
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on each
        body, in the body frame at the body origin [N m, N].
    gravity : include the model's gravity (default True).
    out : optional output array; workspace : optional :class:`Workspace` (the fastest
        way to call it repeatedly).

    Returns τ, (nv,) or (B, nv) [N m, N].
    """
    c = model._compiled or model.compiled
    try:
        tau = _empty(c.nv) if out is None else out
        if not _rnea_fast(c.mi, c.mf, q, v, a, f_ext, c.tls.buffer if workspace is None else
                          workspace.buffer, c.nv, gravity, tau):
            return tau
    except (TypeError, AttributeError):
        pass
    return _general(model, q, v, a, f_ext, gravity, out, workspace)


def bias_forces(model, q, v, *, gravity=True, out=None, workspace=None):
    """Bias forces C(q, v) = Hφ(Mφ*a + b) (seed 002 eq. 17), gravity included unless
    ``gravity=False``: the RNEA with zero acceleration. (nv,) or (B, nv)."""
    return rnea(model, q, v, None, gravity=gravity, out=out, workspace=workspace)


def generalized_gravity(model, q, *, out=None, workspace=None):
    """Generalized gravity forces g(q) (nv,): the RNEA at zero velocity and acceleration."""
    return rnea(model, q, None, None, out=out, workspace=workspace)
