"""Time integration of the equations of motion.

:func:`simulate` integrates ``q̇ = v`` (on the configuration manifold) and ``v̇`` from
the forward dynamics with fixed-step RK4 or an adaptive ``scipy.integrate.solve_ivp``
method, recording time, states and energy.

RK4 is the Runge–Kutta–Munthe-Kaas form of classical RK4 ([MuntheKaas99]; the scheme
of :mod:`soadyn.kernels.rollout`, which :func:`soadyn.rollout` compiles): its stages are
points q_k ⊕ u_i of one chart around q_k (:func:`soadyn.integrate`) and it sums the rates
of those exponential coordinates, dexp⁻¹_{−u_i}(v_i)
(:func:`soadyn.dynamics.rollout.exponential_coordinate_rate`), so that it is of fourth
order in q and v on spherical and free joints too (summing the stage velocities
themselves is of second order in q there). The adaptive methods integrate the quaternion
kinematics q̇ = ½ q ⊗ ω (:func:`soadyn.configuration_rate`) and renormalise.

The time grid: ``t_final`` is reached exactly. The steps are dt long but the last, which
is shortened to end at ``t_final`` when dt does not divide it (a remainder below 1e-9 dt,
the rounding of t_final/dt, is absorbed into the last step instead). A run is bounded:
more than ``max_steps`` steps (default :data:`MAX_STEPS`) raise ValueError before any
work; ``record_every`` keeps the record of a long run small.

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

import math
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
from .core.compile import snapshot
from .core.constraints import ConstraintError
from .core.configuration import configuration_rate, integrate, normalize
from .dynamics.aba import aba
from .dynamics.energy import kinetic_energy, potential_energy
from .dynamics.rollout import exponential_coordinate_rate

__all__ = ["simulate", "SimulationResult", "MAX_STEPS"]

#: the default cap of :func:`simulate` on the number of steps (RK4) or output intervals
#: (adaptive methods) of one call: 10⁶, 1000 s at dt = 1 ms. It bounds the run time (four
#: evaluations of the dynamics per RK4 step) and the memory of the record (at most
#: max_steps/record_every + 2 states), so that a mistyped t_final (1e12 s) is an error,
#: not a run that ends when the memory does. A cap on the memory alone would not bound
#: the time of a run with a large ``record_every``.
MAX_STEPS = 1_000_000

#: a remainder of t_final/dt below this fraction of a step is rounding: no extra step
_GRID_TOLERANCE = 1e-9


@dataclass
class SimulationResult:
    """Trajectory of a simulation.

    Attributes: ``t`` (K,) [s], ``q`` (K, nq), ``v`` (K, nv), ``energy`` (K,) total
    mechanical energy T + U [J], ``info`` (method details) and, for closed chains,
    ``constraint_residual`` (K,) max |𝔡(q, t)| over the holonomic rows [m, rad] and
    ``velocity_residual`` (K,) max |G_c v − 𝔘|. With ``contacts=True``: ``contacts``, a
    :class:`~soadyn.contact.rollout.ContactRecord` of the steps that end at the recorded
    times ((K − 1,): contact count, solver iterations, convergence, NCP residuals, Σλ_n
    [N s], largest depth [m]), and ``contact_points``, per recorded time after t_0 a
    (k, 6) array of the contact points [m] and contact forces [N] (world frame, on the
    second object: C λ / dt) of that step."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    energy: np.ndarray
    info: dict = field(default_factory=dict)
    constraint_residual: np.ndarray | None = None
    velocity_residual: np.ndarray | None = None
    contacts: object | None = None
    contact_points: list | None = None

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


