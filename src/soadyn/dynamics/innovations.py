"""Articulated-body quantities, the innovations factorization, M⁻¹ and log det M.

Seed 001 topics 5–6 (articulated body inertia; mass matrix factorization and
inversion) for tree SKO models (seed 002 §2.4), with the ATBI (Riccati) recursion of
seed 000 eq. 7 — run by the shared ``articulated_body_pass`` of :mod:`.aba` — giving
per body P(k), D(k) = H(k)P(k)H*(k), G(k) = P(k)H*(k)D⁻¹(k) and τ̄(k) = I − G(k)H(k).
On these, with K = E_φ G and ψ = (I − E_φ τ̄)⁻¹:

* innovations factorization   M = [I + HφK] D [I + HφK]*
* its inverse factor          [I + HφK]⁻¹ = I − HψK
* the mass-matrix inverse     M⁻¹ = [I − HψK]* D⁻¹ [I − HψK]
* the determinant             det M = Π_k det D(k)

Each factor is applied by one O(N) recursion to a block of columns (``factor_gather``
tips-to-base for [I + HφK] and [I − HψK], ``factor_scatter`` base-to-tips for their
adjoints); applied to the N columns of the identity they give M⁻¹ in O(N²) without
forming or factoring M.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit, prange

from .. import _validation as val
from ._layout import NV, PARENT, VIDX, batch_chunks, workspace_views
from ._primitives import add_force_to_parent, motion_to_child
from .aba import articulated_body_pass
from .kinematics import check_quaternions, joint_placements, nonfinite

__all__ = ["articulated_inertias", "mass_matrix_inverse", "log_det_mass_matrix",
           "apply_innovations_factor", "ArticulatedInertias"]


# --------------------------------------------------------------------------- ATBI
@njit(cache=True)
def atbi(mi, mf, q, ws, nv):
    """The ATBI recursion (seed 000 eq. 7) at ``q`` with zero velocity and forces.

    Leaves in the workspace: the body poses (R, t) defining φ(℘(k), k), the joint maps S,
    U = P(k)H*(k) (rows of the body's dofs), D⁻¹(k) and, for non-root bodies, P⁺(k) in
    P (roots keep P(k)) — the layout of ``articulated_body_pass``. Returns a status.
    """
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    if not articulated_body_pass(mi, mf, np.empty(0), None, ws, nv, False):
        return val.SINGULAR
    return val.OK


@njit(cache=True)
def spo_adjoint_blocks(mi, ws, nv, psi, A):
    """A[k] = φ*(℘(k), k) (``psi`` False) or ψ*(℘(k), k) = τ̄*(k)φ*(℘(k), k) (``psi`` True).

    These are seed 003's influence weights A_k for the SPOs φ and ψ: z = φ*x is
    z_k = A_k z_℘(k) + x_k. Needs :func:`atbi` (or ``joint_placements`` for φ) first.
    Root blocks are zero.
    """
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, Ac, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for k in range(nb):
        if mi[k, PARENT] < 0:
            A[k, :, :] = 0.0
            continue
        # φ*(℘(k), k) = [[Rᵀ, 0], [−Rᵀ[t]×, Rᵀ]] applied to the unit vectors
        for c in range(6):
            for a in range(6):
                scratch[0, 0, a] = 1.0 if a == c else 0.0
            motion_to_child(R, t, k, scratch[0], 0, scratch[1], 0)
            for a in range(6):
                A[k, a, c] = scratch[1, 0, a]
        if psi:
            # τ̄*(k) = I − H*(k) D⁻¹(k) U(k)ᵀ, applied on the left
            vi = mi[k, VIDX]
            n = mi[k, NV]
            for c in range(6):
                for r in range(n):
                    acc = 0.0
                    for a in range(6):
                        acc += U[vi + r, a] * A[k, a, c]
                    scratch[2, 0, r] = acc
                for r in range(n):
                    acc = 0.0
                    for r2 in range(n):
                        acc += Dinv[k, r, r2] * scratch[2, 0, r2]
                    scratch[2, 1, r] = acc
                for a in range(6):
                    acc = 0.0
                    for r in range(n):
                        acc += S[vi + r, a] * scratch[2, 1, r]
                    A[k, a, c] -= acc


# --------------------------------------------------------------------------- factor products
@njit(inline="always", cache=True)
def _rows_times(rows, vi, n, z, zi, out):
    """out[r] = rows[vi + r] · z[zi] for the n dofs of a body (H z with rows = S, Uᵀz with U)."""
    for r in range(n):
        acc = 0.0
        for a in range(6):
            acc += rows[vi + r, a] * z[zi, a]
        out[r] = acc


@njit(inline="always", cache=True)
def _dinv_times(Dinv, k, n, h, out):
    """out = D⁻¹(k) h."""
    for r in range(n):
        acc = 0.0
        for r2 in range(n):
            acc += Dinv[k, r, r2] * h[r2]
        out[r] = acc


@njit(inline="always", cache=True)
def _add_rows_combination(rows, vi, n, g, z, zi):
    """z[zi] += Σ_r g[r] rows[vi + r] (H*g with rows = S, U g with U)."""
    for a in range(6):
        acc = 0.0
        for r in range(n):
            acc += rows[vi + r, a] * g[r]
        z[zi, a] += acc


@njit(inline="always", cache=True)
def _update_rows(X, vi, n, c, d, inverse, h):
    """X[vi + r, c] ← x ∓ d[r]; h ← the result (``inverse``) or the old x."""
    for r in range(n):
        x = X[vi + r, c]
        y = x - d[r] if inverse else x + d[r]
        X[vi + r, c] = y
        h[r] = y if inverse else x


@njit(cache=True)
def factor_gather(mi, ws, nv, X, Z, inverse):
    """X ← [I + HφK] X, or with ``inverse`` X ← [I − HψK] X = [I + HφK]⁻¹ X, in place.

    ``X`` (nv, ncols); ``Z`` (nb, ncols, 6) scratch. Tips-to-base gather of
    y = φKx (resp. ψKx): y(k) = Σ_{c ∈ children(k)} φ(k, c) w(c) with
      [I + HφK]:  r(k) = x(k) + H(k)y(k),   w(k) = y(k) + G(k)x(k)
      [I − HψK]:  r(k) = x(k) − H(k)y(k),   w(k) = y(k) + G(k)r(k) = τ̄(k)y(k) + G(k)x(k)
    and r the result (seed 001 topic 6). Needs :func:`atbi` first.
    """
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    Z[:] = 0.0
    d = scratch[0, 0]
    h = scratch[0, 1]
    g = scratch[0, 2]
    for k in range(nb - 1, -1, -1):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        p = mi[k, PARENT]
        Zk = Z[k]
        for c in range(X.shape[1]):
            _rows_times(S, vi, n, Zk, c, d)  # H y
            _update_rows(X, vi, n, c, d, inverse, h)
            _dinv_times(Dinv, k, n, h, g)
            _add_rows_combination(U, vi, n, g, Zk, c)  # w = y + U D⁻¹ h
            if p >= 0:
                add_force_to_parent(R, t, k, Zk, c, Z[p], c)


@njit(cache=True)
def factor_scatter(mi, ws, nv, X, Z, inverse):
    """X ← [I + HφK]* X, or with ``inverse`` X ← [I − HψK]* X, in place.

    Base-to-tips scatter of s = φ*H*x (resp. ψ*H*x) with a⁺(k) = φ*(℘(k), k)s(℘(k)):
      [I + HφK]*:  r(k) = x(k) + G*(k)a⁺(k),   s(k) = a⁺(k) + H*(k)x(k)
      [I − HψK]*:  r(k) = x(k) − G*(k)a⁺(k),   s(k) = a⁺(k) + H*(k)r(k) = τ̄*a⁺ + H*x
    (seed 001 topic 6; the second is the acceleration pass of the ABA). Needs :func:`atbi`.
    """
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    d = scratch[0, 0]
    h = scratch[0, 1]
    g = scratch[0, 2]
    for k in range(nb):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        p = mi[k, PARENT]
        Zk = Z[k]
        for c in range(X.shape[1]):
            if p >= 0:
                motion_to_child(R, t, k, Z[p], c, Zk, c)
            else:
                Zk[c, :] = 0.0
            _rows_times(U, vi, n, Zk, c, d)  # G* a⁺ = D⁻¹ Uᵀ a⁺
            _dinv_times(Dinv, k, n, d, g)
            _update_rows(X, vi, n, c, g, inverse, h)
            _add_rows_combination(S, vi, n, h, Zk, c)  # s = a⁺ + H* h


@njit(cache=True)
def apply_dinv(mi, ws, nv, X, inverse):
    """X ← D⁻¹X (``inverse``) or X ← DX, blockwise, D(k) = H(k)U(k) (D block diagonal)."""
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    h = scratch[0, 0]
    for k in range(nb):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        for c in range(X.shape[1]):
            for r in range(n):
                h[r] = X[vi + r, c]
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    if inverse:
                        acc += Dinv[k, r, r2] * h[r2]
                    else:
                        d = 0.0
                        for a in range(6):
                            d += S[vi + r, a] * U[vi + r2, a]
                        acc += d * h[r2]
                X[vi + r, c] = acc


@njit(cache=True)
def factor_product_kernel(mi, mf, q, ws, nv, X, Z, inverse, adjoint):
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    if nonfinite(X.ravel()):
        return val.BAD_SECOND
    if adjoint:
        factor_scatter(mi, ws, nv, X, Z, inverse)
    else:
        factor_gather(mi, ws, nv, X, Z, inverse)
    return val.OK


# --------------------------------------------------------------------------- M⁻¹, det
@njit(cache=True)
def mass_matrix_inverse_kernel(mi, mf, q, ws, nv, Z, Minv):
    """M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] applied to the identity, O(N²) (seed 001 topic 6)."""
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    Minv[:] = 0.0
    for c in range(nv):
        Minv[c, c] = 1.0
    factor_gather(mi, ws, nv, Minv, Z, True)
    apply_dinv(mi, ws, nv, Minv, True)
    factor_scatter(mi, ws, nv, Minv, Z, True)
    # the two triangles agree to rounding; return the exactly symmetric mean
    for r in range(nv):
        for c in range(r):
            m = 0.5 * (Minv[r, c] + Minv[c, r])
            Minv[r, c] = m
            Minv[c, r] = m
    return val.OK


@njit(parallel=True, cache=True)
def _mass_matrix_inverse_batch(mi, mf, Q, wss, Zs, nv, Minv, status):
    B = Q.shape[0]
    nch = wss.shape[0]
    for ch in prange(nch):
        for b in range(ch * B // nch, (ch + 1) * B // nch):
            status[b] = mass_matrix_inverse_kernel(mi, mf, Q[b], wss[ch], nv, Zs[ch], Minv[b])


@njit(cache=True)
def log_det_kernel(mi, mf, q, ws, nv, out):
    """out[0] = log det M = Σ_k log det D(k) (seed 001 topic 6), O(N)."""
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    L = scratch[1]
    total = 0.0
    for k in range(nb):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        # Cholesky of D(k) = H(k)U(k): log det = 2 Σ log L_rr
        for r in range(n):
            for r2 in range(r + 1):
                s = 0.0
                for a in range(6):
                    s += S[vi + r, a] * U[vi + r2, a]
                for j in range(r2):
                    s -= L[r, j] * L[r2, j]
                if r == r2:
                    if not s > 0.0:
                        return val.SINGULAR
                    L[r, r] = math.sqrt(s)
                    total += 2.0 * math.log(L[r, r])
                else:
                    L[r, r2] = s / L[r2, r2]
    out[0] = total
    return val.OK


@njit(cache=True)
def articulated_inertias_kernel(mi, mf, q, ws, nv, P_out, D_out, G_out):
    """P(k) (nb, 6, 6), D = blockdiag D(k) (nv, nv), G (6, nv) with G(k) in k's columns."""
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    D_out[:] = 0.0
    for k in range(nb):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        for r in range(n):
            for r2 in range(n):
                acc = 0.0
                for a in range(6):
                    acc += S[vi + r, a] * U[vi + r2, a]
                D_out[vi + r, vi + r2] = acc
        for a in range(6):
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    acc += U[vi + r2, a] * Dinv[k, r2, r]
                G_out[a, vi + r] = acc
        # the pass leaves P⁺(k) = P(k) − U D⁻¹ Uᵀ for non-root bodies
        restore = mi[k, PARENT] >= 0
        for a in range(6):
            for b in range(6):
                acc = P[k, a, b]
                if restore:
                    for r in range(n):
                        acc += G_out[a, vi + r] * U[vi + r, b]
                P_out[k, a, b] = acc
    return val.OK


