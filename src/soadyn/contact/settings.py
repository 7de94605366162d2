"""The settings and the result of a time step with contact: :class:`ContactSettings`,
:class:`StepResult` (used by :func:`soadyn.step`, :func:`soadyn.rollout` and
:func:`soadyn.simulate` with ``contacts=True``, for trees and closed chains alike)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..geometry.contacts import Contacts
from .solver import METHODS, ContactSolution

__all__ = ["ContactSettings", "StepResult", "DEFAULT_SETTINGS"]


def _number(value, name, expected, low=0.0, open_low=False):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"ContactSettings.{name}: expected {expected}, got {value!r} ({type(value).__name__})")
    x = float(value)
    if not math.isfinite(x) or x < low or (open_low and x == low):
        raise ValueError(f"ContactSettings.{name}: expected {expected}, got {value!r}")
    return x


@dataclass(frozen=True)
class ContactSettings:
    """How a step treats its contacts (:func:`soadyn.step`).

    The step is semi-implicit at the velocity level (DESIGN.md, "Contacts"): λ solves the
    Coulomb NCP of (G + R, g, μ) with G = J M⁻¹ Jᵀ at q and g = J v_free − b, and
    v⁺ = v_free + M⁻¹Jᵀλ. Contacts are inelastic: the normal velocity after the step is
    the least one the Signorini condition allows, σ_n⁺ ≥ b (no restitution, no rebound).

    **Penetration.** Contacts are detected at q, where bodies may overlap by a depth d
    (the step moves q with v⁺, which stops the approach but cannot undo an overlap
    already there). Each contact asks for a separating normal velocity of at least

        b = (stabilization / dt) · max(d − slop, 0)   (d ≥ 0: penetration)
        b = d / dt                                     (d < 0: a gap within ``margin``)

    a Baumgarte-like velocity bias: the overlap beyond the band ``slop`` is removed at the
    rate ``stabilization`` per step, an overlap within the band is left alone (so that a
    resting body does not jitter on its own correction). A body resting on the ground
    under gravity therefore sinks to a depth of about ``slop`` and stays there, within
    the documented penetration tolerance ``slop`` + g dt²/stabilization. The bias is a
    velocity: what pushes a deep overlap out stays in v⁺ when the overlap is gone, so a
    body started (or driven) a depth d into another leaves it with a normal velocity of
    up to stabilization·(d − slop)/dt; keep initial overlaps within the band (or lower
    ``stabilization``) where that matters. A gap contact (d < 0, only with ``margin`` > 0)
    lets the surfaces close it and no more, so fast bodies do not pass through each other
    in one step.

    **Compliance.** ``compliance`` is the diagonal R of :func:`soadyn.solve_contacts`
    [m/s per N s], the same for every row: 0 is rigid contact, R > 0 soft contact (the
    impulse λ = −σ/R along a row when the others are free; it also makes the solution
    unique, so solvers and warm starts agree to their tolerance).

    Attributes
    ----------
    friction_solver : "admm" (the proximal ADMM of [Carpentier24]) or "pgs".
    stabilization : β in [0, 1], the fraction of the overlap beyond ``slop`` removed per step.
    slop : the allowed overlap [m] ≥ 0 (no push-out below it).
    compliance : R ≥ 0 [m/s per N s], 0 rigid.
    tol : the largest accepted NCP residual (primal, dual, complementarity) > 0. The
        complementarity |λ·σ̂| is absolute [N s · m/s]: a contact carrying λ_n leaves a
        normal (and, sticking, tangential) velocity error up to about tol/λ_n, so the
        default 1e-10 keeps a resting body's creep below ~1e-7 m/s at λ_n ~ 1e-3 N s.
    max_iter : the solver's iteration limit (an integer ≥ 1); a step that reaches it
        says so (``StepResult.converged`` False and a :class:`~soadyn.ContactSolverWarning`).
    margin : the detection distance [m] ≥ 0: surfaces closer than this are contacts
        (with a negative depth, see above).
    warm_start : whether :func:`soadyn.rollout` starts each step's solve from the previous
        step's impulses (each contact from the previous contact of the same object pair
        nearest to it; :func:`soadyn.step` does so from its ``warm_start`` argument).
    """

    friction_solver: str = "admm"
    stabilization: float = 0.2
    slop: float = 5e-4
    compliance: float = 0.0
    tol: float = 1e-10
    max_iter: int = 2000
    margin: float = 0.0
    warm_start: bool = True
    _vector: np.ndarray = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self):
        if not isinstance(self.friction_solver, str) or self.friction_solver not in METHODS:
            raise ValueError(f"ContactSettings.friction_solver: expected one of {METHODS}, got "
                             f"{self.friction_solver!r}")
        stab = _number(self.stabilization, "stabilization", "a number in [0, 1] (the fraction of the overlap "
                                                            "removed per step)")
        if stab > 1.0:
            raise ValueError(f"ContactSettings.stabilization: expected a number in [0, 1], got {self.stabilization!r}")
        object.__setattr__(self, "stabilization", stab)
        object.__setattr__(self, "slop", _number(self.slop, "slop", "a length ≥ 0 [m]"))
        object.__setattr__(self, "compliance", _number(self.compliance, "compliance",
                                                       "a compliance ≥ 0 [m/s per N s]"))
        object.__setattr__(self, "tol", _number(self.tol, "tol", "a tolerance > 0", open_low=True))
        object.__setattr__(self, "margin", _number(self.margin, "margin", "a distance ≥ 0 [m]"))
        it = self.max_iter
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise ValueError(f"ContactSettings.max_iter: expected an integer ≥ 1, got {it!r}")
        object.__setattr__(self, "max_iter", int(it))
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise TypeError(f"ContactSettings.warm_start: expected True or False, got {self.warm_start!r}")
        object.__setattr__(self, "warm_start", bool(self.warm_start))
        from ..kernels.contact import step as ks
        prm = np.empty(ks.SETTINGS_SIZE)
        prm[ks.MARGIN], prm[ks.STABILIZATION], prm[ks.SLOP] = self.margin, self.stabilization, self.slop
        prm[ks.COMPLIANCE], prm[ks.TOL], prm[ks.MAX_ITER] = self.compliance, self.tol, self.max_iter
        prm[ks.SOLVER] = ks.ADMM if self.friction_solver == "admm" else ks.PGS
        object.__setattr__(self, "_vector", prm)

    def vector(self):
        """The settings as the kernels' vector (:mod:`soadyn.kernels.contact.step`; do not modify)."""
        return self._vector


