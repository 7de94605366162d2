"""Assembly of a consistent closed-chain state: loop closure and velocity projection.

Position: Gauss–Newton on the holonomic residuals 𝔡(q, t) = 0 (loop joints, couplings,
user holonomic constraints) over the dependent coordinates, with the independent
coordinates held at their guessed values. Each step solves G_d δ = −𝔡 in the least-norm
sense (redundant rows and extra freedom are normal) and moves q on the configuration
manifold (``soadyn.integrate``); a backtracking line search keeps ‖𝔡‖ decreasing. The
same solver (:func:`gauss_newton`) puts the constraints of a body cluster in explicit
form, q = γ(y) ([Chignoli23, §II-B]; :mod:`soadyn.closed.cluster_joints`).
Velocity: the dependent velocities are the least-norm correction that satisfies
G v = 𝔘 ([Jain24]: 𝔡̇ = G_c θ̇ − 𝔘 = 0), non-holonomic rows included.
"""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.configuration import integrate, normalize
from ..core.constraints import ConstraintError
from .constraint_set import constraint_set
from .kinematics import evaluate_constraints

__all__ = ["close_loops", "LoopClosureError", "independent_velocity_indices", "gauss_newton"]


class LoopClosureError(ConstraintError):
    """The constraints cannot be satisfied near the guess with the given independent
    coordinates (the message names the worst constraint and its residual)."""


#: a direct step δ = −J⁻¹r must solve J δ = −r to this relative accuracy, else J is singular
#: to rounding and the least-norm least-squares step is taken
_SOLVE_CHECK = 1e-10


def gauss_newton(evaluate, x, move, *, tol, max_iter):
    """Solve r(x) = 0 by Gauss–Newton steps with a backtracking line search.

    Parameters
    ----------
    evaluate : callable x -> (r (m,), J (m, k), aux): the residual, its derivative along
        the k free directions, and anything the caller wants back for the solution.
    x : the start.
    move : callable (x, δ (k,), α) -> the point reached from x along α·δ.
    tol : max-norm tolerance on r; max_iter : iteration limit.

    Each step δ solves J δ = −r (directly when J is square and regular — checked by the
    step's own residual, since an LU factorization does not refuse a J singular to
    rounding —, else in the least-norm least-squares sense: redundant rows and surplus
    freedom are normal); the
    step length halves until ‖r‖ decreases (Armijo), since full steps can overshoot far
    from the solution.

    Returns
    -------
    (x, r, aux, failure): the last accepted point, its residual and ``aux``; ``failure``
    is None on convergence, ``"iterations"`` when ``max_iter`` was reached and
    ``"stalled"`` when no step length decreases ‖r‖.
    """
    r, J, aux = evaluate(x)
    norm = float(np.linalg.norm(r))
    it = 0
    while np.abs(r).max(initial=0.0) > tol:
        if it == max_iter:
            return x, r, aux, "iterations"
        it += 1
        step = None
        if J.shape[0] == J.shape[1]:
            try:
                step = -np.linalg.solve(J, r)
            except np.linalg.LinAlgError:
                pass
            # a square J that is singular only to rounding (a loop's rows of rank 2 on a
            # spherical joint's three columns) is not refused by the LU factorization: its
            # step is huge and misses J δ = −r; the line search then stalls far from φ = 0
            if step is not None and not np.abs(J @ step + r).max() <= _SOLVE_CHECK * (1.0 + np.abs(r).max()):
                step = None
        if step is None or not np.all(np.isfinite(step)):
            step = -np.linalg.lstsq(J, r, rcond=1e-12)[0]
        alpha = 1.0
        while True:
            x_new = move(x, step, alpha)
            r_new, J_new, aux_new = evaluate(x_new)
            n_new = float(np.linalg.norm(r_new))
            if n_new < norm * (1.0 - 1e-4 * alpha) or n_new <= tol:
                break
            alpha *= 0.5
            if alpha < 1e-6:
                return x, r, aux, "stalled"
        x, r, J, aux, norm = x_new, r_new, J_new, aux_new, n_new
    return x, r, aux, None


