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

**The call path.** A step of a small robot is a few µs of compiled work, so what Python
does around it decides the steps per second of a loop of :func:`step` calls. The common
call — a tree whose compiled form is current, arrays of the kernel's exact types, a
warm start of this model version — takes :func:`_fast_step`: nothing is converted or
checked in Python that the kernel checks itself (lengths, finiteness, quaternions), the
kernel is called through the dispatcher that never compiles (:class:`ExactCall`, as
:mod:`soadyn.core.call`), its tables and this thread's scratch come from the model
version's store (:class:`StepTables`, :class:`StepScratch`: per thread, so steps from
several threads at once never share one), and the result holds two read-only copies of
the scratch (its floats from the contacts to λ, and the contacts' integers) of which the
contacts' fields and the :class:`~soadyn.ContactSolution` are made on first use
(:func:`~soadyn.geometry.contacts.flat_contacts`, :func:`_solution`). Anything else, and any nonzero
status, goes through :func:`_general_step`, which validates every argument and names
what is wrong (running the kernel again there is safe: it writes only its scratch and the
new outputs).
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from ..core import status as st
from ..core import validation as val
from ..core.fast_path import ExactCall, GeneralPath
from ..core.validation import NO_FORCES
from ..core.compile import derived, snapshot
from ..geometry.contacts import Contacts, flat_contacts, model_identity
from ..geometry.detect import _prepared
from ..kernels.collision.detect import CONTACT_FLOATS, CONTACT_INTS
from ..kernels.contact import step as ks
from ..kernels.contact.delassus import delassus_buffer_sizes
from ..kernels.contact.admm import COMPLEMENTARITY, CONVERGED, DUAL, ITERATIONS, PRIMAL, RHO_POWER
from .cluster_step import cluster_step
from .settings import DEFAULT_SETTINGS, ContactSettings, StepResult, made_step_result, settings_argument
from .solver import ContactSolverWarning, made_solution

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


#: the key of a thread's :class:`StepScratch` in a model version's store
_SCRATCH = "contact_step_scratch"


class StepScratch:
    """One thread's scratch of the step kernel for one model version (its
    :class:`StepTables` ``tables``) and a capacity of ``K`` contacts (a thread's own: the
    kernel writes it, and what a step returns is copied out of it): the buffers ``fbuf``,
    ``ibuf`` and the ``dims`` of :func:`soadyn.kernels.contact.step.step_scratch`, the
    step's ``info`` (:data:`~soadyn.kernels.contact.step.STEP_INFO_SIZE`), and views of the
    blocks Python reads after the step: ``floats``, from the contacts' floats (17 K, the
    detection's flat layout) to the end of λ, with σ (3 K) and then λ (3 K) from ``ncp``
    on, and the contacts' integers ``cil`` (4 K,) (one copy of each makes a step's result)."""

    __slots__ = ("tables", "K", "fbuf", "ibuf", "dims", "info", "floats", "ncp", "cil")

    def __init__(self, tables, K):
        self.tables, self.K = tables, K
        self.fbuf, self.ibuf = tables.scratch(K)
        self.dims = tables.dims(K)
        self.info = np.zeros(ks.STEP_INFO_SIZE)
        f, i, n = tables.det_floats, tables.det_ints, 3 * K
        self.cil = self.ibuf[i:i + CONTACT_INTS * K]
        # after the contacts' floats: a, vfree, tau (nv each), F (nb, 6), then g, R, σ, λ (n each)
        self.ncp = CONTACT_FLOATS * K + 3 * tables.nv + 6 * tables.nb + 2 * n
        self.floats = self.fbuf[f:f + self.ncp + 2 * n]


def _scratch(d, tables, K):
    """This thread's :class:`StepScratch` of capacity ≥ K (grown when K is more)."""
    box = d.per_thread(_SCRATCH, lambda snapshot: [None])
    scr = box[0]
    if scr is None or scr.K < K:
        scr = box[0] = StepScratch(tables, K)
    return scr


def time_step(dt):
    """``dt`` checked: a finite positive real number [s]."""
    dt = val.finite_scalar(dt, "dt")
    if not dt > 0.0:
        raise ValueError(f"dt: expected a positive time step [s], got {dt!r}")
    return dt


#: the warm start of a step given none (arrays the kernel only reads)
_COLD_OBJECTS, _COLD_POINTS, _COLD_LAM = np.zeros((0, 2), dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
_COLD_SCALE = np.array([0.0, RHO_POWER])


def _warm(warm_start, model):
    """The warm start of :func:`step` as (objects (W, 2), points (W, 3), λ (3W,), σ (3W,) or
    empty, ADMM's scale (2,)): the previous step's result, for ``model`` at its current
    version."""
    if warm_start is None:
        return _COLD_OBJECTS, _COLD_POINTS, _COLD_LAM, _COLD_LAM, _COLD_SCALE
    if not isinstance(warm_start, StepResult):
        raise TypeError(f"warm_start: expected the soadyn.StepResult of the previous step or None, got "
                        f"{type(warm_start).__name__}")
    warm_start.contacts.check(model, "warm_start")
    scale, sigma = warm_start.solver_scale, warm_start.solver_velocities
    return (np.ascontiguousarray(warm_start.contacts.objects, dtype=np.int64),
            np.ascontiguousarray(warm_start.contacts.point, dtype=float),
            np.ascontiguousarray(warm_start.impulses, dtype=float).reshape(-1),
            _COLD_LAM if sigma is None else np.ascontiguousarray(sigma, dtype=float).reshape(-1),
            _COLD_SCALE if scale is None else np.array(scale, dtype=float))


def raise_step_status(status, model, state):
    """The error of a step kernel's nonzero status."""
    if status == st.OVERFLOW:
        raise OverflowError("q, v, tau, dt: the state after the step is not finite (inf or NaN): a time step too large "
                            "for these dynamics, or a state or force too large")
    st.raise_status(status, _NAMES, model=model, state=state)


#: the step kernel's dispatcher and its twin that never compiles (the fast path of
#: :func:`step`, as :mod:`soadyn.core.call`'s)
_KERNEL = ExactCall(ks.step_kernel)
_INF = float("inf")


def _fast_step(model, q, v, tau, dt, f_ext, settings, warm_start):
    """(The StepResult of the common call, whether its solve converged), or None for the
    general path of :func:`step`. The common call: a tree whose compiled form is current,
    this thread's scratch there (its first step took the general path), the state of the
    kernel's exact types (C-contiguous float64 vectors, writeable; the kernel checks their
    lengths and finiteness), ``dt`` a positive float, no external forces or an
    (nbodies, 6) array, settings None or a ContactSettings, no warm start or a StepResult
    of this model version. Anything else, a nonzero status of the kernel, or more
    contacts than the scratch holds, gives None: the general path then names what is
    wrong or grows the scratch (the kernel writes only the scratch and outputs made here,
    so running it again is safe)."""
    d = getattr(model, "_derived", None)
    if d is None or not (type(dt) is float and 0.0 < dt < _INF):
        return None
    c = d.compiled
    try:
        scr = d.threads.objects[_SCRATCH][0]
        ws = d.threads.buffer
    except (AttributeError, KeyError):  # this thread's first step on this version
        return None
    if c.closed or scr is None:
        return None
    tables = scr.tables
    if settings is None:
        settings = DEFAULT_SETTINGS
    elif type(settings) is not ContactSettings:
        return None
    if f_ext is None:
        f_ext = NO_FORCES
    elif type(f_ext) is not np.ndarray or f_ext.shape != (c.nb, 6):
        return None
    if tau is None:
        tau = np.zeros(c.nv)
    identity = model_identity(model)
    if warm_start is None:
        wobj, wpoints, wlam, wsigma, wscale = _COLD_OBJECTS, _COLD_POINTS, _COLD_LAM, _COLD_LAM, _COLD_SCALE
    else:
        if type(warm_start) is not StepResult:
            return None
        wc, wlam, wscale = warm_start.contacts, warm_start.impulses, warm_start.solver_scale
        wsigma = warm_start.solver_velocities
        # the checks of Contacts.check (anything else: the general path names it)
        if (type(wc) is not Contacts or wc.model_version != d.version or wc._model() is not identity
                or type(wlam) is not np.ndarray):
            return None
        wobj, wpoints, wlam = wc.objects, wc.point, wlam.reshape(-1)
        if wscale is None:
            wscale = _COLD_SCALE
        if wsigma is None:
            wsigma = _COLD_LAM
        elif type(wsigma) is not np.ndarray:
            return None
    q1, v1 = np.empty(c.nq), np.empty(c.nv)
    try:
        status = _KERNEL.fast(c.mi, c.mf, ws, q, v, tau, f_ext, dt, tables.ci, tables.cf, settings._vector, scr.dims,
                              scr.fbuf, scr.ibuf, wobj, wpoints, wlam, wsigma, wscale, q1, v1, scr.info)
    except GeneralPath:
        return None
    if status != st.OK or scr.info[ks.COUNT] > scr.K:
        return None
    return _result(identity, d.version, scr, q1, v1, settings)


def _frozen_copy(a):
    """A read-only copy of ``a`` (``setflags`` costs a third of setting ``flags.writeable``)."""
    a = a.copy()
    a.setflags(write=False)
    return a


def _result(identity, version, scr, q1, v1, settings):
    """(the :class:`StepResult`, whether its solve converged) of a step whose contacts, λ,
    σ and info are in this thread's scratch ``scr`` (copied out: the thread's next step
    overwrites them), for the model ``identity``
    (:func:`~soadyn.geometry.contacts.model_identity`) at ``version``. Its contacts' fields
    and its solution are made on first use from the copies."""
    info = scr.info.tolist()
    k, K = int(info[ks.COUNT]), scr.K
    floats = _frozen_copy(scr.floats)
    contacts = flat_contacts(floats, _frozen_copy(scr.cil), k, K, version, weakref.ref(identity))
    o = scr.ncp
    lam = floats[o + 3 * K:o + 3 * K + 3 * k].reshape(k, 3)
    result = made_step_result(q1, v1, contacts, lam, (_solution, (floats, o, k, lam, info, settings)),
                              np.array(info[ks.SCALE_L:ks.SCALE_POWER + 1]), floats[o:o + 3 * k])
    return result, info[CONVERGED] != 0.0


def _solution(floats, o, k, lam, info, settings):
    """The ContactSolution of a step: λ, σ (3k at ``o`` of the result's floats) and the
    solver's info (a list)."""
    return made_solution(lam, floats[o:o + 3 * k].reshape(k, 3), int(info[ITERATIONS]), info[CONVERGED] != 0.0,
                         info[PRIMAL], info[DUAL], info[COMPLEMENTARITY], settings.friction_solver, settings.tol)


def _not_converged(result, settings, stacklevel):
    """The ContactSolverWarning of a step whose solve did not converge (``stacklevel``:
    that of the caller of :func:`step`, seen from here)."""
    s = result.solution
    warnings.warn(f"step: the contact solve ({settings.friction_solver}, {len(s.impulses)} contacts) did not converge "
                  f"in {s.iterations} iterations (residuals: primal {s.primal:.3g}, dual {s.dual:.3g}, "
                  f"complementarity {s.complementarity:.3g}; tol {settings.tol:g}); raise ContactSettings.max_iter "
                  "or tol", ContactSolverWarning, stacklevel=stacklevel)


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
        the solve, each contact from the previous contact of the same object pair nearest
        to it (:mod:`soadyn.kernels.contact.warm`; what :func:`soadyn.rollout` does from
        step to step; a converged solve is then the same to the solver's tolerance).

    Returns a :class:`~soadyn.StepResult` (q⁺, v⁺, the contacts at q, λ (k, 3), the
    :class:`~soadyn.ContactSolution`, whose ``velocities`` are σ = (G + R)λ + g with the
    biased g). A solve that did not converge gives ``converged`` False and a
    :class:`~soadyn.ContactSolverWarning`. A state that is not finite raises ValueError
    naming it; a step whose result is not finite raises OverflowError.
    """
    fast = _fast_step(model, q, v, tau, dt, f_ext, settings, warm_start)
    if fast is None:
        return _general_step(model, q, v, tau, dt, f_ext, settings, warm_start)
    result, converged = fast
    if not converged:
        _not_converged(result, DEFAULT_SETTINGS if settings is None else settings, 3)
    return result


def _general_step(model, q, v, tau, dt, f_ext, settings, warm_start):
    """:func:`step` with every argument validated (errors naming it), for any call."""
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
    wobj, wpoints, wlam, wsigma, wscale = _warm(warm_start, user_model)
    d = derived(model)
    c = d.compiled
    tables = step_tables(model)
    prm = settings.vector()
    q1, v1 = np.empty(nq), np.empty(nv)
    K = tables.capacity
    while True:
        scr = _scratch(d, tables, K)
        status = _KERNEL(c.mi, c.mf, d.buffer(), q, v, tau, fext, dt, tables.ci, tables.cf, prm, scr.dims, scr.fbuf,
                         scr.ibuf, wobj, wpoints, wlam, wsigma, wscale, q1, v1, scr.info)
        if status != st.OK:
            raise_step_status(status, model, (q, v, tau))
        k = int(scr.info[ks.COUNT])
        if k <= scr.K:
            break
        K = k  # more contacts than the scratch holds: again with room for all of them
    result, converged = _result(model_identity(user_model), d.version, scr, q1, v1, settings)
    if not converged:
        _not_converged(result, settings, 4)
    return result


def closed_chain_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start):
    """The step of a model with loops, couplings or user constraints (the branch of
    :func:`step` for closed chains): by constraint embedding in the independent
    coordinates of its cluster tree, the loops exact (:mod:`soadyn.contact.cluster_step`,
    which checks the warm start and makes the StepResult)."""
    return cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
