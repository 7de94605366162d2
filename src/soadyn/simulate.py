"""Time integration of the equations of motion.

:func:`simulate` integrates ``q̇ = v`` (on the configuration manifold: through
:func:`soadyn.integrate` for RK4, through the quaternion kinematics and
renormalisation for the adaptive methods) and ``v̇`` from the forward dynamics with
fixed-step RK4 or an adaptive ``scipy.integrate.solve_ivp`` method, recording time,
states and energy.

Tree models use ``aba``. Closed-chain models (loop joints, couplings, user
constraints) use :func:`soadyn.constrained_forward_dynamics`; the DAE then drifts off
the constraint manifold and is stabilized ([Jain24], "Augmented method comments":
error control when integrating the DAE) either by

* ``"baumgarte"``: the acceleration constraint becomes 𝔡̈ + 2α𝔡̇ + β²𝔡 = 0, or
* ``"projection"``: after every step (RK4) or every output interval (adaptive) the
  configuration is projected back onto 𝔡 = 0 and the velocity onto G v = 𝔘
  (least-norm corrections, :func:`soadyn.close_loops` with no coordinate held fixed),

and the result records the constraint residual history.

``coordinates="independent"`` integrates the independent coordinates (y, ẏ) of the
cluster tree instead, with ÿ from C-ABA ([Chignoli23, §X]): the explicit constraint form
q = γ(y), q̇ = G ẏ holds by construction, so no stabilization is needed; γ is solved from
the previous step's configuration (the mechanism keeps its assembly branch).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

from .closed.assembly import close_loops
from .closed.embedding.algorithms import cluster_aba, spanning_state
from .closed.embedding.clusters import cluster_tree
from .closed.forward import METHODS, solve_constrained
from .closed.kinematics import check_residuals, evaluate_constraints
from .core import validation as val
from .core.constraints import ConstraintError
from .core.configuration import configuration_rate, integrate, normalize
from .dynamics.aba import aba
from .dynamics.energy import kinetic_energy, potential_energy

__all__ = ["simulate", "SimulationResult"]


@dataclass
class SimulationResult:
    """Trajectory of a simulation.

    Attributes: ``t`` (K,) [s], ``q`` (K, nq), ``v`` (K, nv), ``energy`` (K,) total
    mechanical energy T + U [J], ``info`` (method details) and, for closed chains,
    ``constraint_residual`` (K,) max |𝔡(q, t)| over the holonomic rows [m, rad] and
    ``velocity_residual`` (K,) max |G_c v − 𝔘|."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    info: dict = field(default_factory=dict)
    constraint_residual: np.ndarray | None = None
    velocity_residual: np.ndarray | None = None

    @property
    def energy_drift(self):
        """max |E(t) − E(0)| [J]."""
        return float(np.max(np.abs(self.energy - self.energy[0])))

    @property
    def constraint_drift(self):
        """max over time of the position residual (closed chains; None for trees)."""
        return None if self.constraint_residual is None else float(np.max(self.constraint_residual))

    def plot(self, q_index=None, v_index=None):
        """Draw the trajectory: joint coordinates q(t), velocities v(t), the energy E(t)
        and, for closed chains, the constraint residual max |𝔡(q(t))| (log scale).

        Parameters
        ----------
        q_index, v_index : indices of the entries of q and v to draw (sequences of ints);
            default all of them.

        Returns
        -------
        matplotlib.figure.Figure, with one Axes per panel, top to bottom: q [m, rad],
        v [m/s, rad/s], E [J] and, for closed chains, the residual [m, rad].
        """
        import matplotlib.pyplot as plt  # optional dependency (extra 'plot'): imported to draw only

        iq = _indices(q_index, self.q.shape[1], "q_index")
        iv = _indices(v_index, self.v.shape[1], "v_index")
        closed = self.constraint_residual is not None
        fig, axes = plt.subplots(4 if closed else 3, 1, figsize=(7, 8 if closed else 6.5), sharex=True)
        for ax, x, idx, name, unit in ((axes[0], self.q, iq, "q", "[m, rad]"),
                                       (axes[1], self.v, iv, "v", "[m/s, rad/s]")):
            for k in idx:
                ax.plot(self.t, x[:, k], label=f"{name}[{k}]")
            ax.set_ylabel(f"{name} {unit}")
            if 0 < len(idx) <= 10:  # a legend of more entries hides the curves
                ax.legend(loc="upper right", fontsize=7, ncol=min(len(idx), 5))
        axes[2].plot(self.t, self.energy, color="k")
        axes[2].set_ylabel("E = T + U [J]")
        axes[2].set_title(f"energy drift max |E(t) − E(0)| = {self.energy_drift:.3g} J", fontsize=8)
        if closed:
            # exact zeros (e.g. at t = 0) have no logarithm: matplotlib leaves them out
            axes[3].semilogy(self.t, self.constraint_residual, color="C3")
            axes[3].set_ylabel("max |d(q)| [m, rad]")  # 𝔡: no glyph in the default font
            axes[3].set_title(f"constraint residual, max {self.constraint_drift:.3g}", fontsize=8)
        axes[-1].set_xlabel("t [s]")
        method = self.info.get("method", "")
        fig.suptitle(f"simulation ({method})" if method else "simulation", fontsize=9)
        fig.tight_layout()
        return fig


