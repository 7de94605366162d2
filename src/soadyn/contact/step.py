"""Time stepping with frictional contact: :func:`step`.

One step is five stages (the MJX-style table of contents of :func:`step`)::

    detect    Contacts at q                        (soadyn.detect_contacts's kernel)
    free      v_free = v + dt M⁻¹(τ − C(q, v))      (the ABA)
    delassus  G = J M⁻¹ Jᵀ, g = J v_free − b        (the Υ recursion; b the penetration bias)
    solve     λ of the Coulomb NCP of (G + R, g, μ) (soadyn.solve_contacts's kernels)
    update    v⁺ = v_free + M⁻¹Jᵀλ, q⁺ = q ⊕ dt v⁺

On a tree the five run in one compiled call (:mod:`soadyn.kernels.contact.step`), which
:func:`soadyn.rollout` with ``contacts=True`` repeats inside one compiled loop. A model
with loops, couplings or user constraints takes :func:`closed_chain_step` (the
closed-chain branch plugs in there; the settings and the result are those of
:mod:`.settings`).
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from ..core import status as st
from ..core import validation as val
from ..core.call import NO_FORCES
from ..core.compile import derived, snapshot
from ..geometry.contacts import Contacts
from ..geometry.detect import _prepared
from ..kernels.collision.detect import CONTACT_FLOATS, CONTACT_INTS
from ..kernels.contact import step as ks
from ..kernels.contact.delassus import delassus_buffer_sizes
from ..kernels.contact.admm import COMPLEMENTARITY, CONVERGED, DUAL, ITERATIONS, PRIMAL, RHO_POWER
from .cluster_step import cluster_step
from .settings import StepResult, settings_argument
from .solver import ContactSolution, ContactSolverWarning

__all__ = ["step", "closed_chain_step", "step_tables", "time_step"]

#: what the statuses BAD_FIRST, BAD_SECOND, BAD_THIRD of the step kernels name
_NAMES = ("q", "v", "tau")


class StepTables:
    """What the step kernels need of one model version besides its tables: the packed
    collision tables and the detection's scratch sizes (shared with
    :func:`soadyn.detect_contacts`), and the first contact capacity."""

    __slots__ = ("ci", "cf", "det_floats", "det_ints", "capacity", "nb", "nv")

    def __init__(self, model):
        _, detection, _ = _prepared(model)
        self.ci, self.cf = detection.ci, detection.cf
        self.det_floats, self.det_ints = detection.floats, detection.ints
        self.capacity = detection.capacity
        self.nb, self.nv = model.nbodies, model.nv

    def dims(self, K):
        """The kernels' dimensions vector for capacity K."""
        return np.array([K, self.det_floats, self.det_ints], dtype=np.int64)

    def scratch(self, K):
        """New float and integer scratch of the step kernels for capacity K (integers
        zero-filled: the detection's integer scratch must start so)."""
        of, oi = delassus_buffer_sizes.py_func(self.nb, self.nv, K)
        nf, ni = ks.step_sizes.py_func(self.nb, self.nv, K, self.det_floats, self.det_ints, of, oi)
        return np.zeros(nf), np.zeros(ni, dtype=np.int64)


def step_tables(model):
    """The :class:`StepTables` of ``model``'s current version (built once)."""
    return derived(model).memo("contact_step", StepTables)


def _scratch(d, tables, K):
    """This thread's scratch of capacity ≥ K: (K, (floats, integers), dims)."""
    box = d.per_thread("contact_step_scratch", lambda snapshot: {})
    have = box.get("K", 0)
    if have < K:
        box["K"] = K
        box["buffers"] = tables.scratch(K)
        box["dims"] = tables.dims(K)
    return box["K"], box["buffers"], box["dims"]


def time_step(dt):
    """``dt`` checked: a finite positive real number [s]."""
    dt = val.finite_scalar(dt, "dt")
    if not dt > 0.0:
        raise ValueError(f"dt: expected a positive time step [s], got {dt!r}")
    return dt


