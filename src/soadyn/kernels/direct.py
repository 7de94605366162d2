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
3. the rows of G_c that span its row space: a planar loop closed by a spatial joint has 3
   of its 5 rows redundant, and each row costs a column of the gather below. The
   structure of the loops fixes which rows these are away from singular configurations,
   so they are found once per model (the ``selected`` rows of the tables, at a generic
   configuration) and every call checks that its θ̈ satisfies all m rows; a state where
   it does not (a singular configuration) repeats steps 4–6 on the rows that span G_c at
   that state (:func:`independent_rows`, a Gram–Schmidt pass with pivoting over G_c's
   rows, O(m n nv));
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

from ..core.layout import borrow, carve, model_tables, split_model_tables
from ..core.status import BAD_SHAPE, OFF_MANIFOLD, OK, SINGULAR
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


# --------------------------------------------------------------------------- the tables
#: Named views of the constraint tables the kernel reads (:func:`direct_tables`), packed
#: into one int and one float array by :func:`pack_direct_tables` (two arguments instead
#: of eight: the dispatcher costs ~0.1 µs per argument of every call): the packed loops
#: ``li``, ``lf`` (:func:`~soadyn.kernels.loops.loop_tables`), the constant coupling rows
#: ``coupling_v`` (nc, nv), ``coupling_q`` (nc, nq), ``coupling_offset`` (nc,), the row
#: counts ``m_loop`` and ``m``, the rows ``selected`` that span G_c's row space at a
#: generic configuration (found once per model; empty: unknown), and the settings: ``gravity`` (1.0 or 0.0), the Baumgarte
#: gains ``alpha``, ``beta`` [1/s] (zero: the plain 𝔘̊) and the relative ``pivot_tol`` of
#: the pivoted Cholesky factorization of A.
DirectTables = namedtuple("DirectTables", ["li", "lf", "coupling_v", "coupling_q", "coupling_offset", "m_loop", "m",
                                           "selected", "gravity", "alpha", "beta", "pivot_tol"])

#: int header: len(li), nc, nq, m_loop, m, the number of rows in ``selected``; float
#: header: gravity, alpha, beta, pivot_tol
INT_HEADER = 6
FLOAT_HEADER = 4


def pack_direct_tables(li, lf, coupling_v, coupling_q, coupling_offset, m_loop, selected, gravity, alpha, beta,
                       pivot_tol):
    """The (ints, floats) arrays that :func:`direct_tables` reads (Python, at build time);
    ``selected``: the rows that span G_c's row space at a generic configuration (empty:
    none known, every call finds them)."""
    nc, nq = coupling_q.shape
    ints = np.concatenate([[li.size, nc, nq, m_loop, m_loop + nc, len(selected)], li, selected]).astype(np.int64)
    floats = np.concatenate([[1.0 if gravity else 0.0, alpha, beta, pivot_tol], lf, np.ravel(coupling_v),
                             np.ravel(coupling_q), np.ravel(coupling_offset)]).astype(float)
    return ints, floats


@njit(forceinline=True, cache=True)
def direct_tables(ti, tf, nv):
    """Named views (:class:`DirectTables`) of the packed tables ``ti``, ``tf``."""
    n_li, nc, nq, m_loop, m, n_sel = ti[0], ti[1], ti[2], ti[3], ti[4], ti[5]
    li = carve(ti, INT_HEADER, n_li)
    selected = carve(ti, INT_HEADER + n_li, n_sel)
    n_lf = tf.shape[0] - FLOAT_HEADER - nc * (nv + nq + 1)
    o = FLOAT_HEADER
    lf = carve(tf, o, n_lf); o += n_lf
    coupling_v = carve(tf, o, (nc, nv)); o += nc * nv
    coupling_q = carve(tf, o, (nc, nq)); o += nc * nq
    coupling_offset = carve(tf, o, nc)
    return DirectTables(li, lf, coupling_v, coupling_q, coupling_offset, m_loop, m, selected, tf[0] != 0.0, tf[1],
                        tf[2], tf[3])


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


