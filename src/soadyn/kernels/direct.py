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

    W = [I − HψK] G_c*,   A = W* D⁻¹ W,   M⁻¹G_c*λ = [I − HψK]* (D⁻¹W λ).

A loop row's column of G_c* is J_P*c_P + J_S*c_S = Hφ(·, P)c_P + Hφ(·, S)c_S, the
generalized force of its node forces, and [I − HψK]Hφ = Hψ ([Jain24, topic 6]) makes its
column of W = Hψ(·, P)c_P + Hψ(·, S)c_S: the node forces carried to the root through the
articulated bodies, ψ(℘(k), k) = φ(℘(k), k)τ̄(k), nonzero on the nodes' paths only. In
world axes about the world origin φ is the identity, so the walk is
W(k) = H(k)y, y ← y − U(k)D⁻¹(k)H(k)y with the joint columns H*(k) and U(k) taken to
world axes once per body. And the correction needs no scatter of its own: the
articulated pass is linear in T with ε = [I − HψK]T + (terms without T), so ε + Wλ is the
ε of T + G_c*λ and the ABA's acceleration pass run with it gives θ̈ = M⁻¹(T + G_c*λ − C).

The kernel runs, from (θ, θ̇):

1. the kinematics the loop rows need (world poses and J̇θ̇ of the bodies up to the last
   loop body only, :func:`~soadyn.kernels.loops.loop_kinematics_upto`) and the rows
   themselves (:func:`~soadyn.kernels.loops.loop_rows_pass`), then the constant coupling
   rows;
2. the ABA (:func:`~soadyn.kernels.articulated_blocks.articulated_body_pass` and
   :func:`~soadyn.kernels.articulated_blocks.acceleration_pass`): θ̈_f;
