"""Joint PD servos of the time steppers: ``pd=(kp, kd, q_ref)`` of :func:`soadyn.step` and
:func:`soadyn.rollout`.

The servo adds, at each step and on the dofs of the joints whose coordinates integrate their
velocities (revolute, prismatic, helical, …: nq = nv, never a free or spherical joint, so a
floating base stays unactuated),

    τ_j += K_p,j (q_ref,c(j) − q_c(j)) − K_d,j v_j     [N m or N]

at the state the step starts from (c(j) the coordinate of dof j), as MuJoCo's position
actuators add theirs inside ``mj_step``. Computed in the compiled step, it costs a loop over
the dofs instead of the NumPy expressions a Python loop would evaluate each step.
"""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.compile import derived

__all__ = ["pd_dofs", "servo_dofs", "pd_gains", "step_servo", "servo_torques", "NO_SERVO"]

#: the stand-in of ``pd=None`` in the step kernel's servo arguments (no PD; writeable, as
#: Numba types a read-only array as another type, and empty: nothing to write)
NO_SERVO = np.zeros(0)


def pd_dofs(model):
    """(nv,) int64: the q index of each dof that PD acts on (−1: none): the dofs of joints
    whose coordinates are their velocities' integrals (nq = nv: revolute, prismatic,
    helical, ...); never the free or spherical joints (a floating base is not actuated)."""
    pd_q = np.full(model.nv, -1, dtype=np.int64)
    for body in model.bodies:
        j = body.joint
        if j.nv and j.nq == j.nv and j.kind not in ("free", "spherical"):
            pd_q[j.v_index:j.v_index + j.nv] = np.arange(j.q_index, j.q_index + j.nq)
    return pd_q


def servo_dofs(model):
    """:func:`pd_dofs` of ``model``'s current version, built once per version (read-only:
    its walk over the bodies costs more than a step of a small robot)."""
    return derived(model).memo("servo_dofs", _frozen_dofs)


def _frozen_dofs(model):
    pd_q = pd_dofs(model)
    pd_q.setflags(write=False)
    return pd_q


def pd_gains(model, gain, name, pd_q):
    """A PD gain (a number, or (nv,) with zeros off the PD dofs ``pd_q`` of :func:`pd_dofs`)
    as a new (nv,) float64 array ≥ 0; errors name ``name``."""
    nv = model.nv
    if np.ndim(gain) == 0:
        g = val.finite_scalar(gain, name)
        out = np.where(pd_q >= 0, g, 0.0)
    else:
        out = val.vector(gain, nv, name, batch_ok=False).copy()
        if not np.all(np.isfinite(out)):
            raise ValueError(f"{name}: expected finite gains, got {out[~np.isfinite(out)][0]}")
        off = np.flatnonzero((pd_q < 0) & (out != 0.0))
        if off.size:
            raise ValueError(f"{name}: expected 0 at the dofs without PD (free and spherical joints, e.g. a floating "
                             f"base), got {out[off[0]]:g} at dof {int(off[0])}")
    if np.any(out < 0):
        raise ValueError(f"{name}: expected gains ≥ 0, got {out[out < 0][0]:g}")
    return np.ascontiguousarray(out)


def step_servo(model, pd):
    """``pd`` of :func:`soadyn.step` checked: None → the stand-ins (no PD); a tuple
    (kp, kd, q_ref) → (kp (nv,), kd (nv,), q_ref (nq,)) float64, the gains numbers or
    per-dof arrays ≥ 0 (zero off the PD dofs), q_ref a finite configuration."""
    if pd is None:
        return NO_SERVO, NO_SERVO, NO_SERVO
    if not isinstance(pd, (tuple, list)) or len(pd) != 3:
        raise TypeError(f"pd: expected a tuple (kp, kd, q_ref), got {type(pd).__name__}")
    pd_q = servo_dofs(model)
    kp = pd_gains(model, pd[0], "pd[0] (kp)", pd_q)
    kd = pd_gains(model, pd[1], "pd[1] (kd)", pd_q)
    qref = val.vector(pd[2], model.nq, "pd[2] (q_ref)", batch_ok=False)
    if not np.all(np.isfinite(qref)):
        raise ValueError("pd[2] (q_ref): expected finite values")
    return kp, kd, np.ascontiguousarray(qref, dtype=np.float64)


def servo_torques(model, q, v, tau, kp, kd, qref):
    """τ + K_p (q_ref − q) − K_d v on the PD dofs (:func:`pd_dofs`) as a new (nv,) array,
    for (kp, kd, qref) of :func:`step_servo` (all empty: τ itself), in NumPy (the closed
    chains' step, whose kernel takes τ whole)."""
    if qref.shape[0] == 0:
        return tau
    pd_q = servo_dofs(model)
    on = pd_q >= 0
    out = np.array(tau, dtype=np.float64)
    out[on] += kp[on] * (qref[pd_q[on]] - q[pd_q[on]]) - kd[on] * v[on]
    return out
