"""Forward dynamics by the articulated-body inertia (ATBI) recursion.

Seed 000 eq. 7 (the Riccati recursion for the articulated body inertia P) and the
O(N) forward dynamics of seed 001 (topics 5–7), in SOA notation:

tips-to-base gather, for each body k::

    P(k)  = M(k) + Σ_{j ∈ children(k)} φ(k, j) P⁺(j) φ*(k, j)
    D(k)  = H(k) P(k) H*(k),     G(k) = P(k) H*(k) D⁻¹(k),     τ̄(k) = I − G(k)H(k)
    P⁺(k) = τ̄(k) P(k)
    z(k)  = Σ_{j ∈ children(k)} φ(k, j) z⁺(j) + P(k)a(k) + b(k) − f_ext(k)
    ε(k)  = T(k) − H(k) z(k),    ν(k) = D⁻¹(k) ε(k),    z⁺(k) = z(k) + G(k) ε(k)

base-to-tips scatter::

    α⁺(k) = φ*(℘(k), k) α(℘(k))          (α(world) = −g)
    θ̈(k)  = ν(k) − G*(k) α⁺(k)
    α(k)  = α⁺(k) + H*(k) θ̈(k) + a(k)
"""
from __future__ import annotations

import numpy as np
from numba import get_thread_id, njit, parallel_chunksize, prange

from .. import _validation as val
from ._fastcall import ExactCall
from ._layout import (AXIS, NV, PARENT, ROTATED, VIDX, BATCH_BLOCK, batch_blocks, batch_row,
                      batch_workspaces, model_extra_views, model_views, sizes_match,
                      workspace_views)
from ._primitives import (add_bias_force, add_force_to_parent, add_inertia_to_parent,
                          add_inertia_to_parent_about_axis,
                          parent_acceleration, spd_inverse)
from .kinematics import body_velocities, check_quaternions, joint_placements, nonfinite, state_status

__all__ = ["aba", "articulated_body_pass"]


