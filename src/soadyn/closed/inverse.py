"""Closed-chain inverse dynamics ([Chignoli23, §II-C], projected RNEA; [Jain24]).

Given a motion consistent with the constraints, the spanning-tree RNEA gives the
generalized forces τ_tree = M θ̈ + C that the tree joints would need without the
constraints. With only the joints in the actuated set A driven (τ = S_A τ_A) the
constraint forces supply the rest:

    S_A τ_A + G_c*λ = τ_tree.

Multiplying by the null-space basis X_c* (G_c X_c = 0) removes λ:

    (X_c* S_A) τ_A = X_c* τ_tree.

When the actuated joints are the independent coordinates of an explicit constraint
q̇ = G y ([Chignoli23, eq. 3], X_c = G with rows I at A), X_c*S_A = I and this is the seed's
projected RNEA τ_ind = Gᵀτ. With more actuators than degrees of freedom (redundant
actuation) the system is underdetermined: the result minimises τ_Aᵀ W τ_A (``weights``
W = diag(w), default the identity: least-norm torques). With fewer, the motion must be
one the actuators can produce, else an error names the residual. λ is then the
least-norm solution of G_c*λ = τ_tree − S_A τ_A, as in the forward dynamics.
"""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..dynamics.rnea import rnea
from .assembly import independent_velocity_indices
from .cut_joint import RowSpace, constraint_forces
from .kinematics import check_residuals, evaluate_constraints

