"""One time step of a model with loops, couplings, transmissions or rotors in contact, by
constraint embedding in the independent coordinates of its cluster tree.

A closed-chain model is stepped in its independent coordinates y, ẏ ([Chignoli23, eq. 3]:
q = γ(y), q̇ = G(q) ẏ), where the loops, couplings and transmissions hold by construction
and the contact problem is the one of the tree of clusters:

1. free velocity (:func:`free_independent_velocity`): ẏ_free = ẏ + dt ÿ with ÿ from C-ABA
   [Chignoli23, Alg. 1] for τ_ind = Gᵀτ and the external forces, at the spanning state
   (q, v) — the semi-implicit (symplectic Euler) velocity update of the contact
   conventions, in ẏ;
2. contacts detected at q (:func:`soadyn.detect_contacts`), the contact Jacobian of ẏ
   being J G (J the spanning coordinates' contact Jacobian): the free contact velocities
   g = J G ẏ_free (:func:`soadyn.contact.contact_velocities` of v_free = G ẏ_free) and the
   Delassus operator (J G) H⁻¹ (J G)ᵀ, H = GᵀMG, by C-EFPA ([Chignoli23, §VIII]:
   :func:`soadyn.delassus` on cluster models);
3. λ from :func:`soadyn.solve_contacts` with the stepper's treatment of penetration
   (:func:`contact_problem`);
4. the impulse response (:func:`independent_impulse_response`): Δẏ = H⁻¹ (J G)ᵀ λ, by
   C-ABA with the bodies' spatial contact impulses as external forces, no velocity and no
   gravity (C-ABA is linear in the forces); ẏ⁺ = ẏ_free + Δẏ;
5. the new state on the constraint manifold (:func:`advance_on_manifold`): y⁺ = y ⊕ ẏ⁺ dt
   on the independent joints' configuration manifolds (:func:`soadyn.integrate`; the
   independent joints are whole joints), q⁺ = γ(y⁺) solved as the embedding method does
   (:func:`soadyn.spanning_state`, from the spanning configuration integrated with
   v = G ẏ⁺, which is within O(dt²) of the solution: the assembly branch is kept), and
   v⁺ = G(q⁺) ẏ⁺. For clusters whose explicit form is linear (gears, belts, rotors) γ is
   linear and exact; for implicit clusters (Tello's differentials) Gauss–Newton to
   max |φ| ≤ 1e-12 (:mod:`soadyn.kernels.cluster.implicit`). The loop, coupling and
   velocity residuals of (q⁺, v⁺) are therefore at round-off at every step, with no
   stabilization of the constraints.

Two implementations of the same step: models whose clusters all have a constant explicit
form (rigid joints, gears, belts, rotors: the Mini Cheetah, the MIT Humanoid) step in one
compiled call (:func:`compiled_cluster_step`, :mod:`soadyn.kernels.contact.cluster_step`),
where one backward pass of C-ABA, the free stage's, serves the step: C-EFPA's propagators
run on its factorization, and so does the impulse response (the force-only sweeps of
:mod:`soadyn.kernels.cluster.response`: the articulated inertias depend on q only); the
ADMM solve is warm started with the previous step's impulses and penalty scale
(``StepResult.solver_scale``, as the tree stepper). The others (loops,
implicit constraints such as Tello's differentials, whose G(q) and γ need a preparation
and a Gauss–Newton solve) stage by stage in Python (:func:`staged_cluster_step`, the
functions above, which are the reference the compiled step is tested against).
:func:`cluster_step` chooses; :func:`soadyn.step` calls it for every model with
constraints.

Not done: the alternative of the loop rows as bilateral rows of the same contact problem
(the cut-joint form); every constraint that the cluster tree embeds is stepped so, and a
constraint that cannot be embedded (non-holonomic, time-dependent: ConstraintError from
:func:`soadyn.cluster_tree`) cannot be stepped with contact.
"""
from __future__ import annotations

import numpy as np

import math
import warnings
import weakref