3. the rows of G_c that span its row space: a planar loop closed by a spatial joint has 3
   of its 5 rows redundant, and each row costs a column of W. The
   structure of the loops fixes which rows these are away from singular configurations,
   so they are found once per model (the ``selected`` rows of the tables, at a generic
   configuration) and every call checks that its θ̈ satisfies all m rows; a state where
   it does not (a singular configuration) repeats steps 4–6 on the rows that span G_c at
   that state (:func:`independent_rows`, a Gram–Schmidt pass with pivoting over G_c's
   rows, O(m n nv), relative tolerance ``rank_tol``; a row that is rounding of its own
   scale — a loop that constrains nothing — is never kept, so that a vacuous loop gives
   the tree's θ̈);
4. W on those rows by the walks above (a coupling row, whose column of G_c* is any
   vector, by :func:`~soadyn.kernels.innovations.factor_gather`), and A = W* D⁻¹ W on
   the coordinates of the bodies W reaches;
5. the pivoted Cholesky factorization of A (:func:`pivoted_cholesky`), which also drops
   rows that are nearly dependent through M⁻¹ (pivots below ``pivot_tol`` times the
   largest), and λ on the kept rows, zero on the others. θ̈ and the generalized
   constraint force G_c*λ are unique in any case; λ is one particular solution (the
   least-norm one is computed from G_c*λ on demand, see :mod:`soadyn.closed.direct`);
6. θ̈ by the acceleration pass with ε + Wλ.

No SVD and no dense factorization of M: the cost is O(N + n·path + n² n_path + n³), n
the kept rows and n_path the coordinates on the loops' paths to the root.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..core.jit import helper, kernel
from ..core.layout import (borrow, carve, model_tables, split_model_tables, split_tables, state_count, state_of,
                           workspace_length, workspace_size, workspace_views)
from ..core.status import BAD_SHAPE, OFF_MANIFOLD, OK, SINGULAR
from .articulated_blocks import acceleration_pass, articulated_body_pass
from .innovations import factor_gather
from .kinematics import configuration_status, forces_shape_ok, rates_shape_ok, state_status
from .loops import (loop_extent, loop_kinematics_upto, loop_row_count, loop_rows_pass, loop_tables,
                    next_on_paths, node_force_to_world)
from .primitives import compose_pose, force_to_world, joint_column_to_world


# --------------------------------------------------------------------------- pivoted Cholesky
@kernel
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


@kernel
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


#: the default relative tolerance of :func:`independent_rows` (``rank_tol`` of
#: ``constrained_forward_dynamics``): rows of G_c whose component orthogonal to the rows
#: kept is below this fraction of the largest row norm are redundant
ROW_TOL = 1e-9


@kernel
def independent_rows(G, rows, work, scale, tol):
    """Rows of G (m, nv) that span its row space: Gram–Schmidt with pivoting (the QR
    factorization of G* with column pivoting), each step keeping the row with the largest
    component orthogonal to the rows kept so far, until that component is below ``tol``
    times the largest row norm. Rows whose norm is at most ``tol`` times their ``scale``
    (m,) — the size of their terms before these cancel
    (:func:`~soadyn.kernels.loops.loop_rows`) — constrain nothing and are never kept
    (all of them: n = 0); an empty ``scale`` skips that test. Returns the number n kept,
    their indices in ``rows[:n]``; ``work`` (m, nv) scratch. O(m n nv)."""
    m, nv = G.shape
    top2 = 0.0
    live = 0  # rows[:live]: the candidates, the rows that are not rounding of their scale
    for i in range(m):
        norm2 = 0.0
        for k in range(nv):
            work[i, k] = G[i, k]
            norm2 += G[i, k] * G[i, k]
        if scale.shape[0] > 0 and norm2 <= tol * tol * scale[i] * scale[i]:  # (NaN rows stay)
            continue
        top2 = max(top2, norm2)
        rows[live] = i
        live += 1
    threshold2 = tol * tol * top2
    for n in range(live):
        best, best2 = n, -1.0
        for i in range(n, live):  # rows[n:live] are the candidates; work[rows[i]] their residuals
            r2 = 0.0
            for k in range(nv):
                r2 += work[rows[i], k] * work[rows[i], k]
            if r2 > best2:
                best, best2 = i, r2
        if not best2 > threshold2:
            return n
        rows[n], rows[best] = rows[best], rows[n]
        e = work[rows[n]]
        unit = 1.0 / math.sqrt(best2)
        for k in range(nv):
            e[k] *= unit
        for i in range(n + 1, live):
            x = work[rows[i]]
            d = 0.0
            for k in range(nv):
                d += e[k] * x[k]
            for k in range(nv):
                x[k] -= d * e[k]
    return live


# --------------------------------------------------------------------------- the tables
#: Named views of the constraint tables the kernel reads (:func:`direct_tables`), packed
#: into one int and one float array by :func:`pack_direct_tables` (two arguments instead
#: of eight: every argument costs the dispatcher on every call): the packed loops
#: ``li``, ``lf`` (:func:`~soadyn.kernels.loops.loop_tables`), the constant coupling rows
#: ``coupling_v`` (nc, nv), ``coupling_q`` (nc, nq), ``coupling_offset`` (nc,), the row
#: counts ``m_loop`` and ``m``, the rows ``selected`` that span G_c's row space at a
#: generic configuration (found once per model with the tolerance ``ROW_TOL``; empty:
#: unknown), and the settings: ``gravity`` (1.0 or 0.0), the Baumgarte
#: gains ``alpha``, ``beta`` [1/s] (zero: the plain 𝔘̊), the relative ``pivot_tol`` of
#: the pivoted Cholesky factorization of A and the relative ``rank_tol`` of
#: :func:`independent_rows` (``ROW_TOL`` by default; with another, the kernel finds the
#: rows of each state with it instead of starting from ``selected``).
DirectTables = namedtuple("DirectTables", ["li", "lf", "coupling_v", "coupling_q", "coupling_offset", "m_loop", "m",
                                           "selected", "gravity", "alpha", "beta", "pivot_tol", "rank_tol"])

#: int header: len(li), nc, nq, m_loop, m, the number of rows in ``selected``; float
#: header: gravity, alpha, beta, pivot_tol, rank_tol
INT_HEADER = 6
FLOAT_HEADER = 5


def pack_direct_tables(li, lf, coupling_v, coupling_q, coupling_offset, m_loop, selected, gravity, alpha, beta,
                       pivot_tol, rank_tol):
    """The (ints, floats) arrays that :func:`direct_tables` reads (Python, at build time);
    ``selected``: the rows that span G_c's row space at a generic configuration (empty:
    none known, every call finds them)."""
    nc, nq = coupling_q.shape
    ints = np.concatenate([[li.size, nc, nq, m_loop, m_loop + nc, len(selected)], li, selected]).astype(np.int64)
    floats = np.concatenate([[1.0 if gravity else 0.0, alpha, beta, pivot_tol, rank_tol], lf, np.ravel(coupling_v),
                             np.ravel(coupling_q), np.ravel(coupling_offset)]).astype(float)
    return ints, floats


# compiled with reference counting (_nrt=True, soadyn.core.jit) for its calls from Python,
# which box the views it returns; in the kernels its views are borrowed (nothing to count)
@kernel(forceinline=True, _nrt=True)
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
                        tf[2], tf[3], tf[4])


