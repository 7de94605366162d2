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
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core import validation as val
from ..dynamics.crba import mass_matrix
from ..dynamics.rnea import rnea
from .cut_joint import CUT_JOINT_METHODS, RowSpace, constraint_forces, stabilized_bias
from .embedding.algorithms import embedding_accelerations
from .kinematics import evaluate_constraints

__all__ = ["constrained_forward_dynamics", "ConstrainedDynamicsResult", "ConstrainedProblem", "METHODS",
           "solve_constrained"]


class ConstrainedProblem:
    """One constrained forward-dynamics problem: the inputs, the constraint evaluation
    (``state``), the acceleration right-hand side ``rhs`` and, computed on first use, the
    spanning-tree mass matrix, bias forces and the row space of G_c. The methods run the
    tree algorithms on ``tree``, the explicit spanning tree (``model.spanning_tree()``): the
    tree functions refuse the constrained model itself."""

    def __init__(self, model, q, v, tau, f_ext, t, state, rhs, rank_tol, baumgarte=None):
        self.model, self.q, self.v, self.tau, self.f_ext, self.t = model, q, v, tau, f_ext, t
        self.state, self.rhs, self.rank_tol, self.baumgarte = state, rhs, rank_tol, baumgarte
        self.tree = model.spanning_tree()

    @cached_property
    def mass_matrix(self):
        """M(θ) (nv, nv) of the spanning tree."""
        return mass_matrix(self.tree, self.q)

    @cached_property
    def bias_force(self):
        """C(θ, θ̇) − Σ J_kᵀ f_ext(k) (gravity included): the RNEA at zero acceleration."""
        return rnea(self.tree, self.q, self.v, np.zeros(self.model.nv), self.f_ext)

    @cached_property
    def row_space(self):
        return RowSpace(self.state.G, self.rank_tol)


def _embedding(p):
    """Constraint embedding ([Chignoli23]): θ̈ = G ÿ + g with ÿ from C-ABA, then the least-norm
    λ with G_c*λ = RNEA(θ, θ̇, θ̈) − T (the generalized constraint force, one O(N) pass)."""
    if p.baumgarte is not None:
        raise ValueError("baumgarte: method='embedding' satisfies G_c q̈ = 𝔘̊ exactly (q̈ = G ÿ + g) and takes "
                         "no Baumgarte terms; use a cut-joint method, or coordinate projection when integrating")
    qdd = embedding_accelerations(p.model, p.q, p.v, p.tau, p.f_ext, p.state)
    force = rnea(p.tree, p.q, p.v, qdd, p.f_ext) - p.tau
    return qdd, p.row_space.least_norm_multipliers(force)



#: forward-dynamics methods: name -> function(ConstrainedProblem) -> (qdd, λ)
METHODS = {**CUT_JOINT_METHODS, "embedding": _embedding}


class ConstrainedDynamicsResult:
    """Output of :func:`constrained_forward_dynamics`.

    Attributes
    ----------
    qdd : (nv,) accelerations of all spanning-tree coordinates.
    multipliers : (m,) λ (least norm when G_c is rank deficient).
    constraint_forces : dict, see :func:`constraint_forces`.
    generalized_constraint_force : (nv,) G_c*λ.
    n_constraints : m, rows of G_c; n_independent : rank of G_c.
    method : the method used; state : the :class:`ConstraintState`.
    """

    def __init__(self, qdd, lam, state, rank, method):
        self.qdd = qdd
        self.multipliers = lam
        self.state = state
        self.method = method
        self.n_constraints = state.G.shape[0]
        self.n_independent = rank
        self.generalized_constraint_force = state.G.T @ lam
        self.constraint_forces = constraint_forces(state, lam)

    @property
    def degrees_of_freedom(self):
        """nv − rank G_c."""
        return self.qdd.shape[0] - self.n_independent

    def __repr__(self):
        return (f"<ConstrainedDynamicsResult method={self.method!r} m={self.n_constraints} "
                f"independent={self.n_independent} dof={self.degrees_of_freedom}>")


def solve_constrained(model, q, v, tau, method="augmented", *, f_ext=None, t=0.0, rank_tol=1e-9,
                      baumgarte=None, state=None):
    """:func:`constrained_forward_dynamics` without input conversion; ``state`` may be a
    precomputed evaluation at (q, v, t). Returns the result."""
    try:
        solver = METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"method: expected one of {sorted(METHODS)}, got {method!r}") from None
    if state is None:
        state = evaluate_constraints(model, q, v, t)
    p = ConstrainedProblem(model, q, v, tau, f_ext, t, state, stabilized_bias(state, v, baumgarte), rank_tol,
                           baumgarte)
    qdd, lam = solver(p)
    return ConstrainedDynamicsResult(qdd, lam, state, p.row_space.rank, method)


def constrained_forward_dynamics(model, q, v, tau=None, method="augmented", *, f_ext=None, t=0.0,
                                 rank_tol=1e-9, baumgarte=None):
    """Forward dynamics of a closed-chain system (cut-joint method, [Jain24], or constraint
    embedding, [Chignoli23]: the same result from every method).

    Parameters
    ----------
    model : Model with loop joints, couplings and/or user constraints.
    q : (nq,) configuration; v : (nv,) velocity (consistent with the constraints, see
        :func:`soadyn.close_loops`).
    tau : (nv,) generalized forces at the spanning-tree joints [N m, N] (default zero).
    method : ``"augmented"`` (default, O(N) sweeps and the operational-space compliance of
        the cut-joint nodes; M is never formed), ``"direct"`` (KKT), ``"projection"``, or
        ``"embedding"`` (constraint embedding, [Chignoli23]: C-ABA over the cluster tree; for
        holonomic time-invariant constraints, raises ConstraintError otherwise).
    f_ext : optional (nbodies, 6) external spatial forces, body frames.
    t : time [s] for time-varying constraints.
    rank_tol : relative singular-value threshold for the rank of G_c.
    baumgarte : optional (α, β) [1/s]: solve G_c θ̈ = 𝔘̊ − 2α𝔡̇ − β²𝔡 instead (drift
        stabilization when integrating).

    Returns
    -------
    ConstrainedDynamicsResult with ``qdd``, ``constraint_forces``, ``multipliers``,
    ``n_constraints``, ``n_independent``.
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    v = val.vector(v, c.nv, "v", batch_ok=False)
    tau = np.zeros(c.nv) if tau is None else val.vector(tau, c.nv, "tau", batch_ok=False)
    f_ext = val.external_forces(f_ext, c.nb, None)
    return solve_constrained(model, q, v, tau, method, f_ext=f_ext, t=t, rank_tol=rank_tol,
                             baumgarte=baumgarte)