from ..closed.embedding.algorithms import _explicit_call, cluster_aba, spanning_state
from ..closed.embedding.clusters import cluster_tree
from ..closed.kinematics import check_residuals, evaluate_constraints
from ..core import status as st
from ..core import validation as val
from ..core.call import NO_FORCES
from ..core.configuration import integrate
from ..core.constraints import ConstraintError
from ..geometry.contacts import made_contacts, model_identity
from ..geometry.detect import _prepared as detection_tables
from ..geometry.detect import detect_contacts
from ..kernels.contact import cluster_step as kcs
from ..kernels.contact.warm import match_warm_start_kernel
from ..kernels.contact.admm import COMPLEMENTARITY, CONVERGED, DUAL, ITERATIONS, PRIMAL, RHO_POWER
from ..kernels.contact.step import normal_bias
from .delassus import contact_arrays, delassus
from .jacobian import _IMPULSE, contact_velocities
from .settings import StepResult
from .solver import ContactSolution, ContactSolverWarning, solve_contacts

__all__ = ["cluster_step", "compiled_cluster_step", "staged_cluster_step", "free_independent_velocity",
           "contact_problem", "independent_impulse_response", "advance_on_manifold", "STATE_TOL"]

#: largest constraint residual (position [m, rad] and velocity [m/s, rad/s]) accepted for the
#: state a step starts from
STATE_TOL = 1e-6


def _timestep(dt):
    h = val.finite_scalar(dt, "dt")
    if not h > 0.0:
        raise ValueError(f"dt: expected a time step > 0 [s], got {dt!r}")
    return h


def free_independent_velocity(model, tree, q, v, tau, f_ext, dt):
    """(y, ẏ, ẏ_free, G): the independent state of the spanning state (q, v) and its free
    velocity ẏ_free = ẏ + dt ÿ(y, ẏ, Gᵀτ, f_ext) by C-ABA [Chignoli23, Alg. 1] at q (the
    assembly branch q fixes), with G = G(q) (nv, nyv), q̇ = G ẏ.

    q (nq,), v (nv,) a spanning state on the constraint manifold; τ (nv,) spanning-tree
    joint forces [N m, N]; f_ext None or (nbodies, 6) body-frame spatial forces; dt [s]."""
    y, yd = q[tree.independent_q_index], v[tree.independent_v_index]
    G = tree.explicit_jacobian(q)
    ydd = cluster_aba(model, y, yd, G.T @ tau, f_ext, q=q)
    return y, yd, yd + dt * ydd, G


def contact_problem(contacts, D, sigma_free, dt, settings, warm_start=None):
    """λ of the contact problem of a step: ``solve_contacts`` of the Delassus operator ``D``
    (3k, 3k), g = σ_free − b (``sigma_free`` (k, 3) the free contact velocities [m/s], b
    the penetration bias on the normal rows), the contacts' friction and the diagonal
    compliance R = ``settings.compliance``, by ``settings.friction_solver`` to
    ``settings.tol`` in at most ``settings.max_iter`` iterations (the semantics of
    :class:`soadyn.ContactSettings`, as the tree stepper). Returns the
    :class:`~soadyn.ContactSolution` (a warning when it did not converge); ``warm_start``
    None or (k, 3) impulses to start the solve from."""
    g = np.array(sigma_free, dtype=float).reshape(-1)
    bias = normal_bias.py_func
    for i, d in enumerate(contacts.depth):  # the tree stepper's penetration bias
        g[3 * i + 2] -= bias(float(d), dt, settings.stabilization, settings.slop)
    return solve_contacts(D, g, contacts.friction, method=settings.friction_solver,
                          R=np.full(g.shape[0], float(settings.compliance)), tol=settings.tol,
                          max_iter=int(settings.max_iter), warm_start=warm_start)


def independent_impulse_response(model, tree, q, y, contacts, impulses):
    """Δẏ = H⁻¹ (J G)ᵀ λ (nyv,) [rad/s, m/s]: the independent velocity change of contact
    impulses λ (k, 3) in the contact frames, by C-ABA with the bodies' spatial impulses
    (one tips-to-base gather, :func:`soadyn.contact.contact_impulse`) as external forces,
    no velocity and no gravity: C-ABA returns H⁻¹ Gᵀ(τ − C − Jᵀ_bodies f), here with
    τ = 0, C = 0 and the impulses for the forces."""
    cbody, cpoint, cframe = contact_arrays(model, contacts)
    F, _ = _IMPULSE(model, (q,), (cbody, cpoint, cframe, np.ascontiguousarray(impulses, dtype=float)))
    return cluster_aba(model, y, None, np.zeros(tree.nyv), F, q=q, gravity=False)


