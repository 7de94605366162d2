"""Closed-chain forward dynamics by the direct (Lagrange-multiplier) method, in one kernel.

[Jain24] ("Closed-chain Equations of Motion", "Direct solution method"); [Chignoli23,
§II-D] (the Lagrange multiplier method). The spanning-tree equations with the constraint
rows G_c (loop joints and constant couplings) are

    M θ̈ + C − G_c*λ = T,        G_c θ̈ = 𝔘̊,

and eliminating θ̈ = θ̈_f + M⁻¹G_c*λ, with θ̈_f = M⁻¹(T − C) the tree's forward dynamics,
leaves the constraint-space system

    A λ = 𝔘̊ − G_c θ̈_f,     A = G_c M⁻¹ G_c*.

M is never formed. The ABA's articulated-body pass leaves the innovations factors of the
tree in the workspace, M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] ([Jain24, topic 6]), so

    W = [I − HψK] G_c*   (one O(N) tips-to-base gather on the m columns),
    A = W* D⁻¹ W,        M⁻¹G_c*λ = [I − HψK]* (D⁻¹W λ)   (one base-to-tips scatter).

The kernel runs, from (θ, θ̇):

1. the kinematics the loop rows need and the rows themselves
   (:func:`~soadyn.kernels.loops.loop_rows_pass`), then the constant coupling rows;
2. the ABA (:func:`~soadyn.kernels.aba.articulated_body_pass` and
   :func:`~soadyn.kernels.aba.acceleration_pass`): θ̈_f;
3. the rows of G_c that span its row space (:func:`independent_rows`, a Gram–Schmidt
   pass over G_c's rows: a planar loop closed by a spatial joint has 3 of its 5 rows
   redundant, and each row costs a column of the gather below);
4. W and A on those rows by :func:`~soadyn.kernels.innovations.factor_gather` and
   :func:`~soadyn.kernels.innovations.apply_dinv`, in O(N m);
5. the pivoted Cholesky factorization of A (:func:`pivoted_cholesky`), which also drops
   rows that are nearly dependent through M⁻¹ (pivots below ``pivot_tol`` times the
   largest), and λ on the kept rows, zero on the others. θ̈ and the generalized
   constraint force G_c*λ are unique in any case; λ is one particular solution (the
   least-norm one is computed from G_c*λ on demand, see :mod:`soadyn.closed.direct`);
6. θ̈ = θ̈_f + [I − HψK]* (D⁻¹W λ) by :func:`~soadyn.kernels.innovations.factor_scatter`.

No SVD and no dense factorization of M: the cost is O(N m + m³).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..core.layout import carve, model_tables
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .aba import acceleration_pass, articulated_body_pass
from .innovations import apply_dinv, factor_gather, factor_scatter
from .kinematics import configuration_status, forces_shape_ok, rates_shape_ok, state_status
from .loops import loop_kinematics, loop_row_count, loop_rows_pass


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


#: rows of G_c whose component orthogonal to the rows kept is below this fraction of the
#: largest row norm are redundant (:func:`independent_rows`)
ROW_TOL = 1e-9


@njit(cache=True)
def independent_rows(G, rows, work):
    """Rows of G (m, nv) that span its row space: Gram–Schmidt with pivoting (the QR
    factorization of G* with column pivoting), each step keeping the row with the largest
    component orthogonal to the rows kept so far, until that component is below
    ``ROW_TOL`` times the largest row norm. Returns the number n kept, their indices in
    ``rows[:n]``; ``work`` (m, nv) scratch. O(m n nv)."""
    m, nv = G.shape
    top2 = 0.0
    for i in range(m):
        norm2 = 0.0
        for k in range(nv):
            work[i, k] = G[i, k]
            norm2 += G[i, k] * G[i, k]
        top2 = max(top2, norm2)
        rows[i] = i
    threshold2 = ROW_TOL * ROW_TOL * top2
    for n in range(m):
        best, best2 = n, -1.0
        for i in range(n, m):  # rows[n:] are the candidates; work[rows[i]] their residuals
            r2 = 0.0
            for k in range(nv):
                r2 += work[rows[i], k] * work[rows[i], k]
            if r2 > best2:
                best, best2 = i, r2
        if not best2 > threshold2:
            return n
        rows[n], rows[best] = rows[best], rows[n]
        e = work[rows[n]]
        scale = 1.0 / math.sqrt(best2)
        for k in range(nv):
            e[k] *= scale
        for i in range(n + 1, m):
            x = work[rows[i]]
            d = 0.0
            for k in range(nv):
                d += e[k] * x[k]
            for k in range(nv):
                x[k] -= d * e[k]
    return m


# --------------------------------------------------------------------------- the kernel
#: Named views of the kernel's one output array (:func:`direct_outputs`): θ̈ (nv,), a
#: particular λ (m,), the rank of G_c (stored as a float), the largest position and
#: velocity residuals (max |𝔡|, max |G_c θ̇|) for the caller's consistency check, and the
#: constraint evaluation G_c (m, nv), 𝔘̊ (m,), 𝔡 (m,) and the loop rows' node selections
#: (m_loop, 12).
DirectOutputs = namedtuple("DirectOutputs", ["qdd", "lam", "rank", "worst_residuals", "G", "ubias", "resid", "sel"])


@njit(cache=True)
def direct_output_size(nv, m, m_loop):
    """Length of the kernel's output array for nv coordinates, m rows, m_loop loop rows."""
    return nv + m + 3 + m * nv + 2 * m + 12 * m_loop