# --------------------------------------------------------------------------- public API
ArticulatedInertias = namedtuple("ArticulatedInertias", ["P", "D", "G"])
ArticulatedInertias.__doc__ = """Output of :func:`articulated_inertias`.

P (nb, 6, 6): articulated body inertia P(k) of each body, body frame, about its origin.
D (nv, nv): the block-diagonal operator D, D(k) = H(k)P(k)H*(k) at body k's dofs.
G (6, nv): Kalman gains, G(k) = P(k)H*(k)D⁻¹(k) in the columns of body k's dofs.
"""


def articulated_inertias(model, q, *, workspace=None):
    """The articulated-body quantities P(k), D(k), G(k) at ``q`` (ATBI, seed 000 eq. 7).

    O(N) Riccati recursion, tips to base: P(k) = M(k) + Σ_{j ∈ children(k)} φ(k, j)τ̄(j)P(j)φ*(k, j),
    D(k) = H(k)P(k)H*(k), G(k) = P(k)H*(k)D⁻¹(k), τ̄ = I − GH.

    Parameters: model; q (nq,). Returns :class:`ArticulatedInertias` ``(P, D, G)``:
    P (nb, 6, 6) [kg, kg m, kg m²], D (nv, nv) block diagonal, G (6, nv).
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    ws = workspace if workspace is not None else model.workspace()
    P = np.empty((c.nb, 6, 6))
    D = np.empty((c.nv, c.nv))
    G = np.empty((6, c.nv))
    st = articulated_inertias_kernel(c.mi, c.mf, q, ws.buffer, c.nv, P, D, G)
    if st:
        val.raise_status(st, ("q",))
    return ArticulatedInertias(P, D, G)


def mass_matrix_inverse(model, q, *, out=None, workspace=None):
    """Inverse mass matrix M⁻¹(q) by its operator expression M⁻¹ = [I − HψK]* D⁻¹ [I − HψK].

    Seed 001 topic 6 (and the "G_c M⁻¹ G_c* simplification" there): one tips-to-base gather
    and one base-to-tips scatter over the N columns of the identity, O(N²), without
    forming or factoring M.

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    out : optional (nv, nv) / (B, nv, nv) output; workspace : optional :class:`Workspace`.

    Returns (nv, nv) or (B, nv, nv), symmetric positive definite [1/kg, 1/(kg m²), ...].
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    ws = workspace if workspace is not None else model.workspace()
    if q.ndim == 1:
        Minv = val.output(out, (c.nv, c.nv))
        st = mass_matrix_inverse_kernel(c.mi, c.mf, q, ws.buffer, c.nv, np.empty((c.nb, c.nv, 6)), Minv)
        if st:
            val.raise_status(st, ("q",))
        return Minv
    B = q.shape[0]
    Minv = val.output(out, (B, c.nv, c.nv))
    nch = batch_chunks(B)
    status = np.zeros(B, dtype=np.int64)
    _mass_matrix_inverse_batch(c.mi, c.mf, q, ws.batch_buffers(nch), np.empty((nch, c.nb, c.nv, 6)),
                               c.nv, Minv, status)
    val.check_batch_status(status, ("q",))
    return Minv