# --------------------------------------------------------------------------- the kernel
#: Named views of the kernel's one output array (:func:`direct_outputs`): θ̈ (nv,), a
#: particular λ (m,), the rank of G_c (stored as a float), the largest position and
#: velocity residuals (max |𝔡|, max |G_c θ̇|) for the caller's consistency check, and the
#: constraint evaluation G_c (m, nv), 𝔘̊ (m,), 𝔡 (m,), the rows' scales (m,, see
#: :func:`~soadyn.kernels.loops.loop_rows`; a coupling row's: the sum of its |entries|)
#: and the loop rows' node selections (m_loop, 12).
DirectOutputs = namedtuple("DirectOutputs", ["qdd", "lam", "rank", "worst_residuals", "G", "ubias", "resid", "scale",
                                             "sel"])


@kernel
def direct_output_size(nv, m, m_loop):
    """Length of the kernel's output array for nv coordinates, m rows, m_loop loop rows."""
    return nv + m + 3 + m * nv + 3 * m + 12 * m_loop


# compiled with reference counting (_nrt=True, soadyn.core.jit) for its calls from Python,
# which box the views it returns; in the kernels its views are borrowed (nothing to count)
@kernel(forceinline=True, _nrt=True)
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
    scale = carve(out, o, m); o += m
    sel = carve(out, o, (m_loop, 12))
    return DirectOutputs(qdd, lam, rank, worst_residuals, G, ubias, resid, scale, sel)


#: Named views of the kernel's scratch (one float and one int allocation per call, carved
#: by :func:`direct_scratch`): θ̈_f (nv,), the tree's ε (nv,) before step 6 offsets it,
#: the right-hand sides of all rows (m,), the
#: Gram–Schmidt residuals of the rows (m, nv), the columns of U in world axes (nv, 6),
#: the walks' two forces and two small vectors (4, 6), a node's world pose (1, 3, 3),
#: (1, 3); for the n kept rows W* = ([I − HψK]Ĝ*)*
#: and Y* = (D⁻¹W)* (n, nv), A (n, n), the right-hand side, μ and the solve's scratch
#: (n,), the kept coupling rows' columns (nv, k) and their spatial scratch (nb, k, 6);
#: as integers the chosen rows and the pivot order (m,), the bodies' marks (nb,) and the
#: coordinates W has entries at (nv,).
DirectScratch = namedtuple("DirectScratch", ["x", "eps0", "target", "basis", "Uw", "walk", "Rn", "on", "Wt", "Yt",
                                             "A", "rhs", "mu", "y", "Xc", "Zc", "rows", "perm", "mark", "cols"])


@helper(forceinline=True)
def direct_scratch(buf, ibuf, nb, nv, m, n, k):
    """Named views (:class:`DirectScratch`) for n ≤ m kept rows of which k are coupling
    rows (sizes: :func:`scratch_size`, :func:`int_scratch_size`)."""
    o = 0
    x = carve(buf, o, nv); o += nv
    eps0 = carve(buf, o, nv); o += nv
    target = carve(buf, o, m); o += m
    basis = carve(buf, o, (m, nv)); o += m * nv
    Uw = carve(buf, o, (nv, 6)); o += 6 * nv
    walk = carve(buf, o, (4, 6)); o += 24
    Rn = carve(buf, o, (1, 3, 3)); o += 9
    on = carve(buf, o, (1, 3)); o += 3
    Wt = carve(buf, o, (n, nv)); o += n * nv
    Yt = carve(buf, o, (n, nv)); o += n * nv
    A = carve(buf, o, (n, n)); o += n * n
    rhs = carve(buf, o, n); o += n
    mu = carve(buf, o, n); o += n
    y = carve(buf, o, n); o += n
    Xc = carve(buf, o, (nv, k)); o += nv * k
    Zc = carve(buf, o, (nb, k, 6))
    return DirectScratch(x, eps0, target, basis, Uw, walk, Rn, on, Wt, Yt, A, rhs, mu, y, Xc, Zc, carve(ibuf, 0, m),
                         carve(ibuf, m, m), carve(ibuf, 2 * m, nb), carve(ibuf, 2 * m + nb, nv))


