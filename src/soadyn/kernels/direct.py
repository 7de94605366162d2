"""Closed-chain forward dynamics by the direct (Lagrange-multiplier) method, in one kernel.

[Jain24] ("Closed-chain Equations of Motion", "Direct solution method"); [Chignoli23,
§II-D] (the Lagrange multiplier method). The spanning-tree equations with the constraint
rows G_c (loop joints and constant couplings) are

    M θ̈ + C − G_c*λ = T,        G_c θ̈ = 𝔘̊,

and eliminating θ̈ = M⁻¹(T − C + G_c*λ) leaves the constraint-space system

    A λ = 𝔘̊ − G_c θ̈_f,     A = G_c M⁻¹ G_c*,     θ̈_f = M⁻¹(T − C),

(the free accelerations θ̈_f are the tree's forward dynamics), after which
θ̈ = θ̈_f + M⁻¹G_c*λ. The kernel evaluates everything from (θ, θ̇) in one call:

1. the kinematics the loop rows need and the rows themselves
   (:func:`~soadyn.kernels.loops.loop_rows_pass`), then the constant coupling rows;
2. C by the RNEA at θ̈ = 0 (gravity and f_ext included) and M by composite rigid
   bodies, from the same body poses;
3. M = LᵀDL, the factorization that keeps the sparsity of a tree ([Featherstone08,
   ch. 6]: L has nonzeros only where a dof is an ancestor of another, so the
   factorization costs Σ depth² instead of nv³/3) — :func:`ltdl_factor`;
4. A = Zᵀ D⁻¹ Z with Z = L⁻ᵀ G_c*, and the rank-revealing pivoted Cholesky factorization
   of A (:func:`pivoted_cholesky`): a redundant constraint row (a planar loop closed by
   a spatial joint, two loops sharing a constraint) gives a pivot at round-off level,
   below ``pivot_tol`` times the largest, and its multiplier is set to zero. The
   generalized constraint force G_c*λ and θ̈ are unique in any case; λ is then one
   particular solution (the least-norm one is computed from G_c*λ on demand, see
   :mod:`soadyn.closed.direct`).

No SVD is needed: the pivoted factorization finds the rank of G_c (equal to that of A,
M being positive definite) at the cost of a Cholesky factorization.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import get_thread_id, njit, prange

from ..core.layout import carve, model_tables
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .batch import BATCH_BLOCK, batch_blocks
from .crba import mass_matrix_pass
from .kinematics import (absent, body_accelerations, configuration_status, forces_shape_ok, rates_shape_ok,
                         state_status)
from .loops import loop_kinematics, loop_row_count, loop_rows_pass
from .rnea import body_forces_pass, generalized_forces_pass


# --------------------------------------------------------------------------- tree-sparse LᵀDL
@njit(cache=True)
def dof_parents(mi, mf, lam):
    """λ(k) (nv,): the dof that precedes dof k on the path to the root (the previous dof
    of the same joint, else the last dof of the nearest ancestor joint that has one;
    −1 at the root). Dofs are numbered parent-first, so λ(k) < k."""
    m = model_tables(mi, mf)
    for i in range(m.nb):
        vi = m.v_index[i]
        n = m.joint_nv[i]
        if n == 0:
            continue
        p = m.parent[i]
        while p >= 0 and m.joint_nv[p] == 0:
            p = m.parent[p]
        lam[vi] = -1 if p < 0 else m.v_index[p] + m.joint_nv[p] - 1
        for c in range(1, n):
            lam[vi + c] = vi + c - 1


@njit(cache=True)
def ltdl_factor(H, lam):
    """H = LᵀDL in place (the sparse LTDL factorization, [Featherstone08, ch. 6]): D on the diagonal, the strictly
    lower part of L below it (L has a unit diagonal). Only the entries (k, i) with i an
    ancestor of k are read or written. Returns False when a pivot D(k) is not positive
    (M singular)."""
    for k in range(H.shape[0] - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return False
        i = lam[k]
        while i >= 0:
            a = H[k, i] / d
            j = i
            while j >= 0:
                H[i, j] -= a * H[k, j]
                j = lam[j]
            H[k, i] = a
            i = lam[i]
    return True


@njit(cache=True)
def ltdl_back(H, lam, x):
    """x ← L⁻ᵀ x, tips to root."""
    for i in range(H.shape[0] - 1, -1, -1):
        xi = x[i]
        if xi != 0.0:
            j = lam[i]
            while j >= 0:
                x[j] -= H[i, j] * xi
                j = lam[j]


@njit(cache=True)
def ltdl_forward(H, lam, x):
    """x ← L⁻¹ x, root to tips."""
    for i in range(H.shape[0]):
        j = lam[i]
        acc = x[i]
        while j >= 0:
            acc -= H[i, j] * x[j]
            j = lam[j]
        x[i] = acc


@njit(cache=True)
def ltdl_solve(H, lam, x):
    """x ← M⁻¹x = L⁻¹D⁻¹L⁻ᵀx with H from :func:`ltdl_factor`."""
    ltdl_back(H, lam, x)
    for i in range(H.shape[0]):
        x[i] /= H[i, i]
    ltdl_forward(H, lam, x)


# --------------------------------------------------------------------------- pivoted Cholesky
@njit(cache=True)
def pivoted_cholesky(A, perm, pivot_tol):
    """A = Pᵀ L Lᵀ P in place for a symmetric positive semidefinite A (m, m), with
    diagonal pivoting; stops when the largest remaining pivot is below ``pivot_tol``
    times the largest diagonal entry. Returns the rank r; ``perm[:r]`` are the rows kept
    and L (r, r) sits in the lower triangle of ``A[:r, :r]`` (rows and columns of A are
    permuted in place)."""
    m = A.shape[0]
    for i in range(m):
        perm[i] = i
    top = 0.0
    for i in range(m):
        top = max(top, A[i, i])
    if not top > 0.0:
        return 0
    threshold = pivot_tol * top
    for k in range(m):
        p = k
        for i in range(k + 1, m):
            if A[i, i] > A[p, p]:
                p = i
        if not A[p, p] > threshold:
            return k
        if p != k:
            perm[k], perm[p] = perm[p], perm[k]
            for j in range(m):
                A[k, j], A[p, j] = A[p, j], A[k, j]
            for i in range(m):
                A[i, k], A[i, p] = A[i, p], A[i, k]
        d = math.sqrt(A[k, k])
        A[k, k] = d
        for i in range(k + 1, m):
            A[i, k] /= d
            A[k, i] = A[i, k]
        for j in range(k + 1, m):
            ljk = A[j, k]
            for i in range(j, m):
                A[i, j] -= A[i, k] * ljk
                A[j, i] = A[i, j]
    return m


@njit(cache=True)
def pivoted_solve(A, perm, r, b, x, y):
    """x (m,) with x[perm[:r]] = (L Lᵀ)⁻¹ b[perm[:r]] and zero elsewhere; ``y`` (m,) scratch."""
    for i in range(r):
        acc = b[perm[i]]
        for k in range(i):
            acc -= A[i, k] * y[k]
        y[i] = acc / A[i, i]
    for i in range(r - 1, -1, -1):
        acc = y[i]
        for k in range(i + 1, r):
            acc -= A[k, i] * y[k]
        y[i] = acc / A[i, i]
    for i in range(x.shape[0]):
        x[i] = 0.0
    for i in range(r):
        x[perm[i]] = y[i]


# --------------------------------------------------------------------------- the kernel
#: Named views of the kernel's one output array (:func:`direct_outputs`): θ̈ (nv,), a
#: particular λ (m,), the rank of G_c (stored as a float), and the constraint evaluation
#: G_c (m, nv), 𝔘̊ (m,), 𝔡 (m,) and the loop rows' node selections (m_loop, 12).
DirectOutputs = namedtuple("DirectOutputs", ["qdd", "lam", "rank", "G", "ubias", "resid", "sel"])


@njit(cache=True)
def direct_output_size(nv, m, m_loop):
    """Length of the kernel's output array for nv coordinates, m rows, m_loop loop rows."""
    return nv + m + 1 + m * nv + 2 * m + 12 * m_loop