#: Named views of the kernel's scratch (one allocation per call, carved by
#: :func:`direct_scratch`): the node Jacobians J (2, 6, nv), θ̈_f (nv,), the correction
#: M⁻¹G_c*λ (nv, 1) and its spatial scratch (nb, 1, 6); the Gram–Schmidt residuals of
#: the rows (m, nv); W = [I − HψK]Ĝ* and Y = D⁻¹W (nv, n), their spatial scratch
#: (nb, n, 6), A (n, n), the right-hand side, μ and the solve's scratch (n,); the chosen
#: rows and the pivot order (m,) as integers.
DirectScratch = namedtuple("DirectScratch", ["J", "x", "corr", "Zs1", "target", "basis", "W", "Y", "Zs", "A", "rhs",
                                             "mu", "y", "rows", "perm"])


@njit(forceinline=True, cache=True)
def direct_scratch(buf, ibuf, nb, nv, m, n):
    """Named views (:class:`DirectScratch`) for n ≤ m kept rows (sizes: :func:`scratch_size`)."""
    o = 0
    J = carve(buf, o, (2, 6, nv)); o += 12 * nv
    x = carve(buf, o, nv); o += nv
    corr = carve(buf, o, (nv, 1)); o += nv
    Zs1 = carve(buf, o, (nb, 1, 6)); o += 6 * nb
    target = carve(buf, o, m); o += m
    basis = carve(buf, o, (m, nv)); o += m * nv
    W = carve(buf, o, (nv, n)); o += nv * n
    Y = carve(buf, o, (nv, n)); o += nv * n
    Zs = carve(buf, o, (nb, n, 6)); o += 6 * nb * n
    A = carve(buf, o, (n, n)); o += n * n
    rhs = carve(buf, o, n); o += n
    mu = carve(buf, o, n); o += n
    y = carve(buf, o, n)
    return DirectScratch(J, x, corr, Zs1, target, basis, W, Y, Zs, A, rhs, mu, y, carve(ibuf, 0, m),
                         carve(ibuf, m, m))


@njit(forceinline=True, cache=True)
def scratch_size(nb, nv, m):
    """Floats of the scratch of :func:`direct_scratch` at n = m (the most)."""
    return 14 * nv + 6 * nb + m * nv + 2 * nv * m + 6 * nb * m + m * m + 4 * m


