"""The mass matrix M(θ) by two methods.

* ``"crba"`` — composite rigid bodies: the tips-to-base gather of the composite
  inertias R(k) = Σ_{j ∈ children(k)} φ(k, j) R(j) φ*(k, j) + M(k) (the solution of
  the forward Lyapunov equation, seed 001 topic 4) and the decomposition of
  M = HφMφ*H* (seed 002 eq. 17) into  M(i, j) = H(i) φ(i, j) R(j) H*(j)  for i ⪯ j.
* ``"jtmj"`` — seed 003's procedure (eq. 14, "Computing System Mass Matrix"):
  J = Ψ_D G column by column with the O(N) algorithm for z = Ψ_A x, Q = M J and
  M = Jᵀ Q, here with body-frame operators. O(N²) columns work; kept as an
  independent second method.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _validation as val
from ._layout import NV, PARENT, VIDX, batch_chunks, model_views, workspace_views
from .kinematics import check_quaternions, joint_placements, nonfinite
from ._primitives import add_force_to_parent, add_inertia_to_parent, motion_to_child

__all__ = ["mass_matrix"]


@njit(inline="always", cache=True)
def composite_inertias(mi, mf, ws, nv):
    """P[k] = R(k), the composite rigid-body inertia of the subtree at k (body frame)."""
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    P[:] = inertia
    for i in range(nb - 1, -1, -1):
        p = mi[i, PARENT]
        if p >= 0:
            add_inertia_to_parent(R, t, i, P[i], P, p, scratch)


@njit(cache=True)
def mass_matrix_kernel(mi, mf, q, ws, nv, M):
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    joint_placements(mi, mf, q, ws, nv)
    composite_inertias(mi, mf, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    M[:] = 0.0  # entries of unrelated bodies stay zero
    for i in range(nb):
        vi = mi[i, VIDX]
        nvi = mi[i, NV]
        for c in range(nvi):
            # F = R(i) H*(i) column c, carried to each ancestor j as φ(j, i) F
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += P[i, a, b] * S[vi + c, b]
                U[vi + c, a] = acc
            for c2 in range(nvi):
                acc = 0.0
                for a in range(6):
                    acc += S[vi + c2, a] * U[vi + c, a]
                M[vi + c2, vi + c] = acc
            j = i
            p = mi[j, PARENT]
            while p >= 0:
                for a in range(6):
                    Y[vi + c, a] = 0.0
                add_force_to_parent(R, t, j, U, vi + c, Y, vi + c)
                for a in range(6):
                    U[vi + c, a] = Y[vi + c, a]
                j = p
                vj = mi[j, VIDX]
                for c2 in range(mi[j, NV]):
                    acc = 0.0
                    for a in range(6):
                        acc += S[vj + c2, a] * U[vi + c, a]
                    M[vj + c2, vi + c] = acc
                    M[vi + c, vj + c2] = acc
                p = mi[j, PARENT]
    return val.OK


@njit(cache=True)
def mass_matrix_jtmj_kernel(mi, mf, q, ws, nv, M, J):
    """Seed 003: J(:, c) = Ψ_D G(:, c) (z_i = φ*(℘(i), i) z_℘(i) + x_i), Q = M J, M = Jᵀ Q.

    ``J`` is an (nb, 6, nv) buffer for the body Jacobians.
    """
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    J[:] = 0.0
    for c in range(nv):
        # column c of Ψ_D G: scatter the joint-map column through the tree
        for i in range(nb):
            p = mi[i, PARENT]
            if p >= 0:
                motion_to_child(R, t, i, V, p, V, i)
            else:
                for a in range(6):
                    V[i, a] = 0.0
            vi = mi[i, VIDX]
            if vi <= c < vi + mi[i, NV]:
                for a in range(6):
                    V[i, a] += S[c, a]
            for a in range(6):
                J[i, a, c] = V[i, a]
    M[:] = 0.0
    for i in range(nb):
        for c in range(nv):
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += inertia[i, a, b] * J[i, b, c]
                F[i, a] = acc
            for r in range(c + 1):
                acc = 0.0
                for a in range(6):
                    acc += J[i, a, r] * F[i, a]
                M[r, c] += acc
    for c in range(nv):
        for r in range(c):
            M[c, r] = M[r, c]
    return val.OK


@njit(parallel=True, cache=True)
def _mass_matrix_batch(mi, mf, Q, wss, nv, M, status):
    B = Q.shape[0]
    nch = wss.shape[0]
    for ch in prange(nch):
        for b in range(ch * B // nch, (ch + 1) * B // nch):
            status[b] = mass_matrix_kernel(mi, mf, Q[b], wss[ch], nv, M[b])


def mass_matrix(model, q, method="crba", *, out=None, workspace=None):
    """Joint-space mass matrix M(q) (nv, nv) [kg, kg m, kg m² blocks].

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    method : ``"crba"`` (composite rigid bodies, default) or ``"jtmj"`` (seed 003's
        M = Gᵀ Ψ_Dᵀ M Ψ_D G, a slower independent check).
    out : optional (nv, nv) / (B, nv, nv) output array.

    Returns (nv, nv) or (B, nv, nv), symmetric positive definite.
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    ws = workspace if workspace is not None else model.workspace()
    if method not in ("crba", "jtmj"):
        raise ValueError(f"method: expected 'crba' or 'jtmj', got {method!r}")
    if q.ndim == 2:
        B = q.shape[0]
        M = val.output(out, (B, c.nv, c.nv))
        if method == "jtmj":
            for b in range(B):
                mass_matrix(model, q[b], "jtmj", out=M[b], workspace=ws)
            return M
        status = np.zeros(B, dtype=np.int64)
        _mass_matrix_batch(c.mi, c.mf, q, ws.batch_buffers(batch_chunks(B)), c.nv, M, status)
        val.check_batch_status(status, ("q",))
        return M
    M = val.output(out, (c.nv, c.nv))
    if method == "crba":
        st = mass_matrix_kernel(c.mi, c.mf, q, ws.buffer, c.nv, M)
    else:
        st = mass_matrix_jtmj_kernel(c.mi, c.mf, q, ws.buffer, c.nv, M, np.empty((c.nb, 6, c.nv)))
    if st:
        val.raise_status(st, ("q",))
    return M