@dataclass(frozen=True)
class _TimeGrid:
    """The steps of a simulation over [0, t_final]: ``n`` steps, each ``dt`` long but the
    last, which ends at ``t_final`` exactly (shortened when dt does not divide t_final).
    ``every``: the steps recorded are the multiples of it, and the last."""

    n: int
    dt: float
    t_final: float
    every: int

    def time(self, k):
        """t_k [s], the end of step k (t_0 = 0, t_n = t_final)."""
        return self.t_final if k == self.n else k * self.dt

    def step(self, k):
        """The length [s] of step k = 1..n (from t_{k−1} to t_k)."""
        return self.t_final - (self.n - 1) * self.dt if k == self.n else self.dt

    def recorded(self, k):
        """Whether the state at the end of step k is recorded."""
        return k % self.every == 0 or k == self.n

    @property
    def samples(self):
        """The number of recorded states, t_0 included."""
        return 1 + self.n // self.every + (self.n % self.every != 0)

    def row(self, k):
        """The row of the record that holds the state at the end of step k, or None."""
        if k % self.every == 0:
            return k // self.every
        return self.samples - 1 if k == self.n else None

    def new_record(self, q, v):
        """(Q (samples, nq), V (samples, nv)), the record of a run, row 0 the state (q, v)."""
        Q, V = np.empty((self.samples, q.shape[0])), np.empty((self.samples, v.shape[0]))
        Q[0], V[0] = q, v
        return Q, V

    def recorded_times(self):
        """(samples,) the times [s] of the recorded states."""
        ks = np.arange(0, self.n + 1, self.every)
        if ks[-1] != self.n:
            ks = np.append(ks, self.n)
        t = ks * self.dt
        t[-1] = self.t_final
        return t


def _time_grid(t_final, dt, max_steps, record_every, what):
    """The :class:`_TimeGrid` of [0, t_final] in steps of dt (module docstring), or a
    ValueError before any work when it has more than ``max_steps`` steps."""
    steps = t_final / dt
    if not steps <= max_steps + _GRID_TOLERANCE:
        raise ValueError(
            f"t_final, dt: {t_final:g} s at dt = {dt:g} s is {steps:.4g} {what}, more than max_steps = {max_steps} (the "
            "cap on a call's run time and record, checked before any work); pass max_steps=N to allow more (and "
            "record_every=k to keep every k-th state only), or a larger dt")
    n = max(1, math.ceil(steps - _GRID_TOLERANCE))
    return _TimeGrid(n, dt, t_final, record_every)


def _finite(x, what, t):
    """``x``, or OverflowError when an entry is not finite (the dynamics left the finite
    numbers at time t: too large a step, state or force)."""
    if not np.isfinite(x).all():
        raise OverflowError(f"{what} at t = {t:g} s is not finite (inf or NaN): the simulation diverged, from a time "
                            "step too large for these dynamics or a state or force too large")
    return x


def _rk4_step(t, q, v, h, accel, advance, rate):
    """One RK4 step of length h from (t, q, v) in the Runge–Kutta–Munthe-Kaas form (the
    scheme of :mod:`soadyn.kernels.rollout`, [MuntheKaas99]): ``accel(t, q, v)`` the
    forward dynamics, ``advance(q, u, h)`` = q ⊕ u·h and ``rate(u, w, h)`` =
    dexp⁻¹_{−u h}(w), the rate of the exponential coordinates. Returns (q, v) at t + h."""
    a = accel(t, q, v)
    k = v  # K̃1 = v: dexp⁻¹ at u = 0 is the identity
    ksum, asum = v.copy(), a.copy()
    for c, weight in ((0.5, 2.0), (0.5, 2.0), (1.0, 1.0)):  # the nodes and weights of stages 2, 3, 4
        ch = c * h
        vs = v + ch * a
        a = accel(t + ch, advance(q, k, ch), vs)  # at q ⊕ u_i, u_i = c h K̃_{i−1}
        k = rate(k, vs, ch)  # K̃_i = dexp⁻¹_{−u_i}(v_i)
        ksum += weight * k
        asum += weight * a
    return advance(q, ksum, h / 6.0), v + h / 6.0 * asum