@njit(cache=True)
def articulated_body_pass(mi, mf, tau, fext, ws, nv, has_v):
    """The tips-to-base gather: P, D⁻¹, U = P H*, ε into the workspace; z⁺ into pb.

    Needs ``joint_placements`` (and ``body_velocities`` when ``has_v``) first. With
    ``tau`` of length 0, T = 0. Returns False when some D(k) is not positive definite.
    On return, for every body k with a parent: ``P[k]`` = P⁺(k), ``pb[k]`` = z⁺(k) and
    rows ``Y`` = G*(k) = D⁻¹ Uᵀ; for a root body P(k) and z(k). ``u`` = ε.
    A joint whose map is a unit column ±e_j (``AXIS``) has U = ±P[:, j] and
    D = P[j, j]: no products with H* are formed.
    """
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    rigid = model_extra_views(mf, nb)[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for i in range(nb):
        for a in range(6):
            for b in range(6):
                P[i, a, b] = inertia[i, a, b]
        for k in range(6):
            pb[i, k] = 0.0
        if has_v:  # b(k) = V(k) ×* M(k)V(k)
            add_bias_force(rigid, i, V, i, pb, i)
        if fext is not None:  # None or an (nb, 6) array; (0, 6) also means no forces
            if fext.shape[0] > 0:
                for k in range(6):
                    pb[i, k] -= fext[i, k]
    has_tau = tau.shape[0] > 0
    for i in range(nb - 1, -1, -1):
        vi = mi[i, VIDX]
        n = mi[i, NV]
        if has_v:  # z(k) += P(k) a(k)
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += P[i, a, b] * C[i, b]
                pb[i, a] += acc
        p = mi[i, PARENT]
        code = mi[i, AXIS]
        if code != 0:
            j = abs(code) - 1
            d = P[i, j, j]
            if not d > 0.0:
                return False
            dinv = 1.0 / d
            Dinv[i, 0, 0] = dinv
            e = tau[vi] if has_tau else 0.0
            if code > 0:
                e -= pb[i, j]
                for a in range(6):
                    U[vi, a] = P[i, a, j]
            else:
                e += pb[i, j]
                for a in range(6):
                    U[vi, a] = -P[i, a, j]
            u[vi] = e
            if p < 0:
                continue
            # P⁺ = P − U D⁻¹ Uᵀ (symmetric) and z⁺ = z + U D⁻¹ ε, with U stored first
            for a in range(6):
                ya = U[vi, a] * dinv
                Y[vi, a] = ya
                pb[i, a] += ya * e
                for b in range(a, 6):
                    val = P[i, a, b] - ya * U[vi, b]
                    P[i, a, b] = val
                    P[i, b, a] = val
        else:
            D = scratch[2]
            for c in range(n):
                for a in range(6):
                    acc = 0.0
                    for b in range(6):
                        acc += P[i, a, b] * S[vi + c, b]
                    U[vi + c, a] = acc
                for c2 in range(c + 1):
                    acc = 0.0
                    for a in range(6):
                        acc += S[vi + c2, a] * U[vi + c, a]
                    D[c, c2] = acc
                    D[c2, c] = acc
                acc = tau[vi + c] if has_tau else 0.0
                for a in range(6):
                    acc -= S[vi + c, a] * pb[i, a]
                u[vi + c] = acc
            if n > 0 and not spd_inverse(D, Dinv, i, n, scratch):
                return False
            if p < 0:
                continue
            # P⁺ = P − U D⁻¹ Uᵀ and z⁺ = z + U D⁻¹ ε, in place
            for c in range(n):
                for a in range(6):
                    y = 0.0
                    for c2 in range(n):
                        y += Dinv[i, c, c2] * U[vi + c2, a]
                    Y[vi + c, a] = y  # (D⁻¹ Uᵀ)[c, :]
            for a in range(6):
                for b in range(a, 6):
                    acc = 0.0
                    for c in range(n):
                        acc += U[vi + c, a] * Y[vi + c, b]
                    val = P[i, a, b] - acc
                    P[i, a, b] = val
                    P[i, b, a] = val
                acc = 0.0
                for c in range(n):
                    acc += Y[vi + c, a] * u[vi + c]
                pb[i, a] += acc
        if 0 < abs(code) <= 3 and not mi[i, ROTATED]:  # R = R_J, a turn about e_k
            add_inertia_to_parent_about_axis(R, t, i, abs(code) - 1, P[i], P, p)
        else:
            add_inertia_to_parent(R, t, i, P[i], P, p, scratch)
        add_force_to_parent(R, t, i, pb, i, pb, p)
    return True


@njit(cache=True)
def acceleration_pass(mi, mf, ws, nv, gravity, has_v, qdd):
    """The base-to-tips scatter: θ̈(k) = ν(k) − G*(k)α⁺(k), α(k) into A."""
    nb = mi.shape[0]
    g = model_views(mf, nb)[7]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for i in range(nb):
        parent_acceleration(R, t, i, mi[i, PARENT], g, gravity, A)
        vi = mi[i, VIDX]
        code = mi[i, AXIS]
        if code != 0:
            acc = u[vi]
            for a in range(6):
                acc -= U[vi, a] * A[i, a]
            x = Dinv[i, 0, 0] * acc
            qdd[vi] = x
            j = abs(code) - 1
            A[i, j] += x if code > 0 else -x
        else:
            n = mi[i, NV]
            for c in range(n):
                acc = u[vi + c]
                for a in range(6):
                    acc -= U[vi + c, a] * A[i, a]
                Y[vi + c, 0] = acc
            for c in range(n):
                acc = 0.0
                for c2 in range(n):
                    acc += Dinv[i, c, c2] * Y[vi + c2, 0]
                qdd[vi + c] = acc
                for a in range(6):
                    A[i, a] += S[vi + c, a] * acc
        if has_v:
            for a in range(6):
                A[i, a] += C[i, a]


@njit(cache=True)
def aba_kernel(mi, mf, q, v, tau, fext, ws, nv, gravity, qdd):
    """q̈ into ``qdd``; returns a status code (``BAD_SHAPE`` for wrong lengths)."""
    nb = mi.shape[0]
    if not sizes_match(mi, q, nv, ws) or v.shape[0] != nv or tau.shape[0] != nv \
            or qdd.shape[0] != nv:
        return val.BAD_SHAPE
    if fext is not None and (fext.shape[0] not in (0, nb) or fext.shape[1] != 6):
        return val.BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != val.OK:
        return st
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    has_v = nv > 0
    if has_v:
        R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
        body_velocities(mi, S, v, R, t, V, C)
    if not articulated_body_pass(mi, mf, tau, fext, ws, nv, has_v):
        return val.SINGULAR
    acceleration_pass(mi, mf, ws, nv, gravity, has_v, qdd)
    return val.OK


@njit(parallel=True, cache=True)
def _aba_batch(mi, mf, Q, Vq, T, Fext, wss, nv, gravity, qdd, status):
    B = Q.shape[0]
    for blk in prange(batch_blocks(B)):
        ws = wss[get_thread_id()]
        for b in range(blk * BATCH_BLOCK, min(B, (blk + 1) * BATCH_BLOCK)):
            status[b] = aba_kernel(mi, mf, Q[b], Vq[b], T[b], batch_row(Fext, b), ws, nv, gravity, qdd[b])


_ABA = ExactCall(aba_kernel)
_aba_fast = _ABA.fast
_empty = np.empty
_NAMES = ("q", "v", "tau")


def aba(model, q, v, tau, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Forward dynamics: joint accelerations q̈ = M⁻¹(τ − C(q, v) + Σ J_kᵀ f_ext(k)).

    O(N) articulated-body algorithm (seed 000 eq. 7; seed 001 topics 5–7).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v : (nv,) or (B, nv) velocity.
    tau : (nv,) or (B, nv) generalized forces [N m, N].
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on the bodies,
        body frame.
    gravity : include the model's gravity (default True).
    out, workspace : optional preallocated output and :class:`Workspace` (the fastest
        way to call it repeatedly).

    Returns q̈, (nv,) or (B, nv).
    """
    c = model._compiled or model.compiled
    try:
        qdd = _empty(c.nv) if out is None else out
        if not _aba_fast(c.mi, c.mf, q, v, tau, f_ext, c.tls.buffer if workspace is None else
                         workspace.buffer, c.nv, gravity, qdd):
            return qdd
    except (TypeError, AttributeError):
        pass
    return _aba_general(model, q, v, tau, f_ext, gravity, out, workspace)


def _aba_general(model, q, v, tau, f_ext, gravity, out, workspace):
    """Validated path: conversions, clear errors (also for what the fast call rejected), batches."""
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    v = val.vector(v, c.nv, "v")
    tau = val.vector(tau, c.nv, "tau")
    gravity = bool(gravity)
    if q.ndim == 1 and v.ndim == 1 and tau.ndim == 1:
        f_ext = val.external_forces(f_ext, c.nb, None)
        qdd = val.output(out, (c.nv,))
        st = _ABA(c.mi, c.mf, q, v, tau, f_ext, val.workspace_buffer(model, workspace), c.nv,
                  gravity, qdd)
        if st:
            val.raise_status(st, _NAMES)
        return qdd
    val.same_batch(q, ("v", v), ("tau", tau))
    B = q.shape[0]
    f_ext = val.external_forces(f_ext, c.nb, B)
    qdd = val.output(out, (B, c.nv))
    status = np.zeros(B, dtype=np.int64)
    val.workspace_buffer(model, workspace)
    ws = workspace if workspace is not None else model.workspace()
    with parallel_chunksize(1):
        _aba_batch(c.mi, c.mf, q, v, tau, f_ext, batch_workspaces(ws), c.nv, gravity, qdd, status)
    val.check_batch_status(status, _NAMES)
    return qdd
