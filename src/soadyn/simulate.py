"""Time integration of the equations of motion.

:func:`simulate` integrates ``q̇ = v`` (on the configuration manifold: through
:func:`soadyn.integrate` for RK4, through the quaternion kinematics and
renormalisation for the adaptive methods) and ``v̇ = aba(q, v, τ)`` with fixed-step RK4 or an adaptive
``scipy.integrate.solve_ivp`` method, recording time, states and energy.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from .dynamics.aba import aba
from .dynamics.energy import kinetic_energy, potential_energy
from .joints import configuration_rate, integrate, normalize

__all__ = ["simulate", "SimulationResult"]


@dataclass
class SimulationResult:
    """Trajectory of a simulation.

    Attributes: ``t`` (K,) [s], ``q`` (K, nq), ``v`` (K, nv), ``energy`` (K,) total
    mechanical energy T + U [J], and ``info`` (method details)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def energy_drift(self):
        """max |E(t) − E(0)| [J]."""
        return float(np.max(np.abs(self.energy - self.energy[0])))


def _torque(tau, t, q, v, nv):
    if tau is None:
        return np.zeros(nv)
    if callable(tau):
        out = np.asarray(tau(t, q, v), dtype=float)
    else:
        out = np.asarray(tau, dtype=float)
    if out.shape != (nv,):
        raise ValueError(f"tau: expected shape ({nv},) (or a function returning it), got {out.shape}")
    return out


def _progress(enabled, k, n):
    if enabled and (k % max(1, n // 50) == 0 or k == n):
        bar = "#" * (30 * k // n)
        sys.stderr.write(f"\rsimulating [{bar:<30s}] {100 * k // n:3d}%")
        if k == n:
            sys.stderr.write("\n")
        sys.stderr.flush()


def simulate(model, q0, v0, t_final, dt=1e-3, tau=None, *, method="rk4", rtol=1e-9, atol=1e-9,
             record_every=1, progress=False):
    """Integrate the tree dynamics from ``(q0, v0)`` over [0, ``t_final``] seconds.

    Parameters
    ----------
    model : Model
    q0 : (nq,), v0 : (nv,) initial state.
    t_final : float [s]; dt : float, step [s] (RK4) or output spacing (adaptive).
    tau : None (zero), an (nv,) array, or a function ``tau(t, q, v) -> (nv,)``.
    method : ``"rk4"`` (fixed step) or a ``scipy.integrate.solve_ivp`` method name
        (``"RK45"``, ``"DOP853"``, ``"Radau"``, ...), tolerances ``rtol``/``atol``.
    record_every : keep every k-th RK4 step.
    progress : show a progress bar on stderr.

    Returns
    -------
    SimulationResult
    """
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final: expected a positive duration, got {t_final!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive step, got {dt!r}")
    q = np.array(q0, dtype=float)
    v = np.array(v0, dtype=float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise ValueError(f"q0, v0: expected shapes ({model.nq},) and ({model.nv},), got {q.shape} and {v.shape}")
    nv = model.nv

    def accel(t, q, v):
        return aba(model, q, v, _torque(tau, t, q, v, nv))

    def energy(q, v):
        return kinetic_energy(model, q, v) + potential_energy(model, q)

    if method == "rk4":
        n = int(round(t_final / dt))
        ts, qs, vs = [0.0], [q.copy()], [v.copy()]
        t = 0.0
        for k in range(1, n + 1):
            # RK4 on the manifold: stages move q by integrate(q, v_stage, h)
            a1 = accel(t, q, v)
            q2, v2 = integrate(model, q, v, dt / 2), v + a1 * dt / 2
            a2 = accel(t + dt / 2, q2, v2)
            q3, v3 = integrate(model, q, v2, dt / 2), v + a2 * dt / 2
            a3 = accel(t + dt / 2, q3, v3)
            q4, v4 = integrate(model, q, v3, dt), v + a3 * dt
            a4 = accel(t + dt, q4, v4)
            q = integrate(model, q, (v + 2 * v2 + 2 * v3 + v4) / 6, dt)
            v = v + (a1 + 2 * a2 + 2 * a3 + a4) * dt / 6
            t = k * dt
            if k % record_every == 0 or k == n:
                ts.append(t)
                qs.append(q.copy())
                vs.append(v.copy())
            _progress(progress, k, n)
        T, Q, Vv = np.array(ts), np.array(qs), np.array(vs)
        info = {"method": "rk4", "dt": dt, "steps": n}
    else:
        from scipy.integrate import solve_ivp
        nq = model.nq

        def rhs(t, y):
            qq, vv = normalize(model, y[:nq]), y[nq:]
            return np.concatenate([configuration_rate(model, qq, vv), accel(t, qq, vv)])

        t_eval = np.linspace(0.0, t_final, int(round(t_final / dt)) + 1)
        sol = solve_ivp(rhs, (0.0, t_final), np.concatenate([q, v]), method=method,
                        t_eval=t_eval, rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp ({method}) failed: {sol.message}")
        T = sol.t
        Q = np.array([normalize(model, x) for x in sol.y[:nq].T])
        Vv = sol.y[nq:].T.copy()
        info = {"method": method, "nfev": sol.nfev, "rtol": rtol, "atol": atol}
    E = np.array([energy(qq, vv) for qq, vv in zip(Q, Vv)])
    return SimulationResult(T, Q, Vv, E, info)