@njit(cache=True)
def direct_kernel(mi, mf, ws, q, v, tau, fext, ti, tf, out):
    """θ̈ of a tree closed by loop joints and constant couplings (the packed tables
    ``ti``, ``tf``: :class:`DirectTables`, m = m_loop + nc rows), with the constraint
    evaluation, into ``out`` (:class:`DirectOutputs`).

    The settings come with the tables: ``gravity``; ``alpha``, ``beta`` [1/s]: solve
    G_c θ̈ = 𝔘̊ − 2α G_c θ̇ − β²𝔡 (Baumgarte; zeros for the plain 𝔘̊); ``pivot_tol``: the
    relative pivot threshold of the pivoted Cholesky factorization of A (rows below it
    are redundant).
    """
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, tau = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(tau)
    mt = model_tables(mi, mf)
    st = configuration_status(mt, q, ws)
    if st != OK:
        return st
    nv = mt.nv
    if (ti.shape[0] < INT_HEADER or ti.shape[0] != INT_HEADER + ti[0] + ti[5] or tf.shape[0] < FLOAT_HEADER
            or ti[2] != q.shape[0] or tf.shape[0] < FLOAT_HEADER + ti[1] * (nv + ti[2] + 1)):
        return BAD_SHAPE
    t = direct_tables(ti, tf, nv)
    m, m_loop, nc = t.m, t.m_loop, t.coupling_v.shape[0]
    if (tau.shape[0] != nv or not rates_shape_ok(mt, v) or not forces_shape_ok(mt, fext)
            or out.shape[0] != direct_output_size(nv, m, m_loop) or loop_row_count(t.li, t.lf) != m_loop):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    o = direct_outputs(out, nv, m, m_loop)
    G = o.G
    buf = np.empty(scratch_size(mt.nb, nv, m))
    ibuf = np.empty(2 * m, dtype=np.int64)
    s = direct_scratch(buf, ibuf, mt.nb, nv, m, m)
    has_v = v.shape[0] > 0

    # 1. constraint rows: loops from the kinematics, then the constant couplings
    loop_kinematics(mi, mf, ws, q, v)
    if m_loop > 0:
        loop_rows_pass(mi, mf, ws, t.li, t.lf, has_v, s.J, G, o.ubias, o.resid, o.sel)
    for c in range(nc):
        r = m_loop + c
        acc = -t.coupling_offset[c]
        for k in range(q.shape[0]):
            acc += t.coupling_q[c, k] * q[k]
        o.resid[r] = acc
        o.ubias[r] = 0.0
        for k in range(nv):
            G[r, k] = t.coupling_v[c, k]
    # the largest residuals (loop and coupling rows are holonomic, with 𝔘 = 0) and each
    # row's right-hand side 𝔘̊ − 2α G_c θ̇ − β²𝔡 (Baumgarte terms when α, β are nonzero)
    worst_q = 0.0
    worst_v = 0.0
    target = s.target
    for r in range(m):
        worst_q = max(worst_q, abs(o.resid[r]))
        target[r] = o.ubias[r] - t.beta * t.beta * o.resid[r]
        if has_v:
            acc = 0.0
            for k in range(nv):
                acc += G[r, k] * v[k]
            worst_v = max(worst_v, abs(acc))
            target[r] -= 2.0 * t.alpha * acc
    o.worst_residuals[0] = worst_q
    o.worst_residuals[1] = worst_v
    # 2. the free accelerations θ̈_f = M⁻¹(T − C) by the ABA, which leaves the innovations
    #    factors of M in the workspace
    if not articulated_body_pass(mi, mf, ws, tau, fext, has_v):
        return SINGULAR
    x = s.x
    acceleration_pass(mi, mf, ws, t.gravity, has_v, x)
    o.rank[0] = 0.0
    qdd = o.qdd
    if m == 0:
        for k in range(nv):
            qdd[k] = x[k]
        return OK
    # 3.–6. on the rows found once per model; if this state needs others (a singular
    #    configuration, or a structure the generic one did not show), the rows of this state
    n = t.selected.shape[0]
    if n > 0:
        for j in range(n):
            s.rows[j] = t.selected[j]
        if constrained_accelerations(mi, mf, ws, o.G, s.target, t.pivot_tol, buf, ibuf, n, x, o.lam, o.rank, o.qdd) == OK:
            return OK
    n = independent_rows(G, s.rows, s.basis)
    constrained_accelerations(mi, mf, ws, o.G, s.target, t.pivot_tol, buf, ibuf, n, x, o.lam, o.rank, o.qdd)
    return OK


@njit(cache=True)
def direct_plain_kernel(mti, mtf, ws, q, v, tau, residual_tol, out):
    """:func:`direct_kernel` for the common call (the plain call of
    ``constrained_forward_dynamics``): the model's tables followed by the constraint
    tables in one int array ``mti`` = [mi | ti] and one float array ``mtf`` = [mf | tf]
    (the dispatcher costs ~0.15 µs per argument, a sizeable part of a four-bar's call), no
    external forces, and the consistency check of the state: returns ``OFF_MANIFOLD`` when
    a position residual max |𝔡| or a velocity residual max |G_c θ̇| exceeds
    ``residual_tol`` (or is NaN) — the caller then takes the validated path, which names
    the constraint."""
    ok, mi, mf, ti, tf = split_model_tables(mti, mtf)
    if not ok:
        return BAD_SHAPE
    st = direct_kernel(mi, mf, ws, q, v, tau, carve(mtf, 0, (0, 6)), ti, tf, out)
    if st != OK:
        return st
    o = direct_outputs(out, mti[2], ti[4], ti[3])
    if not (o.worst_residuals[0] <= residual_tol and o.worst_residuals[1] <= residual_tol):
        return OFF_MANIFOLD
    return OK