@kernel(forceinline=True)
def scratch_size(nb, nv, m, nc):
    """Floats of the scratch of :func:`direct_scratch` at n = m, k = nc (the most)."""
    return 8 * nv + 36 + m + 3 * m * nv + m * m + 3 * m + nv * nc + 6 * nb * nc


@kernel(forceinline=True)
def int_scratch_size(nb, nv, m):
    """Integers of the scratch of :func:`direct_scratch`."""
    return 2 * m + nb + nv


@helper(forceinline=True)
def _scratch_fits(ws, nb, nv, m, nc):
    """Whether ``ws`` holds the kernel's scratch after the model's workspace (the plain
    call's per-thread array, :func:`direct_work_size`)."""
    return ws.shape[0] >= workspace_size(nb, nv) + scratch_size(nb, nv, m, nc) + int_scratch_size(nb, nv, m)


@helper(forceinline=True)
def _scratch(ws, nb, nv, m, nc):
    """The float and int scratch of :func:`direct_scratch`, after the model's workspace in
    ``ws`` (:func:`_scratch_fits`)."""
    nws, nf, ni = workspace_size(nb, nv), scratch_size(nb, nv, m, nc), int_scratch_size(nb, nv, m)
    return carve(ws, nws, nf), carve(ws, nws + nf, ni).view(np.int64)


def direct_work_size(nb, nv, m, nc):
    """Length of a workspace with the kernel's scratch after it (see :func:`_scratch`;
    Python's own functions of the sizes: they have no compiled entry point to call)."""
    return workspace_length(nb, nv) + scratch_size.py_func(nb, nv, m, nc) + int_scratch_size.py_func(nb, nv, m)


