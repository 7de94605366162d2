"""Implicit clusters in compiled code: the explicit form of the clusters closed by implicit
constraints — loop joints, couplings with offsets, symbolic constraints — and their
position solve [Chignoli23, eq. 2–3].

The cluster's constraint rows K(q) q̇_c = 0, K q̈_c = k(q, q̇) (loop rows of
:mod:`soadyn.kernels.loops`, constant coupling rows, symbolic constraints run as tapes by
:mod:`soadyn.kernels.tape`) give, with the cluster's velocities split into independent
and dependent ones, q̇_c = [q̇_i; q̇_d],

    G = [1; −K_d⁺ K_i],    g = [0; K_d⁺ k],    K_d⁺ = R⁻¹ Qᵀ  for  K_d = Q R

(a thin QR factorization by modified Gram–Schmidt with one reorthogonalization, so that
K_d⁺ is as accurate as a Householder QR: K_d has full column rank away from
singular configurations, and redundant rows — a planar loop closed by a spatial joint —
are normal). Without a given spanning configuration, γ(y) solves φ(q) = 0 for the
dependent coordinates by Gauss–Newton steps δ = −K_d⁺ φ with a backtracking line search
(the steps of :func:`soadyn.closed.assembly.gauss_newton`), started from the cluster's
reference configuration moved to y along its branch to first order,
q_d ← q_d,ref + G_d,ref (y − y_ref), then from the reference itself. Anything that goes
wrong — no convergence, a singular K_d, a given configuration off the constraint
manifold — returns ``UNSOLVED``: the caller then runs the Python solve, which tries
perturbed restarts and names the cause.

Every quantity is a function of the call's arguments: the clusters are solved in order,
each from its own start, and everything the rows read (the other clusters' coordinates
included) is written before it is read.

The tables (:func:`implicit_tables`) and the scratch (:func:`implicit_workspace`) sit in
the packed cluster arrays ``ci``/``cf`` and the cluster workspace ``cws``
(:class:`soadyn.closed.embedding.compiled.PackedClusters` packs them).
"""
from __future__ import annotations

import math
from collections import namedtuple


from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables
from ...core.status import BAD_FIRST, BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK, UNSOLVED
from ..kinematics import absent, nonfinite
from ..loops import loop_kinematics, loop_rates, loop_rows, loop_tables
from ..tape import run_tape
from .explicit import apply_explicit_map
from .layout import (LINEAR, cluster_tables, cluster_workspace, explicit_map, split_plain_tables, state_views,
                     states_fit)

#: ways a cluster kernel gets the spanning configuration of the implicit clusters
#: SOLVE: γ(y) from the references; GIVEN: the caller's q (checked on the manifold);
#: GUESS: γ(y) from the caller's q; PREPARED: the caller (Python) wrote G, g and q already
SOLVE, GIVEN, GUESS, PREPARED = 0, 1, 2, 3

#: Gauss–Newton tolerance on max |φ| and iteration limit (as the Python solve)
SOLVE_TOL = 1e-12
MAX_ITER = 50
#: a result short of SOLVE_TOL is still accepted below this residual (as the Python solve)
ACCEPT_TOL = 1e-9
#: K_d counts as singular when a diagonal entry of R is below this fraction of the largest
SINGULAR_TOL = 1e-9
#: largest constraint residual accepted for a given spanning configuration [m, rad]
MANIFOLD_TOL = 1e-6

HEADER = ("n", "m", "m_loop", "n_coupling", "n_symbolic", "max_registers", "len_rows", "len_dep", "len_ind",
          "len_periodic", "len_loops", "len_couplings", "len_symbolics", "len_sym_joints", "len_code_q",
          "len_code_b", "len_out_q", "len_out_b", "li_size", "lf_size", "len_refs", "len_grefs", "len_consts",
          "workspace_offset", "max_rows", "max_dep")
CLUSTER_FIELDS = ("cluster", "rows_start", "n_rows", "dep_start", "n_dep", "ind_start", "periodic_start",
                  "n_periodic", "loops_start", "n_loops", "couplings_start", "n_couplings", "symbolic_start",
                  "n_symbolics", "solvable", "has_start_map", "ref_offset", "gref_offset", "pinv_offset")
LISTS = ("rows", "dep", "ind", "periodic", "loops", "couplings", "symbolics")
SYMBOLIC_FIELDS = ("sym_first_row", "sym_n_rows", "sym_n_joints", "sym_joints_start", "code_q_start", "code_q_len",
                   "out_q_start", "code_b_start", "code_b_len", "out_b_start")