def independent_velocity_indices(model, independent=None):
    """Velocity indices of the independent coordinates.

    ``independent``: None (default: the joints marked independent in a URDF+ file when
    some joint is marked ``independent="false"``, else none), or a list of joint names
    and/or velocity indices.
    """
    if independent is None:
        joints = model.joints
        if all(getattr(j, "independent", True) for j in joints):
            return np.zeros(0, dtype=np.int64)
        return np.array([j.v_index + k for j in joints if getattr(j, "independent", True)
                         for k in range(j.nv)], dtype=np.int64)
    out = []
    for item in independent:
        if isinstance(item, str):
            j = model.joint(item)
            out.extend(range(j.v_index, j.v_index + j.nv))
        elif isinstance(item, (int, np.integer)) and 0 <= item < model.nv:
            out.append(int(item))
        else:
            raise ValueError(f"independent: expected joint names or velocity indices in [0, {model.nv}), "
                             f"got {item!r}")
    return np.unique(np.array(out, dtype=np.int64))


def _worst(cs, r, rows=None):
    rows = np.arange(cs.m) if rows is None else rows
    k = int(np.argmax(np.abs(r)))
    row = rows[k]
    for b in cs.blocks:
        if b.rows.start <= row < b.rows.stop:
            return f"{b.kind} {b.name!r} (row {row - b.rows.start}) has residual {r[k]:.3e}"
    return f"row {row} has residual {r[k]:.3e}"


def close_loops(model, q_guess, v_guess=None, *, independent=None, t=0.0, tol=1e-10, max_iter=100):
    """A configuration and velocity near the guesses that satisfy all constraints.

    Parameters
    ----------
    model : Model with loops, couplings or user constraints.
    q_guess : (nq,) configuration guess; its independent coordinates are kept.
    v_guess : (nv,) velocity guess (default zero); its independent velocities are kept.
    independent : joint names / velocity indices held fixed (see
        :func:`independent_velocity_indices`; an empty list moves every coordinate by the
        least-norm correction).
    t : time [s] (time-varying constraints).
    tol : residual tolerance [m, rad] (max norm).
    max_iter : Gauss–Newton iterations.

    Returns
    -------
    (q (nq,), v (nv,))

    Raises
    ------
    LoopClosureError when the loops cannot close (the residual stalls above ``tol``), or
    the velocity constraints cannot be met with the given independent velocities.
    """
    cs = constraint_set(model)
    q = normalize(model, val.vector(q_guess, model.nq, "q_guess", batch_ok=False))
    v = np.zeros(model.nv) if v_guess is None else val.vector(v_guess, model.nv, "v_guess", batch_ok=False).copy()
    indep = independent_velocity_indices(model, independent)
    dep = np.setdiff1d(np.arange(model.nv), indep)
    hol = np.flatnonzero(cs.holonomic)

    def evaluate(x):
        st = evaluate_constraints(model, x, None, t, bias=False)
        return st.residual[hol], st.G[np.ix_(hol, dep)], st

    def move(x, step, alpha):
        full = np.zeros(model.nv)
        full[dep] = step
        return integrate(model, x, full, alpha)

    q, r, st, failure = gauss_newton(evaluate, q, move, tol=tol, max_iter=max_iter)
    if failure == "iterations":
        raise LoopClosureError(f"close_loops: no convergence in {max_iter} iterations; {_worst(cs, r, hol)}")
    if failure == "stalled":
        raise LoopClosureError(
            f"close_loops: the loops cannot close near the guess with the independent "
            f"coordinates {list(indep)} held fixed; the least-squares residual stalls where "
            f"{_worst(cs, r, hol)} (residual norm {np.linalg.norm(r):.3e})")

    G = st.G
    U = st.velocity_rhs
    err = G @ v - U
    if cs.m and dep.size:
        v[dep] -= np.linalg.lstsq(G[:, dep], err, rcond=1e-12)[0]
        err = G @ v - U
    scale = 1.0 + np.abs(v).max(initial=0.0) * (1.0 + np.abs(G).max(initial=0.0))
    if np.abs(err).max(initial=0.0) > 1e-9 * scale:
        raise LoopClosureError(f"close_loops: the velocity constraints G v = 𝔘 cannot be met with the "
                               f"independent velocities {list(indep)} held fixed; {_worst(cs, err)}")
    return q, v
