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
call — a tree whose compiled form is current, arrays of the kernel's exact types, no warm
start or the result of a step of this model version — takes :func:`_fast_step`: nothing
is converted or checked in Python that the kernel checks itself (lengths, finiteness,
quaternions), and the kernel is called through the dispatcher that never compiles
(:class:`ExactCall`, as :mod:`soadyn.core.call`) with nine arguments: this thread's
packed tables (:class:`ThreadStep`: the model's and the collision tables, the thread's
workspace and scratch in one array; per thread, so steps from several threads at once
never share one), the state, the settings' vector, the warm start and the step's record.
The record (:data:`~soadyn.kernels.contact.step.StepRecord`: a new array per step, which
the result owns) holds q⁺, v⁺, the contacts, σ, λ and the solver's info; the next step
takes it as its warm start as it is, and the result's other fields are made from it on
first use (:func:`recorded_result`). Anything else, and any nonzero status, goes through
:func:`_general_step`, which validates every argument and names what is wrong (running
the kernel again there is safe: it writes only the thread's tables and a new record).
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
from ..core.layout import pack_parts
from ..geometry.contacts import flat_contacts, model_identity
from ..geometry.detect import _prepared
from ..kernels.contact import step as ks
from ..kernels.contact.delassus import delassus_buffer_sizes
from ..kernels.contact.admm import COMPLEMENTARITY, CONVERGED, DUAL, ITERATIONS, PRIMAL, RHO_POWER
from .cluster_step import cluster_step
from .servo import NO_SERVO, pd_dofs, servo_torques, step_servo
from .settings import DEFAULT_SETTINGS, ContactSettings, StepResult, settings_argument
from .solver import ContactSolverWarning, made_solution

__all__ = ["step", "closed_chain_step", "step_tables", "time_step"]

#: what the statuses BAD_FIRST, BAD_SECOND, BAD_THIRD of the step kernels name
_NAMES = ("q", "v", "tau")


class StepTables:
    """What the step kernels need of one model version besides its tables: the packed
    collision tables and the detection's scratch sizes (shared with
    :func:`soadyn.detect_contacts`), the first contact capacity, and the dofs a joint PD
    servo acts on (``pd_q``: :func:`~.servo.pd_dofs`)."""

    __slots__ = ("ci", "cf", "det_floats", "det_ints", "capacity", "nb", "nv", "pd_q")

    def __init__(self, model):
        _, detection, _ = _prepared(model)
        self.ci, self.cf = detection.ci, detection.cf
        self.pd_q = pd_dofs(model)
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


#: the key of a thread's :class:`ThreadStep` in a model version's store
_SCRATCH = "contact_step_scratch"


class ThreadStep:
    """One thread's packed tables of the step kernel for one model version and a contact
    capacity ``K`` (a thread's own: the kernel writes its workspace and scratch parts):
    ``T`` (:func:`~soadyn.core.layout.pack_parts` of
    :data:`~soadyn.kernels.contact.step.TABLE_PARTS`), the length ``size`` of a step's
    record (:func:`~soadyn.kernels.contact.step.record_size`), the offsets of q⁺ and v⁺ in it
    (``q_at``, ``v_at``), ``nq``, ``nv``."""

    __slots__ = ("K", "T", "size", "q_at", "v_at", "nq", "nv")

    def __init__(self, d, tables, K):
        c = d.compiled
        fbuf, ibuf = tables.scratch(K)
        self.K, self.nq, self.nv = K, c.nq, c.nv
        self.T = pack_parts((c.mi, tables.ci, tables.dims(K), ibuf, tables.pd_q),
                            (c.mf, tables.cf, np.zeros(d.workspace_size), fbuf))
        self.size = _record_size(K, c.nq, c.nv)
        self.q_at, self.v_at = self.size - c.nq - c.nv, self.size - c.nv


def _thread_step(d, tables, K):
    """This thread's :class:`ThreadStep` of capacity ≥ K (grown when K is more)."""
    box = d.per_thread(_SCRATCH, lambda snapshot: [None])
    th = box[0]
    if th is None or th.K < K:
        th = box[0] = ThreadStep(d, tables, K)
    return th


def time_step(dt):
    """``dt`` checked: a finite positive real number [s]."""
    dt = val.finite_scalar(dt, "dt")
    if not dt > 0.0:
        raise ValueError(f"dt: expected a positive time step [s], got {dt!r}")
    return dt


def _record_size(K, nq, nv):
    """The length of a step record of capacity K (:func:`~soadyn.kernels.contact.step.record_size`)."""
    return ks.record_offsets.py_func(K, nq, nv)[-1]


#: the warm start of a step given none: a record of no contacts (capacity 0)
_COLD = np.zeros(_record_size(0, 0, 0))
_COLD.setflags(write=False)


def _warm(warm_start, model):
    """The warm start of :func:`step` as a step record
    (:data:`~soadyn.kernels.contact.step.StepRecord`): the record of the previous step's
    result, for ``model`` at its current version, or one made from the fields of a
    StepResult made otherwise."""
    if warm_start is None:
        return _COLD
    if not isinstance(warm_start, StepResult):
        raise TypeError(f"warm_start: expected the soadyn.StepResult of the previous step or None, got "
                        f"{type(warm_start).__name__}")
    warm_start.contacts.check(model, "warm_start")
    record = warm_start.__dict__.get("_record")
    if record is not None:
        return record
    objects = np.asarray(warm_start.contacts.objects, dtype=np.int64)
    W = len(objects)
    lam = np.asarray(warm_start.impulses, dtype=float)
    if lam.shape != (W, 3):
        raise ValueError(f"warm_start: expected impulses of shape {(W, 3)}, got {lam.shape}")
    rec = np.zeros(_record_size(W, 0, 0))
    v = ks.numpy_record_views(rec, W, 0, 0)
    rec[ks.RECORD_CAPACITY] = rec[ks.RECORD_COUNT] = W
    v.cil[:2 * W] = objects.reshape(-1)
    v.cfl[:3 * W] = np.asarray(warm_start.contacts.point, dtype=float).reshape(-1)
    v.lam[:] = lam.reshape(-1)
    sigma, scale = warm_start.solver_velocities, warm_start.solver_scale
    if sigma is not None:
        v.sigma[:] = np.asarray(sigma, dtype=float).reshape(-1)
        rec[ks.RECORD_SIGMA] = 1.0
    v.info[ks.SCALE_L], v.info[ks.SCALE_POWER] = (0.0, RHO_POWER) if scale is None else np.asarray(scale, dtype=float)
    return rec


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
_COUNT = ks.RECORD_HEAD + ks.COUNT


def _fast_step(model, q, v, tau, dt, f_ext, settings, warm_start, pd):
    """The StepResult of the common call, or None for the general path of :func:`step`.
    The common call: a tree whose compiled form is current, this thread's packed tables
    there (its first step took the general path), the state of the kernel's exact types
    (C-contiguous float64 vectors, writeable; the kernel checks their lengths and
    finiteness), ``dt`` a positive float, no external forces or an (nbodies, 6) array,
    settings None or a ContactSettings, no warm start or the result of a step of this model
    version, no servo or a tuple (kp, kd, q_ref) of arrays (the kernel checks their types,
    shapes and values: gains (nv,) ≥ 0, zero off the PD dofs). Anything else, or a status
    of the kernel other than OK (an error, more contacts than the tables hold, a solve that
    did not converge), gives None: the general
    path then names what is wrong, grows the capacity or warns (the kernel writes only the
    thread's tables and the record made here, so running it again is safe). The common
    step reads no entry of its record here: the kernel's status says it all."""
    d = getattr(model, "_derived", None)
    if d is None or not (type(dt) is float and 0.0 < dt < _INF):
        return None
    try:
        th = d.threads.objects[_SCRATCH][0]
    except (AttributeError, KeyError):  # this thread's first step on this version
        return None
    c = d.compiled
    if th is None or c.closed:
        return None
    if settings is None:
        settings = DEFAULT_SETTINGS
    elif type(settings) is not ContactSettings:
        return None
    if f_ext is None:
        f_ext = NO_FORCES
    elif type(f_ext) is not np.ndarray or f_ext.shape != (c.nb, 6):  # (an empty one reads as none)
        return None
    if tau is None:
        tau = np.zeros(th.nv)
    if pd is None:
        kp = kd = qref = NO_SERVO
    elif type(pd) is tuple and len(pd) == 3:
        kp, kd, qref = pd
    else:
        return None
    if warm_start is None:
        warm, model_ref = _COLD, None
    else:
        # the checks of Contacts.check, on what the result of a step holds (anything else:
        # the general path names it or makes the record); the new result keeps the warm
        # start's weak reference, to the same model
        f = getattr(warm_start, "__dict__", None)
        warm = None if f is None or type(warm_start) is not StepResult else f.get("_record")
        if warm is None or f["_version"] != d.version:
            return None
        model_ref = f["_model"]
        target = model_ref()
        if target is not model and target is not model_identity(model):
            return None
    out = np.empty(th.size)
    try:
        status = _KERNEL.fast(th.T, q, v, tau, f_ext, dt, settings._vector, warm, out, kp, kd, qref)
    except GeneralPath:
        return None
    if status != st.OK:  # (an error, a solve not converged or more contacts than th.K)
        return None
    if model_ref is None:
        model_ref = weakref.ref(model_identity(model))
    return recorded_result(out, th, model_ref, d.version, settings)


def recorded_result(record, th, model_ref, version, settings):
    """The :class:`StepResult` of a step whose kernel wrote ``record`` (a new array the
    result owns: :data:`~soadyn.kernels.contact.step.StepRecord`, of the capacity of
    ``th``, a :class:`ThreadStep`), for the model of the weak reference ``model_ref`` at
    ``version``. q⁺ and v⁺ are views of the record; the contacts, impulses, the solution and
    the warm-start fields are made from it on first use (:func:`_recorded_fields`): a loop
    of steps often reads only q, v and passes the result on as the next warm start, whose
    record the kernel reads as it is."""
    # the object the dataclass's constructor gives, without running it (the class is frozen:
    # the constructor sets each field through object.__setattr__); StepResult.__getattr__
    # makes the other fields from ``_lazy`` on first use
    result = _new(StepResult)
    f = result.__dict__
    f["q"], f["v"], f["_record"], f["_version"], f["_model"] = record[th.q_at:th.v_at], record[th.v_at:], record, \
        version, model_ref
    f["_lazy"] = (_recorded_fields, (record, th.K, model_ref, version, settings))
    return result


_new = object.__new__


def _read_only(a):
    a.setflags(write=False)
    return a


def _recorded_fields(record, K, model_ref, version, settings):
    """The fields of a step's result made from its record: contacts, impulses (k, 3),
    solution, solver_scale (2,), solver_velocities (3k,), read-only views of the record
    (the scale a copy)."""
    k = int(record[ks.RECORD_COUNT])
    r = ks.numpy_record_views(record, K, 0, 0)
    info = r.info
    lam = _read_only(r.lam[:3 * k].reshape(k, 3))
    sigma = _read_only(r.sigma[:3 * k])
    solution = made_solution(lam, sigma.reshape(k, 3), int(info[ITERATIONS]), info[CONVERGED] != 0.0,
                             float(info[PRIMAL]), float(info[DUAL]), float(info[COMPLEMENTARITY]),
                             settings.friction_solver, settings.tol)
    return {"contacts": flat_contacts(_read_only(r.cfl), _read_only(r.cil), k, K, version, model_ref),
            "impulses": lam, "solution": solution, "solver_scale": info[ks.SCALE_L:ks.SCALE_POWER + 1].copy(),
            "solver_velocities": sigma}


def _not_converged(result, settings, stacklevel):
    """The ContactSolverWarning of a step whose solve did not converge (``stacklevel``:
    that of the caller of :func:`step`, seen from here)."""
    s = result.solution
    warnings.warn(f"step: the contact solve ({settings.friction_solver}, {len(s.impulses)} contacts) did not converge "
                  f"in {s.iterations} iterations (residuals: primal {s.primal:.3g}, dual {s.dual:.3g}, "
                  f"complementarity {s.complementarity:.3g}; tol {settings.tol:g}); raise ContactSettings.max_iter "
                  "or tol", ContactSolverWarning, stacklevel=stacklevel)


def step(model, q, v, tau, dt, f_ext=None, settings=None, *, warm_start=None, pd=None):
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
    pd : a joint PD servo (kp, kd, q_ref) or None, as :func:`soadyn.rollout`'s for one step:
        τ + K_p (q_ref − q) − K_d v on the dofs of the joints whose coordinates integrate
        their velocities (never a free or spherical joint: :mod:`soadyn.contact.servo`),
        evaluated at (q, v) inside the step, as MuJoCo's position actuators inside
        ``mj_step``. kp [N m/rad, N/m], kd [N m s/rad, N s/m]: numbers or (nv,) per dof
        (zero off those dofs), ≥ 0; q_ref (nq,). Arrays of (nv,) gains take the fast path.

    Returns a :class:`~soadyn.StepResult` (q⁺, v⁺, the contacts at q, λ (k, 3), the
    :class:`~soadyn.ContactSolution`, whose ``velocities`` are σ = (G + R)λ + g with the
    biased g). A solve that did not converge gives ``converged`` False and a
    :class:`~soadyn.ContactSolverWarning`. A state that is not finite raises ValueError
    naming it; a step whose result is not finite raises OverflowError.
    """
    result = _fast_step(model, q, v, tau, dt, f_ext, settings, warm_start, pd)
    if result is None:
        return _general_step(model, q, v, tau, dt, f_ext, settings, warm_start, pd)
    return result


def _general_step(model, q, v, tau, dt, f_ext, settings, warm_start, pd):
    """:func:`step` with every argument validated (errors naming it), for any call."""
    val.model_argument(model)
    user_model = model
    model = snapshot(model)
    settings = settings_argument(settings)
    if model.has_constraints:
        if pd is not None:  # (the cluster step's kernel takes τ: the servo's torques added here)
            q = val.vector(q, model.nq, "q", batch_ok=False)
            v = val.vector(v, model.nv, "v", batch_ok=False)
            tau = np.zeros(model.nv) if tau is None else val.vector(tau, model.nv, "tau", batch_ok=False)
            tau = servo_torques(model, q, v, tau, *step_servo(model, pd))
        return closed_chain_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
    dt = time_step(dt)
    nq, nv = model.nq, model.nv
    q = val.vector(q, nq, "q", batch_ok=False)
    v = val.vector(v, nv, "v", batch_ok=False)
    tau = np.zeros(nv) if tau is None else val.vector(tau, nv, "tau", batch_ok=False)
    fext = NO_FORCES if f_ext is None else val.external_forces(f_ext, model.nbodies, None)
    kp, kd, qref = step_servo(model, pd)
    warm = _warm(warm_start, user_model)
    d = derived(model)
    tables = step_tables(model)
    prm = settings.vector()
    K = tables.capacity
    while True:
        th = _thread_step(d, tables, K)
        record = np.empty(th.size)
        status = _KERNEL(th.T, q, v, tau, fext, dt, prm, warm, record, kp, kd, qref)
        if status > st.OK:
            raise_step_status(status, model, (q, v, tau))
        if status != ks.NO_ROOM:
            break
        K = int(record[_COUNT])  # more contacts than the tables hold: again with room for all of them
    result = recorded_result(record, th, weakref.ref(model_identity(user_model)), d.version, settings)
    if status == ks.UNCONVERGED:
        _not_converged(result, settings, 4)
    return result


def closed_chain_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start):
    """The step of a model with loops, couplings or user constraints (the branch of
    :func:`step` for closed chains): by constraint embedding in the independent
    coordinates of its cluster tree, the loops exact (:mod:`soadyn.contact.cluster_step`,
    which checks the warm start and makes the StepResult)."""
    return cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
