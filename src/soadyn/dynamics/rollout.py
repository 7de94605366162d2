"""Rollouts: the trajectories of control sequences, integrated in one compiled call
(:mod:`soadyn.kernels.rollout`: the ABA kernel, [Jain23p, eq. 7], and the configuration
-space integration of :func:`soadyn.integrate` inside a compiled loop)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..core import status as st
from ..core import validation as val
from ..core.call import Arg, CompiledFunction, run_blocks, stacked_block, thread_tables
from ..core.compile import snapshot
from ..kernels.rollout import RK4, SEMI_IMPLICIT_EULER, rollout_kernel

__all__ = ["rollout", "INTEGRATORS"]

#: the integrators of :func:`rollout`
INTEGRATORS = {"semi-implicit-euler": SEMI_IMPLICIT_EULER, "rk4": RK4}


def _trajectory_shapes(c, state, params):
    steps = params[0].shape[-2] + 1
    return (steps, c.nq), (steps, c.nv)


def _rollout_batch(d, values, params, outs, status):
    """A validated batch of rollouts in blocks of one kernel call each
    (:func:`~soadyn.core.call.stacked_block`): the controls (B, T, nv), a parameter of the
    call, have the batch dimension too, so they are stacked with the initial states."""
    tau, dt, integrator = params
    run_blocks(stacked_block, None, (rollout_kernel, partial(thread_tables, d), (*values, tau), (dt, integrator), outs,
                                     ()), status)


_ROLLOUT = CompiledFunction(rollout_kernel, _rollout_batch, (Arg("q0", "nq"), Arg("v0", "nv")), _trajectory_shapes,
                            allocate=lambda c, state: None, names=("q0", "v0", "tau"), tree_function="rollout")


def _controls(tau, nv):
    """``tau`` as a C-contiguous float64 array (T, nv) or (B, T, nv)."""
    want = f"an array of shape (T, {nv}) or (B, T, {nv})"
    if type(tau) is not np.ndarray or tau.dtype != np.float64 or not tau.flags.c_contiguous \
            or not tau.flags.writeable:
        tau = np.array(val._real_array(tau, want, "tau"), dtype=np.float64, order="C")
    if tau.ndim not in (2, 3) or tau.shape[-1] != nv:
        raise ValueError(f"tau: expected {want} (T steps of generalized forces), got shape {tau.shape}")
    return tau


def _initial(x, n, name, batch, tau_shape):
    """An initial state argument ((n,), or (B, n) when ``tau`` has B rows)."""
    x = val.vector(x, n, name)
    want = (n,) if batch is None else (batch, n)
    if x.shape != want:
        raise ValueError(f"{name}: expected shape {want} for tau of shape {tau_shape}, got {x.shape}")
    return x


def rollout(model, q0, v0, tau, dt, integrator="semi-implicit-euler", *, out=None):
    """Integrate the equations of motion under a control sequence, in one compiled call.

    Each step holds τ_k over [t_k, t_k + dt], evaluates q̈ = f(q, v, τ_k) by the
    articulated-body algorithm (as :func:`soadyn.aba`, [Jain23p, eq. 7], with gravity) and
    moves q on its manifold as :func:`soadyn.integrate` does:

    * ``"semi-implicit-euler"`` (default; MuJoCo's ``Euler``): v_{k+1} = v_k + dt f(q_k, v_k, τ_k),
      q_{k+1} = q_k ⊕ dt v_{k+1}; first order, symplectic.
    * ``"rk4"``: classical Runge–Kutta, stages moved on the manifold from q_k (the same
      scheme as ``soadyn.simulate.simulate(method="rk4")``); fourth order.

    Parameters
    ----------
    model : Model, a tree. A model with loops, couplings or user constraints raises
        :class:`~soadyn.ClosedChainError`: integrate it with :func:`soadyn.simulate.simulate`
        (constraint stabilization) or the closed-chain functions.
    q0 : (nq,) or (B, nq) initial configuration(s).
    v0 : (nv,) or (B, nv) initial velocity [rad/s, m/s]; None means zero.
    tau : (T, nv) controls [N m, N], one row per step; or (B, T, nv), one sequence per
        initial state.
    dt : time step [s], finite and positive.
    integrator : ``"semi-implicit-euler"`` or ``"rk4"``.
    out : optional preallocated ``(q, v)`` of the shapes returned.

    Returns
    -------
    q : (T + 1, nq) or (B, T + 1, nq), the configurations at t_0 = 0, dt, ..., T dt
        (row 0 is q0); v : (T + 1, nv) or (B, T + 1, nv) the velocities. A batch of B
        rollouts is split among ``NUMBA_NUM_THREADS`` threads in blocks of at least 16
        rollouts (:func:`soadyn.core.call.run_blocks`). A trajectory that overflows (a step
        far too large for the dynamics) continues as NaN rows from the step where it left
        the finite numbers. Raises ``numpy.linalg.LinAlgError`` when M is singular at a
        visited state, as :func:`soadyn.aba` does.
    """
    val.model_argument(model)
    model = snapshot(model)
    if model.has_constraints:
        e = st.closed_chain_error(model, "rollout")
        raise st.ClosedChainError(f"{e} To integrate the closed system use soadyn.simulate.simulate(model, q0, v0, "
                                  "t_final, dt, tau) (constraint stabilization by Baumgarte terms or projection).")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator: expected one of {list(INTEGRATORS)}, got {integrator!r}")
    dt = val.finite_scalar(dt, "dt")
    if not dt > 0.0:
        raise ValueError(f"dt: expected a positive time step [s], got {dt}")
    nq, nv = model.nq, model.nv
    tau = _controls(tau, nv)
    batch = tau.shape[0] if tau.ndim == 3 else None
    lead = () if batch is None else (batch,)
    q0 = _initial(q0, nq, "q0", batch, tau.shape)
    v0 = _initial(np.zeros(lead + (nv,)) if v0 is None else v0, nv, "v0", batch, tau.shape)
    if out is None:
        steps = tau.shape[-2] + 1
        out = (np.empty(lead + (steps, nq)), np.empty(lead + (steps, nv)))
    elif not isinstance(out, tuple):
        raise TypeError(f"out: expected a tuple (q, v) of two arrays, got {type(out).__name__}")
    return _ROLLOUT(model, (q0, v0), (tau, dt, INTEGRATORS[integrator]), out)