#: Named views of the implicit clusters' tables. Per implicit cluster i: its ``cluster``
#: index k; its rows in the implicit constraint set (``rows[rows_start[i]:][:n_rows[i]]``),
#: dependent and independent positions in the cluster's spanning vector (``dep``, ``ind``:
#: n_dep and n_y of them), its 2π-periodic dependent angles (model q indices), its loops,
#: coupling rows and symbolic constraints; ``solvable`` (every joint a vector joint: the
#: Newton steps move the coordinates directly), ``has_start_map``, the offsets of its
#: reference configuration and reference G in ``refs``/``grefs``, and of its K_d⁺ in the
#: workspace. Per symbolic constraint s: its first row and row count, its joints
#: (``sym_q``, ``sym_v``: model q and v indices) and its two tapes (φ and K from q_J; the
#: bias from (q_J, q̇_J)). Then the loops (``li``, ``lf``), the coupling rows and the tape
#: constants.
ImplicitTables = namedtuple("ImplicitTables", HEADER + CLUSTER_FIELDS + LISTS + SYMBOLIC_FIELDS + (
    "sym_q", "sym_v", "code_q", "out_q", "code_b", "out_b", "li", "lf", "coupling_v", "coupling_q",
    "coupling_offset", "refs", "grefs", "consts"))

#: Named views of the implicit clusters' scratch in the cluster workspace: the constraint
#: rows G (m, nv), residuals, acceleration bias 𝔘̊ = k, loop node selections, tape registers
#: and the QR scratch
ImplicitWorkspace = namedtuple("ImplicitWorkspace", ["G", "resid", "ubias", "sel", "regs", "Q", "R", "r",
                                                     "step", "saved"])


def implicit_int_size(counts):
    """Length of the int section for the header values ``counts`` (a dict)."""
    return (len(HEADER) + len(CLUSTER_FIELDS) * counts["n"] + sum(counts["len_" + f] for f in LISTS)
            + len(SYMBOLIC_FIELDS) * counts["n_symbolic"] + 2 * counts["len_sym_joints"]
            + 4 * (counts["len_code_q"] + counts["len_code_b"]) + counts["len_out_q"] + counts["len_out_b"]
            + counts["li_size"])


def implicit_workspace_size(counts, nv):
    """Length of the scratch area in the cluster workspace (K_d⁺ of each cluster apart)."""
    m, rows, dep = counts["m"], counts["max_rows"], counts["max_dep"]
    return m * nv + 2 * m + 12 * counts["m_loop"] + counts["max_registers"] + rows * dep + dep * dep \
        + rows + 2 * dep


@helper(forceinline=True)
def implicit_tables(ci, cf):
    """Named views (:class:`ImplicitTables`) of the implicit clusters' tables, which start at
    ``ci[7]`` and ``cf[ci[8]]``."""
    o = ci[7]
    h = carve(ci, o, 26)
    o += 26
    n, n_sym = h[0], h[4]
    cluster = carve(ci, o, n); o += n
    rows_start = carve(ci, o, n); o += n
    n_rows = carve(ci, o, n); o += n
    dep_start = carve(ci, o, n); o += n
    n_dep = carve(ci, o, n); o += n
    ind_start = carve(ci, o, n); o += n
    periodic_start = carve(ci, o, n); o += n
    n_periodic = carve(ci, o, n); o += n
    loops_start = carve(ci, o, n); o += n
    n_loops = carve(ci, o, n); o += n
    couplings_start = carve(ci, o, n); o += n
    n_couplings = carve(ci, o, n); o += n
    symbolic_start = carve(ci, o, n); o += n
    n_symbolics = carve(ci, o, n); o += n
    solvable = carve(ci, o, n); o += n
    has_start_map = carve(ci, o, n); o += n
    ref_offset = carve(ci, o, n); o += n
    gref_offset = carve(ci, o, n); o += n
    pinv_offset = carve(ci, o, n); o += n
    rows = carve(ci, o, h[6]); o += h[6]
    dep = carve(ci, o, h[7]); o += h[7]
    ind = carve(ci, o, h[8]); o += h[8]
    periodic = carve(ci, o, h[9]); o += h[9]
    loops = carve(ci, o, h[10]); o += h[10]
    couplings = carve(ci, o, h[11]); o += h[11]
    symbolics = carve(ci, o, h[12]); o += h[12]
    sym_first_row = carve(ci, o, n_sym); o += n_sym
    sym_n_rows = carve(ci, o, n_sym); o += n_sym
    sym_n_joints = carve(ci, o, n_sym); o += n_sym
    sym_joints_start = carve(ci, o, n_sym); o += n_sym
    code_q_start = carve(ci, o, n_sym); o += n_sym
    code_q_len = carve(ci, o, n_sym); o += n_sym
    out_q_start = carve(ci, o, n_sym); o += n_sym
    code_b_start = carve(ci, o, n_sym); o += n_sym
    code_b_len = carve(ci, o, n_sym); o += n_sym
    out_b_start = carve(ci, o, n_sym); o += n_sym
    sym_q = carve(ci, o, h[13]); o += h[13]
    sym_v = carve(ci, o, h[13]); o += h[13]
    code_q = carve(ci, o, 4 * h[14]); o += 4 * h[14]  # flat: 4 integers per instruction
    code_b = carve(ci, o, 4 * h[15]); o += 4 * h[15]
    out_q = carve(ci, o, h[16]); o += h[16]
    out_b = carve(ci, o, h[17]); o += h[17]
    li = carve(ci, o, h[18])
    f = ci[8]
    lf = carve(cf, f, h[19]); f += h[19]
    nc = h[3]
    nv, nq = ci[9], ci[10]
    coupling_v = carve(cf, f, (nc, nv)); f += nc * nv
    coupling_q = carve(cf, f, (nc, nq)); f += nc * nq
    coupling_offset = carve(cf, f, nc); f += nc
    refs = carve(cf, f, h[20]); f += h[20]
    grefs = carve(cf, f, h[21]); f += h[21]
    consts = carve(cf, f, h[22])
    return ImplicitTables(h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13],
                          h[14], h[15], h[16], h[17], h[18], h[19], h[20], h[21], h[22], h[23], h[24], h[25],
                          cluster, rows_start, n_rows, dep_start, n_dep, ind_start, periodic_start, n_periodic,
                          loops_start, n_loops, couplings_start, n_couplings, symbolic_start, n_symbolics, solvable,
                          has_start_map, ref_offset, gref_offset, pinv_offset, rows, dep, ind, periodic, loops,
                          couplings, symbolics, sym_first_row, sym_n_rows, sym_n_joints, sym_joints_start,
                          code_q_start, code_q_len, out_q_start, code_b_start, code_b_len, out_b_start, sym_q, sym_v,
                          code_q, out_q, code_b, out_b, li, lf, coupling_v, coupling_q, coupling_offset, refs, grefs,
                          consts)


