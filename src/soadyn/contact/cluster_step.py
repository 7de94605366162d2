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
compiled call (:func:`compiled_cluster_step`, :mod:`soadyn.kernels.contact.cluster_step`,
where C-EFPA's propagators run on the free stage's backward pass); the others (loops,
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
from ..geometry.contacts import Contacts
from ..geometry.detect import _prepared as detection_tables
from ..geometry.detect import detect_contacts
from ..kernels.collision.detect import CONTACT_FLOATS, CONTACT_INTS
from ..kernels.contact import cluster_step as kcs
from ..kernels.contact.admm import COMPLEMENTARITY, CONVERGED, DUAL, ITERATIONS, PRIMAL
from ..kernels.contact.step import normal_bias
from ..kernels.contact.warm import match_warm_start_kernel
from .delassus import contact_arrays, delassus
from .jacobian import _IMPULSE, contact_velocities
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


def _warm_impulses(warm_start, contacts):
    """The warm start (k, 3) of ``contacts`` from the previous step's result ``warm_start``:
    each contact the impulse of the previous contact of its object pair nearest to it
    (:func:`~soadyn.kernels.contact.warm.match_warm_start`, as the compiled steps), or
    None when a contact has no such previous one or the count changed."""
    if warm_start is None or len(warm_start.contacts) != len(contacts) or len(contacts) == 0:
        return None
    wobj, wpoints, wlam = _warm_arrays(warm_start)
    lam = np.empty(3 * len(contacts))
    matched = match_warm_start_kernel(np.ascontiguousarray(contacts.objects, dtype=np.int64),
                                      np.ascontiguousarray(contacts.point, dtype=float), wobj, wpoints, wlam, lam)
    return lam.reshape(-1, 3) if matched == len(contacts) else None


class _StepCall:
    """What the compiled step of one model version needs, per thread (:func:`_step_call`):
    the model's and the clusters' tables and workspaces, the collision tables, the sizes
    and the scratch of each capacity used so far."""

    __slots__ = ("tables", "det", "sizes", "nq", "nv", "lam_offset", "scratch")

    def __init__(self, model, explicit, det):
        mi, mf, ws, ci, cf, cws, nyv = explicit
        tree = cluster_tree(model)
        c = model.compiled
        self.tables = (mi, mf, ws, ci, cf, cws, det.ci, det.cf)
        self.det = det
        self.nq, self.nv = c.nq, c.nv
        self.sizes = (c.nq, c.nb, tree.nyq, tree.nyv, det.floats, det.ints)
        # the start of the NCP vectors g, R, σ, λ in the float scratch (the kernel's layout)
        self.lam_offset = det.floats + 4 * tree.nyv + 2 * tree.nyq + 2 * c.nq + 6 * c.nb
        self.scratch = {}

    def buffers(self, K):
        """The (float, integer) scratch of capacity K (the integers zero-filled: the
        detection kernel leaves its own so)."""
        found = self.scratch.get(K)
        if found is None:
            nf, ni = kcs.cluster_step_sizes(*self.sizes[:4], K, *self.sizes[4:])
            found = self.scratch[K] = (np.zeros(nf), np.zeros(ni, dtype=np.int64))
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
    return d.per_thread("cluster_step_call", lambda snapshot: _StepCall(snapshot, explicit, det))


def _warm_arrays(warm_start):
    """The previous step's contacts as the kernels take them: objects (W, 2), points (W, 3), λ (3W,)."""
    if warm_start is None:
        return _NO_OBJECTS, _NO_POINTS, _NO_IMPULSES
    return (np.ascontiguousarray(warm_start.contacts.objects, dtype=np.int64),
            np.ascontiguousarray(warm_start.contacts.point, dtype=float),
            np.ascontiguousarray(warm_start.impulses, dtype=float).reshape(-1))


_NO_OBJECTS, _NO_POINTS, _NO_IMPULSES = np.zeros((0, 2), dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
_NAMES = ("q", "v", "tau", "f_ext")


def _state_vector(x, n, name):
    return x if val.kernel_vector(x, n) else val.vector(x, n, name, batch_ok=False)


def compiled_cluster_step(user_model, model, q, v, tau, dt, f_ext, settings, warm_start=None):
    """:func:`staged_cluster_step` in one compiled call
    (:mod:`soadyn.kernels.contact.cluster_step`) for a model whose clusters all have a
    constant explicit form (rigid joints, gears, belts, rotors), or None for another model
    (a loop or an implicit constraint: its G(q) and γ need the preparation and solve of
    the staged step). Arguments checked as the staged step's; the same result to
    round-off."""
    call = _step_call(model)
    if call is None:
        return None
    h = dt if type(dt) is float and dt > 0.0 and dt < math.inf else _timestep(dt)
    nq, nv = call.nq, call.nv
    q, v = _state_vector(q, nq, "q"), _state_vector(v, nv, "v")
    tau = np.zeros(nv) if tau is None else _state_vector(tau, nv, "tau")
    fext = NO_FORCES if f_ext is None else val.external_forces(f_ext, model.nbodies, None)
    wobj, wpoints, wlam = _warm_arrays(warm_start)
    prm = settings.vector()
    q1, v1 = np.empty(nq), np.empty(nv)
    info = np.zeros(kcs.STEP_INFO_SIZE)
    det = call.det
    K = det.capacity
    while True:
        fbuf, ibuf = call.buffers(K)
        status = kcs.cluster_step_kernel(*call.tables, q, v, tau, fext, h, prm, K, fbuf, ibuf, det.floats, det.ints,
                                         wobj, wpoints, wlam, q1, v1, info)
        if status == st.OVERFLOW:
            raise OverflowError("q, v, tau, dt: the state after the step is not finite (inf or NaN): a time step too "
                                "large for these dynamics, or a state or force too large")
        if status != st.OK:
            st.raise_status(status, _NAMES, model=model, state=(q, v, tau))
        if not max(info[kcs.WORST_Q], info[kcs.WORST_V]) <= STATE_TOL:
            # the Python check names the worst constraint and its residual
            try:
                check_residuals(evaluate_constraints(model, q, None, 0.0, bias=False), v, STATE_TOL)
            except ConstraintError as e:
                raise ConstraintError(f"q, v (the state of the step): {e}") from None
        k = int(info[kcs.COUNT])
        if k <= K:
            break
        K = k  # more contacts than the scratch holds: again with room for all of them
    fl = fbuf[det.floats:det.floats + CONTACT_FLOATS * K].copy()
    il = ibuf[det.ints:det.ints + CONTACT_INTS * K].copy()
    fl.flags.writeable = False
    il.flags.writeable = False
    contacts = Contacts(il[:2 * k].reshape(k, 2), il[2 * K:2 * K + 2 * k].reshape(k, 2), fl[:3 * k].reshape(k, 3),
                        fl[3 * K:3 * K + 3 * k].reshape(k, 3), fl[6 * K:6 * K + k], fl[7 * K:7 * K + k],
                        fl[8 * K:8 * K + 9 * k].reshape(k, 3, 3), model._derived.version, weakref.ref(user_model))
    if k == 0:
        return q1, v1, contacts, np.zeros((0, 3)), _no_contacts(settings)
    n = 3 * K
    o = call.lam_offset + CONTACT_FLOATS * K + 2 * n  # σ, then λ n entries later: one copy of both
    block = fbuf[o:o + n + 3 * k].copy()
    sigma, lam = block[:3 * k].reshape(k, 3), block[n:].reshape(k, 3)
    solution = ContactSolution(lam, sigma, int(info[ITERATIONS]), bool(info[CONVERGED]), float(info[PRIMAL]),
                               float(info[DUAL]), float(info[COMPLEMENTARITY]), settings.friction_solver,
                               float(settings.tol))
    if not solution.converged:
        warnings.warn(f"step: the contact solve ({settings.friction_solver}, {k} contacts) did not converge in "
                      f"{solution.iterations} iterations (residuals: primal {solution.primal:.3g}, dual "
                      f"{solution.dual:.3g}, complementarity {solution.complementarity:.3g}; tol {settings.tol:g}); "
                      "raise ContactSettings.max_iter or tol", ContactSolverWarning, stacklevel=3)
    return q1, v1, contacts, lam, solution


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
    docstring), the closed-chain branch of :func:`soadyn.step`: returns ``(q⁺, v⁺,
    contacts, impulses, solution)``, the contacts detected at q, their impulses λ (k, 3)
    [N s] in the contact frames (t1, t2, n) and the solve's
    :class:`~soadyn.ContactSolution` (without contacts an empty one, converged).

    ``user_model`` is the model the caller passed (the contacts are made for it),
    ``model`` its snapshot. q (nq,), v (nv,): a spanning state that satisfies the
    constraints (to :data:`STATE_TOL`; it fixes the assembly branch); τ (nv,)
    spanning-tree joint forces [N m, N] or None; dt > 0 [s]; f_ext None or (nbodies, 6);
    ``settings`` a :class:`soadyn.ContactSettings`; ``warm_start`` the previous step's
    :class:`soadyn.StepResult` or None (its impulses start the solve, each contact from the
    previous contact of its object pair nearest to it, when every contact has one).
    """
    h = _timestep(dt)
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
        return q_next, v_next, contacts, np.zeros((0, 3)), _no_contacts(settings)
    D = delassus(user_model, q, contacts)
    sigma_free = contact_velocities(user_model, q, G @ yd_free, contacts)
    solution = contact_problem(contacts, D, sigma_free, h, settings, _warm_impulses(warm_start, contacts))
    yd_next = yd_free + independent_impulse_response(user_model, tree, q, y, contacts, solution.impulses)
    if not np.all(np.isfinite(yd_next)):
        raise OverflowError("q, v, tau, dt: the independent velocity after the step is not finite (inf or NaN): a "
                            "time step too large for these dynamics, or a state or force too large")
    q_next, v_next = advance_on_manifold(model, tree, q, G, yd_next, h)
    return q_next, v_next, contacts, solution.impulses, solution
