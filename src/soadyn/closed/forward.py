"""Closed-chain forward dynamics: one entry point for every method.

``METHODS`` maps a name to a function of a :class:`ConstrainedProblem` returning (θ̈, λ):
the cut-joint methods of :mod:`soadyn.closed.cut_joint` (``"augmented"``, ``"direct"``,
``"projection"``) and constraint embedding (``"embedding"``, [Chignoli23]): the
constraints of each body cluster in explicit form q̇ = G ẏ, θ̈ = G ÿ + g, ÿ by C-ABA over
the cluster tree for τ_ind = Gᵀ T ([Chignoli23, Alg. 1], :mod:`soadyn.closed.embedding`);
then the constraint force G_c*λ = M θ̈ + C − T by one RNEA pass (O(N)) and λ its
least-norm multipliers, so that the constraint forces are the cut-joint ones. Embedding
needs holonomic, time-invariant constraints whose joints are known (see
:func:`soadyn.cluster_tree`) and a consistent state; Baumgarte stabilization does not
apply (θ̈ = G ÿ + g satisfies G_c θ̈ = 𝔘̊ by construction: project the state instead).
Every method gives the same θ̈ and λ (the least-norm multipliers, see
:mod:`soadyn.closed.cut_joint`).

The method protocol. ``METHODS[name](problem)`` returns ``(qdd, multipliers)``: ``qdd``
(nv,) the accelerations, and ``multipliers`` either the (m,) array λ or a callable of no
arguments that computes it. A method whose λ costs extra work beyond θ̈ (embedding: an
RNEA pass and the SVD of G_c; projection: M θ̈) returns the callable, and
:class:`ConstrainedDynamicsResult` calls it when ``multipliers``, ``constraint_forces`` or
``generalized_constraint_force`` is first read, so a caller who needs θ̈ only never pays
for the constraint forces. The callable must depend on the problem's inputs only (the
problem holds private copies of q, v, τ and f_ext) and on arrays it owns, so that the
result is the same whenever it is read. Methods run the tree algorithms on the explicit
spanning tree ``problem.tree`` (``model.spanning_tree()``): the tree functions refuse the
constrained model itself.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core import validation as val
from ..core.compile import derived, snapshot
from ..core.constraints import ConstraintError
from ..core.status import Unsolved
from ..dynamics.crba import mass_matrix
from ..dynamics.rnea import rnea
from .constraint_set import constraint_set
from .cut_joint import CUT_JOINT_METHODS, RowSpace, constraint_forces, stabilized_bias
from .direct import NOT_THE_DEFAULT, PIVOT_TOL, direct_fast, direct_outputs, direct_solve, direct_tables, output_state
from .embedding.algorithms import embedding_accelerations, embedding_fast, embedding_solve, input_copies
from .embedding.clusters import cluster_tree
from .embedding.compiled import packed_clusters
from .kinematics import check_residuals, evaluate_constraints, residual_tolerance

__all__ = ["constrained_forward_dynamics", "ConstrainedDynamicsResult", "ConstrainedProblem", "METHODS",
           "solve_constrained", "default_method"]


class ConstrainedProblem:
    """One constrained forward-dynamics problem: the inputs, the constraint evaluation
    (``state``), the acceleration right-hand side ``rhs``, the explicit spanning tree
    ``tree`` (``model.spanning_tree()``, on which the methods run the tree algorithms) and,
    computed on first use, the spanning-tree mass matrix, bias forces and the row space of
    G_c."""

    def __init__(self, model, q, v, tau, f_ext, t, state, rhs, rank_tol, baumgarte=None):
        self.model, self.q, self.v, self.tau, self.f_ext, self.t = model, q, v, tau, f_ext, t
        self.state, self.rhs, self.rank_tol, self.baumgarte = state, rhs, rank_tol, baumgarte
        self.tree = snapshot(model.spanning_tree())  # (one state of it too, should it be edited meanwhile)

    @cached_property
    def mass_matrix(self):
        """M(θ) (nv, nv) of the spanning tree."""
        return mass_matrix(self.tree, self.q)

    @cached_property
    def bias_force(self):
        """C(θ, θ̇) − Σ J_kᵀ f_ext(k) (gravity included): the RNEA at zero acceleration."""
        return rnea(self.tree, self.q, self.v, None, self.f_ext)

    @cached_property
    def row_space(self):
        return RowSpace(self.state.G, self.rank_tol, self.state.row_scale)


def _embedding(p):
    """Constraint embedding ([Chignoli23]): θ̈ = G ÿ + g with ÿ from C-ABA, then the least-norm
    λ with G_c*λ = RNEA(θ, θ̇, θ̈) − T (the generalized constraint force, one O(N) pass)."""
    if p.baumgarte is not None:
        raise ValueError("baumgarte: method='embedding' satisfies G_c q̈ = 𝔘̊ exactly (q̈ = G ÿ + g) and takes "
                         "no Baumgarte terms; use a cut-joint method, or coordinate projection when integrating")
    qdd = embedding_accelerations(p.model, p.q, p.v, p.tau, p.f_ext, p.state)
    a = qdd.copy()  # the caller may edit the result's qdd before reading the multipliers

    def multipliers():
        return p.row_space.least_norm_multipliers(rnea(p.tree, p.q, p.v, a, p.f_ext) - p.tau)

    return qdd, multipliers


#: forward-dynamics methods: name -> function(ConstrainedProblem) -> (qdd, λ or a callable
#: of no arguments returning λ, evaluated on first read; see the module docstring)
METHODS = {**CUT_JOINT_METHODS, "embedding": _embedding}


_N_INDEPENDENT_GONE = ("n_independent: removed, it was the rank of G_c; read constraint_rank (rank of G_c, the "
                       "independent constraint rows) or degrees_of_freedom (nv - rank G_c)")


class ConstrainedDynamicsResult:
    """Output of :func:`constrained_forward_dynamics`.

    Attributes
    ----------
    qdd : (nv,) accelerations of all spanning-tree coordinates.
    multipliers : (m,) λ (least norm when G_c is rank deficient).
    constraint_forces : dict, see :func:`constraint_forces`.
    generalized_constraint_force : (nv,) G_c*λ.
    n_constraints : m, the rows of G_c (redundant rows included).
    constraint_rank : rank of G_c, the number of independent constraint rows.
    degrees_of_freedom : nv − rank G_c, the number of independent velocities the
        constraints leave (for holonomic constraints, the mechanism's degrees of freedom;
        e.g. six_bar.urdf: nv = 5, m = 5 rows of rank 2, 3 degrees of freedom).
    method : the method used; state : the :class:`ConstraintState`.

    ``multipliers``, ``constraint_forces``, ``generalized_constraint_force``,
    ``constraint_rank`` and ``degrees_of_freedom`` are computed when first read (then
    kept): a caller who needs the accelerations only does not pay for the constraint
    forces. They depend on the call's arguments only (the result holds its own copies).

    (The former ``n_independent``, the rank of G_c under a name that read like the degrees
    of freedom, is gone: reading it raises AttributeError naming both replacements.)
    """

    def __init__(self, qdd, multipliers, problem, method):
        self.qdd = qdd
        self.state = problem.state
        self.method = method
        self.n_constraints = problem.state.G.shape[0]
        self._problem = problem
        if callable(multipliers):
            self._multipliers = multipliers
        else:
            self._multipliers = None
            self.__dict__["multipliers"] = multipliers  # cached_property's slot: already known

    @cached_property
    def multipliers(self):
        """(m,) λ, the least-norm multipliers."""
        return self._multipliers()

    @cached_property
    def generalized_constraint_force(self):
        """(nv,) G_c*λ, the generalized force of the constraints on the spanning tree [N m, N]."""
        return self.state.G.T @ self.multipliers

    @cached_property
    def constraint_forces(self):
        """dict by constraint name, see :func:`soadyn.closed.cut_joint.constraint_forces`."""
        return constraint_forces(self.state, self.multipliers)

    @cached_property
    def constraint_rank(self):
        """rank of G_c: the number of independent constraint rows (≤ ``n_constraints``)."""
        return self._problem.row_space.rank

    @property
    def degrees_of_freedom(self):
        """nv − rank G_c: the number of independent velocities (degrees of freedom)."""
        return self.qdd.shape[-1] - self.constraint_rank

    @property
    def n_independent(self):
        raise AttributeError(_N_INDEPENDENT_GONE)

    def __repr__(self):
        return (f"<{type(self).__name__} method={self.method!r} constraints={self.n_constraints} "
                f"constraint_rank={self.constraint_rank} degrees_of_freedom={self.degrees_of_freedom}>")


class CompiledDirectResult(ConstrainedDynamicsResult):
    """:class:`ConstrainedDynamicsResult` of the compiled direct method
    (:mod:`soadyn.closed.direct`), read from the kernel's output array: θ̈ and the rank
    come from the kernel; the constraint state, the least-norm multipliers and the
    constraint forces are made on first read. For a batch of B states, ``qdd`` (B, nv),
    ``multipliers`` (B, m), ``generalized_constraint_force`` (B, nv), ``constraint_rank``
    and ``degrees_of_freedom`` (B,), and ``state`` and ``constraint_forces`` are lists with one entry per state. Only θ̈
    and the rank come from the batched kernel: the other attributes are made state by state
    in Python (an SVD of G_c each) when first read."""

    method = "direct"
    _t, _rank_tol = 0.0, 1e-9  # the defaults of constrained_forward_dynamics (set only when others)

    def __init__(self, model, out, tables, t, rank_tol):
        self._model, self._out, self._tables = model, out, tables
        if t != 0.0 or rank_tol != 1e-9:
            self._t, self._rank_tol = t, rank_tol
        self.qdd = out[:model.nv] if out.ndim == 1 else out[:, :model.nv]

    @property
    def n_constraints(self):
        return self._tables.m

    def _views(self, row):
        return direct_outputs(row, self._model.nv, self._tables)

    def _rows(self):
        return [self._out] if self._out.ndim == 1 else list(self._out)

    def _per_state(self, values):
        return values[0] if self._out.ndim == 1 else values

    @cached_property
    def state(self):
        return self._per_state([output_state(self._model, self._views(r), self._t) for r in self._rows()])

    @cached_property
    def constraint_rank(self):
        """rank of G_c (the kernel's pivoted Cholesky factorization): an int, or (B,) for a batch."""
        rank = self._out[..., self._model.nv + self._tables.m]
        return int(rank) if self._out.ndim == 1 else rank.astype(np.int64)

    @cached_property
    def multipliers(self):
        """(m,) λ, the least-norm multipliers: the kernel's particular λ carried to the row
        space of G_c through the (unique) generalized constraint force G_c*λ."""
        lam = []
        for row in self._rows():
            o = self._views(row)
            lam.append(RowSpace(o.G, self._rank_tol, o.scale).least_norm_multipliers(o.G.T @ o.lam))
        return lam[0] if self._out.ndim == 1 else np.array(lam).reshape(len(lam), -1)

    @cached_property
    def generalized_constraint_force(self):
        if self._out.ndim == 1:
            return self.state.G.T @ self.multipliers
        return np.array([s.G.T @ lam for s, lam in zip(self.state, self.multipliers)])

    @cached_property
    def constraint_forces(self):
        if self._out.ndim == 1:
            return constraint_forces(self.state, self.multipliers)
        return [constraint_forces(s, lam) for s, lam in zip(self.state, self.multipliers)]


class EmbeddingResult(ConstrainedDynamicsResult):
    """:class:`ConstrainedDynamicsResult` of the compiled embedding method
    (:func:`~soadyn.closed.embedding.algorithms.embedding_solve`): θ̈ from one kernel call
    (a batch: one multi-threaded call, ``qdd`` (B, nv)); the constraint state, the
    least-norm multipliers (from G_c*λ = RNEA(θ, θ̇, θ̈) − T), the ranks and the constraint
    forces are made on first read, state by state in Python (for a batch: ``multipliers``
    (B, m), ``generalized_constraint_force`` (B, nv), ``constraint_rank`` (B,), ``state``
    and ``constraint_forces`` lists). The result holds its own copies of the inputs."""

    method = "embedding"

    def __init__(self, model, q, v, tau, f_ext, t, rank_tol, qdd):
        self.qdd = qdd
        self._model, self._q, self._v, self._tau, self._f_ext = model, q, v, tau, f_ext
        self._t, self._rank_tol = t, rank_tol
        self._batch = qdd.ndim == 2

    @cached_property
    def _qdd(self):
        """θ̈ again from the result's own inputs (the caller may have edited ``qdd`` before
        reading the multipliers; the kernel is deterministic, so this is the same θ̈)."""
        return embedding_solve(self._model, self._q, self._v, self._tau, self._f_ext)[..., :self._model.nv]

    @cached_property
    def n_constraints(self):
        return constraint_set(self._model).m

    def _each(self, fn):
        if not self._batch:
            return fn(self._q, self._v, self._tau, self._f_ext, self._qdd, None)
        return [fn(self._q[b], self._v[b], self._tau[b], None if self._f_ext is None else self._f_ext[b], self._qdd[b],
                   b) for b in range(len(self._qdd))]

    @cached_property
    def state(self):
        return self._each(lambda q, v, tau, f, qdd, b: evaluate_constraints(self._model, q, v, self._t))

    @cached_property
    def _row_spaces(self):
        states = self.state if self._batch else [self.state]
        return [RowSpace(st.G, self._rank_tol, st.row_scale) for st in states]

    @cached_property
    def multipliers(self):
        tree = self._model.spanning_tree()

        def one(q, v, tau, f, qdd, b):
            rs = self._row_spaces[0 if b is None else b]
            return rs.least_norm_multipliers(rnea(tree, q, v, qdd, f) - tau)
        lam = self._each(one)
        return np.array(lam).reshape(len(lam), -1) if self._batch else lam

    @cached_property
    def constraint_rank(self):
        ranks = [rs.rank for rs in self._row_spaces]
        return np.array(ranks, dtype=np.int64) if self._batch else ranks[0]

    @cached_property
    def generalized_constraint_force(self):
        if not self._batch:
            return self.state.G.T @ self.multipliers
        return np.array([s.G.T @ lam for s, lam in zip(self.state, self.multipliers)])

    @cached_property
    def constraint_forces(self):
        if not self._batch:
            return constraint_forces(self.state, self.multipliers)
        return [constraint_forces(s, lam) for s, lam in zip(self.state, self.multipliers)]


class PlainEmbeddingResult(EmbeddingResult):
    """:class:`EmbeddingResult` of the plain call (one state, no external forces), made
    from the kernel's output alone: θ̈, then the worst residuals, then the copies of
    q, q̇, τ the kernel wrote after them (its own inputs, without three allocations)."""

    _f_ext = None
    _batch = False

    def __init__(self, model, out, nv, t, rank_tol):
        self._model, self._out, self._t, self._rank_tol = model, out, t, rank_tol
        self._nv = nv  # the model's nv at the call, whatever the model becomes later
        self.qdd = out[:nv]

    @cached_property
    def _inputs(self):
        """(q, q̇, τ): the kernel's copies (:func:`~soadyn.closed.embedding.algorithms.input_copies`)."""
        nv = self._nv
        return input_copies(self._out, self._out.shape[0] - 3 * nv - 2, nv)

    _q = property(lambda self: self._inputs[0])
    _v = property(lambda self: self._inputs[1])
    _tau = property(lambda self: self._inputs[2])


def _compiled_embedding(model, q, v, tau, tau_ind, f_ext, t, rank_tol, residual_tol):
    """The embedding method in one kernel call (single state or batch), or None when the
    Python path must run: some cluster prepared in Python, or a state the kernel refused
    (off the constraint manifold beyond MANIFOLD_TOL, singular) or whose residuals exceed
    ``residual_tol`` — the Python path then raises the error that names the constraint."""
    if tau_ind is None and f_ext is None:
        result = _embedding_fast(model, q, v, tau, t, rank_tol, residual_tol)
        if result is not None:
            return result
    batch = np.ndim(q) == 2
    if tau_ind is not None:
        if batch:
            return None
        tau = _spanning_forces(model, tau, tau_ind)
    if v is None or tau is None:
        shape = np.shape(q)[:-1] + (model.nv,)
        v = np.zeros(shape) if v is None else v
        tau = np.zeros(shape) if tau is None else tau
    copies = f_ext is None  # the result's own q, q̇, τ, written by the kernel
    try:
        out = embedding_solve(model, q, v, tau, f_ext, copies=copies)
    except Unsolved:
        return _embedding_state_by_state(model, q, v, tau, f_ext, t, rank_tol, residual_tol) if batch else None
    if out is None:
        return None
    nv = model.nv
    if batch:
        ok = (out[:, nv:nv + 2] <= residual_tol).all()
    else:
        ok = out[nv] <= residual_tol and out[nv + 1] <= residual_tol  # False for NaN
    if not ok:
        return _embedding_state_by_state(model, q, v, tau, f_ext, t, rank_tol, residual_tol) if batch else None
    own = input_copies(out, model.nq, nv) if copies else (_own(q), _own(v), _own(tau))
    return EmbeddingResult(model, *own, _own(f_ext), t, rank_tol, out[..., :nv])


def _embedding_fast(model, q, v, tau, t, rank_tol, residual_tol):
    """The common call of the embedding method (one state of exact types, no external
    forces, gravity on) in one kernel call, or None for the paths of
    :func:`_compiled_embedding` (which name what is wrong)."""
    out = embedding_fast(model, q, v, tau)
    if out is None:
        return None
    nv = model.nv
    if not (out.item(nv) <= residual_tol and out.item(nv + 1) <= residual_tol):  # (also for NaN)
        return None
    return PlainEmbeddingResult(model, out, nv, t, rank_tol)


def _own(x):
    """The result's own copy of an input (None stays None)."""
    return None if x is None else (x.copy() if type(x) is np.ndarray else np.array(x, dtype=float))


def _embedding_state_by_state(model, q, v, tau, f_ext, t, rank_tol, residual_tol):
    """A batch the kernel refused a state of: every state through the single-state call
    (the first bad one raises the error that names it, and its batch entry)."""
    B = len(q)
    qdd = np.empty((B, model.nv))
    for b in range(B):
        try:
            qdd[b] = constrained_forward_dynamics(model, q[b], v[b], tau[b], "embedding",
                                                  f_ext=None if f_ext is None else f_ext[b], t=t, rank_tol=rank_tol,
                                                  residual_tol=residual_tol).qdd
        except (ConstraintError, ValueError, TypeError) as e:
            raise type(e)(f"(batch entry {b}) {e}") from None
    result = EmbeddingResult(model, _own(q), _own(v), _own(tau), _own(f_ext), t, rank_tol, qdd)
    result.__dict__["_qdd"] = qdd.copy()  # (the batched kernel refused a state: no recomputation by it)
    return result


#: where the embedding method overtakes the direct one, both compiled: the direct method
#: pays per loop row for its walks and its factorization of A, and per coupling row a
#: gather over the whole tree, the embedding method nothing per coupling row (constant G)
#: and a fixed cost per implicit cluster. The crossovers that
#: ``benchmarks/closed_chain_methods.py`` measured (chains of four-bar loops of 5 rows
#: each; geared chains of k stages, k coupling rows on 2k bodies; quoted in
#: ``benchmarks/results/design_notes.md``) give ``EMBEDDING_LOOP_ROWS`` = 25 loop rows and
#: ``EMBEDDING_COUPLING_WORK`` = 25 coupling rows × bodies.
EMBEDDING_LOOP_ROWS = 25
EMBEDDING_COUPLING_WORK = 25


def _embedding_compiled(model):
    """True when the embedding method runs in one kernel call (a cluster tree exists and
    no cluster's constraints are Python callables)."""
    try:
        packed = packed_clusters(model)
    except ConstraintError:  # no cluster tree (e.g. non-holonomic constraints)
        return False
    return not packed.python_prepared


def default_method(model):
    """The method ``constrained_forward_dynamics`` uses when none is named, the faster
    compiled one for the model (once per model version). When every constraint is a loop
    joint, coupling or transmission both compiled methods run, and the embedding one is
    taken when the direct method's work on the constraints is the larger part:
    m_loop / ``EMBEDDING_LOOP_ROWS`` + m_coupling · nbodies / ``EMBEDDING_COUPLING_WORK``
    ≥ 1 (m_loop loop rows, m_coupling coupling rows; the crossovers measured, see the
    constants: from about four geared joints on embedding is the faster), else the direct
    one. With symbolic constraints (Tello's differentials)
    ``"embedding"`` when every cluster is compiled; with Python callables ``"augmented"``
    (O(N) sweeps, no dense M). With Baumgarte terms, which the embedding method does not
    take, the direct (or augmented) method is used instead of it."""
    d = getattr(model, "_derived", None)
    if d is None:
        d = derived(model)
    return d.memo("default_method", _choose_method)


def _known_default_method(model):
    """:func:`default_method` when it has been chosen for this model version, else None
    (one look-up: for the plain call)."""
    d = getattr(model, "_derived", None)
    return None if d is None else d.known("default_method")


def _choose_method(model):
    tables = direct_tables(model)
    if tables is not None:
        work = (tables.m_loop / EMBEDDING_LOOP_ROWS
                + (tables.m - tables.m_loop) * model.nbodies / EMBEDDING_COUPLING_WORK)
        return "embedding" if work >= 1.0 and _embedding_compiled(model) else "direct"
    return "embedding" if _embedding_compiled(model) else "augmented"


def _compiled_direct(model, tables, q, v, tau, f_ext, t, rank_tol, baumgarte, check, residual_tol):
    # rank_tol: the relative tolerance of the rows kept, and, squared, of the pivots of
    # A = G_c M⁻¹ G_c* (squares of singular values; never below PIVOT_TOL, the rounding of A)
    out = direct_solve(model, q, v, tau, f_ext, baumgarte=baumgarte, rank_tol=rank_tol,
                       pivot_tol=max(PIVOT_TOL, rank_tol * rank_tol), tables=tables)
    if check:
        k = model.nv + tables.m + 1  # the kernel's worst residuals: max |𝔡|, max |G_c v|
        if out.ndim == 1:
            if not (out[k] <= residual_tol and out[k + 1] <= residual_tol):  # also for NaN
                _residual_error(model, tables, out, v, t, residual_tol, None)
        else:
            ok = (out[:, k:k + 2] <= residual_tol).all(axis=1)
            if not ok.all():
                bad = int(np.flatnonzero(~ok)[0])
                _residual_error(model, tables, out[bad], np.asarray(v, dtype=float)[bad], t, residual_tol, bad)
    return CompiledDirectResult(model, out, tables, t, rank_tol)


def _residual_error(model, tables, row, v, t, tol, batch_index):
    """Raise the ConstraintError of :func:`check_residuals` for one state of the kernel."""
    state = output_state(model, direct_outputs(row, model.nv, tables), t)
    try:
        check_residuals(state, np.asarray(v, dtype=float), tol)
    except ConstraintError as e:
        if batch_index is None:
            raise
        raise ConstraintError(f"(batch entry {batch_index}) {e}") from None


def solve_constrained(model, q, v, tau, method="augmented", *, f_ext=None, t=0.0, rank_tol=1e-9,
                      baumgarte=None, state=None):
    """:func:`constrained_forward_dynamics` without input conversion or residual check;
    ``state`` may be a precomputed evaluation at (q, v, t). The arrays q, v, tau, f_ext are
    kept by the result (for its lazy constraint forces): do not edit them afterwards.
    Returns the result."""
    model = snapshot(model)
    try:
        solver = METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"method: expected one of {sorted(METHODS)}, got {method!r}") from None
    if type(rank_tol) is not float or not val.MACHINE_EPSILON <= rank_tol < 1.0:
        rank_tol = val.relative_tolerance(rank_tol, "rank_tol")
    baumgarte = val.baumgarte_gains(baumgarte)
    if state is None:
        state = evaluate_constraints(model, q, v, t)
    p = ConstrainedProblem(model, q, v, tau, f_ext, t, state, stabilized_bias(state, v, baumgarte), rank_tol,
                           baumgarte)
    qdd, lam = solver(p)
    return ConstrainedDynamicsResult(qdd, lam, p, method)