@helper(forceinline=True)
def implicit_workspace(cws, x, nv):
    """Named views (:class:`ImplicitWorkspace`) of the implicit clusters' scratch."""
    o = x.workspace_offset
    m, rows, dep = x.m, x.max_rows, x.max_dep
    G = carve(cws, o, (m, nv)); o += m * nv
    resid = carve(cws, o, m); o += m
    ubias = carve(cws, o, m); o += m
    sel = carve(cws, o, (x.m_loop, 12)); o += 12 * x.m_loop
    regs = carve(cws, o, x.max_registers); o += x.max_registers
    Q = carve(cws, o, (rows, dep)); o += rows * dep
    R = carve(cws, o, (dep, dep)); o += dep * dep
    r = carve(cws, o, rows); o += rows
    step = carve(cws, o, dep); o += dep
    saved = carve(cws, o, dep)
    return ImplicitWorkspace(G, resid, ubias, sel, regs, Q, R, r, step, saved)


@helper(forceinline=True)
def _pinv(x, cws, i):
    """K_d⁺ (n_dep, n_rows) of implicit cluster i."""
    return carve(cws, x.pinv_offset[i], (x.n_dep[i], x.n_rows[i]))


# --------------------------------------------------------------------------- constraint rows
@helper(forceinline=True)
def _symbolic_rows(x, s, q, v, has_v, iw):
    """The rows of symbolic constraint s: φ and K from its position tape or, with
    ``has_v``, only 𝔘̊ = −K̇q̇ from its bias tape (φ and K then stay as the positions-only
    evaluation at the same q left them)."""
    k, r0, nr, j0 = x.sym_n_joints[s], x.sym_first_row[s], x.sym_n_rows[s], x.sym_joints_start[s]
    regs = iw.regs
    if has_v:
        for c in range(k):
            regs[c] = q[x.sym_q[j0 + c]]
            regs[k + c] = v[x.sym_v[j0 + c]]
        run_tape(carve(x.code_b, 4 * x.code_b_start[s], (x.code_b_len[s], 4)), x.consts, regs)
        out = carve(x.out_b, x.out_b_start[s], nr)
        for r in range(nr):
            iw.ubias[r0 + r] = regs[out[r]]
    else:
        for c in range(k):
            regs[c] = q[x.sym_q[j0 + c]]
        run_tape(carve(x.code_q, 4 * x.code_q_start[s], (x.code_q_len[s], 4)), x.consts, regs)
        out = carve(x.out_q, x.out_q_start[s], nr * (1 + k))
        G = iw.G
        for r in range(nr):
            iw.resid[r0 + r] = regs[out[r]]
            for e in range(G.shape[1]):
                G[r0 + r, e] = 0.0
            for c in range(k):
                G[r0 + r, x.sym_v[j0 + c]] = regs[out[nr + r * k + c]]
            iw.ubias[r0 + r] = 0.0