def _step(grid, k, q, v, accel, advance, rate):
    """Step k of ``grid`` by :func:`_rk4_step`; an overflow names the time of the step."""
    t = grid.time(k - 1)
    try:
        return _rk4_step(t, q, v, grid.step(k), accel, advance, rate)
    except OverflowError as e:
        raise OverflowError(f"simulate, the step from t = {t:g} s: {e}") from None


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
        return _finite(solve_constrained(model, q, v, tau, constraint_method, t=t, baumgarte=gains).qdd,
                       "the acceleration", t)

    def project(t, q, v):
        return close_loops(model, q, v, independent=(), t=t, tol=1e-12)

    def residuals(t, q, v):
        st = evaluate_constraints(model, q, None, t, bias=False)
        hol = st.constraints.holonomic
        return (float(np.abs(st.residual[hol]).max(initial=0.0)),
                float(np.abs(st.velocity_residual(v)).max(initial=0.0)))

    return accel, project if stabilization == "projection" else None, residuals


def _simulate_independent(model, q, v, grid, tau, progress, check, residual_tol):
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

    def spanning_velocity(w):
        full = np.zeros(nv)  # the dependent entries do not move (zero velocity there)
        full[iv] = w
        return full

    def advance(y, w, h):
        """y ⊕ w h on the joints' configuration manifolds (the joints of y are whole
        joints: their coordinates and velocities move as in the spanning tree)."""
        x = q.copy()
        x[iq] = y
        return integrate(model, x, spanning_velocity(w), h)[iq]

    def rate(u, w, h):
        """dexp⁻¹_{−u h}(w) of the independent joints (whole joints, as in ``advance``)."""
        return exponential_coordinate_rate(model, spanning_velocity(u), spanning_velocity(w), h)[iv]

    guess = q.copy()

    def accel(t, y, yd):
        # γ(y) from the trajectory's previous configuration: the mechanism stays on its
        # assembly branch (a solve from the clusters' references could change branch)
        qs, vs = spanning_state(model, y, yd, guess)
        if tau is None:
            return _finite(cluster_aba(model, y, yd, np.zeros(tree.nyv), q=qs), "the acceleration", t)
        G = tree.explicit_jacobian(qs)
        return _finite(cluster_aba(model, y, yd, G.T @ _torque(tau, t, qs, vs, nv), q=qs), "the acceleration", t)

    T = grid.recorded_times()
    Q, Vv = grid.new_record(q, v)
    for k in range(1, grid.n + 1):
        y, yd = _step(grid, k, y, yd, accel, advance, rate)
        guess, vk = spanning_state(model, y, yd, guess)
        r = grid.row(k)
        if r is not None:
            Q[r], Vv[r] = guess, vk
        _progress(progress, k, grid.n)
    E = np.array([kinetic_energy(model, qq, vv) + potential_energy(model, qq) for qq, vv in zip(Q, Vv)])
    res = SimulationResult(T, Q, Vv, E, {"method": "rk4", "dt": grid.dt, "steps": grid.n,
                                         "coordinates": "independent"})
    hist = np.array([residuals(tt, qq, vv) for tt, qq, vv in zip(T, Q, Vv)])
    res.constraint_residual, res.velocity_residual = hist[:, 0], hist[:, 1]
    return res


def _simulate_contacts(user_model, model, q, v, grid, tau, progress, settings):
    """:func:`simulate` with ``contacts=True``: :func:`soadyn.step` step by step."""
    import warnings

    from .contact.rollout import ContactRecord
    from .contact.settings import settings_argument
    from .contact.solver import ContactSolverWarning
    from .contact.step import step

    settings = settings_argument(settings, "contact_settings")
    nv = model.nv
    T = grid.recorded_times()
    Q, Vv = grid.new_record(q, v)
    stats = np.full((grid.samples - 1, 8), np.nan)
    points = []
    result, failed, worst = None, 0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ContactSolverWarning)  # one summary below, not one per step
        for k in range(1, grid.n + 1):
            t, h = grid.time(k - 1), grid.step(k)
            try:
                result = step(user_model, q, v, _torque(tau, t, q, v, nv), h, settings=settings, warm_start=result)
            except OverflowError as e:
                raise OverflowError(f"simulate, the step from t = {t:g} s: {e}") from None
            q, v = result.q, result.v
            sol = result.solution
            if not sol.converged:
                failed += 1
                worst = max(worst, sol.residual)
            r = grid.row(k)
            if r is not None:
                Q[r], Vv[r] = q, v
                c = result.contacts
                lam = result.impulses
                stats[r - 1] = (len(c), sol.iterations, sol.converged, sol.primal, sol.dual, sol.complementarity,
                                lam[:, 2].sum(), c.depth.max(initial=0.0))
                points.append(np.hstack([c.point, np.einsum("kij,kj->ki", c.frame, lam) / h]))
            _progress(progress, k, grid.n)
    if failed:
        warnings.warn(f"simulate: the contact solve ({settings.friction_solver}) did not converge in {failed} of "
                      f"{grid.n} steps (largest residual {worst:.3g}, tol {settings.tol:g}); raise "
                      "ContactSettings.max_iter or tol", ContactSolverWarning, stacklevel=3)
    E = np.array([kinetic_energy(model, qq, vv) + potential_energy(model, qq) for qq, vv in zip(Q, Vv)])
    cols = [stats[:, c] for c in range(8)]
    cols[2] = cols[2] == 1.0
    info = {"method": "semi-implicit-euler", "dt": grid.dt, "steps": grid.n, "contacts": True,
            "contact_settings": settings}
    return SimulationResult(T, Q, Vv, E, info, contacts=ContactRecord(*cols), contact_points=points)