def advance_on_manifold(model, tree, q, G, yd_next, dt):
    """(q⁺, v⁺) on the constraint manifold from the spanning configuration q and the new
    independent velocity ẏ⁺ (nyv,): y⁺ = y ⊕ ẏ⁺ dt on the independent joints, q⁺ = γ(y⁺)
    from the guess q ⊕ G ẏ⁺ dt (same assembly branch), v⁺ = G(q⁺) ẏ⁺ (module docstring)."""
    guess = integrate(model, q, G @ yd_next, dt)
    return spanning_state(model, guess[tree.independent_q_index], yd_next, guess)


def _no_contacts(settings):
    """The solution of a step without contacts: empty, converged, no iterations."""
    return ContactSolution(np.zeros((0, 3)), np.zeros((0, 3)), 0, True, 0.0, 0.0, 0.0, settings.friction_solver,
                           float(settings.tol))


def _warm_impulses(warm_start, contacts, user_model):
    """The warm start (k, 3) of ``contacts`` from the previous step's result ``warm_start``:
    each contact the impulse of the previous contact of its object pair nearest to it
    (:func:`~soadyn.kernels.contact.warm.match_warm_start`, as the compiled steps), or
    None when a contact has no such previous one or the count changed."""
    if warm_start is None or len(warm_start.contacts) != len(contacts) or len(contacts) == 0:
        return None
    wobj, wpoints, wlam, _ = _warm_arrays(warm_start, user_model)
    lam = np.empty(3 * len(contacts))
    matched = match_warm_start_kernel(np.ascontiguousarray(contacts.objects, dtype=np.int64),
                                      np.ascontiguousarray(contacts.point, dtype=float), wobj, wpoints,
                                      np.ascontiguousarray(wlam).reshape(-1), lam)
    return lam.reshape(-1, 3) if matched == len(contacts) else None


def _read_only(x):
    x.setflags(write=False)
    return x


# the warm start's arrays are passed as they are (a step's own are read-only: one compiled
# version of the kernel), and without a warm start read-only empty ones of the same types
_NO_OBJECTS = _read_only(np.zeros((0, 2), dtype=np.int64))
_NO_POINTS = _read_only(np.zeros((0, 3)))
_NO_IMPULSES = _read_only(np.zeros((0, 3)))
_NO_SCALE = _read_only(np.array([0.0, RHO_POWER]))
_NAMES = ("q", "v", "tau", "f_ext")


def _frozen(x, dtype, width):
    """``x`` as the kernel takes a warm start's array: read-only, C-contiguous, of
    ``dtype``, (n, width) (``width`` 0: a vector). A step's own arrays are so already."""
    if (type(x) is np.ndarray and x.dtype == dtype and not x.flags.writeable and x.flags.c_contiguous
            and x.ndim == (2 if width else 1)):
        return x
    a = np.array(x, dtype=dtype, order="C")
    if width:
        a = a.reshape(-1, width)
    return _read_only(a)


def _warm_arrays(warm_start, user_model):
    """(objects (W, 2), points (W, 3) [m], λ (W, 3), ADMM's penalty scale (2,)) of ``warm_start``, the
    :class:`~soadyn.StepResult` of the previous step of ``user_model`` (checked: its
    contacts made for this model at its version) or None."""
    if warm_start is None:
        return _NO_OBJECTS, _NO_POINTS, _NO_IMPULSES, _NO_SCALE
    if not isinstance(warm_start, StepResult):
        raise TypeError(f"warm_start: expected the soadyn.StepResult of the previous step or None, got "
                        f"{type(warm_start).__name__}")
    contacts = warm_start.contacts
    contacts.check(user_model, "warm_start")
    made = warm_start.__dict__.get("_kernel_warm")
    if made is not None:  # a result of compiled_cluster_step: its own read-only arrays
        return made
    objects = _frozen(contacts.objects, np.int64, 2)
    points = _frozen(contacts.point, np.float64, 3)
    lam = _frozen(warm_start.impulses, np.float64, 3)
    if lam.shape != (objects.shape[0], 3):
        raise ValueError(f"warm_start: expected impulses of shape ({objects.shape[0]}, 3) for its "
                         f"{objects.shape[0]} contacts, got {np.shape(warm_start.impulses)}")
    scale = warm_start.solver_scale
    scale = _NO_SCALE if scale is None else _frozen(scale, np.float64, 0)
    if scale.shape != (2,):
        raise ValueError(f"warm_start: expected a solver_scale of shape (2,), got {scale.shape}")
    return objects, points, lam, scale