@njit(inline="always", cache=True)
def direct_outputs(out, nv, m, m_loop):
    """Named views (:class:`DirectOutputs`) of the output array (also used from Python)."""
    o = 0
    qdd = carve(out, o, nv); o += nv
    lam = carve(out, o, m); o += m
    rank = carve(out, o, 1); o += 1
    G = carve(out, o, (m, nv)); o += m * nv
    ubias = carve(out, o, m); o += m
    resid = carve(out, o, m); o += m
    sel = carve(out, o, (m_loop, 12))
    return DirectOutputs(qdd, lam, rank, G, ubias, resid, sel)


@njit(cache=True)
def direct_kernel(mi, mf, ws, q, v, tau, fext, li, lf, coupling_v, coupling_q, coupling_offset, gravity,
                  stabilization, pivot_tol, out):
    """θ̈ of a tree closed by loop joints (``li``, ``lf``: the packed loops, m_loop rows)
    and constant couplings (rows ``coupling_v`` (nc, nv), positions ``coupling_q``
    (nc, nq), ``coupling_offset`` (nc,)), with the constraint evaluation, into ``out``
    (:class:`DirectOutputs`, m = m_loop + nc rows).

    ``stabilization`` = (α, β) [1/s]: solve G_c θ̈ = 𝔘̊ − 2α G_c θ̇ − β²𝔡 (Baumgarte;
    zeros for the plain 𝔘̊). ``pivot_tol``: relative pivot threshold of the pivoted
    Cholesky factorization of A (rows below it are redundant).
    """
    mt = model_tables(mi, mf)
    st = configuration_status(mt, q, ws)
    if st != OK:
        return st
    nv = mt.nv
    nc = coupling_v.shape[0]
    m_loop = loop_row_count(li, lf)
    m = m_loop + nc
    if (tau.shape[0] != nv or not rates_shape_ok(mt, v) or not forces_shape_ok(mt, fext)
            or out.shape[0] != direct_output_size(nv, m, m_loop) or coupling_v.shape[1] != nv
            or coupling_q.shape[1] != q.shape[0] or stabilization.shape[0] != 2):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    o = direct_outputs(out, nv, m, m_loop)
    G = o.G
    J = np.empty((2, 6, nv))
    H = np.empty((nv, nv))
    Z = np.empty((m, nv))  # row r: L⁻ᵀ G_c*[:, r]
    A = np.empty((m, m))
    bias = np.empty(nv)
    x = np.empty(nv)
    rhs = np.empty(m)
    y = np.empty(m)
    parents = np.empty(nv, dtype=np.int64)
    perm = np.empty(m, dtype=np.int64)
    has_v = v.shape[0] > 0

    # 1. constraint rows: loops from the kinematics, then the constant couplings
    loop_kinematics(mi, mf, ws, q, v)
    if m_loop > 0:
        loop_rows_pass(mi, mf, ws, li, lf, has_v, J, G, o.ubias, o.resid, o.sel)
    for c in range(nc):
        r = m_loop + c
        acc = -coupling_offset[c]
        for k in range(q.shape[0]):
            acc += coupling_q[c, k] * q[k]
        o.resid[r] = acc
        o.ubias[r] = 0.0
        for k in range(nv):
            G[r, k] = coupling_v[c, k]
    # 2. C(θ, θ̇) − Σ J_kᵀ f_ext(k) by the RNEA at θ̈ = 0, and M, on the poses of step 1
    body_accelerations(mi, mf, ws, absent(ws), gravity, has_v)
    body_forces_pass(mi, mf, ws, fext, has_v)
    generalized_forces_pass(mi, mf, ws, bias)
    mass_matrix_pass(mi, mf, ws, H)
    # 3. M = LᵀDL; the free accelerations θ̈_f = M⁻¹(T − C)
    dof_parents(mi, mf, parents)
    if not ltdl_factor(H, parents):
        return SINGULAR
    for k in range(nv):
        x[k] = tau[k] - bias[k]
    ltdl_solve(H, parents, x)
    o.rank[0] = 0.0
    qdd = o.qdd
    if m == 0:
        for k in range(nv):
            qdd[k] = x[k]
        return OK
    # 4. A = G_c M⁻¹ G_c* = Zᵀ D⁻¹ Z and the right-hand side 𝔘̊ − G_c θ̈_f (− Baumgarte terms)
    alpha, beta = stabilization[0], stabilization[1]
    for r in range(m):
        acc = o.ubias[r]
        for k in range(nv):
            Z[r, k] = G[r, k]
            acc -= G[r, k] * x[k]
        if alpha != 0.0 and has_v:
            dv = 0.0
            for k in range(nv):
                dv += G[r, k] * v[k]
            acc -= 2.0 * alpha * dv
        if beta != 0.0:
            acc -= beta * beta * o.resid[r]
        rhs[r] = acc
        ltdl_back(H, parents, Z[r])
    for r in range(m):
        for s in range(r + 1):
            acc = 0.0
            for k in range(nv):
                acc += Z[r, k] * Z[s, k] / H[k, k]
            A[r, s] = acc
            A[s, r] = acc
    # 5. λ on the independent rows, then θ̈ = θ̈_f + M⁻¹G_c*λ
    rank = pivoted_cholesky(A, perm, pivot_tol)
    o.rank[0] = rank
    lam = o.lam
    pivoted_solve(A, perm, rank, rhs, lam, y)
    for k in range(nv):
        acc = 0.0
        for r in range(m):
            acc += G[r, k] * lam[r]
        qdd[k] = acc
    ltdl_solve(H, parents, qdd)
    for k in range(nv):
        qdd[k] += x[k]
    return OK


@njit(parallel=True, cache=True)
def direct_batch(mi, mf, wss, Q, Vq, T, Fext, li, lf, coupling_v, coupling_q, coupling_offset, gravity,
                 stabilization, pivot_tol, out, status):
    """:func:`direct_kernel` on B states, one workspace per Numba thread."""
    B = Q.shape[0]
    for blk in prange(batch_blocks(B)):
        ws = wss[get_thread_id()]
        for b in range(blk * BATCH_BLOCK, min(B, (blk + 1) * BATCH_BLOCK)):
            status[b] = direct_kernel(mi, mf, ws, Q[b], Vq[b], T[b], Fext[b], li, lf, coupling_v, coupling_q,
                                      coupling_offset, gravity, stabilization, pivot_tol, out[b])