#: the settings of a step given none
DEFAULT_SETTINGS = ContactSettings()


def settings_argument(settings, argname="settings"):
    """``settings`` checked (None: :data:`DEFAULT_SETTINGS`)."""
    if settings is None:
        return DEFAULT_SETTINGS
    if not isinstance(settings, ContactSettings):
        raise TypeError(f"{argname}: expected soadyn.ContactSettings or None, got {type(settings).__name__}")
    return settings


@dataclass(frozen=True, eq=False)
class StepResult:
    """One step with contact (:func:`soadyn.step`).

    Attributes
    ----------
    q : (nq,) the configuration q⁺ = q ⊕ dt v⁺.
    v : (nv,) the velocity v⁺ [rad/s, m/s].
    contacts : :class:`~soadyn.Contacts` detected at the step's initial q (k of them).
    impulses : (k, 3) λ per contact in its frame (t1, t2, n) [N s] (forces λ/dt).
    solution : the :class:`~soadyn.ContactSolution` of the step's NCP (with no contacts: an
        empty one, converged, zero iterations).
    solver_scale : (2,) ADMM's penalty scale at the end of the solve (L, the largest
        eigenvalue of G + R it used, and the exponent p of its spectral rule; L = 0: none),
        which a step warm started from this one takes with the impulses.
    solver_velocities : (3k,) σ = (G + R)λ + g of the solve [m/s] (the solution's velocities,
        flat), which a step warm started from this one takes as ADMM's dual start; None:
        none (the step starts the dual from σ of the warm impulses).
    """

    q: np.ndarray
    v: np.ndarray
    contacts: Contacts
    impulses: np.ndarray
    solution: ContactSolution
    solver_scale: np.ndarray = field(default=None, repr=False)
    solver_velocities: np.ndarray = field(default=None, repr=False)

    @property
    def converged(self):
        """Whether the contact solve reached its tolerance."""
        return self.solution.converged

    def __getattr__(self, name):
        # (called only for a name the instance's dictionary lacks: a field of a result of
        # soadyn.step not used yet, made now with the others by its builder ``_lazy``, a
        # (function, arguments) pair that gives them as a dictionary, and kept (see
        # soadyn.contact.step.recorded_result); two threads making them at once make equal
        # fields of the same record)
        lazy = self.__dict__.get("_lazy")
        if lazy is None or name not in _LAZY_FIELDS:
            raise AttributeError(f"'StepResult' object has no attribute {name!r}")
        build, args = lazy
        fields = build(*args)
        self.__dict__.update(fields)
        return fields[name]


#: the fields of a StepResult of :func:`soadyn.step` made on first use
_LAZY_FIELDS = frozenset(("contacts", "impulses", "solution", "solver_scale", "solver_velocities"))


