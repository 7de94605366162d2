"""First derivatives of the closed-chain forward dynamics of the cut-joint methods: θ̈ of the
KKT system ([Jain24], "Augmented method"; ``docs/kkt_derivatives.md``, eq. KD-1–KD-5)

    M(θ) θ̈ + C(θ, θ̇) = T + G_c*(θ) λ,      G_c(θ) θ̈ = 𝔘̊(θ, θ̇),

differentiated with respect to θ (tangent space), θ̇ and T. The tree terms are the spanning
tree's analytical derivatives (:func:`~soadyn.rnea_derivatives` at the KKT θ̈); the
constraint terms are the change of the rows G_c and of the bias 𝔘̊: with respect to θ̇ exact
by polarization of the quadratic bias, with respect to θ one central difference of the rows
per tangent direction (:func:`~soadyn.closed.embedding.derivatives.constraint_rows_rate`,
shared with the cluster derivatives). The (possibly rank-deficient) KKT system is solved on
the null space of G_c, so that redundant rows (planar loops) need no special case. User
constraints take part when time-invariant with an analytic Jacobian and bias.

Python over the compiled building blocks (the direct method, the tree derivatives, the
constraint rows); single states only.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ..core import validation as val
from ..dynamics.derivatives import rnea_derivatives
from ..dynamics.rnea import rnea
from .constraint_set import constraint_set
from .cut_joint import RowSpace
from .embedding.derivatives import constraint_rows_rate
from .forward import constrained_forward_dynamics
from .kinematics import evaluate_constraint_set

__all__ = ["constrained_forward_dynamics_derivatives"]


def _velocity_rates(cs, q, v):
    """∂𝔘̊/∂θ̇ (m, nv), column k = ½(𝔘̊(θ, θ̇ + e_k) − 𝔘̊(θ, θ̇ − e_k)): exact, the bias of
    scleronomic constraints is a quadratic form in θ̇ (eq. KD-3)."""
    nv = v.shape[0]
    out = np.empty((cs.m, nv))
    for k in range(nv):
        w = np.zeros(nv)
        w[k] = 1.0
        plus = evaluate_constraint_set(cs, q, v + w, 0.0, True).acceleration_bias
        minus = evaluate_constraint_set(cs, q, v - w, 0.0, True).acceleration_bias
        out[:, k] = 0.5 * (plus - minus)
    return out


def _check_user_constraint(uc):
    """User constraints enter through the same row evaluations when they are time-invariant
    and give their Jacobian and acceleration bias analytically (e.g.
    :func:`~soadyn.symbolic_constraint`): a bias that is itself a finite difference would be
    differenced again (eq. KD-3 and the θ-rates), and t is not an argument here."""
    if uc.time_dependent or uc.jacobian_function is None or getattr(uc, "bias_function", None) is None:
        raise NotImplementedError(
            f"model: constraint {uc.name!r} is a user constraint with "
            f"{'an explicit time dependence' if uc.time_dependent else 'a numerically differentiated Jacobian or bias'}"
            "; constrained_forward_dynamics_derivatives takes loop joints, couplings, transmissions and time-invariant "
            "user constraints with an analytic jacobian and bias (e.g. sd.symbolic_constraint)")


def constrained_forward_dynamics_derivatives(model, q, v, tau, *, check=True, residual_tol=1e-6):
    """Derivatives of the closed-chain accelerations θ̈ = ``constrained_forward_dynamics(model,
    q, v, tau).qdd`` of the cut-joint methods (the KKT system, ``docs/kkt_derivatives.md``):

        [M  −G_c*] [∂θ̈]   [−∂ID/∂x|θ̈ + ∂(G_c*λ)/∂x|λ + ∂T/∂x]
        [G_c   0 ] [∂λ ] = [−∂(G_c θ̈)/∂x|θ̈ + ∂𝔘̊/∂x         ]          (KD-2)

    for x = θ, θ̇, T, with ID(θ, θ̇, θ̈) = M θ̈ + C the spanning tree's inverse dynamics and λ
    the multipliers; solved on the null space X_c of G_c (eq. KD-4), so that rank-deficient
    G_c (redundant loop rows) is handled and ∂θ̈ is unique although λ is not. In particular
    ∂θ̈/∂T = X_c (X_c* M X_c)⁻¹ X_c*.

    Parameters
    ----------
    model : Model closed by loop joints, couplings and/or transmissions, and user
        constraints that are time-invariant with an analytic ``jacobian`` and ``bias`` (e.g.
        :func:`~soadyn.symbolic_constraint`); other user constraints raise
        NotImplementedError.
    q : (nq,) configuration [rad, m]; v : (nv,) velocities; tau : (nv,) generalized
        forces T [N m, N]. Single states only (a batch raises ValueError).
    check, residual_tol : as :func:`~soadyn.constrained_forward_dynamics`: by default
        (q, v) must satisfy the constraints to ``residual_tol``. The derivatives are those
        of the KKT θ̈, which is defined off the constraint manifold as well (``check=False``).

    Derivatives with respect to q are taken in the tangent space, as for trees (column k is
    d/dε θ̈(q ⊕ ε e_k), q ⊕ d = :func:`~soadyn.integrate`); row i, column j holds
    ∂θ̈_i/∂x_j. The θ-derivative of the constraint rows is a central difference (relative
    error ~1e-10); everything else is analytical.

    Returns ``(dqdd_dq, dqdd_dv, dqdd_dtau)``, each (nv, nv); ``dqdd_dtau`` symmetric
    positive semi-definite. Raises ``numpy.linalg.LinAlgError`` when the mass matrix
    restricted to the null space of G_c is not positive definite.
    """
    nv = model.nv
    if np.ndim(q) == 2 or np.ndim(v) == 2 or np.ndim(tau) == 2:
        raise ValueError(f"q, v, tau: expected single states of shapes ({model.nq},), ({nv},), ({nv},) — the "
                         f"derivatives take no batches (loop over the states) — got {np.shape(q)}, {np.shape(v)}, "
                         f"{np.shape(tau)}")
    q = val.vector(q, model.nq, "q", batch_ok=False)
    v = val.vector(v, nv, "v", batch_ok=False)
    tau = val.vector(tau, nv, "tau", batch_ok=False)
    cs = constraint_set(model)
    for blk in cs.user_blocks:
        _check_user_constraint(blk.source)
    a = constrained_forward_dynamics(model, q, v, tau, method="direct", check=check, residual_tol=residual_tol).qdd
    st = evaluate_constraint_set(cs, q, v, 0.0, True)
    rows = RowSpace(st.G, row_scale=st.row_scale)
    tree = model.spanning_tree()
    dID_dq, dID_dv, M = rnea_derivatives(tree, q, v, a)  # eq. KD-1, at the KKT θ̈
    # the least-norm λ with G_c*λ = ID(θ, θ̇, θ̈) − T, as constrained_forward_dynamics's (any λ
    # would do, see docs/kkt_derivatives.md; this one costs an RNEA pass, not a second SVD)
    lam = rows.least_norm_multipliers(rnea(tree, q, v, a) - tau)
    # θ-columns of the constraint terms (eq. KD-3): one central difference of the rows each
    rhs_q = -dID_dq
    con_q = np.empty((cs.m, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = 1.0
        dG, dbias = constraint_rows_rate(cs, q, v, e)
        rhs_q[:, k] += dG.T @ lam
        con_q[:, k] = dbias - dG @ a
    con_v = _velocity_rates(cs, q, v)
    # the null-space solution (eq. KD-4): ∂θ̈ = G_c⁺ r₂ + X_c (X_c* M X_c)⁻¹ X_c* (r₁ − M G_c⁺ r₂)
    X = rows.null
    part_q, part_v = (rows.Vt.T @ ((rows.U.T @ r) / rows.s[:, None]) for r in (con_q, con_v))  # G_c⁺ r₂
    d = X.shape[1]
    if d == 0:
        return part_q, part_v, np.zeros((nv, nv))
    XMX = X.T @ M @ X
    rhs = np.hstack([np.eye(d), X.T @ (rhs_q - M @ part_q), X.T @ (-dID_dv - M @ part_v)])
    _, Z, info = lapack.dposv(XMX, rhs)  # one Cholesky factorization, three right sides
    if info:
        raise np.linalg.LinAlgError(f"q: the mass matrix on the null space of G_c, X_c* M X_c, is not positive "
                                    f"definite at this configuration (LAPACK dposv info {info})")
    dtau = X @ Z[:, :d] @ X.T
    return part_q + X @ Z[:, d:d + nv], part_v + X @ Z[:, d + nv:], 0.5 * (dtau + dtau.T)