class _StepCall:
    """What the compiled step of one model version needs, per thread (:func:`_step_call`):
    the model's, the clusters' and the collision tables, the sizes, a zero τ, and for each
    capacity used so far the kernel's packed array of the tables with this thread's own
    workspaces and scratch (:func:`~soadyn.kernels.contact.cluster_step.pack_step_tables`).
    Nothing of a call is kept in it: each call writes its scratch before it reads it."""

    __slots__ = ("parts", "nq", "nv", "capacity", "sizes", "version", "zero_tau", "packed")

    def __init__(self, model, explicit, det, version):
        mi, mf, ws, ci, cf, cws, _ = explicit
        tree = cluster_tree(model)
        c = model.compiled
        # (the workspaces as this thread's cluster calls left them: the kernel's copies start so)
        self.parts = (mi, ci, det.ci, np.array([det.floats, det.ints], dtype=np.int64), mf, cf, det.cf, ws, cws)
        self.nq, self.nv = c.nq, c.nv
        self.capacity = det.capacity
        self.sizes = (c.nq, c.nb, tree.nyq, tree.nyv, det.floats, det.ints)
        self.version = version
        self.zero_tau = np.zeros(c.nv)  # τ = None (the kernel never writes τ)
        self.packed = {}

    def tables(self, K):
        """The kernel's packed array for capacity K (its integer scratch zero-filled: the
        detection kernel leaves its own so)."""
        found = self.packed.get(K)
        if found is None:
            nf, ni = kcs.cluster_step_sizes(*self.sizes[:4], K, *self.sizes[4:])
            mi, ci, col_ci, det_sizes, mf, cf, col_cf, ws, cws = self.parts
            found = self.packed[K] = kcs.pack_step_tables(mi, ci, col_ci, det_sizes, np.zeros(ni, dtype=np.int64), mf,
                                                          cf, col_cf, ws, cws, np.zeros(nf))
        return found


def _step_call(model):
    """This thread's :class:`_StepCall` of ``model`` (a snapshot), or None when some cluster
    has no constant explicit form (then the staged step)."""
    try:  # the common case first: one look-up
        return model._derived.threads.objects["cluster_step_call"]
    except (AttributeError, KeyError):
        pass
    explicit = _explicit_call(model)
    if not explicit:
        return None
    d, det, _ = detection_tables(model)
    return d.per_thread("cluster_step_call", lambda snapshot: _StepCall(snapshot, explicit, det, d.version))


_F64 = np.dtype(np.float64)