def _indices(index, n, name):
    """``index`` as an int array of indices into 0..n-1 (None: all of them)."""
    if index is None:
        return np.arange(n)
    idx = np.asarray(index)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu") or np.any((idx < 0) | (idx >= n)):
        raise ValueError(f"{name}: expected a sequence of indices in [0, {n}), got {index!r}")
    return idx.astype(int)


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


def _closed_chain_parts(model, stabilization, baumgarte, constraint_method):
    """(accel(t, q, v, tau), project(t, q, v) or None, residuals(t, q, v)) for a closed chain."""

    if stabilization not in ("baumgarte", "projection", "none"):
        raise ValueError(f"stabilization: expected 'baumgarte', 'projection' or 'none', got {stabilization!r}")
    if constraint_method not in METHODS:
        raise ValueError(f"constraint_method: expected one of {sorted(METHODS)}, got {constraint_method!r}")
    if constraint_method == "embedding" and stabilization == "baumgarte":
        raise ValueError("stabilization: constraint_method='embedding' satisfies the acceleration constraints "
                         "exactly and takes no Baumgarte terms; use stabilization='projection' (or 'none')")
    gains = None
    if stabilization == "baumgarte":
        gains = val.baumgarte_gains(baumgarte)
        if gains is None:
            raise ValueError("baumgarte: stabilization='baumgarte' needs two finite non-negative gains (alpha, beta) "
                             "[1/s], got None")

    def accel(t, q, v, tau):
        return solve_constrained(model, q, v, tau, constraint_method, t=t, baumgarte=gains).qdd

    def project(t, q, v):
        return close_loops(model, q, v, independent=(), t=t, tol=1e-12)

    def residuals(t, q, v):
        st = evaluate_constraints(model, q, None, t, bias=False)
        hol = st.constraints.holonomic
        return (float(np.abs(st.residual[hol]).max(initial=0.0)),
                float(np.abs(st.velocity_residual(v)).max(initial=0.0)))

    return accel, project if stabilization == "projection" else None, residuals


