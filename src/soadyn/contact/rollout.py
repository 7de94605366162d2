"""Rollouts with frictional contact: many steps of :func:`soadyn.step`, and batches of initial
states, in one compiled multi-threaded call (:func:`contact_rollout`, what
:func:`soadyn.rollout` runs with ``contacts=True``; kernel
:func:`soadyn.kernels.contact.step.rollout_contact_kernel`)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..core import status as st
from ..core import validation as val
from ..core.batch import rollout_min_block, run_blocks, stacked_block, thread_tables
from ..core.compile import derived
from ..kernels.contact import step as ks
from .servo import pd_dofs, pd_gains
from .solver import ContactSolverWarning
from .step import raise_step_status, step_tables

__all__ = ["contact_rollout", "ContactRecord", "pd_gains"]


@dataclass(frozen=True, eq=False)
class ContactRecord:
    """Per step of a rollout with contact (arrays (T,), or (B, T) for a batch; NaN after a
    trajectory left the finite numbers): ``count`` contacts, solver ``iterations``,
    ``converged``, the NCP residuals ``primal``, ``dual``, ``complementarity``,
    ``normal_impulse`` Σ λ_n [N s] (the normal force summed over the contacts is
    normal_impulse / dt) and ``max_depth`` the largest penetration at the step's start [m]."""

    count: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    primal: np.ndarray
    dual: np.ndarray
    complementarity: np.ndarray
    normal_impulse: np.ndarray
    max_depth: np.ndarray

    @property
    def residual(self):
        """The largest of the three residuals, per step."""
        return np.maximum(np.maximum(self.primal, self.dual), self.complementarity)


def _record(stats):
    cols = [stats[..., c] for c in range(ks.STATS_SIZE)]
    cols[ks.STAT_CONVERGED] = cols[ks.STAT_CONVERGED] == 1.0
    return ContactRecord(*cols)


def _pd(model, pd, T, batch):
    """(q_ref (B, T, nq) or (T, nq), or empty; kp, kd (nv,); pd_q (nv,))."""
    nv, nq = model.nv, model.nq
    pd_q = pd_dofs(model)
    if pd is None:
        empty = np.zeros((0, nq)) if batch is None else np.zeros((batch, 0, nq))
        return empty, np.zeros(nv), np.zeros(nv), pd_q
    if not isinstance(pd, (tuple, list)) or len(pd) != 3:
        raise TypeError(f"pd: expected a tuple (kp, kd, q_ref), got {type(pd).__name__}")
    kp, kd, qref = pd
    kp = pd_gains(model, kp, "pd[0] (kp)", pd_q)
    kd = pd_gains(model, kd, "pd[1] (kd)", pd_q)
    try:
        qref = np.array(qref, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"pd[2] (q_ref): expected an array (T, {nq}) or (B, T, {nq}), got "
                        f"{type(pd[2]).__name__}") from None
    want = (T, nq) if batch is None else (batch, T, nq)
    if qref.shape == (T, nq) and batch is not None:
        qref = np.broadcast_to(qref, want)
    if qref.shape != want:
        raise ValueError(f"pd[2] (q_ref): expected shape {(T, nq)}{'' if batch is None else f' or {want}'} (one "
                         f"reference configuration per step), got {qref.shape}")
    if not np.all(np.isfinite(qref)):
        raise ValueError("pd[2] (q_ref): expected finite values")
    return np.ascontiguousarray(qref), kp, kd, pd_q