@helper(forceinline=True)
def _coupling_row(x, c, q, iw):
    """Row m_loop + c of a coupling: constant G, residual A q − offset, 𝔘̊ = 0."""
    r = x.m_loop + c
    acc = -x.coupling_offset[c]
    for e in range(q.shape[0]):
        acc += x.coupling_q[c, e] * q[e]
    iw.resid[r] = acc
    iw.ubias[r] = 0.0
    for e in range(iw.G.shape[1]):
        iw.G[r, e] = x.coupling_v[c, e]


#: what :func:`constraint_rows` evaluates: ROWS — φ and K at q; ROWS_AND_BIAS — φ, K and
#: 𝔘̊ at (q, q̇) in one pass (no symbolic constraint: their bias tape reads the rows of
#: their positions tape); BIAS — 𝔘̊ alone at (q, q̇), φ and K evaluated at this q before
#: (G_c does not depend on q̇: the loops' walks over their nodes' paths are not repeated);
#: BIAS_PLACED — as BIAS, the tree's poses at q still in the tree workspace from that
#: evaluation (the loop kinematics adds only the rates)
ROWS, ROWS_AND_BIAS, BIAS, BIAS_PLACED = 0, 1, 2, 3


@helper
def constraint_rows(mi, mf, ws, ci, cf, cws, i, q, v, what):
    """The constraint rows of implicit cluster i — of every implicit cluster for i < 0,
    the loop kinematics once — at (q, q̇ = v) into the implicit clusters' scratch of the
    workspace ``cws``; ``what``: ROWS, ROWS_AND_BIAS, BIAS or BIAS_PLACED (above; ``v``
    is not read with ROWS). (One compiled function for every use: each compiled function
    costs a separate LLVM optimisation of everything it calls.)"""
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, model_tables(mi, mf).nv)
    every = i < 0
    has_v = what != ROWS
    with_G = what <= ROWS_AND_BIAS
    n_loops = x.n_loops[i] if not every else (loop_tables(x.li, x.lf).n if x.m_loop > 0 else 0)
    if n_loops > 0:
        if what == BIAS_PLACED:
            loop_rates(mi, mf, ws, v)
        else:
            loop_kinematics(mi, mf, ws, q, v if has_v else absent(ws))
        for a in range(n_loops):
            loop_rows(mi, mf, ws, x.li, x.lf, a if every else x.loops[x.loops_start[i] + a], has_v, iw.G, iw.ubias,
                      iw.resid, iw.sel, absent(ws), with_G)
    if with_G:  # constant rows: their bias is 0, written with them
        for a in range(x.n_coupling if every else x.n_couplings[i]):
            _coupling_row(x, a if every else x.couplings[x.couplings_start[i] + a], q, iw)
    for a in range(x.n_symbolic if every else x.n_symbolics[i]):
        _symbolic_rows(x, a if every else x.symbolics[x.symbolic_start[i] + a], q, v, has_v, iw)


#: ``constraint_rows``'s cluster index for the rows of every implicit cluster
EVERY = -1


# --------------------------------------------------------------------------- explicit form
@helper
def dependent_pinv(ci, cf, cws, nv, i):
    """K_d⁺ = R⁻¹Qᵀ of implicit cluster i from the rows in ``iw`` (modified Gram–Schmidt
    on the columns of K_d); False when K_d is singular (relative to SINGULAR_TOL)."""
    c = cluster_tables(ci)
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, nv)
    k = x.cluster[i]
    nr, nd = x.n_rows[i], x.n_dep[i]
    rows = carve(x.rows, x.rows_start[i], nr)
    dep = carve(x.dep, x.dep_start[i], nd)
    col0 = c.row_start[k]
    Q, R = iw.Q, iw.R
    for j in range(nd):
        e = c.rows_v[col0 + dep[j]]
        for r in range(nr):
            Q[r, j] = iw.G[rows[r], e]
    top = 0.0
    for j in range(nd):
        for p in range(j):
            R[p, j] = 0.0
        # two Gram–Schmidt passes ("twice is enough"): one pass leaves Q orthogonal only to
        # ε·cond(K_d), and R⁻¹Qᵀ then solves with an error of ε·cond(K_d)² instead of ε·cond(K_d)
        for _ in range(2):
            for p in range(j):
                acc = 0.0
                for r in range(nr):
                    acc += Q[r, p] * Q[r, j]
                R[p, j] += acc
                for r in range(nr):
                    Q[r, j] -= acc * Q[r, p]
        acc = 0.0
        for r in range(nr):
            acc += Q[r, j] * Q[r, j]
        d = math.sqrt(acc)
        top = max(top, d)
        if not d > SINGULAR_TOL * max(1.0, top):
            return False
        inv = 1.0 / d
        R[j, j] = inv  # (R's diagonal is kept inverted: products below, not divisions)
        for r in range(nr):
            Q[r, j] *= inv
    P = _pinv(x, cws, i)
    for r in range(nr):  # column r of R⁻¹Qᵀ by back substitution
        for j in range(nd - 1, -1, -1):
            acc = Q[r, j]
            for p in range(j + 1, nd):
                acc -= R[j, p] * P[p, r]
            P[j, r] = acc * R[j, j]
    return True