# compiled with reference counting (_nrt=True; the kernels are not, soadyn.core.jit): given a
# plain workspace (the validated and batched calls) it allocates its scratch; the plain
# kernel's array holds it (the two allocations are a measurable part of the four-bar's
# kernel, benchmarks/results/design_notes.md). Safe beside the kernels without reference counting: every
# array it hands on is a borrowed view or its own allocation, which no pass returns.
@kernel(nogil=True, _nrt=True)
def direct_kernel(mi, mf, ws, q, v, tau, fext, ti, tf, out):
    """θ̈ of :func:`_direct_state` (the constraint rows, their factorization and the solve)
    for B = len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`:
    one state for a call, a block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _direct_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(tau, b, B), state_of(fext, b, B),
                           ti, tf, state_of(out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _direct_state(mi, mf, ws, q, v, tau, fext, ti, tf, out):
    """θ̈ of a tree closed by loop joints and constant couplings (the packed tables
    ``ti``, ``tf``: :class:`DirectTables`, m = m_loop + nc rows), with the constraint
    evaluation, into ``out`` (:class:`DirectOutputs`).

    The settings come with the tables: ``gravity``; ``alpha``, ``beta`` [1/s]: solve
    G_c θ̈ = 𝔘̊ − 2α G_c θ̇ − β²𝔡 (Baumgarte; zeros for the plain 𝔘̊); ``pivot_tol``: the
    relative pivot threshold of the pivoted Cholesky factorization of A (rows below it
    are redundant); ``rank_tol``: the relative tolerance of :func:`independent_rows`.
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
    ct = direct_tables(ti, tf, nv)
    m, m_loop, nc = ct.m, ct.m_loop, ct.coupling_v.shape[0]
    if (tau.shape[0] != nv or not rates_shape_ok(mt, v) or not forces_shape_ok(mt, fext)
            or out.shape[0] != direct_output_size(nv, m, m_loop) or loop_row_count(ct.li, ct.lf) != m_loop):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    o = direct_outputs(out, nv, m, m_loop)
    G = o.G
    if _scratch_fits(ws, mt.nb, nv, m, nc):
        buf, ibuf = _scratch(ws, mt.nb, nv, m, nc)
    else:
        buf, ibuf = np.empty(scratch_size(mt.nb, nv, m, nc)), np.empty(int_scratch_size(mt.nb, nv, m), dtype=np.int64)
    s = direct_scratch(buf, ibuf, mt.nb, nv, m, m, 0)
    has_v = v.shape[0] > 0

    # 1. constraint rows: loops from the kinematics, then the constant couplings
    loop_kinematics_upto(mi, mf, ws, q, v, loop_extent(ct.li, ct.lf))
    if m_loop > 0:
        loop_rows_pass(mi, mf, ws, ct.li, ct.lf, has_v, G, o.ubias, o.resid, o.sel, o.scale)
    for c in range(nc):
        r = m_loop + c
        acc = -ct.coupling_offset[c]
        for k in range(q.shape[0]):
            acc += ct.coupling_q[c, k] * q[k]
        o.resid[r] = acc
        o.ubias[r] = 0.0
        size = 0.0
        for k in range(nv):
            G[r, k] = ct.coupling_v[c, k]
            size += abs(ct.coupling_v[c, k])
        o.scale[r] = size
    # the largest residuals (loop and coupling rows are holonomic, with 𝔘 = 0) and each
    # row's right-hand side 𝔘̊ − 2α G_c θ̇ − β²𝔡 (Baumgarte terms when α, β are nonzero)
    worst_q = 0.0
    worst_v = 0.0
    target = s.target
    for r in range(m):
        worst_q = max(worst_q, abs(o.resid[r]))
        target[r] = o.ubias[r] - ct.beta * ct.beta * o.resid[r]
        if has_v:
            acc = 0.0
            for k in range(nv):
                acc += G[r, k] * v[k]
            worst_v = max(worst_v, abs(acc))
            target[r] -= 2.0 * ct.alpha * acc
    o.worst_residuals[0] = worst_q
    o.worst_residuals[1] = worst_v
    # 2. the free accelerations θ̈_f = M⁻¹(T − C) by the ABA, which leaves the innovations
    #    factors of M in the workspace
    if not articulated_body_pass(mi, mf, ws, tau, fext, has_v):
        return SINGULAR
    x = s.x
    acceleration_pass(mi, mf, ws, ct.gravity, has_v, x)
    o.rank[0] = 0.0
    qdd = o.qdd
    if m == 0:
        for k in range(nv):
            qdd[k] = x[k]
        return OK
    # 3.–6. on the rows found once per model; if this state needs others (a singular
    #    configuration, or a structure the generic one did not show), the rows of this state
    eps = workspace_views(ws, mt).eps
    for k in range(nv):  # ε of the tree, which step 6 offsets by W μ
        s.eps0[k] = eps[k]
    n = ct.selected.shape[0] if ct.rank_tol == ROW_TOL else 0  # (selected with the default tolerance)
    if n > 0:
        for j in range(n):
            s.rows[j] = ct.selected[j]
        if constrained_accelerations(mi, mf, ws, ti, tf, out, s.target, buf, ibuf, n, x, has_v) == OK:
            return OK
        for k in range(nv):
            eps[k] = s.eps0[k]
    n = independent_rows(G, s.rows, s.basis, o.scale, ct.rank_tol)
    constrained_accelerations(mi, mf, ws, ti, tf, out, s.target, buf, ibuf, n, x, has_v)
    return OK


@kernel
def direct_plain_kernel(tables, q, v, tau, residual_tol, out):
    """:func:`direct_kernel` for the common call (the plain call of
    ``constrained_forward_dynamics``): the model's tables, the constraint tables and a
    thread's workspace in one array (:func:`~soadyn.core.layout.pack_tables` of
    [mi | ti], [mf | tf] and ws: every argument costs the dispatcher, a sizeable
    part of a four-bar's call), no external forces, and the consistency check of the
    state: returns ``OFF_MANIFOLD`` when a position residual max |𝔡| or a velocity residual
    max |G_c θ̇| exceeds ``residual_tol`` (or is NaN) — the caller then takes the validated
    path, which names the constraint."""
    packed_ok, mti, mtf, ws = split_tables(tables)
    ok, mi, mf, ti, tf = split_model_tables(mti, mtf)
    if not (ok and packed_ok) or v.shape[0] != tau.shape[0]:  # v given in full (an empty v is a caller's mistake here)
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