def _state_vector(x, n, name):
    """``x`` as the kernel takes it (C-contiguous float64 (n,)): as it is when it is so
    (the check of :func:`soadyn.core.validation.kernel_vector`, its dtype compared by
    identity: numpy's native float64 descriptor is one object), else converted or refused
    by :func:`soadyn.core.validation.vector`."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.ndim == 1 and x.shape[0] == n and x.flags.c_contiguous:
        return x
    return val.vector(x, n, name, batch_ok=False)


_new = object.__new__


def _made_solution(lam, sigma, info, settings):
    """The :class:`~soadyn.ContactSolution` of the kernel's λ, σ and ``info`` (a list of
    Python floats): the object the dataclass's constructor makes, its dictionary filled at
    once (the class is frozen: its constructor sets each of the nine fields through
    ``object.__setattr__``)."""
    s = _new(ContactSolution)
    f = s.__dict__
    f["impulses"], f["velocities"], f["iterations"] = lam, sigma, int(info[ITERATIONS])
    f["converged"], f["primal"], f["dual"] = info[CONVERGED] != 0.0, info[PRIMAL], info[DUAL]
    f["complementarity"], f["method"], f["tol"] = info[COMPLEMENTARITY], settings.friction_solver, settings.tol
    return s


def _made_result(q, v, contacts, impulses, solution, scale):
    """The :class:`~soadyn.StepResult` of these fields, made as :func:`_made_solution` makes
    its solution; it also keeps the arrays a step warm started from it passes to the
    kernel as they are (the contacts' objects, λ and the penalty scale, read-only, in the
    kernel's types: :func:`_warm_arrays`), under a name that is not a field (no part of
    its repr, nor of what ``dataclasses.replace`` copies)."""
    r = _new(StepResult)
    f = r.__dict__
    f["q"], f["v"], f["contacts"], f["impulses"], f["solution"], f["solver_scale"] = (q, v, contacts, impulses,
                                                                                      solution, scale)
    f["_kernel_warm"] = (contacts.objects, contacts.point, impulses, scale)
    return r


def compiled_cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start=None):
    """:func:`staged_cluster_step` in one compiled call
    (:mod:`soadyn.kernels.contact.cluster_step`) for a model whose clusters all have a
    constant explicit form (rigid joints, gears, belts, rotors), or None for another model
    (a loop or an implicit constraint: its G(q) and γ need the preparation and solve of
    the staged step). Arguments checked as the staged step's; the same result to
    round-off, as a :class:`~soadyn.StepResult` whose ``solver_scale`` (ADMM's penalty
    scale at the end of the solve) a step warm started from it takes with its impulses.

    Every array of the result is made by this call (the contacts, λ and σ read-only, as
    the detection's and the tree step's): the kernel writes them, and nothing of the call
    stays in this thread's scratch."""
    call = _step_call(model)
    if call is None:
        return None
    h = dt if type(dt) is float and dt > 0.0 and dt < math.inf else _timestep(dt)
    nq, nv = call.nq, call.nv
    q, v = _state_vector(q, nq, "q"), _state_vector(v, nv, "v")
    tau = call.zero_tau if tau is None else _state_vector(tau, nv, "tau")
    fext = NO_FORCES if f_ext is None else val.external_forces(f_ext, model.nbodies, None)
    wobj, wpoints, wlam, wscale = _warm_arrays(warm_start, user_model)
    prm = settings.vector()
    q1, v1, info = np.empty(nq), np.empty(nv), np.empty(kcs.STEP_INFO_SIZE)
    K = call.capacity
    while True:
        # the outputs of capacity K, two fields (four for the vectors) per array, so that
        # each field of the k contacts found is one slice
        vectors, scalars, frames, pairs = np.empty((4 * K, 3)), np.empty(2 * K), np.empty((K, 3, 3)), \
            np.empty((2 * K, 2), dtype=np.int64)
        status = kcs.cluster_step_kernel(call.tables(K), q, v, tau, fext, h, prm, wobj, wpoints, wlam, wscale, q1, v1,
                                         info, vectors, scalars, frames, pairs)
        if status == st.OVERFLOW:
            raise OverflowError("q, v, tau, dt: the state after the step is not finite (inf or NaN): a time step too "
                                "large for these dynamics, or a state or force too large")
        if status != st.OK:
            st.raise_status(status, _NAMES, model=model, state=(q, v, tau))
        found = info.tolist()  # (one conversion: Python floats for every read below)
        if not max(found[kcs.WORST_Q], found[kcs.WORST_V]) <= STATE_TOL:
            # the Python check names the worst constraint and its residual
            try:
                check_residuals(evaluate_constraints(model, q, None, 0.0, bias=False), v, STATE_TOL)
            except ConstraintError as e:
                raise ConstraintError(f"q, v (the state of the step): {e}") from None
        k = int(found[kcs.COUNT])
        if k <= K:
            break
        K = k  # more contacts than the outputs hold: again with room for all of them
    vectors.setflags(write=False)
    scalars.setflags(write=False)
    frames.setflags(write=False)
    pairs.setflags(write=False)
    info.setflags(write=False)
    contacts = made_contacts(pairs[:k], pairs[K:K + k], vectors[:k], vectors[K:K + k], scalars[:k], scalars[K:K + k],
                             frames[:k], call.version, weakref.ref(model_identity(user_model)))
    lam = vectors[3 * K:3 * K + k]
    solution = _made_solution(lam, vectors[2 * K:2 * K + k], found, settings)
    if not solution.converged:
        warnings.warn(f"step: the contact solve ({settings.friction_solver}, {k} contacts) did not converge in "
                      f"{solution.iterations} iterations (residuals: primal {solution.primal:.3g}, dual "
                      f"{solution.dual:.3g}, complementarity {solution.complementarity:.3g}; tol {settings.tol:g}); "
                      "raise ContactSettings.max_iter or tol", ContactSolverWarning, stacklevel=5)
    return _made_result(q1, v1, contacts, lam, solution, info[kcs.SCALE_L:kcs.SCALE_POWER + 1])


def cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start=None):
    """The closed-chain branch of :func:`soadyn.step`: :func:`compiled_cluster_step` where
    the model's clusters all have a constant explicit form, else :func:`staged_cluster_step`
    (the same step, stage by stage in Python, with the position solve of the implicit
    clusters). Arguments and result as :func:`staged_cluster_step`'s."""
    out = compiled_cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)
    if out is not None:
        return out
    return staged_cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start)


def staged_cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start=None):
    """One semi-implicit time step with contacts of a model with loops, couplings,
    transmissions or rotors, in the independent coordinates of its cluster tree (module
    docstring), the closed-chain branch of :func:`soadyn.step`: returns the
    :class:`~soadyn.StepResult` (q⁺, v⁺, the contacts detected at q, their impulses λ
    (k, 3) [N s] in the contact frames (t1, t2, n) and the solve's
    :class:`~soadyn.ContactSolution`, without contacts an empty one, converged; no
    ``solver_scale``: the solve's penalty scale starts afresh).

    ``user_model`` is the model the caller passed (the contacts are made for it),
    ``model`` its snapshot. q (nq,), v (nv,): a spanning state that satisfies the
    constraints (to :data:`STATE_TOL`; it fixes the assembly branch); τ (nv,)
    spanning-tree joint forces [N m, N] or None; dt > 0 [s]; f_ext None or (nbodies, 6);
    ``settings`` a :class:`soadyn.ContactSettings`; ``warm_start`` the previous step's
    :class:`soadyn.StepResult` or None (its impulses start the solve when its contacts come
    from the same object pairs in the same order).
    """
    h = _timestep(dt)
    _warm_arrays(warm_start, user_model)  # a StepResult of this model's version, or None
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    v = val.vector(v, c.nv, "v", batch_ok=False)
    tau = np.zeros(c.nv) if tau is None else val.vector(tau, c.nv, "tau", batch_ok=False)
    if f_ext is not None:
        f_ext = val.external_forces(f_ext, c.nb, None)
    try:
        check_residuals(evaluate_constraints(model, q, None, 0.0, bias=False), v, STATE_TOL)
    except ConstraintError as e:
        raise ConstraintError(f"q, v (the state of the step): {e}") from None
    tree = cluster_tree(model)
    y, yd, yd_free, G = free_independent_velocity(model, tree, q, v, tau, f_ext, h)
    contacts = detect_contacts(user_model, q, settings.margin)
    if len(contacts) == 0:
        q_next, v_next = advance_on_manifold(model, tree, q, G, yd_free, h)
        return StepResult(q_next, v_next, contacts, np.zeros((0, 3)), _no_contacts(settings))
    D = delassus(user_model, q, contacts)
    sigma_free = contact_velocities(user_model, q, G @ yd_free, contacts)
    solution = contact_problem(contacts, D, sigma_free, h, settings, _warm_impulses(warm_start, contacts, user_model))
    yd_next = yd_free + independent_impulse_response(user_model, tree, q, y, contacts, solution.impulses)
    if not np.all(np.isfinite(yd_next)):
        raise OverflowError("q, v, tau, dt: the independent velocity after the step is not finite (inf or NaN): a "
                            "time step too large for these dynamics, or a state or force too large")
    q_next, v_next = advance_on_manifold(model, tree, q, G, yd_next, h)
    return StepResult(q_next, v_next, contacts, solution.impulses, solution)