def _warm(warm_start, model):
    """The warm start of :func:`step` as (objects (W, 2), λ (3W,)): the previous step's
    result, for ``model`` at its current version."""
    if warm_start is None:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0), np.array([0.0, RHO_POWER])
    if not isinstance(warm_start, StepResult):
        raise TypeError(f"warm_start: expected the soadyn.StepResult of the previous step or None, got "
                        f"{type(warm_start).__name__}")
    warm_start.contacts.check(model, "warm_start")
    scale = warm_start.solver_scale
    return (np.ascontiguousarray(warm_start.contacts.objects, dtype=np.int64),
            np.ascontiguousarray(warm_start.impulses, dtype=float).reshape(-1),
            np.array([0.0, RHO_POWER]) if scale is None else np.array(scale, dtype=float))


def _contacts_of(user_model, version, K, k, fbuf, ibuf, tables):
    """The Contacts (copies) the step kernel left in its scratch."""
    fl = fbuf[tables.det_floats:tables.det_floats + CONTACT_FLOATS * K].copy()
    il = ibuf[tables.det_ints:tables.det_ints + CONTACT_INTS * K].copy()
    fl.flags.writeable = False
    il.flags.writeable = False
    return Contacts(il[:2 * k].reshape(k, 2), il[2 * K:2 * K + 2 * k].reshape(k, 2), fl[:3 * k].reshape(k, 3),
                    fl[3 * K:3 * K + 3 * k].reshape(k, 3), fl[6 * K:6 * K + k], fl[7 * K:7 * K + k],
                    fl[8 * K:8 * K + 9 * k].reshape(k, 3, 3), version, weakref.ref(user_model))


def _solution(settings, k, lam, sigma, info):
    lam = lam.reshape(k, 3)
    sigma = sigma.reshape(k, 3)
    lam.flags.writeable = False
    sigma.flags.writeable = False
    return ContactSolution(lam, sigma, int(info[ITERATIONS]), bool(info[CONVERGED]), float(info[PRIMAL]),
                           float(info[DUAL]), float(info[COMPLEMENTARITY]), settings.friction_solver,
                           float(settings.tol))


def raise_step_status(status, model, state):
    """The error of a step kernel's nonzero status."""
    if status == st.OVERFLOW:
        raise OverflowError("q, v, tau, dt: the state after the step is not finite (inf or NaN): a time step too large "
                            "for these dynamics, or a state or force too large")
    st.raise_status(status, _NAMES, model=model, state=state)