@helper
def write_explicit_map(ci, cf, cws, nv, i):
    """G = [1; −K_d⁺K_i] of implicit cluster i (spanning order) into its slot, g = 0."""
    c = cluster_tables(ci)
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, nv)
    k = x.cluster[i]
    nr, nd, ny = x.n_rows[i], x.n_dep[i], c.n_y[k]
    rows = carve(x.rows, x.rows_start[i], nr)
    dep = carve(x.dep, x.dep_start[i], nd)
    ind = carve(x.ind, x.ind_start[i], ny)
    G = carve(cws, c.G_offset[k], (c.n_spanning[k], ny))
    g = carve(cws, c.g_offset[k], c.n_spanning[k])
    P = _pinv(x, cws, i)
    col0 = c.row_start[k]
    for j in range(ny):
        e = c.rows_v[col0 + ind[j]]
        for a in range(ny):
            G[ind[a], j] = 1.0 if a == j else 0.0
        for d in range(nd):
            acc = 0.0
            for r in range(nr):
                acc += P[d, r] * iw.G[rows[r], e]
            G[dep[d], j] = -acc
    for a in range(G.shape[0]):
        g[a] = 0.0


@helper
def write_bias(ci, cf, cws, nv, i):
    """g = [0; K_d⁺ k] of implicit cluster i from the bias rows of the scratch."""
    c = cluster_tables(ci)
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, nv)
    k = x.cluster[i]
    nr, nd = x.n_rows[i], x.n_dep[i]
    rows = carve(x.rows, x.rows_start[i], nr)
    dep = carve(x.dep, x.dep_start[i], nd)
    g = carve(cws, c.g_offset[k], c.n_spanning[k])
    P = _pinv(x, cws, i)
    for d in range(nd):
        acc = 0.0
        for r in range(nr):
            acc += P[d, r] * iw.ubias[rows[r]]
        g[dep[d]] = acc


# --------------------------------------------------------------------------- position solve
@helper(forceinline=True)
def _residual(x, iw, i):
    """(2-norm, max-norm) of implicit cluster i's residual rows."""
    s2, top = 0.0, 0.0
    for a in range(x.n_rows[i]):
        e = iw.resid[x.rows[x.rows_start[i] + a]]
        s2 += e * e
        top = max(top, abs(e))
    return math.sqrt(s2), top