def _spanning_forces(model, tau, tau_ind):
    """Spanning-tree forces with Gᵀτ = τ_ind: τ_ind on the independent coordinates."""
    if tau is not None:
        raise ValueError("tau, tau_ind: expected one of them (spanning-tree forces tau, or forces on the "
                         "independent coordinates tau_ind), got both")
    tree = cluster_tree(model)
    tau_ind = val.vector(tau_ind, tree.nyv, "tau_ind", batch_ok=False)
    tau = np.zeros(model.nv)
    tau[tree.independent_v_index] = tau_ind
    return tau


_INF = float("inf")  # (a module constant: one look-up less on the fast path than np.inf)
_CHECK = val.flag("check")
#: the default ``rank_tol``: the compiled direct method's rows selected once per model were
#: chosen with it (:data:`soadyn.kernels.direct.ROW_TOL`), so its plain call takes it only
_RANK_TOL = 1e-9


def _copy(x, given):
    """``x`` (validated from ``given``) as an array the caller cannot edit afterwards."""
    return x.copy() if x is given else x


def constrained_forward_dynamics(model, q, v, tau=None, method=None, *, tau_ind=None, f_ext=None, t=0.0,
                                 rank_tol=1e-9, baumgarte=None, check=True, residual_tol=1e-6):
    """Forward dynamics of a closed-chain system (cut-joint method, [Jain24], or constraint
    embedding, [Chignoli23]: the same result from every method).

    Parameters
    ----------
    model : Model with loop joints, couplings and/or user constraints.
    q : (nq,) configuration; v : (nv,) velocity (consistent with the constraints, see
        :func:`soadyn.close_loops`); None means zero.
    tau : (nv,) generalized forces at the spanning-tree joints [N m, N] (default zero).
    method : None (default: :func:`default_method`, the faster compiled method for the
        model: ``"direct"`` for a few loop rows and hardly any coupling, ``"embedding"``
        from about four geared joints or transmissions on (fewer on a larger robot), for
        chains of several loops and for
        symbolic constraints, else ``"augmented"``),
        ``"direct"`` (Lagrange multipliers; compiled, one kernel call, when every constraint
        is, else a KKT system solved in Python), ``"augmented"`` (O(N) sweeps and the
        operational-space compliance of the cut-joint nodes; M is never formed),
        ``"projection"``, or ``"embedding"`` (constraint embedding, [Chignoli23]: C-ABA over
        the cluster tree; for holonomic time-invariant constraints, raises ConstraintError
        otherwise).
    tau_ind : (nyv,) generalized forces on the independent coordinates ẏ of the cluster
        tree instead of ``tau`` (not both) [N m, N]; ``soadyn.cluster_tree(model).velocity_names``
        names its entries. Any spanning τ with Gᵀτ = τ_ind (G the explicit-form Jacobian,
        q̇ = G ẏ) gives the same motion; the one used is τ_ind on the independent
        coordinates and zero elsewhere (G's rows there are the identity). Needs a cluster
        tree (holonomic, time-invariant constraints whose joints are known; ConstraintError
        otherwise); the result equals ``soadyn.cluster_aba(model, y, ẏ, tau_ind)``.
    f_ext : optional (nbodies, 6) external spatial forces, body frames.
    t : time [s] for time-varying constraints.
    rank_tol : relative singular-value threshold for the rank of G_c, a number in [ε, 1)
        (ε the machine epsilon; default 1e-9), honoured by every method: singular values
        of G_c below ``rank_tol`` times the largest count as zero (the compiled direct
        method: rows whose component orthogonal to the rows kept is below ``rank_tol``
        times the largest row norm are dropped, and pivots of G_c M⁻¹ G_c* below
        max(1e-12, rank_tol²) times the largest). A row at most ``rank_tol`` times its own
        scale (the size of its terms before they cancel) constrains nothing and is dropped
        first, so a loop that adds no constraint gives the tree's accelerations. NaN, inf,
        values outside [ε, 1) and non-numbers raise naming ``rank_tol``.
    baumgarte : optional (α, β) [1/s], two finite non-negative gains: solve
        G_c θ̈ = 𝔘̊ − 2α𝔡̇ − β²𝔡 instead (drift stabilization when integrating); anything
        else raises naming ``baumgarte`` (:func:`soadyn.core.validation.baumgarte_gains`,
        the check ``simulate`` uses too).
    check : check that (q, v) satisfies the constraints (default True): raise
        ConstraintError naming the constraint and its residual when a position residual
        |𝔡| (holonomic rows) or a velocity residual |G_c v − 𝔘| exceeds ``residual_tol``
        (absolute, in each row's units: m, rad; m/s, rad/s). Both come with the constraint
        evaluation every method needs (one extra product G_c v). ``check=False`` skips it
        (e.g. a drifting state integrated with Baumgarte terms).
    residual_tol : the tolerance of the check (default 1e-6).

    Batches: with the compiled direct and embedding methods, ``q``, ``v``, ``tau`` (and
    ``f_ext``) may carry a leading batch dimension B; all states are evaluated by one
    multi-threaded kernel call and the result holds (B, ...) arrays (see
    :class:`CompiledDirectResult`, :class:`EmbeddingResult`).

    Returns
    -------
    ConstrainedDynamicsResult with ``qdd``, ``constraint_forces``, ``multipliers``,
    ``n_constraints``, ``constraint_rank`` (rank of G_c) and ``degrees_of_freedom``
    (nv − rank G_c) (the constraint forces, multipliers and ranks computed when first read).
    """
    try:  # the one model state of the call: snapshot(model), inlined (one Python call less)
        model = model._derived.model
    except AttributeError:  # no current derived data (or not a model): built, or the error that says so
        model = snapshot(model)
    # the common calls — one state, default options, the compiled direct or embedding
    # method (by default or by name) — go straight into their kernels; anything else, or
    # any doubt, takes the validated paths below
    if tau_ind is None and f_ext is None and baumgarte is None and type(rank_tol) is float \
            and rank_tol == _RANK_TOL and type(residual_tol) is float and 0.0 < residual_tol < _INF \
            and (check is True or check is False) and type(t) is float and -_INF < t < _INF:
        if method is None or method == "direct":
            fast = direct_fast(model, q, v, tau, residual_tol if check else _INF, method is None)
            if fast:  # (out, plain); None and NOT_THE_DEFAULT are false
                return CompiledDirectResult(model, fast[0], fast[1].tables, t, rank_tol)
            # the default known to be the embedding method: direct_fast says so at once on a
            # model with compiled constraint rows, a look-up says it on the others (Tello's)
            if method is None and check and (fast is NOT_THE_DEFAULT or _known_default_method(model) == "embedding"):
                result = _embedding_fast(model, q, v, tau, t, rank_tol, residual_tol)
                if result is not None:
                    return result
        elif method == "embedding" and check:
            result = _embedding_fast(model, q, v, tau, t, rank_tol, residual_tol)
            if result is not None:
                return result
    check, t = _CHECK(check), val.finite_scalar(t, "t")
    rank_tol = val.relative_tolerance(rank_tol, "rank_tol")
    baumgarte = val.baumgarte_gains(baumgarte)
    if method is None:
        method = default_method(model)
        if method == "embedding" and baumgarte is not None:  # Baumgarte terms: a cut-joint method
            method = "direct" if direct_tables(model) is not None else "augmented"
    if method == "embedding" and check and baumgarte is None:
        if type(residual_tol) is not float or not 0.0 < residual_tol < np.inf:
            residual_tol = residual_tolerance(residual_tol)
        result = _compiled_embedding(model, q, v, tau, tau_ind, f_ext, t, rank_tol, residual_tol)
        if result is not None:
            return result
    if method == "direct":
        tables = direct_tables(model)
        if tables is not None:
            if tau_ind is not None:
                tau = _spanning_forces(model, tau, tau_ind)
            elif tau is None:
                tau = np.zeros(np.shape(q)[:-1] + (model.nv,))
            if type(residual_tol) is not float or not 0.0 < residual_tol < np.inf:
                residual_tol = residual_tolerance(residual_tol)
            return _compiled_direct(model, tables, q, v, tau, f_ext, t, rank_tol, baumgarte, check, residual_tol)
    c = model.compiled
    q = _copy(val.vector(q, c.nq, "q", batch_ok=False), q)
    v = np.zeros(c.nv) if v is None else _copy(val.vector(v, c.nv, "v", batch_ok=False), v)
    if tau_ind is not None:
        tau = _spanning_forces(model, tau, tau_ind)
    else:
        tau = np.zeros(c.nv) if tau is None else _copy(val.vector(tau, c.nv, "tau", batch_ok=False), tau)
    f_ext = None if f_ext is None else _copy(val.external_forces(f_ext, c.nb, None), f_ext)
    state = evaluate_constraints(model, q, v, t)
    if check:
        check_residuals(state, v, residual_tol)
    return solve_constrained(model, q, v, tau, method, f_ext=f_ext, t=t, rank_tol=rank_tol,
                             baumgarte=baumgarte, state=state)