def step(model, q, v, tau, dt, f_ext=None, settings=None, *, warm_start=None):
    """One semi-implicit time step with frictional contact (DESIGN.md, "Contacts").

        v⁺ = v + dt M⁻¹(τ − C(q, v)) + M⁻¹Jᵀλ,    q⁺ = q ⊕ dt v⁺ (:func:`soadyn.integrate`)

    with the contacts of the model's collision objects detected at q
    (:func:`soadyn.detect_contacts`), J their contact Jacobian, and λ [N s] the impulses of
    the Coulomb NCP with De Saxcé's correction (:func:`soadyn.solve_contacts`) of
    (G + R, g, μ): G = J M⁻¹ Jᵀ (:func:`soadyn.delassus`), g = J v_free − b, b the
    penetration bias and R the compliance of ``settings`` (:class:`~soadyn.ContactSettings`
    documents both), μ the contacts' friction. Inelastic: no restitution.

    Parameters
    ----------
    model : Model with collision objects: a tree, or a model with loops, couplings,
        transmissions or holonomic user constraints, stepped by constraint embedding in the
        independent coordinates of its cluster tree with its loops exact
        (:mod:`soadyn.contact.cluster_step`; q, v then a spanning state that satisfies
        them).
    q : (nq,) configuration; v : (nv,) velocity [rad/s, m/s].
    tau : (nv,) joint forces [N m, N] held over the step; None means zero.
    dt : the time step [s], a finite positive real number.
    f_ext : optional (nbodies, 6) spatial forces [n; f] on the bodies (body frames).
    settings : :class:`~soadyn.ContactSettings` (None: the defaults).
    warm_start : the :class:`StepResult` of the previous step or None: its impulses start
        the solve when its contacts come from the same object pairs in the same order
        (what :func:`soadyn.rollout` does from step to step; a converged solve is then the
        same to the solver's tolerance).

    Returns a :class:`~soadyn.StepResult` (q⁺, v⁺, the contacts at q, λ (k, 3), the
    :class:`~soadyn.ContactSolution`, whose ``velocities`` are σ = (G + R)λ + g with the
    biased g). A solve that did not converge gives ``converged`` False and a
    :class:`~soadyn.ContactSolverWarning`. A state that is not finite raises ValueError
    naming it; a step whose result is not finite raises OverflowError.
    """
    val.model_argument(model)
    user_model = model
    model = snapshot(model)
    settings = settings_argument(settings)
    if model.has_constraints:
        return closed_chain_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
    dt = time_step(dt)
    nq, nv = model.nq, model.nv
    q = val.vector(q, nq, "q", batch_ok=False)
    v = val.vector(v, nv, "v", batch_ok=False)
    tau = np.zeros(nv) if tau is None else val.vector(tau, nv, "tau", batch_ok=False)
    fext = NO_FORCES if f_ext is None else val.external_forces(f_ext, model.nbodies, None)
    wobj, wlam, wscale = _warm(warm_start, user_model)
    d = derived(model)
    c = d.compiled
    tables = step_tables(model)
    prm = settings.vector()
    q1, v1 = np.empty(nq), np.empty(nv)
    info = np.zeros(ks.STEP_INFO_SIZE)
    K = tables.capacity
    while True:
        K, (fbuf, ibuf), dims = _scratch(d, tables, K)
        status = ks.step_kernel(c.mi, c.mf, d.buffer(), q, v, tau, fext, dt, tables.ci, tables.cf, prm, dims, fbuf,
                                ibuf, wobj, wlam, wscale, q1, v1, info)
        if status != st.OK:
            raise_step_status(status, model, (q, v, tau))
        k = int(info[ks.COUNT])
        if k <= K:
            break
        K = k  # more contacts than the scratch holds: again with room for all of them
    s = _views(fbuf, tables, K)
    solution = _solution(settings, k, s["lam"][:3 * k].copy(), s["sigma"][:3 * k].copy(), info)
    contacts = _contacts_of(user_model, d.version, K, k, fbuf, ibuf, tables)
    if not solution.converged:
        warnings.warn(f"step: the contact solve ({settings.friction_solver}, {k} contacts) did not converge in "
                      f"{solution.iterations} iterations (residuals: primal {solution.primal:.3g}, dual "
                      f"{solution.dual:.3g}, complementarity {solution.complementarity:.3g}; tol {settings.tol:g}); "
                      "raise ContactSettings.max_iter or tol", ContactSolverWarning, stacklevel=2)
    return StepResult(q1, v1, contacts, solution.impulses, solution, info[[ks.SCALE_L, ks.SCALE_POWER]].copy())


def _views(fbuf, tables, K):
    """The λ and σ blocks of the step scratch (the layout of
    :func:`soadyn.kernels.contact.step.step_scratch`)."""
    n = 3 * K
    o = tables.det_floats + CONTACT_FLOATS * K + 3 * tables.nv + 6 * tables.nb
    return {"g": fbuf[o:o + n], "sigma": fbuf[o + 2 * n:o + 3 * n], "lam": fbuf[o + 3 * n:o + 4 * n]}


def closed_chain_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start):
    """The step of a model with loops, couplings or user constraints (the branch of
    :func:`step` for closed chains): by constraint embedding in the independent
    coordinates of its cluster tree, the loops exact (:mod:`soadyn.contact.cluster_step`,
    which checks the warm start and makes the StepResult)."""
    return cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
