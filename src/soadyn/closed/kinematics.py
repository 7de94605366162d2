"""Evaluation of a model's constraints at a state: G_c, the velocity right-hand side 𝔘,
the acceleration bias 𝔘̊ and the position residuals 𝔡 ([Jain24], "Holonomic Bilateral
Constraints"; loop rows by :mod:`soadyn.kernels.loops`, G_c = Q ℬ*φ*H*)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.batch import NO_BATCH
from ..core.call import ABSENT, Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..core.constraints import ConstraintError
from ..kernels.loops import loop_constraints_kernel
from .constraint_set import constraint_set

__all__ = ["ConstraintState", "evaluate_constraints", "evaluate_constraint_set", "constraint_jacobian",
           "constraint_residual", "constraint_acceleration_bias", "check_residuals"]


class ConstraintState:
    """The constraints of a model evaluated at (q, v, t).

    Attributes
    ----------
    G : (m, nv) G_c, the rows of every constraint (redundant rows allowed).
    velocity_rhs : (m,) 𝔘, the velocity constraint reads G v = 𝔘.
    acceleration_bias : (m,) 𝔘̊ = 𝔘̇ − Ġ_c v, the acceleration constraint reads G q̈ = 𝔘̊
        (None when not requested).
    residual : (m,) position residuals 𝔡(q, t) (zero on non-holonomic rows).
    node_selection : (m_loop, 12) the loop rows' selection Q acting on
        [V_P; V_S] (local node frames, angular first), see ``ConstraintSet.node_frames``:
        the loop rows of G are Q_P J_P + Q_S J_S.
    constraints : the :class:`~soadyn.closed.constraints.ConstraintSet`.
    row_scale : (m,) the size of each row of G before its terms cancel: for a loop row the
        sum of the magnitudes of the products that make up its entries
        (:func:`~soadyn.kernels.loops.loop_rows`), for other rows the sum of their
        |entries|. A row at rounding level of its scale constrains nothing (a loop placed
        where it adds no constraint); the rank decisions compare each row with it
        (:class:`~soadyn.closed.cut_joint.RowSpace`). Default (None): the |entries| sums.
    """

    def __init__(self, constraints, G, velocity_rhs, acceleration_bias, residual, node_selection, t,
                 row_scale=None):
        self.constraints = constraints
        self.G = G
        self.row_scale = np.abs(G).sum(axis=1) if row_scale is None else row_scale
        self.velocity_rhs = velocity_rhs
        self.acceleration_bias = acceleration_bias
        self.residual = residual
        self.node_selection = node_selection
        self.t = t

    def velocity_residual(self, v):
        """G v − 𝔘 (m,)."""
        return self.G @ v - self.velocity_rhs

    def loop_selection(self):
        """Q (m_loop, 12 n_loops): block-diagonal, each loop's rows acting on its own two
        nodes, so that the loop rows of G are Q J with J the stacked local node Jacobians
        and the node forces are f_nd = Q*λ ([Jain24], "Single loop constraint")."""
        cs = self.constraints
        Q = np.zeros((cs.m_loop, 12 * len(cs.node_frames) // 2))
        cols = 12 * cs.loop_of_row[:, None] + np.arange(12)
        Q[np.arange(cs.m_loop)[:, None], cols] = self.node_selection
        return Q


# the caller provides the outputs (G, 𝔘̊, 𝔡, Q), sized by the constraint set
_LOOPS = CompiledFunction(loop_constraints_kernel, NO_BATCH, (Arg("q", "nq"), Arg("v", "nv", optional=True)),
                          Outputs.computed(lambda c, state, params: None, allocate=lambda c, state: None))


def evaluate_constraints(model, q, v=None, t=0.0, *, bias=True, workspace=None):
    """Evaluate all constraints of ``model`` at (q, v, t); returns a :class:`ConstraintState`.

    ``v`` is needed for the acceleration bias (default zero velocity); ``bias=False``
    skips it (positions and G only).
    """
    model = snapshot(model)
    cs = constraint_set(model)
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    vv = None if v is None else val.vector(v, c.nv, "v", batch_ok=False)
    return evaluate_constraint_set(cs, q, vv, float(t), bias, workspace)


def evaluate_constraint_set(cs, q, v, t, bias, workspace=None):
    """:func:`evaluate_constraints` for a :class:`~soadyn.closed.constraints.ConstraintSet`
    (all of a model's constraints or a subset, e.g. one cluster's), without input checks:
    q (nq,), v (nv,) or None (zero velocity), t float."""
    model = cs.model
    c = model.compiled
    m = cs.m
    G = np.zeros((m, c.nv))
    U = np.zeros(m)
    ub = np.zeros(m)  # the loop kernel fills it in any case
    res = np.zeros(m)
    sel = np.zeros((cs.m_loop, 12))
    scale = np.zeros(m)
    if cs.m_loop:
        _LOOPS(model, (q, ABSENT if v is None else v), (cs.loop_int, cs.loop_float), (G, ub, res, sel, scale),
               workspace)
    if cs.m_coupling:
        r = slice(cs.m_loop, cs.m_loop + cs.m_coupling)
        G[r] = cs.coupling_v
        res[r] = cs.coupling_q @ q - cs.coupling_offset
    if cs.user_blocks:
        vz = v if v is not None else np.zeros(c.nv)
        for blk in cs.user_blocks:
            uc = blk.source
            if uc.joints is None and uc.nv != c.nv:
                raise ValueError(f"constraint {uc.name!r} was added when the model had {uc.nv} velocity "
                                 f"coordinates; it now has {c.nv}: add constraints after the bodies")
            Gu, Uu, bu, du = uc.evaluate(q, vz, t, bias)
            G[blk.rows], U[blk.rows], res[blk.rows] = Gu, Uu, du
            if bias:
                ub[blk.rows] = bu
    if cs.m_loop < m:  # constant and user rows: no cancellation known, their |entries|
        scale[cs.m_loop:] = np.abs(G[cs.m_loop:]).sum(axis=1)
    return ConstraintState(cs, G, U, ub if bias else None, res, sel, t, scale)


def constraint_jacobian(model, q, t=0.0):
    """G_c (m, nv): the constraint rows of every loop joint, coupling and user constraint
    ([Jain24]: G_c = Q B* φ* H* for loop constraints), in that order; redundant rows are
    kept (a planar loop closed by a spatial joint gives zero or dependent rows).

    ``soadyn.closed.constraint_set(model).blocks`` names the rows of each constraint.
    """
    return evaluate_constraints(model, q, None, t, bias=False).G


def constraint_residual(model, q, t=0.0):
    """Position residuals 𝔡(q, t) (m,) [m, rad]; zero on non-holonomic rows."""
    return evaluate_constraints(model, q, None, t, bias=False).residual


def constraint_acceleration_bias(model, q, v, t=0.0):
    """𝔘̊ (m,) with 𝔡̈ = G_c q̈ − 𝔘̊ ([Jain24]: 𝔘̊ ≜ 𝔘̇ − Ġ_c θ̇)."""
    return evaluate_constraints(model, q, v, t).acceleration_bias


def residual_tolerance(tol):
    """``tol`` as a float, checked: a positive finite number (the ``residual_tol`` argument)."""
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating, np.integer)) or not 0 < tol < np.inf:
        raise ValueError(f"residual_tol: expected a positive number, got {tol!r}")
    return float(tol)


def check_residuals(state, v=None, tol=1e-6):
    """Raise ConstraintError unless the state the constraints were evaluated at satisfies
    them: every position residual |𝔡| (holonomic rows, [m] or [rad]) and, when ``v`` (nv,)
    is given, every velocity residual |G_c v − 𝔘| ([m/s] or [rad/s]) at most ``tol``
    (absolute). The error names the worst constraint, its residual and the tolerance.

    Cost: two dot products in the common case (‖r‖₂ ≤ tol implies max |r| ≤ tol); the
    maximum is searched only when that screen fails."""
    if type(tol) is not float or not 0.0 < tol < np.inf:
        tol = residual_tolerance(tol)
    tol2 = tol * tol
    res = state.residual
    if not res @ res <= tol2:  # also for NaN
        _check_max(state, res, tol, "q", "position")
    if v is not None:
        w = state.G @ v
        w -= state.velocity_rhs
        if not w @ w <= tol2:
            _check_max(state, w, tol, "v", "velocity")


def _check_max(state, residual, tol, arg, what):
    k = int(np.argmax(np.abs(residual)))
    r = float(residual[k])
    if abs(r) <= tol and not np.isnan(residual).any():
        return
    if np.isnan(residual).any():
        k = int(np.flatnonzero(np.isnan(residual))[0])
        r = float(residual[k])
    block = next(b for b in state.constraints.blocks if b.rows.start <= k < b.rows.stop)
    fix = "soadyn.close_loops(model, q, v)" if arg == "q" else \
        "soadyn.close_loops(model, q, v) (it also projects the velocities)"
    raise ConstraintError(
        f"{arg}: expected a state on the constraint manifold ({what} residuals at most residual_tol = "
        f"{tol:g}), got {what} residual {r:.3e} on {block.kind} constraint {block.name!r} (its row "
        f"{k - block.rows.start} of {block.rows.stop - block.rows.start}); make the state consistent first with "
        f"{fix}, or pass a larger residual_tol=, or check=False to skip the check")