@helper
def constrained_accelerations(mi, mf, ws, ti, tf, out, target, buf, ibuf, n, x, has_v):
    """Steps 4–6 of :func:`direct_kernel` on the n rows Ĝ of G_c (``o.G``, m × nv) in
    ``rows`` (the first n of the scratch's row list), for G_c θ̈ = ``target`` and the free
    accelerations ``x``: into the output ``out`` (:class:`DirectOutputs`), λ (m,) on those
    rows, the rank of A and θ̈ = θ̈_f + M⁻¹Ĝ*μ. Returns OK when θ̈ satisfies every row of G_c (to
    ``SELECTION_TOL``), else SINGULAR (the workspace's ε is then offset: restore it).

    W = [I − HψK]Ĝ* column by column: a loop row's by the articulated walks of its two
    node forces (below, O(path): entries on the nodes' paths to the root only; by
    [I − HψK]Hφ = Hψ, [Jain24, topic 6], the column is Hψ(·, node) f), a coupling row's
    by the gather
    (:func:`~soadyn.kernels.innovations.factor_gather`). θ̈ then comes from the ABA's
    acceleration pass with ε + Wμ in place of ε: the articulated pass is linear in T with
    ε = [I − HψK]T + (terms without T), so ε + Wμ is the ε of T + Ĝ*μ, and the pass gives
    M⁻¹(T + Ĝ*μ − C) = θ̈_f + M⁻¹Ĝ*μ."""
    mt = model_tables(mi, mf)
    w = workspace_views(ws, mt)
    ct = direct_tables(ti, tf, mt.nv)
    L = loop_tables(ct.li, ct.lf)
    nv, nb, m, m_loop = mt.nv, mt.nb, ct.m, ct.m_loop
    o = direct_outputs(out, nv, m, m_loop)
    rows = carve(ibuf, 0, n)
    n_coupling = 0  # (a name of its own: the walks below use k for a body)
    for j in range(n):
        if rows[j] >= m_loop:
            n_coupling += 1
    s = direct_scratch(buf, ibuf, nb, nv, m, n, n_coupling)  # the views for n rows, n_coupling of them couplings
    Wt, Yt, mark, cols = s.Wt, s.Yt, s.mark, s.cols
    for i in range(n):
        for c in range(nv):
            Wt[i, c] = 0.0
    for b in range(nb):
        mark[b] = 0
    # 4. W* on the kept rows. Loop rows: the bodies on their nodes' paths to the root
    #    (marked), there the joint columns Sw and U in world axes, then a walk per node
    #    force f (world axes, about the world origin, where φ is the identity):
    #    W*(k) = H(k)y, y ← τ̄(k)y = y − U(k)D⁻¹(k)H(k)y from the node's body to the root
    for j in range(n):
        r = rows[j]
        if r < m_loop:
            l = _loop_of_row(L, r)
            for body in (L.pred_body[l], L.succ_body[l]):
                while body >= 0 and mark[body] == 0:
                    mark[body] = 1
                    body = mt.parent[body]
    Sw, Uw, U = w.Sw, s.Uw, w.U
    for b in range(nb):
        if mark[b] == 0:
            continue
        code = mt.axis_code[b]
        for col in range(mt.v_index[b], mt.v_index[b] + mt.joint_nv[b]):
            Sw[col, 0], Sw[col, 1], Sw[col, 2], Sw[col, 3], Sw[col, 4], Sw[col, 5] = joint_column_to_world(
                code, b, w.S, col, w.Rw, w.pw)
            Uw[col, 0], Uw[col, 1], Uw[col, 2], Uw[col, 3], Uw[col, 4], Uw[col, 5] = force_to_world(
                w.Rw, w.pw, b, U[col, 0], U[col, 1], U[col, 2], U[col, 3], U[col, 4], U[col, 5])
    yP, yS, h, g, Rn, on = s.walk[0], s.walk[1], s.walk[2], s.walk[3], s.Rn, s.on
    for j in range(n):
        r = rows[j]
        if r >= m_loop:
            continue
        l = _loop_of_row(L, r)
        a, b = L.pred_body[l], L.succ_body[l]
        for side in range(2):
            body = b if side else a
            if body >= 0:  # the node force in world axes, from the node's world pose
                compose_pose(w.Rw, w.pw, body, L.R_succ if side else L.R_pred, L.p_succ if side else L.p_pred, l,
                             Rn, on, 0)
                node_force_to_world(Rn[0], on[0], o.sel[r, 6 * side:6 * side + 6], yS if side else yP)
        while a >= 0 or b >= 0:  # the two walks, one from where the paths meet
            k, on_a, merged = next_on_paths(mt.parent, a, b)
            if merged:
                for e in range(6):
                    yP[e] += yS[e]
                b = -1
            y = yP if on_a else yS
            vi, nd, p = mt.v_index[k], mt.joint_nv[k], mt.parent[k]
            for c in range(nd):
                acc = 0.0
                for e in range(6):
                    acc += Sw[vi + c, e] * y[e]
                h[c] = acc
                Wt[j, vi + c] += acc
            for c in range(nd):
                acc = 0.0
                for c2 in range(nd):
                    acc += w.Dinv[k, c, c2] * h[c2]
                g[c] = acc
            for c in range(nd):
                for e in range(6):
                    y[e] -= Uw[vi + c, e] * g[c]
            if on_a:
                a = p
            else:
                b = p
    if n_coupling > 0:  # coupling rows: their columns of G_c*, then the gather (entries anywhere)
        i = 0
        for j in range(n):
            if rows[j] >= m_loop:
                for c in range(nv):
                    s.Xc[c, i] = o.G[rows[j], c]
                i += 1
        factor_gather(mi, mf, ws, s.Xc, s.Zc, True)
        i = 0
        for j in range(n):
            if rows[j] >= m_loop:
                for c in range(nv):
                    Wt[j, c] = s.Xc[c, i]
                i += 1
        for b in range(nb):
            mark[b] = 1
    # the coordinates of the marked bodies: W is zero elsewhere; Y* = (D⁻¹W)* there
    nc = 0
    for b in range(nb):
        if mark[b] == 0:
            continue
        vi = mt.v_index[b]
        nd = mt.joint_nv[b]
        for c in range(nd):
            cols[nc] = vi + c
            nc += 1
            for i in range(n):
                acc = 0.0
                for c2 in range(nd):
                    acc += w.Dinv[b, c, c2] * Wt[i, vi + c2]
                Yt[i, vi + c] = acc
    #    A = W* D⁻¹ W = Ĝ M⁻¹ Ĝ* and 𝔘̊ − Ĝ θ̈_f (− Baumgarte terms)
    A = s.A
    for i in range(n):
        for j in range(i + 1):
            acc = 0.0
            for c in range(nc):
                acc += Wt[i, cols[c]] * Yt[j, cols[c]]
            A[i, j] = acc
            A[j, i] = acc
    for j in range(n):
        s.rhs[j] = target[rows[j]] - _row_times(o.G, rows[j], x)
    # 5. μ on the independent rows (the pivoted factorization also drops rows that are
    #    independent in G_c but nearly dependent through M⁻¹), zero on the others
    rank = pivoted_cholesky(A, s.perm, ct.pivot_tol)
    o.rank[0] = rank
    mu = s.mu
    pivoted_solve(A, s.perm, rank, s.rhs, mu, s.y)
    for r in range(m):
        o.lam[r] = 0.0
    for j in range(n):
        o.lam[rows[j]] = mu[j]
    # 6. θ̈ = M⁻¹(T + Ĝ*μ − C): the acceleration pass with ε + Wμ
    for c in range(nc):
        col = cols[c]
        acc = 0.0
        for j in range(n):
            acc += Wt[j, col] * mu[j]
        w.eps[col] += acc
    acceleration_pass(mi, mf, ws, ct.gravity, has_v, o.qdd)
    # every row, the ones left out included, must hold: G_c θ̈ = target
    return OK if rows_hold(o.G, target, o.qdd) else SINGULAR


@helper(forceinline=True)
def _loop_of_row(L, r):
    """The loop (of the packed loops ``L``) whose rows include row r < m_loop."""
    l = 0
    while l + 1 < L.n and L.first_row[l + 1] <= r:
        l += 1
    return l


@helper(forceinline=True)
def _row_times(G, r, x):
    acc = 0.0
    for k in range(x.shape[0]):
        acc += G[r, k] * x[k]
    return acc


@helper
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
