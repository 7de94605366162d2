"""Closed-chain forward dynamics by the cut-joint method (seed 001; seed 004 §II-D).

The spanning-tree equations of motion with Lagrange multipliers (seed 001,
"Closed-chain Equations of Motion"):

    M θ̈ + C − G_c* λ = T,      G_c θ̈ = 𝔘̊,

so that G_c*λ is the generalized force the constraints apply. The methods share one
:class:`ConstrainedProblem` (the state, the constraint evaluation and, on demand, M,
C and the rank-revealing SVD of G_c) and are registered in ``METHODS``:

* ``"direct"`` — the KKT system [[M, G_c*], [G_c, 0]] [θ̈; −λ] = [T − C; 𝔘̊] (seed 001,
  "Direct solution method"; seed 004 §II-D, the Lagrange multiplier method), solved with
  scipy's symmetric-indefinite LDLᵀ;
* ``"projection"`` — a null-space basis X_c of G_c (G_c X_c = 0), θ̇ = θ̇_p + X_c θ̇_r and
  M_r θ̈_r = X_c*(T − C − M θ̈_p), M_r = X_c* M X_c (seed 001, "Projection method
  details"; seed 004 §II-D);
* ``"augmented"`` (default; seed 001, "Augmented algorithm overview" and "Low-cost
  recursive algorithms") — never forms M:

  1. free accelerations θ̈_f = M⁻¹(T − C) by one O(N) ABA sweep (``soadyn.aba``);
  2. 𝔡̈_f = G_c θ̈_f − 𝔘̊ and the constraint-space compliance G_c M⁻¹ G_c*, whose loop
     block is Q Λ Q* with Λ = B*ΩB the operational-space compliance of the cut-joint
     nodes (the O(N) Υ recursion, :func:`soadyn.operational_space_compliance`) and
     whose other rows (couplings, user constraints) come from one ABA sweep per row,
     θ̈ = M⁻¹G_row*;
  3. λ = −[G_c M⁻¹ G_c*]⁻¹ 𝔡̈_f on the row space of G_c (the least-norm λ below);
  4. correction accelerations θ̈_δ = M⁻¹G_c*λ by a second ABA sweep with the loop
     multipliers applied as node forces f_nd = Q*λ (:func:`correction_accelerations`),
     and θ̈ = θ̈_f + θ̈_δ;
* ``"embedding"`` — constraint embedding (seed 004): the constraints of each body cluster
  in explicit form q̇ = G ẏ, θ̈ = G ÿ + g, ÿ by C-ABA over the cluster tree for
  τ_ind = Gᵀ T (Algorithm 1, :mod:`soadyn.closed.embedding`); then the constraint
  force G_c*λ = M θ̈ + C − T by one RNEA pass (O(N)) and λ its least-norm multipliers
  below, so that the constraint forces are the cut-joint ones. Needs holonomic,
  time-invariant constraints whose joints are known (see :func:`soadyn.cluster_tree`)
  and a consistent state; Baumgarte stabilization does not apply (θ̈ = G ÿ + g
  satisfies G_c θ̈ = 𝔘̊ by construction: project the state instead).

Redundant constraints. G_c may have dependent rows (a planar loop closed by a spatial
joint, two loops sharing a constraint, ...). Every method works on the row space of
G_c = U_r Σ_r V_r* (SVD, rank r = number of singular values above ``rank_tol`` times
the largest): the independent constraints are U_r*G_c θ̈ = U_r*𝔘̊ and the multipliers
are the least-norm ones, λ ∈ range(G_c) = span U_r. The generalized constraint force
G_c*λ is unique in any case; the least-norm choice makes λ itself unique, so all methods
report the same λ (statically indeterminate components, e.g. the out-of-plane forces of
a planar loop, come out zero).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
from numba import njit
from scipy.linalg import lapack

from .. import _validation as val
from ..dynamics.aba import aba
from ..dynamics.crba import mass_matrix
from ..dynamics.oscm import operational_space_compliance
from ..dynamics.rnea import rnea
from .embedding import embedding_accelerations
from .kinematics import evaluate_constraints

__all__ = ["constrained_forward_dynamics", "ConstrainedDynamicsResult", "ConstrainedProblem", "RowSpace",
           "METHODS", "constraint_forces", "node_body_forces", "correction_accelerations",
           "constraint_space_compliance",
           "stabilized_bias"]


class RowSpace:
    """Rank-revealing SVD of G_c (m, nv): G_c = U_r diag(s) V_r*, rank r.

    Attributes: ``rank``, ``U`` (m, r), ``s`` (r,), ``Vt`` (r, nv) and ``null`` (nv, nv − r),
    an orthonormal basis X_c of the null space of G_c.
    """

    def __init__(self, G, rank_tol=1e-9):
        m, nv = G.shape
        if m == 0:
            self.rank = 0
            self.U, self.s, self.Vt = np.zeros((0, 0)), np.zeros(0), np.zeros((0, nv))
            self.null = np.eye(nv)
            return
        U, s, Vt, info = lapack.dgesdd(G, full_matrices=1)  # LAPACK directly: small matrices
        if info:
            raise np.linalg.LinAlgError(f"SVD of G_c did not converge (LAPACK info {info})")
        r = int(np.count_nonzero(s > rank_tol * s[0])) if s.size and s[0] > 0 else 0
        self.rank = r
        self.U, self.s, self.Vt = U[:, :r], s[:r], Vt[:r]
        self.null = Vt[r:].T

    def least_norm_solution(self, rhs):
        """The least-norm x with G x = rhs (rhs projected onto range(G))."""
        return self.Vt.T @ ((self.U.T @ rhs) / self.s)

    def least_norm_multipliers(self, generalized_force):
        """The least-norm λ with G*λ = generalized_force (its component in range(G*))."""
        return self.U @ ((self.Vt @ generalized_force) / self.s)


def stabilized_bias(state, v, baumgarte=None):
    """Right-hand side of G_c θ̈ = 𝔘̊ − 2α𝔡̇ − β²𝔡 (Baumgarte stabilization, seed 001
    "Augmented method comments": error control when integrating the DAE); 𝔡̇ = G v − 𝔘.
    ``baumgarte`` = (α, β) [1/s] or None for the plain 𝔘̊."""
    rhs = state.acceleration_bias
    if baumgarte is None:
        return rhs
    alpha, beta = baumgarte
    return rhs - 2.0 * alpha * state.velocity_residual(v) - beta**2 * state.residual


class ConstrainedProblem:
    """One constrained forward-dynamics problem: the inputs, the constraint evaluation
    (``state``), the acceleration right-hand side ``rhs`` and, computed on first use, the
    spanning-tree mass matrix, bias forces and the row space of G_c."""

    def __init__(self, model, q, v, tau, f_ext, t, state, rhs, rank_tol, baumgarte=None):
        self.model, self.q, self.v, self.tau, self.f_ext, self.t = model, q, v, tau, f_ext, t
        self.state, self.rhs, self.rank_tol, self.baumgarte = state, rhs, rank_tol, baumgarte

    @cached_property
    def mass_matrix(self):
        """M(θ) (nv, nv) of the spanning tree."""
        return mass_matrix(self.model, self.q)

    @cached_property
    def bias_force(self):
        """C(θ, θ̇) − Σ J_kᵀ f_ext(k) (gravity included): the RNEA at zero acceleration."""
        return rnea(self.model, self.q, self.v, np.zeros(self.model.nv), self.f_ext)

    @cached_property
    def row_space(self):
        return RowSpace(self.state.G, self.rank_tol)


def _direct(p):
    """KKT system on the independent constraints Ĝ = U_r*G_c (seed 001, direct method)."""
    rs = p.row_space
    nv, r = p.model.nv, rs.rank
    Gh = rs.U.T @ p.state.G
    K = np.zeros((nv + r, nv + r))
    K[:nv, :nv] = p.mass_matrix
    K[:nv, nv:] = Gh.T
    K[nv:, :nv] = Gh
    b = np.concatenate([p.tau - p.bias_force, rs.U.T @ p.rhs])
    x, info = lapack.dsysv(K, b)[2:]  # symmetric-indefinite LDLᵀ
    if info:
        raise np.linalg.LinAlgError(f"direct method: the KKT matrix is singular (LAPACK dsysv info {info})")
    return x[:nv], -(rs.U @ x[nv:])


def _projection(p):
    """Projected equations M_r θ̈_r = X_c*(T − C − M θ̈_p) (seed 001, projection method)."""
    rs = p.row_space
    M = p.mass_matrix
    X = rs.null
    qdd_p = rs.least_norm_solution(p.rhs)
    force = p.tau - p.bias_force
    if X.shape[1]:
        Mr = X.T @ M @ X
        qdd_r, info = lapack.dposv(Mr, X.T @ (force - M @ qdd_p))[1:]
        if info:
            raise np.linalg.LinAlgError(f"projection method: M_r is not positive definite (LAPACK dposv info {info})")
        qdd = qdd_p + X @ qdd_r
    else:
        qdd = qdd_p
    return qdd, rs.least_norm_multipliers(M @ qdd - force)


def constraint_space_compliance(p):
    """G_c M⁻¹ G_c* (m, m) without M: Q Λ Q* for the loop rows (Λ: O(N) operational-space
    compliance of the cut-joint nodes, seed 001) and one ABA sweep per other row."""
    state, cs = p.state, p.state.constraints
    G = state.G
    m, m_loop = G.shape[0], cs.m_loop
    A = np.empty((m, m))
    if m_loop:
        Lam = operational_space_compliance(p.model, p.q, cs.node_frames)
        Q = state.loop_selection()
        A[:m_loop, :m_loop] = Q @ Lam @ Q.T
    zero_v = np.zeros(p.model.nv)
    for r in range(m_loop, m):
        column = G @ aba(p.model, p.q, zero_v, G[r], gravity=False)  # G_c M⁻¹ G_r*
        A[:, r] = column
        A[r, :] = column
    return A


def _augmented(p):
    """Augmented method (seed 001): θ̈ = θ̈_f + M⁻¹G_c*λ, λ = −[G_c M⁻¹ G_c*]⁻¹ 𝔡̈_f."""
    rs = p.row_space
    qdd_free = aba(p.model, p.q, p.v, p.tau, p.f_ext)
    if rs.rank == 0:
        return qdd_free, np.zeros(p.state.G.shape[0])
    dd_free = p.state.G @ qdd_free - p.rhs
    # the independent constraints U_r*G_c: λ = U_r μ is the least-norm multiplier
    U = rs.U
    reduced = U.T @ constraint_space_compliance(p) @ U
    mu, info = lapack.dposv(reduced, -(U.T @ dd_free))[1:]
    if info:
        raise np.linalg.LinAlgError(f"augmented method: G_c M⁻¹ G_c* is singular on the row space of G_c "
                                    f"(LAPACK dposv info {info}); increase rank_tol")
    lam = U @ mu
    return qdd_free + correction_accelerations(p.model, p.q, p.state, lam), lam


def _embedding(p):
    """Constraint embedding (seed 004): θ̈ = G ÿ + g with ÿ from C-ABA, then the least-norm
    λ with G_c*λ = RNEA(θ, θ̇, θ̈) − T (the generalized constraint force, one O(N) pass)."""
    if p.baumgarte is not None:
        raise ValueError("baumgarte: method='embedding' satisfies G_c q̈ = 𝔘̊ exactly (q̈ = G ÿ + g) and takes "
                         "no Baumgarte terms; use a cut-joint method, or coordinate projection when integrating")
    qdd = embedding_accelerations(p.model, p.q, p.v, p.tau, p.f_ext, p.state)
    force = rnea(p.model, p.q, p.v, qdd, p.f_ext) - p.tau
    return qdd, p.row_space.least_norm_multipliers(force)


#: forward-dynamics methods: name -> function(ConstrainedProblem) -> (qdd, λ)
METHODS = {"augmented": _augmented, "direct": _direct, "projection": _projection, "embedding": _embedding}


def constraint_forces(state, lam):
    """Physical constraint forces from the multipliers λ (m,).

    Returns a dict by constraint name:

    * loop joint: (6,) spatial force [n; f] the cut joint applies to the **successor**
      body, in the successor frame at its origin [N m, N] (seed 001: f_nd = Q*λ; the
      predecessor receives the opposite force);
    * coupling: the generalized force the transmission applies to the successor's joint
      [N m or N] (the predecessor's joints receive −ratio times it);
    * user constraint: its multipliers (n,); G_c*λ is their generalized force.
    """
    out = {}
    sel = state.node_selection
    for b in state.constraints.blocks:
        lam_b = lam[b.rows]
        if b.kind == "loop":
            out[b.name] = sel[b.rows, 6:].T @ lam_b
        elif b.kind == "coupling":
            out[b.name] = -float(lam_b[0])
        else:
            out[b.name] = lam_b.copy()
    return out


def node_body_forces(model, state, lam):
    """Spatial forces (nbodies, 6) on the bodies (body frames) that the loop multipliers
    apply at the cut-joint nodes: f_nd = Q*λ per node, carried from each node frame to
    its body frame (the pick-off B of seed 001, J* = H φ B). Nodes on the world drop out."""
    f = np.zeros((model.nbodies, 6))
    cs = state.constraints
    if cs.m_loop:
        _add_node_forces(state.node_selection, cs.loop_of_row, lam, cs.node_body, cs.node_rotation,
                         cs.node_translation, f)
    return f


@njit(cache=True)
def _add_node_forces(sel, loop_of_row, lam, node_body, node_R, node_p, f):
    """f[body] += φ(body, node) Q*λ for both nodes of every loop row."""
    for r in range(sel.shape[0]):
        for side in range(2):
            node = 2 * loop_of_row[r] + side
            b = node_body[node]
            if b < 0:
                continue
            x = lam[r]
            n0, n1, n2 = sel[r, 6 * side] * x, sel[r, 6 * side + 1] * x, sel[r, 6 * side + 2] * x
            g0, g1, g2 = sel[r, 6 * side + 3] * x, sel[r, 6 * side + 4] * x, sel[r, 6 * side + 5] * x
            R = node_R[node]
            l0 = R[0, 0] * g0 + R[0, 1] * g1 + R[0, 2] * g2
            l1 = R[1, 0] * g0 + R[1, 1] * g1 + R[1, 2] * g2
            l2 = R[2, 0] * g0 + R[2, 1] * g1 + R[2, 2] * g2
            p0, p1, p2 = node_p[node, 0], node_p[node, 1], node_p[node, 2]
            f[b, 0] += R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2 + p1 * l2 - p2 * l1
            f[b, 1] += R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2 + p2 * l0 - p0 * l2
            f[b, 2] += R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2 + p0 * l1 - p1 * l0
            f[b, 3] += l0
            f[b, 4] += l1
            f[b, 5] += l2


def correction_accelerations(model, q, state, lam):
    """θ̈_δ = M⁻¹ G_c*λ (seed 001) by one O(N) ABA sweep: the loop multipliers enter as
    node forces (``f_ext``), the other rows as generalized forces G_rows*λ; zero velocity
    and no gravity leave only the constraint forces."""
    m_loop = state.constraints.m_loop
    tau = state.G[m_loop:].T @ lam[m_loop:]
    return aba(model, q, np.zeros(model.nv), tau, f_ext=node_body_forces(model, state, lam), gravity=False)


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
    """Forward dynamics of a closed-chain system (cut-joint method, seed 001, or constraint
    embedding, seed 004: the same result from every method).

    Parameters
    ----------
    model : Model with loop joints, couplings and/or user constraints.
    q : (nq,) configuration; v : (nv,) velocity (consistent with the constraints, see
        :func:`soadyn.close_loops`).
    tau : (nv,) generalized forces at the spanning-tree joints [N m, N] (default zero).
    method : ``"augmented"`` (default, O(N) sweeps and the operational-space compliance of
        the cut-joint nodes; M is never formed), ``"direct"`` (KKT), ``"projection"``, or
        ``"embedding"`` (constraint embedding, seed 004: C-ABA over the cluster tree; for
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