__all__ = ["constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]


class ConstrainedInverseDynamicsResult:
    """Output of :func:`constrained_inverse_dynamics`.

    Attributes: ``tau`` (nv,) generalized forces, nonzero only at the actuated
    coordinates; ``tau_actuated`` (n_A,) and ``actuated`` (n_A,) their velocity indices;
    ``qdd`` (nv,) the accelerations of all coordinates; ``multipliers`` λ (m,);
    ``constraint_forces`` (see :func:`soadyn.closed.forward.constraint_forces`);
    ``n_constraints`` the rows of G_c, ``constraint_rank`` its rank and
    ``degrees_of_freedom`` nv − rank G_c (the former ``n_independent``, the rank, is gone:
    reading it raises AttributeError naming both).
    """

    def __init__(self, tau, actuated, qdd, lam, state, rank):
        self.tau = tau
        self.actuated = actuated
        self.tau_actuated = tau[actuated]
        self.qdd = qdd
        self.multipliers = lam
        self.constraint_forces = constraint_forces(state, lam)
        self.n_constraints = state.G.shape[0]
        self.constraint_rank = rank
        self.degrees_of_freedom = qdd.shape[0] - rank
        self.state = state

    @property
    def n_independent(self):
        raise AttributeError("n_independent: removed, it was the rank of G_c; read constraint_rank (rank of G_c, "
                             "the independent constraint rows) or degrees_of_freedom (nv - rank G_c)")


def constrained_inverse_dynamics(model, q, v, qdd=None, *, qdd_independent=None, independent=None,
                                 actuated=None, weights=None, f_ext=None, t=0.0, rank_tol=1e-9, tol=1e-8,
                                 check=True, residual_tol=1e-6):
    """Generalized forces at the actuated joints that produce a constrained motion.

    Parameters
    ----------
    model : Model with constraints; q (nq,), v (nv,) a consistent state (v None means zero).
    qdd : (nv,) accelerations of all coordinates, consistent with G_c q̈ = 𝔘̊; or
    qdd_independent : accelerations of the ``independent`` coordinates (joint names or
        velocity indices, default the URDF+ independent joints); the others follow from
        the constraints (they must be determined uniquely).
    actuated : joint names / velocity indices of the driven joints (default: the
        independent coordinates, or every joint when none is marked).
    weights : optional (n_A,) positive weights w: minimise Σ w τ_A² for redundant actuation.
    f_ext : optional (nbodies, 6) external forces; t : time [s].
    rank_tol : relative singular-value threshold for the rank of G_c, in [ε, 1) (as
        :func:`~soadyn.closed.forward.constrained_forward_dynamics`'s).
    tol : relative tolerance of the consistency checks of the accelerations and torques.
    check : check that (q, v) satisfies the constraints (default True): ConstraintError
        naming the constraint and its residual when a position residual |𝔡| or a velocity
        residual |G_c v − 𝔘| exceeds ``residual_tol`` (absolute: m, rad; m/s, rad/s;
        default 1e-6); ``check=False`` skips it.

    Returns
    -------
    ConstrainedInverseDynamicsResult
    """
    c = val.model_argument(model).compiled
    rank_tol = val.relative_tolerance(rank_tol, "rank_tol")
    q = val.vector(q, c.nq, "q", batch_ok=False)
    v = np.zeros(c.nv) if v is None else val.vector(v, c.nv, "v", batch_ok=False)
    f_ext = val.external_forces(f_ext, c.nb, None)
    state = evaluate_constraints(model, q, v, t)
    if check:
        check_residuals(state, v, residual_tol)
    G, ub = state.G, state.acceleration_bias
    rs = RowSpace(G, rank_tol, state.row_scale)
    if (qdd is None) == (qdd_independent is None):
        raise ValueError("qdd, qdd_independent: give exactly one of them")
    if qdd is None:
        ind = independent_velocity_indices(model, independent)
        a_ind = val.vector(qdd_independent, ind.size, "qdd_independent", batch_ok=False)
        dep = np.setdiff1d(np.arange(c.nv), ind)
        Gd = G[:, dep]
        if np.linalg.matrix_rank(Gd, tol=rank_tol * max(1.0, np.abs(G).max(initial=0.0))) < dep.size:
            raise ValueError(f"independent: the coordinates {list(ind)} do not determine the dependent "
                             f"accelerations (G_c restricted to the {dep.size} dependent columns is rank deficient)")
        qdd = np.zeros(c.nv)
        qdd[ind] = a_ind
        qdd[dep] = np.linalg.lstsq(Gd, ub - G[:, ind] @ a_ind, rcond=None)[0]
    else:
        qdd = val.vector(qdd, c.nv, "qdd", batch_ok=False)
    viol = np.abs(G @ qdd - ub).max(initial=0.0)
    scale = 1.0 + np.abs(ub).max(initial=0.0) + np.abs(G).max(initial=0.0) * np.abs(qdd).max(initial=0.0)
    if viol > tol * scale:
        raise ValueError(f"qdd: the accelerations violate the constraints G_c q̈ = 𝔘̊ by {viol:.3e}")

    if actuated is None:
        act = independent_velocity_indices(model, independent)
        if act.size == 0:
            act = np.arange(c.nv)
    else:
        act = independent_velocity_indices(model, actuated)
    tau_tree = rnea(model.spanning_tree(), q, v, qdd, f_ext)
    X = rs.null
    B = X.T[:, act]
    r = X.T @ tau_tree
    if weights is None:
        w_isqrt = np.ones(act.size)
    else:
        w = val.vector(weights, act.size, "weights", batch_ok=False)
        if np.any(w <= 0):
            raise ValueError(f"weights: expected positive weights, got {w}")
        w_isqrt = 1.0 / np.sqrt(w)
    tau_a = w_isqrt * np.linalg.lstsq(B * w_isqrt, r, rcond=None)[0]
    miss = np.abs(B @ tau_a - r).max(initial=0.0)
    if miss > tol * (1.0 + np.abs(tau_tree).max(initial=0.0)):
        raise ValueError(f"actuated: the joints {list(act)} cannot produce this motion (under-actuated; "
                         f"unbalanced generalized force {miss:.3e})")
    tau = np.zeros(c.nv)
    tau[act] = tau_a
    lam = rs.least_norm_multipliers(tau_tree - tau)
    return ConstrainedInverseDynamicsResult(tau, act, qdd, lam, state, rs.rank)