@njit(forceinline=True, cache=True)
def direct_outputs(out, nv, m, m_loop):
    """Named views (:class:`DirectOutputs`) of the output array (also used from Python)."""
    o = 0
    qdd = carve(out, o, nv); o += nv
    lam = carve(out, o, m); o += m
    rank = carve(out, o, 1); o += 1
    worst_residuals = carve(out, o, 2); o += 2
    G = carve(out, o, (m, nv)); o += m * nv
    ubias = carve(out, o, m); o += m
    resid = carve(out, o, m); o += m
    sel = carve(out, o, (m_loop, 12))
    return DirectOutputs(qdd, lam, rank, worst_residuals, G, ubias, resid, sel)


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
    x = np.empty(nv)
    corr = np.empty((nv, 1))  # θ̈_δ = M⁻¹G_c*λ
    Zs1 = np.empty((mt.nb, 1, 6))  # spatial scratch of the scatter
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
    # the largest residuals (loop and coupling rows are holonomic, with 𝔘 = 0)
    worst_q = 0.0
    worst_v = 0.0
    for r in range(m):
        worst_q = max(worst_q, abs(o.resid[r]))
        if has_v:
            acc = 0.0
            for k in range(nv):
                acc += G[r, k] * v[k]
            worst_v = max(worst_v, abs(acc))
    o.worst_residuals[0] = worst_q
    o.worst_residuals[1] = worst_v
    # 2. the free accelerations θ̈_f = M⁻¹(T − C) by the ABA, which leaves the innovations
    #    factors of M in the workspace
    if not articulated_body_pass(mi, mf, ws, tau, fext, has_v):
        return SINGULAR
    acceleration_pass(mi, mf, ws, gravity, has_v, x)
    o.rank[0] = 0.0
    qdd = o.qdd
    if m == 0:
        for k in range(nv):
            qdd[k] = x[k]
        return OK
    # 3. the rows of G_c that span its row space (redundant rows carry no information and
    #    would cost a column of the gather each)
    rows = np.empty(m, dtype=np.int64)
    basis = np.empty((m, nv))
    n = independent_rows(G, rows, basis)
    # 4. W = [I − HψK] Ĝ*, A = W* D⁻¹ W = Ĝ M⁻¹ Ĝ* on those rows Ĝ, and 𝔘̊ − Ĝ θ̈_f
    #    (− Baumgarte terms)
    W = np.empty((nv, n))  # [I − HψK] Ĝ*
    Y = np.empty((nv, n))  # D⁻¹ W
    Zs = np.empty((mt.nb, n, 6))  # spatial scratch of the gather
    A = np.empty((n, n))
    rhs = np.empty(n)
    y = np.empty(n)
    mu = np.empty(n)
    perm = np.empty(n, dtype=np.int64)
    for k in range(nv):
        for j in range(n):
            W[k, j] = G[rows[j], k]
    factor_gather(mi, mf, ws, W, Zs, True)
    for k in range(nv):
        for j in range(n):
            Y[k, j] = W[k, j]
    apply_dinv(mi, mf, ws, Y, True)
    for i in range(n):
        for j in range(i + 1):
            acc = 0.0
            for k in range(nv):
                acc += W[k, i] * Y[k, j]
            A[i, j] = acc
            A[j, i] = acc
    alpha, beta = stabilization[0], stabilization[1]
    for j in range(n):
        r = rows[j]
        acc = o.ubias[r]
        for k in range(nv):
            acc -= G[r, k] * x[k]
        if alpha != 0.0 and has_v:
            dv = 0.0
            for k in range(nv):
                dv += G[r, k] * v[k]
            acc -= 2.0 * alpha * dv
        if beta != 0.0:
            acc -= beta * beta * o.resid[r]
        rhs[j] = acc
    # 5. λ on the independent rows (the pivoted factorization also drops rows that are
    #    independent in G_c but nearly dependent through M⁻¹), zero on the others
    rank = pivoted_cholesky(A, perm, pivot_tol)
    o.rank[0] = rank
    pivoted_solve(A, perm, rank, rhs, mu, y)
    lam = o.lam
    for r in range(m):
        lam[r] = 0.0
    for j in range(n):
        lam[rows[j]] = mu[j]
    # 6. θ̈ = θ̈_f + M⁻¹G_c*λ with M⁻¹Ĝ*μ = [I − HψK]* (D⁻¹W μ)
    for k in range(nv):
        acc = 0.0
        for j in range(n):
            acc += Y[k, j] * mu[j]
        corr[k, 0] = acc
    factor_scatter(mi, mf, ws, corr, Zs1, True)
    for k in range(nv):
        qdd[k] = x[k] + corr[k, 0]
    return OK


@njit(nogil=True, cache=True)
def direct_batch(mi, mf, ws, Q, Vq, T, Fext, li, lf, coupling_v, coupling_q, coupling_offset, gravity,
                 stabilization, pivot_tol, out, status, start, stop):
    """:func:`direct_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = direct_kernel(mi, mf, ws, Q[b], Vq[b], T[b], Fext[b], li, lf, coupling_v, coupling_q,
                                  coupling_offset, gravity, stabilization, pivot_tol, out[b])
