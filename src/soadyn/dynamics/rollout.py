"""Rollouts: the trajectories of control sequences, integrated in one compiled call
(:mod:`soadyn.kernels.rollout`: the ABA kernel, [Jain23p, eq. 7], and the configuration
-space integration of :func:`soadyn.integrate` inside a compiled loop)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..core import status as st
from ..core import validation as val
from ..core.batch import Batch, rollout_min_block, run_blocks, stacked_block, thread_tables
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..kernels.rollout import RK4, SEMI_IMPLICIT_EULER, exponential_coordinate_rate_kernel, rollout_kernel

__all__ = ["rollout", "INTEGRATORS", "DIVERGENCE", "exponential_coordinate_rate"]

#: the integrators of :func:`rollout`
INTEGRATORS = {"semi-implicit-euler": SEMI_IMPLICIT_EULER, "rk4": RK4}

#: what :func:`rollout` does with a trajectory that leaves the finite numbers
DIVERGENCE = ("raise", "nan")


def _scale(dt):
    return val.finite_scalar(dt, "dt")


_RATE = CompiledFunction(exponential_coordinate_rate_kernel, Batch.loop(), (Arg("u", "nv"), Arg("w", "nv")),
                         Outputs.shaped("v_shape"), params=(_scale,))


def exponential_coordinate_rate(model, u, w, dt=1.0, *, out=None):
    """dexp⁻¹_{−u dt}(w) (nv,): the rate of the exponential coordinates x = u·dt of
    q = q₀ ⊕ x (:func:`soadyn.integrate`) when q moves with the velocity ``w``, to the
    order a fourth-order Lie-group Runge–Kutta method needs ([MuntheKaas99]: the series
    w + ½[x, w] + 1/12 [x, [x, w]], exact to O(|x|⁴|w|);
    :func:`soadyn.kernels.rollout.exponential_coordinate_rate`). Equal to ``w`` for vector
    joints; the so(3) and se(3) brackets for spherical and free joints. The RK4 of
    :func:`rollout` and :func:`soadyn.simulate` sums these rates, not the stage velocities.

    Parameters: u, w (nv,) or (B, nv); dt a finite real number (the scale of u).
    """
    return _RATE(model, (u, w), (dt,), out)


def _trajectory_shapes(c, state, params):
    steps = params[0].shape[-2] + 1
    return (steps, c.nq), (steps, c.nv)


def _rollout_batch(d, values, params, outs, status):
    """A validated batch of rollouts in blocks of one kernel call each
    (:func:`~soadyn.core.batch.stacked_block`): the controls (B, T, nv), a parameter of the
    call, have the batch dimension too, so they are stacked with the initial states."""
    tau, dt, integrator = params
    run_blocks(stacked_block, None, (rollout_kernel, partial(thread_tables, d), (*values, tau), (dt, integrator), outs,
                                     ()), status, rollout_min_block(tau.shape[-2]))


_ROLLOUT = CompiledFunction(rollout_kernel, Batch.runner(_rollout_batch), (Arg("q0", "nq"), Arg("v0", "nv")),
                            Outputs.computed(_trajectory_shapes, allocate=lambda c, state: None),
                            names=("q0", "v0", "tau"), tree_function="rollout")


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


def rollout(model, q0, v0, tau, dt, integrator="semi-implicit-euler", *, contacts=False, pd=None, settings=None,
            record=False, on_divergence="raise", out=None):
    """Integrate the equations of motion under a control sequence, in one compiled call.

    Each step holds τ_k over [t_k, t_k + dt], evaluates q̈ = f(q, v, τ_k) by the
    articulated-body algorithm (as :func:`soadyn.aba`, [Jain23p, eq. 7], with gravity) and
    moves q on its manifold as :func:`soadyn.integrate` does:

    * ``"semi-implicit-euler"`` (default; MuJoCo's ``Euler``): v_{k+1} = v_k + dt f(q_k, v_k, τ_k),
      q_{k+1} = q_k ⊕ dt v_{k+1}; first order, symplectic.
    * ``"rk4"``: classical Runge–Kutta in the Runge–Kutta–Munthe-Kaas form ([MuntheKaas99]:
      the stages are points q_k ⊕ u_i of one chart, their slopes the rates of the
      exponential coordinates, :func:`exponential_coordinate_rate`; the scheme of
      :func:`soadyn.simulate` with ``method="rk4"``, :mod:`soadyn.kernels.rollout`); fourth
      order in q and v, on free and spherical joints too.

    Parameters
    ----------
    model : Model, a tree. A model with loops, couplings or user constraints raises
        :class:`~soadyn.ClosedChainError`: integrate it with :func:`soadyn.simulate`
        (constraint stabilization) or the closed-chain functions.
    q0 : (nq,) or (B, nq) initial configuration(s).
    v0 : (nv,) or (B, nv) initial velocity [rad/s, m/s]; None means zero.
    tau : (T, nv) controls [N m, N], one row per step; or (B, T, nv), one sequence per
        initial state.
    dt : time step [s], a finite positive real number (not a string).
    integrator : ``"semi-implicit-euler"`` or ``"rk4"``.
    on_divergence : what becomes of a trajectory that leaves the finite numbers (an
        overflow: a step far too large for the dynamics, or a state or control too large):
        ``"raise"`` (default) raises OverflowError naming the batch entry and the step;
        ``"nan"`` returns it as NaN rows from the step where it diverged (the other rollouts
        of a batch are unaffected: a sampling planner can score it as a failure).
    contacts : False (default) or True: step with frictional contact between the model's
        collision objects, each step that of :func:`soadyn.step` (detection at q, the
        Delassus operator, the NCP solve, the impulse response; semi-implicit Euler only),
        all T steps and all B initial states in one compiled multi-threaded call with the
        narrow phase inside (:mod:`soadyn.contact.rollout`). Each step's solve starts from
        the previous step's impulses when ``settings.warm_start`` (the trajectory's own
        state: ``rollout`` equals ``step`` repeated with ``warm_start=`` the previous result).
    pd : with ``contacts=True``, optional ``(kp, kd, q_ref)``: joint PD torques
        kp (q_ref[k] − q) − kd v added to ``tau[k]`` at every step, on the dofs of the joints
        whose coordinates integrate their velocities (revolute, prismatic, ...); a free or
        spherical joint (a floating base) gets none. ``kp`` [N m/rad, N/m], ``kd``
        [N m s/rad, N s/m]: numbers, or (nv,) with zeros on the other dofs; ``q_ref`` (T, nq)
        or (B, T, nq) (its entries of the other joints unused).
    settings : with ``contacts=True``, a :class:`~soadyn.ContactSettings` (None: defaults).
    record : with ``contacts=True``, also return the per-step
        :class:`~soadyn.contact.rollout.ContactRecord` (contact counts, solver iterations and
        residuals, Σλ_n, the largest depth). A solve that did not converge gives a
        :class:`~soadyn.ContactSolverWarning` (and ``converged`` False in the record).
        With contacts, any of q0, v0, tau, q_ref may carry the batch dimension B; the
        others are broadcast.
    out : optional preallocated ``(q, v)`` of the shapes returned (not with ``contacts``).

    Returns
    -------
    q : (T + 1, nq) or (B, T + 1, nq), the configurations at t_0 = 0, dt, ..., T dt
        (row 0 is q0); v : (T + 1, nv) or (B, T + 1, nv) the velocities. A batch of B
        rollouts is split among ``NUMBA_NUM_THREADS`` threads in blocks of at least 16
        rollouts (:func:`soadyn.core.batch.run_blocks`). The length of the run is that of
        ``tau``, whose T rows the caller holds already, so no cap on it is needed (unlike
        :func:`soadyn.simulate`'s ``max_steps``). Raises ``numpy.linalg.LinAlgError`` when M
        is singular at a visited state, as :func:`soadyn.aba` does.
    """
    val.model_argument(model)
    model = snapshot(model)
    if contacts not in (True, False):
        raise TypeError(f"contacts: expected True or False, got {contacts!r}")
    if not contacts and (pd is not None or settings is not None or record):
        raise ValueError("pd, settings, record: they apply to rollouts with contact (contacts=True)")
    if contacts:
        return _contact_rollout(model, q0, v0, tau, dt, integrator, pd, settings, record, on_divergence, out)
    if model.has_constraints:
        e = st.closed_chain_error(model, "rollout")
        raise st.ClosedChainError(f"{e} To integrate the closed system use soadyn.simulate(model, q0, v0, "
                                  "t_final, dt, tau) (constraint stabilization by Baumgarte terms or projection).")
    if not isinstance(integrator, str) or integrator not in INTEGRATORS:  # (a list is not hashable)
        raise ValueError(f"integrator: expected one of {list(INTEGRATORS)}, got {integrator!r}")
    if not (isinstance(on_divergence, str) and on_divergence in DIVERGENCE):
        raise ValueError(f"on_divergence: expected one of {list(DIVERGENCE)}, got {on_divergence!r}")
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
    qs, vs = _ROLLOUT(model, (q0, v0), (tau, dt, INTEGRATORS[integrator]), out)
    if on_divergence == "raise":
        _raise_divergence(qs, vs, dt)
    return qs, vs


def _contact_rollout(model, q0, v0, tau, dt, integrator, pd, settings, record, on_divergence, out):
    """:func:`rollout` with ``contacts=True`` (:func:`soadyn.contact.rollout.contact_rollout`)."""
    from ..contact.rollout import contact_rollout
    from ..contact.settings import settings_argument
    from ..contact.step import time_step

    if model.has_constraints:  # (sd.step steps them one step at a time, by constraint embedding)
        e = st.closed_chain_error(model, "rollout")
        raise st.ClosedChainError(f"{e} Rollouts with contact of closed chains are not available: step them with "
                                  "soadyn.step (constraint embedding, the loops exact).")
    if integrator != "semi-implicit-euler":
        raise ValueError(f"integrator: a rollout with contacts steps by semi-implicit Euler (velocity-level impulses), "
                         f"got {integrator!r}")
    if out is not None:
        raise ValueError("out: not available with contacts=True")
    if not (isinstance(on_divergence, str) and on_divergence in DIVERGENCE):
        raise ValueError(f"on_divergence: expected one of {list(DIVERGENCE)}, got {on_divergence!r}")
    settings = settings_argument(settings)
    dt = time_step(dt)
    qs, vs, rec = contact_rollout(model, q0, v0, tau, dt, pd, settings)
    if on_divergence == "raise":
        _raise_divergence(qs, vs, dt)
    return (qs, vs, rec) if record else (qs, vs)


def _raise_divergence(qs, vs, dt):
    """OverflowError for the first trajectory of (qs, vs) that left the finite numbers (the
    kernel fills it with NaN from the step where it did, so its last row tells)."""
    last = np.concatenate([qs[..., -1, :], vs[..., -1, :]], axis=-1)
    if np.isfinite(last).all():
        return
    batch = qs.ndim == 3
    b = int(np.flatnonzero(~np.isfinite(last).all(axis=-1))[0]) if batch else None
    rows = np.concatenate([qs[b], vs[b]] if batch else [qs, vs], axis=-1)
    k = int(np.flatnonzero(~np.isfinite(rows).all(axis=-1))[0])
    entry = f" of batch entry {b}" if batch else ""
    raise OverflowError(
        f"q0, v0, tau, dt: the trajectory{entry} left the finite numbers (its row {k}, t = {k * dt:g} s): an overflow, "
        f"from a time step dt = {dt:g} s too large for these dynamics or a state or control too large; "
        "on_divergence='nan' returns such a trajectory as NaN rows from that step instead")