def _simulate_independent(model, q, v, t_final, dt, tau, record_every, progress, check, residual_tol):
    """:func:`simulate` with ``coordinates="independent"`` (the module docstring)."""
    tree = cluster_tree(model)
    if any(cl.joint._locked_v.size for cl in tree.clusters):
        raise ValueError(f"coordinates: 'independent' needs ẏ to be the time derivative of y; in model "
                         f"{model.name!r} some joint is only partly independent (ẏ holds some of its velocity "
                         "directions only): integrate the spanning coordinates instead")
    _, _, residuals = _closed_chain_parts(model, "none", None, "embedding")
    if check:
        try:
            check_residuals(evaluate_constraints(model, q, None, 0.0, bias=False), v, residual_tol)
        except ConstraintError as e:
            raise ConstraintError(f"q0, v0 (the initial state): {e}") from None
    nv = model.nv
    iq, iv = tree.independent_q_index, tree.independent_v_index
    y, yd = q[iq], v[iv]

    def advance(y, yd, h):
        """y ⊕ ẏ h on the joints' configuration manifolds (the joints of y are whole
        joints: their coordinates and velocities move as in the spanning tree)."""
        x = q.copy()  # the dependent entries do not move (zero velocity there)
        x[iq] = y
        w = np.zeros(nv)
        w[iv] = yd
        return integrate(model, x, w, h)[iq]

    def accel(t, y, yd, q_guess):
        # γ(y) from the trajectory's previous configuration: the mechanism stays on its
        # assembly branch (a solve from the clusters' references could change branch)
        qs, vs = spanning_state(model, y, yd, q_guess)
        if tau is None:
            return cluster_aba(model, y, yd, np.zeros(tree.nyv), q=qs)
        G = tree.explicit_jacobian(qs)
        return cluster_aba(model, y, yd, G.T @ _torque(tau, t, qs, vs, nv), q=qs)

    n = int(round(t_final / dt))
    ts, qs, vs = [0.0], [q.copy()], [v.copy()]
    t, guess = 0.0, q.copy()
    for k in range(1, n + 1):
        a1 = accel(t, y, yd, guess)
        y2, yd2 = advance(y, yd, dt / 2), yd + a1 * dt / 2
        a2 = accel(t + dt / 2, y2, yd2, guess)
        y3, yd3 = advance(y, yd2, dt / 2), yd + a2 * dt / 2
        a3 = accel(t + dt / 2, y3, yd3, guess)
        y4, yd4 = advance(y, yd3, dt), yd + a3 * dt
        a4 = accel(t + dt, y4, yd4, guess)
        y = advance(y, (yd + 2 * yd2 + 2 * yd3 + yd4) / 6, dt)
        yd = yd + (a1 + 2 * a2 + 2 * a3 + a4) * dt / 6
        t = k * dt
        guess, vk = spanning_state(model, y, yd, guess)
        if k % record_every == 0 or k == n:
            ts.append(t)
            qs.append(guess.copy())
            vs.append(vk)
        _progress(progress, k, n)
    T, Q, Vv = np.array(ts), np.array(qs), np.array(vs)
    E = np.array([kinetic_energy(model, qq, vv) + potential_energy(model, qq) for qq, vv in zip(Q, Vv)])
    res = SimulationResult(T, Q, Vv, E, {"method": "rk4", "dt": dt, "steps": n, "coordinates": "independent"})
    hist = np.array([residuals(tt, qq, vv) for tt, qq, vv in zip(T, Q, Vv)])
    res.constraint_residual, res.velocity_residual = hist[:, 0], hist[:, 1]
    return res