#: a state solved on the rows selected once per model must satisfy every row of G_c to
#: this relative accuracy (round-off is ~1e-14; a row that the selection misses is
#: violated at order one), else the kernel finds the rows of the state
SELECTION_TOL = 1e-8


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def constrained_accelerations(mi, mf, ws, G, target, pivot_tol, buf, ibuf, n, x, lam, rank_out, qdd):
    """Steps 3–6 of :func:`direct_kernel` on the n rows Ĝ of G_c (m, nv) in ``rows`` (the
    first n of the scratch's row list), for G_c θ̈ = ``target`` and the free accelerations
    ``x``: λ (m,) on those rows, the rank of A (``rank_out[0]``) and θ̈ = θ̈_f + M⁻¹Ĝ*λ
    (``qdd``). Returns OK when θ̈ satisfies every row of G_c (to ``SELECTION_TOL``), else
    SINGULAR."""
    mt = model_tables(mi, mf)
    nv, m = mt.nv, G.shape[0]
    s = direct_scratch(buf, ibuf, mt.nb, nv, m, n)  # the views for n rows
    rows, W, Y = s.rows, s.W, s.Y
    # 4. W = [I − HψK] Ĝ*, A = W* D⁻¹ W = Ĝ M⁻¹ Ĝ* on those rows Ĝ, and 𝔘̊ − Ĝ θ̈_f
    #    (− Baumgarte terms)
    for k in range(nv):
        for j in range(n):
            W[k, j] = G[rows[j], k]
    factor_gather(mi, mf, ws, W, s.Zs, True)
    for k in range(nv):
        for j in range(n):
            Y[k, j] = W[k, j]
    apply_dinv(mi, mf, ws, Y, True)
    A = s.A
    for i in range(n):
        for j in range(i + 1):
            acc = 0.0
            for k in range(nv):
                acc += W[k, i] * Y[k, j]
            A[i, j] = acc
            A[j, i] = acc
    for j in range(n):
        s.rhs[j] = target[rows[j]] - _row_times(G, rows[j], x)
    # 5. λ on the independent rows (the pivoted factorization also drops rows that are
    #    independent in G_c but nearly dependent through M⁻¹), zero on the others
    rank = pivoted_cholesky(A, s.perm, pivot_tol)
    rank_out[0] = rank
    mu = s.mu
    pivoted_solve(A, s.perm, rank, s.rhs, mu, s.y)
    for r in range(m):
        lam[r] = 0.0
    for j in range(n):
        lam[rows[j]] = mu[j]
    # 6. θ̈ = θ̈_f + M⁻¹G_c*λ with M⁻¹Ĝ*μ = [I − HψK]* (D⁻¹W μ)
    corr = s.corr
    for k in range(nv):
        acc = 0.0
        for j in range(n):
            acc += Y[k, j] * mu[j]
        corr[k, 0] = acc
    factor_scatter(mi, mf, ws, corr, s.Zs1, True)
    for k in range(nv):
        qdd[k] = x[k] + corr[k, 0]
    # every row, the ones left out included, must hold: G_c θ̈ = target
    return OK if rows_hold(G, target, qdd) else SINGULAR


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _row_times(G, r, x):
    acc = 0.0
    for k in range(x.shape[0]):
        acc += G[r, k] * x[k]
    return acc


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def rows_hold(G, target, qdd):
    """True when every row of G θ̈ = target holds to ``SELECTION_TOL`` (relative to the
    row's terms)."""
    for r in range(G.shape[0]):
        acc = 0.0
        size = 1.0 + abs(target[r])
        for k in range(qdd.shape[0]):
            term = G[r, k] * qdd[k]
            acc += term
            size += abs(term)
        if abs(acc - target[r]) > SELECTION_TOL * size:
            return False
    return True


@njit(nogil=True, cache=True)
def direct_batch(mi, mf, ws, Q, Vq, T, Fext, ti, tf, out, status, start, stop):
    """:func:`direct_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = direct_kernel(mi, mf, ws, Q[b], Vq[b], T[b], Fext[b], ti, tf, out[b])