def log_det_mass_matrix(model, q, *, workspace=None):
    """log det M(q) = Σ_k log det D(k) (seed 001 topic 6, from the innovations
    factorization with unit-triangular factors), O(N). Returns a float."""
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    ws = workspace if workspace is not None else model.workspace()
    out = np.empty(1)
    st = log_det_kernel(c.mi, c.mf, q, ws.buffer, c.nv, out)
    if st:
        val.raise_status(st, ("q",))
    return float(out[0])


def apply_innovations_factor(model, q, x, *, inverse=False, adjoint=False, workspace=None):
    """Product of an innovations factor with ``x`` in O(N) per column (seed 001 topic 6).

    ==========  ==========  ==========================
    inverse     adjoint     returns
    ==========  ==========  ==========================
    False       False       [I + HφK] x
    False       True        [I + HφK]* x
    True        False       [I − HψK] x = [I + HφK]⁻¹ x
    True        True        [I − HψK]* x
    ==========  ==========  ==========================

    M = [I + HφK] D [I + HφK]* and M⁻¹ = [I − HψK]* D⁻¹ [I − HψK].
    ``x``: (nv,) or (nv, k) for k columns; the result has the same shape.
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    X = np.array(x, dtype=np.float64, order="C", copy=True)
    if X.ndim not in (1, 2) or X.shape[0] != c.nv:
        raise ValueError(f"x: expected shape ({c.nv},) or ({c.nv}, k), got {X.shape}")
    X2 = X.reshape(c.nv, -1)
    ws = workspace if workspace is not None else model.workspace()
    st = factor_product_kernel(c.mi, c.mf, q, ws.buffer, c.nv, X2, np.empty((c.nb, X2.shape[1], 6)),
                               bool(inverse), bool(adjoint))
    if st:
        val.raise_status(st, ("q", "x"))
    return X