@helper
def newton(mi, mf, ws, ci, cf, cws, i, q):
    """Gauss–Newton on φ_i(q) = 0 for implicit cluster i's dependent coordinates, from
    their values in ``q`` (model q, modified in place); returns (converged, current):
    ``current`` when the rows in the scratch are those at the returned q (the explicit
    form then takes them instead of evaluating them again). Each pass of the loop
    evaluates the rows at the current q once: at the start, then after a full Newton step
    δ = −K_d⁺ φ or after halving the step of the backtracking line search (Armijo: until
    ‖φ‖ decreases)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, m.nv)
    k = x.cluster[i]
    nr, nd = x.n_rows[i], x.n_dep[i]
    rows = carve(x.rows, x.rows_start[i], nr)
    dep = carve(x.dep, x.dep_start[i], nd)
    col0 = c.row_start[k]
    empty = absent(ws)
    norm, top = math.inf, math.inf
    alpha = 0.0  # the step fraction being tried; 0 before the first step
    it = 0
    while True:
        constraint_rows(mi, mf, ws, ci, cf, cws, i, q, empty, ROWS)
        n_new, t_new = _residual(x, iw, i)
        if alpha > 0.0 and not (n_new < norm * (1.0 - 1e-4 * alpha) or n_new <= SOLVE_TOL):
            alpha *= 0.5  # backtrack
            if alpha < 1e-6:
                for d in range(nd):
                    q[c.rows_q[col0 + dep[d]]] = iw.saved[d]
                return top < ACCEPT_TOL, False
        else:  # accepted: the next Newton step
            norm, top = n_new, t_new
            if top <= SOLVE_TOL:
                return True, True
            if it == MAX_ITER:
                return top < ACCEPT_TOL, True
            it += 1
            if not dependent_pinv(ci, cf, cws, m.nv, i):
                return top < ACCEPT_TOL, True
            P = _pinv(x, cws, i)
            for d in range(nd):
                acc = 0.0
                for r in range(nr):
                    acc -= P[d, r] * iw.resid[rows[r]]
                if not math.isfinite(acc):
                    return top < ACCEPT_TOL, True
                iw.step[d] = acc
                iw.saved[d] = q[c.rows_q[col0 + dep[d]]]
            alpha = 1.0
        for d in range(nd):
            q[c.rows_q[col0 + dep[d]]] = iw.saved[d] + alpha * iw.step[d]


@helper
def _start(ci, cf, i, q, y, first_order):
    """The dependent coordinates of implicit cluster i at its reference (moved to y along
    the reference branch to first order with ``first_order``)."""
    c = cluster_tables(ci)
    x = implicit_tables(ci, cf)
    k = x.cluster[i]
    nd, ny = x.n_dep[i], c.n_y[k]
    dep = carve(x.dep, x.dep_start[i], nd)
    ind = carve(x.ind, x.ind_start[i], ny)
    ref = carve(x.refs, x.ref_offset[i], c.n_spanning[k])
    Gref = carve(x.grefs, x.gref_offset[i], (c.n_spanning[k], ny))
    col0, y0 = c.row_start[k], c.yq_start[k]
    for d in range(nd):
        acc = ref[dep[d]]
        if first_order:
            for j in range(ny):
                acc += Gref[dep[d], j] * (y[y0 + j] - ref[ind[j]])
        q[c.rows_q[col0 + dep[d]]] = acc


@helper(forceinline=True)
def _wrap(x, i, q):
    """Implicit cluster i's 2π-periodic dependent angles wrapped to (−π, π] (those already
    there left bit for bit); True when some angle changed."""
    changed = False
    for a in range(x.n_periodic[i]):
        e = x.periodic[x.periodic_start[i] + a]
        if not -math.pi < q[e] <= math.pi:
            q[e] = math.pi - (math.pi - q[e]) % (2.0 * math.pi)
            changed = True
    return changed


@helper(forceinline=True)
def one_pass_rows(x):
    """True when :func:`explicit_form`, given the spanning rates, evaluates the rows once
    (no symbolic constraint, whose bias tape reads the positions tape's rows)."""
    return x.n_symbolic == 0


@helper(forceinline=True)
def rows_place_the_tree(ci, cf):
    """True when :func:`explicit_form` (status OK) leaves the tree's joint placements at q
    — and, when it evaluated the bias, the body velocities at the rates of the bias, the
    given q̇ or G ẏ — in the tree workspace: there are loops, whose rows run the loop
    kinematics over the whole tree, which the cluster passes would repeat
    (:func:`~.kinematics.positions_pass`'s ``placed``)."""
    return implicit_tables(ci, cf).m_loop > 0


@helper
def explicit_form(mi, mf, ws, ci, cf, cws, yd, check, with_bias, rates):
    """The explicit form of every implicit cluster at the spanning configuration in the
    workspace [Chignoli23, eq. 3]: its rows, K_d⁺, G = [1; −K_d⁺K_i] and, with
    ``with_bias``, g = [0; K_d⁺k] at q̇ = G ẏ (``yd``). With ``check`` each cluster's
    residual must be at most MANIFOLD_TOL. Returns OK or UNSOLVED.

    ``rates``: the spanning velocities q̇ (nv,) when the caller has them (the embedding
    method starts from (q, q̇)), else empty. Then the rows are evaluated once, with their
    velocity terms, for G and g together (the loop kinematics, a tree pass, once instead
    of twice); g is then K_d⁺k at this q̇, which is G ẏ when q̇ satisfies K q̇ = 0 (the
    caller checks it). Symbolic constraints keep the two evaluations (their bias tape
    reads the rows of the positions tape)."""
    m = model_tables(mi, mf)
    x = implicit_tables(ci, cf)
    if x.n == 0:
        return OK
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    iw = implicit_workspace(cws, x, m.nv)
    one_pass = with_bias and rates.shape[0] == m.nv and one_pass_rows(x)
    constraint_rows(mi, mf, ws, ci, cf, cws, EVERY, w.q, rates if one_pass else absent(ws),
                    ROWS_AND_BIAS if one_pass else ROWS)
    for i in range(x.n):
        if check and _residual(x, iw, i)[1] > MANIFOLD_TOL:
            return UNSOLVED
        if not dependent_pinv(ci, cf, cws, m.nv, i):
            return UNSOLVED
        write_explicit_map(ci, cf, cws, m.nv, i)
        if one_pass:
            write_bias(ci, cf, cws, m.nv, i)
    if with_bias and not one_pass:  # the rows above ran the loop kinematics at w.q: the tree is placed
        explicit_bias(mi, mf, ws, ci, cf, cws, yd, True)
    return OK


@helper
def explicit_bias(mi, mf, ws, ci, cf, cws, yd, placed):
    """g = [0; K_d⁺k] of every implicit cluster at q̇ = G ẏ (``yd``), their rows, G and
    K_d⁺ evaluated before at the configuration in the workspace; ``placed``: the tree's
    poses at that configuration are still in the tree workspace (the last rows evaluated
    ran the loop kinematics there, after the last change of q). With loops, this leaves
    the tree's poses and body velocities at (q, q̇) in the tree workspace."""
    m = model_tables(mi, mf)
    x = implicit_tables(ci, cf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)
    constraint_rows(mi, mf, ws, ci, cf, cws, EVERY, w.q, w.qd, BIAS_PLACED if placed else BIAS)
    for i in range(x.n):
        write_bias(ci, cf, cws, m.nv, i)


@helper
def given_configuration(mi, mf, ci, cf, cws, y, q_given):
    """The spanning configuration ``q_given`` of mode GIVEN into the workspace, checked:
    y equals q's independent coordinates (to 1e-9 (1 + |y|)) and the linear clusters'
    coordinates are G y (to MANIFOLD_TOL), then written as γ(y) (the implicit clusters'
    coordinates as given); :func:`explicit_form` with ``check`` then checks the implicit
    clusters' residuals. Returns OK, BAD_SHAPE or UNSOLVED. (Apart from
    :func:`explicit_form`, so that the embedding kernel compiles it without the solve, and
    each compiled function re-optimises everything it calls.)"""
    m = model_tables(mi, mf)
    if q_given.shape[0] != m.nq:  # the caller's checks then name the problem
        return BAD_SHAPE
    if nonfinite(q_given):
        return UNSOLVED
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    q = w.q
    for e in range(m.nq):
        q[e] = q_given[e]
    for a in range(y.shape[0]):
        if not abs(y[a] - q[c.y_positions[a]]) <= 1e-9 * (1.0 + abs(y[a])):
            return UNSOLVED
    for k in range(c.n):
        if c.kind[k] != LINEAR:
            continue
        G, _ = explicit_map(c, cf, w, k)
        r0, y0 = c.row_start[k], c.yq_start[k]
        for r in range(c.n_spanning[k]):
            acc = 0.0
            for j in range(c.n_y[k]):
                acc += G[r, j] * y[y0 + j]
            if not abs(q[c.rows_q[r0 + r]] - acc) <= MANIFOLD_TOL:
                return UNSOLVED
    # the rigid and linear clusters at γ(y) exactly, as the cluster kernels place them: the
    # rows evaluated at this q then place the tree where the kernels would (rows_place_the_tree)
    apply_explicit_map(mi, mf, ci, cf, cws, y, q, True, False)
    return OK


@helper
def prepare_implicit(mi, mf, ws, ci, cf, cws, y, yd, q_given, mode, with_bias):
    """The spanning configuration and the explicit form (G, and g with ``with_bias``) of
    the implicit clusters, into the cluster workspace, for the cluster kernels (module
    docstring; ``mode`` one of SOLVE, GIVEN, GUESS, PREPARED). ``q_given``: the spanning
    configuration (GIVEN) or the start of the solve (GUESS), else empty. The positions of
    the rigid and linear clusters are written too. Returns OK or UNSOLVED."""
    if mode == PREPARED or (mode == SOLVE and ci[ci[7]] == 0):  # no implicit cluster (header entry n)
        return OK  # positions_pass writes the rigid and linear clusters
    if mode == GIVEN:  # no solve: the given configuration, checked, and the explicit form there
        st = given_configuration(mi, mf, ci, cf, cws, y, q_given)
        return st if st != OK else explicit_form(mi, mf, ws, ci, cf, cws, yd, True, with_bias, absent(ws))
    m = model_tables(mi, mf)
    if mode == GUESS:
        if q_given.shape[0] != m.nq:  # the caller's checks then name the problem
            return BAD_SHAPE
        if nonfinite(q_given):
            return UNSOLVED
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    x = implicit_tables(ci, cf)
    q = w.q
    apply_explicit_map(mi, mf, ci, cf, cws, y, q, True, False)  # rigid and linear clusters
    for i in range(x.n):  # the independent coordinates of the implicit clusters, then their starts
        if x.solvable[i] != 1:
            return UNSOLVED
        k = x.cluster[i]
        col0, y0 = c.row_start[k], c.yq_start[k]
        for j in range(c.n_y[k]):
            q[c.rows_q[col0 + x.ind[x.ind_start[i] + j]]] = y[y0 + j]
        if mode == SOLVE:
            _start(ci, cf, i, q, y, x.has_start_map[i] == 1)
        else:  # GUESS: the dependent coordinates of the given start
            for d in range(x.n_dep[i]):
                e = c.rows_q[col0 + x.dep[x.dep_start[i] + d]]
                q[e] = q_given[e]
    empty = absent(ws)
    placed = False  # the last rows evaluated ran the loop kinematics after the last change of q
    for i in range(x.n):
        # from the start above, then (SOLVE with a first-order start) from the reference itself
        attempts = 2 if (mode == SOLVE and x.has_start_map[i] == 1) else 1
        solved, current = False, False
        for attempt in range(attempts):
            if attempt == 1:
                _start(ci, cf, i, q, y, False)
            solved, current = newton(mi, mf, ws, ci, cf, cws, i, q)
            if solved:
                break
        if not solved:
            return UNSOLVED
        # G of cluster i from the rows the solve evaluated last, when they are those at the
        # final q: they are the rows explicit_form evaluates there (each cluster's rows read
        # its own and its ancestors' coordinates, final by now), so a given q = γ(y) gives
        # the same G to the last bit
        if _wrap(x, i, q) or not current:
            constraint_rows(mi, mf, ws, ci, cf, cws, i, q, empty, ROWS)
        # (the clusters after i have not moved their coordinates yet: the last cluster's
        # rows are those that count)
        placed = x.n_loops[i] > 0
        if not dependent_pinv(ci, cf, cws, m.nv, i):
            return UNSOLVED
        write_explicit_map(ci, cf, cws, m.nv, i)
    if with_bias:
        explicit_bias(mi, mf, ws, ci, cf, cws, yd, placed)
    return OK


@kernel
def prepare_implicit_kernel(mi, mf, ws, y, yd, q_given, ci, cf, cws, mode, with_bias, spanning):
    """:func:`prepare_implicit` called from Python, before a cluster kernel run in mode
    PREPARED: the implicit clusters' preparation is compiled only for models that have
    such clusters (inside every cluster kernel it would add about 40 s to the first
    compilation of each, for every model). With a nonempty ``spanning`` (nq + nv,), the
    spanning state (q, q̇) = (γ(y), G ẏ) [Chignoli23, eq. 3] is written there (ẏ given;
    one kernel for both uses: each entry point compiles its own copy of the whole solve; a
    separate spanning-state kernel took 2.3 s of LLVM optimisation and code generation).
    Returns a status (``UNSOLVED``: the caller's Python solve takes over)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    state = spanning.shape[0] > 0
    if (y.shape[0] != c.nyq or ((with_bias or state) and yd.shape[0] != c.nyv)
            or (state and spanning.shape[0] != m.nq + m.nv)):
        return BAD_SHAPE
    if nonfinite(y):
        return BAD_FIRST
    if nonfinite(yd):
        return BAD_SECOND
    if nonfinite(q_given):
        return BAD_THIRD
    st = prepare_implicit(mi, mf, ws, ci, cf, cws, y, yd, q_given, mode, with_bias)
    if st != OK or not state:
        return st
    w = cluster_workspace(cws, c, m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)  # rigid and linear clusters
    for e in range(m.nq):
        spanning[e] = w.q[e]
    apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)
    for e in range(m.nv):
        spanning[m.nq + e] = w.qd[e]
    return OK


@helper(inline="always")
def run_states(algorithm, tables, Y, YD, X, FEXT, Q, gravity, mode, OUT, status, start, stop):
    """``algorithm(mi, mf, ws, y, ẏ, x, f_ext, ci, cf, cws, gravity, out)`` (C-ABA or C-RNEA)
    after :func:`prepare_implicit` (q and ``mode``) on states ``start`` to ``stop − 1`` of
    flat arrays (:func:`~.layout.states_fit`); the body of the states kernels
    (:func:`~.aba.cluster_aba_states`), inlined into each by Numba. ``status`` (B,)
    receives each state's status (empty: one state). Returns the first status other than
    OK."""
    ok, mi, mf, ws, ci, cf, cws, _ = split_plain_tables(tables)
    if not (ok and states_fit(mi, ci, Y, YD, X, FEXT, Q, OUT, status, start, stop)):
        return BAD_SHAPE
    first = OK
    for b in range(start, stop):
        y, yd, x, fext, q, out = state_views(mi, ci, Y, YD, X, FEXT, Q, OUT, b)
        st = prepare_implicit(mi, mf, ws, ci, cf, cws, y, yd, q, mode, True)
        if st == OK:
            st = algorithm(mi, mf, ws, y, yd, x, fext, ci, cf, cws, gravity, out)
        if status.shape[0] > 0:
            status[b] = st
        if first == OK:
            first = st
    return first