def contact_rollout(model, q0, v0, tau, dt, pd, settings):
    """The trajectories of :func:`soadyn.rollout` with ``contacts=True`` (``model`` a
    snapshot of a tree; ``dt`` checked, ``settings`` a ContactSettings): returns
    (q (…, T + 1, nq), v (…, T + 1, nv), :class:`ContactRecord`). ``tau`` (T, nv) or
    (B, T, nv), ``q0`` (nq,) or (B, nq), ``v0`` likewise or None; the batch dimension of any
    of them (and of the PD reference) makes a batch, the others broadcast."""
    nq, nv = model.nq, model.nv
    tau = np.array(val._real_array(tau, f"an array of shape (T, {nv}) or (B, T, {nv})", "tau"), dtype=np.float64)
    if tau.ndim not in (2, 3) or tau.shape[-1] != nv:
        raise ValueError(f"tau: expected an array of shape (T, {nv}) or (B, T, {nv}) (T steps of generalized forces), "
                         f"got shape {tau.shape}")
    T = tau.shape[-2]
    q0 = val.vector(q0, nq, "q0")
    v0 = np.zeros(nv) if v0 is None else val.vector(v0, nv, "v0")
    sizes = {"tau": tau.shape[0] if tau.ndim == 3 else None, "q0": q0.shape[0] if q0.ndim == 2 else None,
             "v0": v0.shape[0] if v0.ndim == 2 else None}
    if pd is not None and isinstance(pd, (tuple, list)) and len(pd) == 3 and np.ndim(pd[2]) == 3:
        sizes["pd[2] (q_ref)"] = np.shape(pd[2])[0]
    given = {k: b for k, b in sizes.items() if b is not None}
    if len(set(given.values())) > 1:
        raise ValueError(f"q0, v0, tau, pd: batch sizes differ: {given}")
    batch = next(iter(given.values())) if given else None
    qref, kp, kd, pd_q = _pd(model, pd, T, batch)
    if batch is not None:
        tau = np.ascontiguousarray(np.broadcast_to(tau, (batch, T, nv)))
        q0 = np.ascontiguousarray(np.broadcast_to(q0, (batch, nq)))
        v0 = np.ascontiguousarray(np.broadcast_to(v0, (batch, nv)))
    lead = () if batch is None else (batch,)
    d = derived(model)
    c = d.compiled
    tables = step_tables(model)
    prm = settings.vector()
    K = tables.capacity
    while True:
        fbuf, ibuf = tables.scratch(K)
        dims = tables.dims(K)
        qs, vs = np.empty(lead + (T + 1, nq)), np.empty(lead + (T + 1, nv))
        stats = np.empty(lead + (T, ks.STATS_SIZE))
        params = (dt, tables.ci, tables.cf, prm, dims, kp, kd, pd_q, settings.warm_start, fbuf, ibuf)
        if batch is None:
            status = ks.rollout_contact_kernel(c.mi, c.mf, d.buffer(), q0, v0, tau, qref, *params, qs, vs, stats)
            if status != st.OK:
                raise_step_status(status, model, (q0, v0, tau))
        else:
            status = np.zeros(batch, dtype=np.int64)
            run_blocks(stacked_block, None, (ks.rollout_contact_kernel, partial(thread_tables, d), (q0, v0, tau, qref),
                                             params, (qs, vs, stats), (9, 10)), status, rollout_min_block(T))
            bad = np.flatnonzero(status)
            if bad.size:
                b = int(bad[0])
                try:
                    raise_step_status(int(status[b]), model, (q0[b], v0[b], tau[b]))
                except (ValueError, TypeError, OverflowError, np.linalg.LinAlgError) as e:
                    raise type(e)(f"{e} (batch entry {b})") from None
        counts = stats[..., ks.STAT_COUNT]
        most = np.nanmax(counts) if T and np.isfinite(counts).any() else 0
        if most <= K:
            break
        K = int(most)  # a step found more contacts than the scratch held: again with room for them
    record = _record(stats)
    failed = np.isfinite(stats[..., ks.STAT_CONVERGED]) & ~record.converged
    if failed.any():
        worst = float(np.nanmax(np.where(failed, record.residual, np.nan)))
        warnings.warn(f"rollout: the contact solve ({settings.friction_solver}) did not converge in "
                      f"{int(failed.sum())} of {failed.size} steps (largest residual {worst:.3g}, tol "
                      f"{settings.tol:g}); raise ContactSettings.max_iter or tol (the record's 'converged' says which)",
                      ContactSolverWarning, stacklevel=4)
    return qs, vs, record
