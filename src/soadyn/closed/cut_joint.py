"""Closed-chain forward dynamics by the cut-joint method ([Jain24]; [Chignoli23, §II-D]).

The spanning-tree equations of motion with Lagrange multipliers ([Jain24],
"Closed-chain Equations of Motion"):

    M θ̈ + C − G_c* λ = T,      G_c θ̈ = 𝔘̊,

so that G_c*λ is the generalized force the constraints apply. Each method takes one
:class:`~soadyn.closed.forward.ConstrainedProblem` (the state, the constraint evaluation,
the explicit spanning tree and, on demand, M, C and the rank-revealing SVD of G_c) and
returns (θ̈, λ), λ possibly as a callable evaluated on first read (the protocol of
:mod:`soadyn.closed.forward`):

* ``"direct"`` — the KKT system [[M, G_c*], [G_c, 0]] [θ̈; −λ] = [T − C; 𝔘̊] ([Jain24],
  "Direct solution method"; [Chignoli23, §II-D], the Lagrange multiplier method),
  solved with LAPACK's symmetric-indefinite LDLᵀ;
* ``"projection"`` — a null-space basis X_c of G_c (G_c X_c = 0), θ̇ = θ̇_p + X_c θ̇_r and
  M_r θ̈_r = X_c*(T − C − M θ̈_p), M_r = X_c* M X_c ([Jain24], "Projection method
  details"; [Chignoli23, §II-D]);
* ``"augmented"`` ([Jain24], "Augmented algorithm overview" and "Low-cost recursive
  algorithms") — never forms M:

  1. free accelerations θ̈_f = M⁻¹(T − C) by one O(N) ABA sweep;
  2. 𝔡̈_f = G_c θ̈_f − 𝔘̊ and the constraint-space compliance G_c M⁻¹ G_c*, whose loop
     block is Q Λ Q* with Λ = ℬ*Ωℬ the operational-space compliance of the cut-joint
     nodes (the O(N) Υ recursion) and whose other rows (couplings, user constraints)
     come from one ABA sweep per row, θ̈ = M⁻¹G_row*;
  3. λ = −[G_c M⁻¹ G_c*]⁻¹ 𝔡̈_f on the row space of G_c (the least-norm λ below);
  4. correction accelerations θ̈_δ = M⁻¹G_c*λ by a second ABA sweep with the loop
     multipliers applied as node forces f_nd = Q*λ (:func:`correction_accelerations`),
     and θ̈ = θ̈_f + θ̈_δ.

Redundant constraints. G_c may have dependent rows (a planar loop closed by a spatial
joint, two loops sharing a constraint, ...). Every method works on the row space of
G_c = U_r Σ_r V_r* (SVD, rank r = number of singular values above ``rank_tol`` times the
largest), after the rows that constrain nothing are set to zero: a row whose norm is at
most ``rank_tol`` times its scale (the size of its terms before they cancel,
``ConstraintState.row_scale``) is rounding — a spherical loop at the centre of a
spherical joint has G_c ≈ 1e-17, and without this test the relative rank would count it
as three constraints. A vacuous loop thus gives the tree's accelerations, and a partly
vacuous one the constraints it does make. The independent constraints are
U_r*G_c θ̈ = U_r*𝔘̊ and the multipliers are
the least-norm ones, λ ∈ range(G_c) = span U_r. The generalized constraint force G_c*λ
is unique in any case; the least-norm choice makes λ itself unique, so all methods
report the same λ (statically indeterminate components, e.g. the out-of-plane forces of
a planar loop, come out zero).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ..dynamics.aba import aba
from ..kernels.loops import add_node_forces
from ..dynamics.oscm import operational_space_compliance

__all__ = ["RowSpace", "CUT_JOINT_METHODS", "constraint_forces", "node_body_forces", "correction_accelerations",
           "constraint_space_compliance", "stabilized_bias"]


class RowSpace:
    """Rank-revealing SVD of G_c (m, nv): G_c = U_r diag(s) V_r*, rank r.

    ``rank_tol``: the relative singular-value threshold (checked by the caller);
    ``row_scale`` (m,) optional, the rows' scales (``ConstraintState.row_scale``): rows
    whose norm is at most ``rank_tol`` times their scale constrain nothing and are taken as
    zero (see the module docstring).

    Attributes: ``rank``, ``U`` (m, r), ``s`` (r,), ``Vt`` (r, nv) and ``null`` (nv, nv − r),
    an orthonormal basis X_c of the null space of G_c.
    """

    def __init__(self, G, rank_tol=1e-9, row_scale=None):
        m, nv = G.shape
        if row_scale is not None and m:
            vacuous = np.sqrt(np.einsum("ij,ij->i", G, G)) <= rank_tol * row_scale  # (NaN rows stay)
            if vacuous.any():
                G = G.copy()
                G[vacuous] = 0.0
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
    """Right-hand side of G_c θ̈ = 𝔘̊ − 2α𝔡̇ − β²𝔡 (Baumgarte stabilization, [Jain24]
    "Augmented method comments": error control when integrating the DAE); 𝔡̇ = G v − 𝔘.
    ``baumgarte`` = (α, β) [1/s] or None for the plain 𝔘̊."""
    rhs = state.acceleration_bias
    if baumgarte is None:
        return rhs
    alpha, beta = baumgarte
    return rhs - 2.0 * alpha * state.velocity_residual(v) - beta**2 * state.residual


def _direct(p):
    """KKT system on the independent constraints Ĝ = U_r*G_c ([Jain24], direct method)."""
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
    """Projected equations M_r θ̈_r = X_c*(T − C − M θ̈_p) ([Jain24], projection method)."""
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
    a = qdd.copy()  # the caller may edit the result's qdd before reading the multipliers
    return qdd, lambda: rs.least_norm_multipliers(M @ a - force)


def constraint_space_compliance(p):
    """G_c M⁻¹ G_c* (m, m) without M: Q Λ Q* for the loop rows (Λ: O(N) operational-space
    compliance of the cut-joint nodes, [Jain24]) and one ABA sweep per other row."""
    state, cs = p.state, p.state.constraints
    G = state.G
    m, m_loop = G.shape[0], cs.m_loop
    A = np.empty((m, m))
    if m_loop:
        Lam = operational_space_compliance(p.tree, p.q, cs.node_frames)
        Q = state.loop_selection()
        A[:m_loop, :m_loop] = Q @ Lam @ Q.T
    zero_v = np.zeros(p.model.nv)
    for r in range(m_loop, m):
        column = G @ aba(p.tree, p.q, zero_v, G[r], gravity=False)  # G_c M⁻¹ G_r*
        A[:, r] = column
        A[r, :] = column
    return A


def _augmented(p):
    """Augmented method ([Jain24]): θ̈ = θ̈_f + M⁻¹G_c*λ, λ = −[G_c M⁻¹ G_c*]⁻¹ 𝔡̈_f."""
    rs = p.row_space
    qdd_free = aba(p.tree, p.q, p.v, p.tau, p.f_ext)
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
    return qdd_free + _correction(p.tree, p.q, p.state, lam), lam


def constraint_forces(state, lam):
    """Physical constraint forces from the multipliers λ (m,).

    Returns a dict by constraint name:

    * loop joint: (6,) spatial force [n; f] the cut joint applies to the **successor**
      body, in the successor frame at its origin [N m, N] ([Jain24]: f_nd = Q*λ; the
      predecessor receives the opposite force);
    * coupling: the generalized force the transmission applies to the successor's joint
      [N m or N] (the predecessor's joints receive −ratio times it);
    * transmission: its multipliers λ (m,); joint J_i receives the generalized force
      Σ_r ratios[r, i] λ_r [N m or N];
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
    its body frame (the pick-off B of [Jain24], J* = H φ B). Nodes on the world drop out."""
    f = np.zeros((model.nbodies, 6))
    cs = state.constraints
    if cs.m_loop:
        add_node_forces(state.node_selection, cs.loop_of_row, lam, cs.node_body, cs.node_rotation,
                         cs.node_translation, f)
    return f


def correction_accelerations(model, q, state, lam):
    """θ̈_δ = M⁻¹ G_c*λ ([Jain24]) by one O(N) ABA sweep: the loop multipliers enter as
    node forces (``f_ext``), the other rows as generalized forces G_rows*λ; zero velocity
    and no gravity leave only the constraint forces. ``model`` is the closed-chain model (or
    its spanning tree); the sweep runs on ``model.spanning_tree()``."""
    return _correction(model.spanning_tree(), q, state, lam)


def _correction(tree, q, state, lam):
    """:func:`correction_accelerations` on the spanning tree ``tree``."""
    m_loop = state.constraints.m_loop
    tau = state.G[m_loop:].T @ lam[m_loop:]
    return aba(tree, q, np.zeros(tree.nv), tau, f_ext=node_body_forces(tree, state, lam), gravity=False)


#: the cut-joint forward-dynamics methods: name -> function(ConstrainedProblem) -> (θ̈, λ or a
#: callable of no arguments returning λ)
CUT_JOINT_METHODS = {"augmented": _augmented, "direct": _direct, "projection": _projection}