def simulate(model, q0, v0, t_final, dt=1e-3, tau=None, *, method="rk4", rtol=1e-9, atol=1e-9,
             record_every=1, max_steps=MAX_STEPS, progress=False, stabilization="baumgarte",
             baumgarte=(10.0, 10.0), constraint_method="augmented", check=True, residual_tol=1e-6,
             coordinates="spanning", contacts=False, contact_settings=None):
    """Integrate the dynamics from ``(q0, v0)`` over [0, ``t_final``] seconds.

    Parameters
    ----------
    model : Model (a tree, or a closed chain with constraints).
    q0 : (nq,), v0 : (nv,) initial state (consistent with the constraints, see
        :func:`soadyn.close_loops`); v0 None means zero.
    t_final : float [s], the end of the run, reached exactly; dt : float, step [s] (RK4)
        or output spacing (adaptive). Both finite positive real numbers. The times are
        0, dt, 2 dt, ..., and t_final: when dt does not divide t_final the last step is
        shortened to end there (``simulate(model, q, v, 0.0105, 1e-3)`` takes ten steps of
        1 ms and one of 0.5 ms; ``dt`` larger than ``t_final`` gives one step of
        ``t_final``); a remainder below 1e-9 dt (the rounding of t_final/dt) lengthens the
        last step instead of adding one.
    tau : None (zero), an (nv,) array, or a function ``tau(t, q, v) -> (nv,)``.
    method : ``"rk4"`` (default; fixed step; the Runge–Kutta–Munthe-Kaas form of classical RK4,
        fourth order in q and v on every joint, see the module docstring) or a
        ``scipy.integrate.solve_ivp`` method name (``"RK45"``, ``"DOP853"``, ``"Radau"``,
        ...), tolerances ``rtol``/``atol``.
    record_every : a positive integer k: keep the state of every k-th step (RK4) or output
        time (adaptive), and the last; the record of a long run is then ~n/k states.
    max_steps : a positive integer, the most steps (RK4) or output intervals (adaptive;
        ``solve_ivp`` chooses its own steps between them) a call may take, default
        :data:`MAX_STEPS` = 10⁶: a bound on the run time and on the memory of the record
        (at most max_steps/record_every + 2 states of nq + nv + 2 numbers). A request for
        more (t_final/dt above it) raises ValueError before any work; pass a larger
        ``max_steps`` (and a ``record_every``) for longer runs.
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
    contacts : True: frictional contact between the model's collision objects, each step
        one :func:`soadyn.step` (semi-implicit at the velocity level, fixed step dt;
        ``method`` must be ``"rk4"`` (the default, then unused) or
        ``"semi-implicit-euler"``), warm started from the step before; ``tau`` as above
        (a function of (t, q, v) is evaluated at each step's start). A model with
        constraints raises :class:`~soadyn.ClosedChainError` for now.
    contact_settings : with ``contacts``, a :class:`~soadyn.ContactSettings` (None: defaults).

    Returns
    -------
    SimulationResult (closed chains: with ``constraint_residual`` and
    ``velocity_residual`` histories); ``t[-1] == t_final``. Raises OverflowError when the
    state or the acceleration leaves the finite numbers (a diverging run: too large a
    step, state or force), naming the time.
    """
    user_model = model
    model = snapshot(model)
    if contacts not in (True, False):
        raise TypeError(f"contacts: expected True or False, got {contacts!r}")
    if contact_settings is not None and not contacts:
        raise ValueError("contact_settings: applies to simulations with contact (contacts=True)")
    t_final = val.finite_scalar(t_final, "t_final")
    if not t_final > 0:
        raise ValueError(f"t_final: expected a positive duration [s], got {t_final!r}")
    dt = val.finite_scalar(dt, "dt")
    if not dt > 0:
        raise ValueError(f"dt: expected a positive step [s], got {dt!r}")
    record_every = val.count(record_every, "record_every")
    max_steps = val.count(max_steps, "max_steps")
    grid = _time_grid(t_final, dt, max_steps, record_every, "steps" if method == "rk4" else "output intervals")
    q = np.array(q0, dtype=float)
    v = np.zeros(model.nv) if v0 is None else np.array(v0, dtype=float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise ValueError(f"q0, v0: expected shapes ({model.nq},) and ({model.nv},), got {q.shape} and {v.shape}")
    nv = model.nv
    closed = model.has_constraints
    if contacts:
        if method not in ("rk4", "semi-implicit-euler"):
            raise ValueError(f"method: a simulation with contacts steps by semi-implicit Euler (velocity-level "
                             f"impulses), got {method!r}")
        return _simulate_contacts(user_model, model, q, v, grid, tau, progress, contact_settings)
    if coordinates not in ("spanning", "independent"):
        raise ValueError(f"coordinates: expected 'spanning' or 'independent', got {coordinates!r}")
    if coordinates == "independent":
        if not closed:
            raise ValueError("coordinates: 'independent' integrates the cluster tree of a closed chain; model "
                             f"{model.name!r} has no constraints (its coordinates are all independent already)")
        if method != "rk4":
            raise ValueError(f"method: coordinates='independent' integrates with fixed-step 'rk4', got {method!r}")
        return _simulate_independent(model, q, v, grid, tau, progress, check, residual_tol)
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
            return _finite(aba(model, q, v, _torque(tau, t, q, v, nv)), "the acceleration", t)

    def energy(q, v):
        return kinetic_energy(model, q, v) + potential_energy(model, q)

    def advance(q, u, h):
        return integrate(model, q, u, h)

    def rate(u, w, h):
        return exponential_coordinate_rate(model, u, w, h)

    T = grid.recorded_times()
    if method == "rk4":
        Q, Vv = grid.new_record(q, v)
        for k in range(1, grid.n + 1):
            q, v = _step(grid, k, q, v, accel, advance, rate)
            t = grid.time(k)
            if project is not None:
                q, v = project(t, q, v)
            _finite(v, "the velocity", t)
            r = grid.row(k)
            if r is not None:
                Q[r], Vv[r] = q, v
            _progress(progress, k, grid.n)
        info = {"method": "rk4", "dt": dt, "steps": grid.n}
    else:
        nq, n_out = model.nq, grid.n

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

        if project is None:
            sol = solve(0.0, t_final, np.concatenate([q, v]), T)
            Y, nfev = sol.y.T, sol.nfev
        else:
            # restart the integrator on every output interval from the projected state
            Y, nfev, y = [np.concatenate([q, v])], 0, np.concatenate([q, v])
            for k in range(1, n_out + 1):
                t0, t1 = grid.time(k - 1), grid.time(k)
                sol = solve(t0, t1, y, None)
                nfev += sol.nfev
                qq, vv = project(t1, normalize(model, sol.y[:nq, -1]), sol.y[nq:, -1])
                y = np.concatenate([qq, vv])
                if grid.recorded(k):
                    Y.append(y)
            Y = np.array(Y)
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