def simulate(model, q0, v0, t_final, dt=1e-3, tau=None, *, method="rk4", rtol=1e-9, atol=1e-9,
             record_every=1, progress=False, stabilization="baumgarte", baumgarte=(10.0, 10.0),
             constraint_method="augmented", check=True, residual_tol=1e-6, coordinates="spanning"):
    """Integrate the dynamics from ``(q0, v0)`` over [0, ``t_final``] seconds.

    Parameters
    ----------
    model : Model (a tree, or a closed chain with constraints).
    q0 : (nq,), v0 : (nv,) initial state (consistent with the constraints, see
        :func:`soadyn.close_loops`); v0 None means zero.
    t_final : float [s]; dt : float, step [s] (RK4) or output spacing (adaptive).
    tau : None (zero), an (nv,) array, or a function ``tau(t, q, v) -> (nv,)``.
    method : ``"rk4"`` (fixed step) or a ``scipy.integrate.solve_ivp`` method name
        (``"RK45"``, ``"DOP853"``, ``"Radau"``, ...), tolerances ``rtol``/``atol``.
    record_every : keep every k-th RK4 step.
    progress : show a progress bar on stderr.
    stabilization : closed chains only: ``"baumgarte"`` (default), ``"projection"`` or
        ``"none"``; ``baumgarte`` = (α, β) [1/s], the gains of 𝔡̈ + 2α𝔡̇ + β²𝔡 = 0.
    constraint_method : closed chains only: the forward-dynamics method
        (``soadyn.closed.METHODS``).
    check : closed chains only: check that (q0, v0) satisfies the constraints (default
        True): raise ConstraintError when a position residual |𝔡| or a velocity residual
        |G_c v − 𝔘| exceeds ``residual_tol`` (absolute, default 1e-6). From an
        inconsistent start the stabilization first pulls the state onto the constraint
        manifold, and the energy history then measures that jump, not the integration.
        ``check=False`` skips it.
    coordinates : closed chains only: ``"spanning"`` (default: the spanning-tree
        coordinates, with ``stabilization``) or ``"independent"``: the independent
        coordinates (y, ẏ) of the cluster tree, integrated with fixed-step RK4 and ÿ from
        C-ABA ([Chignoli23, §X]); no stabilization (the constraints hold by construction
        of q = γ(y)), ``stabilization``, ``baumgarte`` and ``constraint_method`` unused.
        Spanning-tree ``tau`` enters as τ_ind = Gᵀτ. γ(y) is solved at every stage from
        the previous step's configuration, so that the mechanism stays on the assembly
        branch it started on; the recorded q, v are the spanning state (γ(y), G ẏ).

    Returns
    -------
    SimulationResult (closed chains: with ``constraint_residual`` and
    ``velocity_residual`` histories).
    """
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final: expected a positive duration, got {t_final!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive step, got {dt!r}")
    q = np.array(q0, dtype=float)
    v = np.zeros(model.nv) if v0 is None else np.array(v0, dtype=float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise ValueError(f"q0, v0: expected shapes ({model.nq},) and ({model.nv},), got {q.shape} and {v.shape}")
    nv = model.nv
    closed = model.has_constraints
    if coordinates not in ("spanning", "independent"):
        raise ValueError(f"coordinates: expected 'spanning' or 'independent', got {coordinates!r}")
    if coordinates == "independent":
        if not closed:
            raise ValueError("coordinates: 'independent' integrates the cluster tree of a closed chain; model "
                             f"{model.name!r} has no constraints (its coordinates are all independent already)")
        if method != "rk4":
            raise ValueError(f"method: coordinates='independent' integrates with fixed-step 'rk4', got {method!r}")
        return _simulate_independent(model, q, v, t_final, dt, tau, record_every, progress, check, residual_tol)
    if closed:
        constrained_accel, project, residuals = _closed_chain_parts(model, stabilization, baumgarte,
                                                                    constraint_method)
        if check:
            try:
                check_residuals(evaluate_constraints(model, q, None, 0.0, bias=False), v, residual_tol)
            except ConstraintError as e:
                raise ConstraintError(f"q0, v0 (the initial state): {e}") from None

        def accel(t, q, v):
            return constrained_accel(t, q, v, _torque(tau, t, q, v, nv))
    else:
        project = residuals = None

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
            if project is not None:
                q, v = project(t, q, v)
            if k % record_every == 0 or k == n:
                ts.append(t)
                qs.append(q.copy())
                vs.append(v.copy())
            _progress(progress, k, n)
        T, Q, Vv = np.array(ts), np.array(qs), np.array(vs)
        info = {"method": "rk4", "dt": dt, "steps": n}
    else:
        nq = model.nq
        n_out = int(round(t_final / dt))

        def rhs(t, y):
            qq, vv = normalize(model, y[:nq]), y[nq:]
            if progress:
                _progress(True, min(n_out - 1, int(t / t_final * n_out)), n_out)
            return np.concatenate([configuration_rate(model, qq, vv), accel(t, qq, vv)])

        def solve(t0, t1, y0, t_eval):
            sol = solve_ivp(rhs, (t0, t1), y0, method=method, t_eval=t_eval, rtol=rtol, atol=atol)
            if not sol.success:
                raise RuntimeError(f"solve_ivp ({method}) failed: {sol.message}")
            return sol

        t_eval = np.linspace(0.0, t_final, n_out + 1)
        if project is None:
            sol = solve(0.0, t_final, np.concatenate([q, v]), t_eval)
            T, Y, nfev = sol.t, sol.y.T, sol.nfev
        else:
            # restart the integrator on every output interval from the projected state
            Y, nfev = [np.concatenate([q, v])], 0
            for k in range(n_out):
                sol = solve(t_eval[k], t_eval[k + 1], Y[-1], None)
                nfev += sol.nfev
                qq, vv = project(t_eval[k + 1], normalize(model, sol.y[:nq, -1]), sol.y[nq:, -1])
                Y.append(np.concatenate([qq, vv]))
            T, Y = t_eval, np.array(Y)
        if progress:
            _progress(True, n_out, n_out)
        Q = np.array([normalize(model, x) for x in Y[:, :nq]])
        Vv = Y[:, nq:].copy()
        info = {"method": method, "nfev": nfev, "rtol": rtol, "atol": atol}
    E = np.array([energy(qq, vv) for qq, vv in zip(Q, Vv)])
    res = SimulationResult(T, Q, Vv, E, info)
    if closed:
        hist = np.array([residuals(tt, qq, vv) for tt, qq, vv in zip(T, Q, Vv)])
        res.constraint_residual, res.velocity_residual = hist[:, 0], hist[:, 1]
        info.update(stabilization=stabilization, constraint_method=constraint_method)
        if stabilization == "baumgarte":
            info["baumgarte"] = tuple(baumgarte)
    return res
