"""One time step of a tree with frictional contact, and rollouts of many, in one compiled call.

The semi-implicit velocity-level step of DESIGN.md ("Contacts"), in five stages run by
:func:`step_state` (the public :func:`soadyn.step` and :func:`soadyn.rollout` with
``contacts=True`` call it)::

    detect    the bodies' world poses at q, the contacts k of the collision objects
              (:func:`~soadyn.kernels.collision.detect.detect_contacts`)
    free      the block ABA at (q, v, τ, f_ext) ([Jain23p, eq. 7]):
              v_free = v + dt M⁻¹(τ + f_ext terms − C(q, v) − g(q))
    delassus  on the ATBI the free stage left: G = J M⁻¹ Jᵀ from the factored compliance
              (:func:`~soadyn.kernels.contact.delassus.delassus_after_atbi`) and
              g = J v_free − b, b the penetration bias (:func:`normal_bias`)
    solve     λ of the Coulomb NCP of (G + R, g, μ) by ADMM or PGS (:mod:`.admm`, :mod:`.pgs`)
    update    v⁺ = v_free + M⁻¹Jᵀλ (:mod:`.response`, on the same ATBI), q⁺ = q ⊕ dt v⁺

The block gather of the free stage leaves P⁺, U, G* and D⁻¹ of q in the workspace, which
the Delassus operator and the impulse response need: the articulated inertias are formed
once per step.

The settings reach the kernels as one vector (:data:`MARGIN` … :data:`SOLVER`), the scratch
as one float and one integer buffer (:func:`step_sizes`, :func:`step_scratch`) of a
contact capacity K; a step that finds more than K contacts stops before the dynamics and
reports the count (``info[COUNT]``), so its caller calls again with a larger K: nothing is
dropped.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ...core.configuration import integrate_into
from ...core.jit import helper, kernel
from ...core.joints import FREE
from ...core.layout import carve, model_tables, packed_ok, packed_part, state_count, state_of, workspace_views
from ...core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK, OVERFLOW, SINGULAR
from ..articulated_blocks import acceleration_pass, articulated_body_pass
from ..collision.detect import CONTACT_FLOATS, CONTACT_INTS, detect_contacts
from ..kinematics import (body_velocities, configuration_status, forces_shape_ok, joint_placements, no_forces,
                          nonfinite, state_status, world_poses)
from .admm import (AA_SMALL, ADMM_ROWS, COMPLEMENTARITY, CONVERGED, DUAL, INFO_SIZE, PRIMAL, RHO_POWER, admm_solve,
                   write_info)
from .cones import ncp_residuals, project_cone
from .delassus import delassus_after_atbi, delassus_buffer_sizes
from .pgs import pgs_solve
from .points import contact_forces_pass, contact_velocities_pass
from .response import impulse_response
from .sticking import sticking_solve, sticking_start
from .warm import match_warm_start

__all__ = ["step_kernel", "record_size", "record_views", "numpy_record_views", "record_offsets", "TABLE_PARTS", "RECORD_HEAD", "rollout_contact_kernel", "step_sizes", "normal_bias", "SETTINGS_SIZE", "STEP_INFO_SIZE",
           "STATS_SIZE"]

#: entries of the settings vector of the kernels (:class:`soadyn.ContactSettings`)
MARGIN, STABILIZATION, SLOP, COMPLIANCE, TOL, MAX_ITER, SOLVER = range(7)
SETTINGS_SIZE = 7
#: the solver codes of ``settings[SOLVER]``
ADMM, PGS = 0, 1

#: ``info`` of a step: the solver's rows (:mod:`.admm`: iterations, converged, primal,
#: dual, complementarity, ρ), then the contact count, whether the solve was warm started,
#: and ADMM's penalty scale at its end (L, the largest eigenvalue of G + R it used, and the
#: spectral rule's exponent p; L = 0: none yet), which the next step's warm start takes
COUNT, WARMED, SCALE_L, SCALE_POWER = INFO_SIZE, INFO_SIZE + 1, INFO_SIZE + 2, INFO_SIZE + 3
STEP_INFO_SIZE = INFO_SIZE + 4

#: columns of the per-step record of a rollout: the contact count, the solver's
#: iterations and convergence, the three NCP residuals, Σ λ_n [N s] and the largest depth [m]
(STAT_COUNT, STAT_ITERATIONS, STAT_CONVERGED, STAT_PRIMAL, STAT_DUAL, STAT_COMPLEMENTARITY, STAT_NORMAL,
 STAT_DEPTH) = range(8)
STATS_SIZE = 8

#: the dimensions vector of the kernels: the capacity K and the detection's scratch sizes
DIM_CAPACITY, DIM_DETECT_FLOATS, DIM_DETECT_INTS = range(3)

#: The scratch of a step for a capacity of K contacts (n = 3K): the detection's scratch
#: (``det_fs``, ``det_js``), its outputs in the flat layout of
#: :func:`~soadyn.kernels.collision.detect.detect_kernel` (``cfl`` (17 K,): points, normals,
#: depths, frictions, frames; ``cil`` (4 K,): objects, bodies), the free acceleration ``a``
#: (also Δv) and ``vfree`` (nv,), the joint forces with PD terms ``tau`` (nv,), the bodies'
#: contact impulses ``F`` (nb, 6), the NCP vectors ``g``, ``R``, ``sigma``, ``lam`` (n,),
#: the Delassus matrix ``Gf`` and the solver's matrix ``Af`` (n², flat: carved (3k, 3k) for
#: the k contacts found), the solver's scratch ``Vf`` (:func:`~.admm.admm_scratch_size`), the Delassus kernel's scratch
#: (``ofl``, ``oin``) and a rollout's previous contacts (``prev_objects`` (2 K,),
#: ``prev_points`` (3 K,), ``prev_lam`` (n,), ``prev_sigma`` (n,)) for its warm start, the
#: dual start matched from ``prev_sigma`` (``dual`` (n,)), and a rollout's step
#: ``info`` (:data:`STEP_INFO_SIZE`) and its previous step's ADMM scale ``prev_scale`` (2,).
StepScratch = namedtuple("StepScratch", ["det_fs", "det_js", "cfl", "cil", "a", "vfree", "tau", "F", "g", "R",
                                         "sigma", "lam", "Gf", "Af", "Vf", "ofl", "oin", "prev_objects",
                                         "prev_points", "prev_lam", "prev_sigma", "dual", "info",
                                         "prev_scale"])


@helper(forceinline=True)
def step_sizes(nb, nv, K, det_floats, det_ints, of, oi):
    """(floats, integers) of the scratch of a step with capacity K (:data:`StepScratch`),
    ``of``, ``oi`` those of the Delassus kernel for K contacts,
    ``delassus_buffer_sizes(nb, nv, K)`` (:func:`~.delassus.delassus_buffer_sizes`); Python calls
    ``step_sizes.py_func`` (its body calls no compiled function)."""
    n = 3 * K
    floats = (det_floats + CONTACT_FLOATS * K + 3 * nv + 6 * nb + 8 * n + 2 * n * n + ADMM_ROWS * n + AA_SMALL
              + STEP_INFO_SIZE + 2 + of)
    ints = det_ints + CONTACT_INTS * K + oi + 2 * K
    return floats, ints


@helper(forceinline=True)
def step_scratch(fbuf, ibuf, nb, nv, dims):
    """Named views (:data:`StepScratch`) of the step's scratch buffers."""
    K, dfl, dint = dims[DIM_CAPACITY], dims[DIM_DETECT_FLOATS], dims[DIM_DETECT_INTS]
    n = 3 * K
    o = 0
    det_fs = carve(fbuf, o, dfl); o += dfl
    cfl = carve(fbuf, o, CONTACT_FLOATS * K); o += CONTACT_FLOATS * K
    a = carve(fbuf, o, nv); o += nv
    vfree = carve(fbuf, o, nv); o += nv
    tau = carve(fbuf, o, nv); o += nv
    F = carve(fbuf, o, (nb, 6)); o += 6 * nb
    g = carve(fbuf, o, n); o += n
    R = carve(fbuf, o, n); o += n
    sigma = carve(fbuf, o, n); o += n
    lam = carve(fbuf, o, n); o += n
    prev_lam = carve(fbuf, o, n); o += n
    prev_points = carve(fbuf, o, 3 * K); o += 3 * K
    prev_sigma = carve(fbuf, o, n); o += n
    dual = carve(fbuf, o, n); o += n
    Gf = carve(fbuf, o, n * n); o += n * n
    Af = carve(fbuf, o, n * n); o += n * n
    Vf = carve(fbuf, o, ADMM_ROWS * n + AA_SMALL); o += ADMM_ROWS * n + AA_SMALL
    info = carve(fbuf, o, STEP_INFO_SIZE); o += STEP_INFO_SIZE
    prev_scale = carve(fbuf, o, 2); o += 2
    of, oi = delassus_buffer_sizes(nb, nv, K)
    ofl = carve(fbuf, o, of)
    o = 0
    det_js = carve(ibuf, o, dint); o += dint
    cil = carve(ibuf, o, CONTACT_INTS * K); o += CONTACT_INTS * K
    prev_objects = carve(ibuf, o, 2 * K); o += 2 * K
    oin = carve(ibuf, o, oi)
    return StepScratch(det_fs, det_js, cfl, cil, a, vfree, tau, F, g, R, sigma, lam, Gf, Af, Vf, ofl, oin,
                       prev_objects, prev_points, prev_lam, prev_sigma, dual, info, prev_scale)


@helper(forceinline=True)
def normal_bias(depth, dt, stabilization, slop):
    """b [m/s], the least separating normal velocity σ_n⁺ ≥ b a contact of ``depth`` asks
    for after the step: (β/dt)·max(depth − slop, 0) for a penetration (a Baumgarte-like
    push-out of the part beyond the slop band, β = ``stabilization``), and depth/dt < 0
    for a gap within the margin (the surfaces may close it, no more, in this step). The
    solver sees g_n = (J v_free)_n − b."""
    if depth < 0.0:
        return depth / dt
    excess = depth - slop
    return stabilization * excess / dt if excess > 0.0 else 0.0


# --------------------------------------------------------------------------- the stages
@helper(forceinline=True)
def warm_usable(k, matched, W):
    """Whether a step of k contacts, ``matched`` of them to a previous contact of their
    pair (:func:`~.warm.match_warm_start`), of W previous contacts, starts from the
    previous step: when every contact matched one and the count is the same (G nearly
    the previous one; :func:`solve_stage` says what else was measured)."""
    return k > 0 and matched == k and W == k


@helper
def detect_stage(mi, mf, ws, ci, cf, margin, s, K):
    """The world poses at the joint placements in the workspace, then the contacts into
    ``s.cfl``/``s.cil`` (capacity K). Returns their count (more than K: not all written),
    or −BAD_SHAPE for collision tables that do not fit the model."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    world_poses(mi, mf, ws)
    return detect_contacts(ci, cf, w.Rw, w.pw, margin, s.det_fs, s.det_js, carve(s.cil, 0, (K, 2)),
                                  carve(s.cil, 2 * K, (K, 2)), carve(s.cfl, 0, (K, 3)), carve(s.cfl, 3 * K, (K, 3)),
                                  carve(s.cfl, 6 * K, K), carve(s.cfl, 7 * K, K), carve(s.cfl, 8 * K, (K, 3, 3)))


@helper
def free_stage(mi, mf, ws, v, tau, fext, dt, s):
    """v_free = v + dt q̈(q, v, τ, f_ext) into ``s.vfree`` by the block ABA (its gather
    leaves the ATBI of q in the workspace for the later stages). Needs the joint
    placements. Returns False when M is singular."""
    body_velocities(mi, mf, ws, v)
    if not articulated_body_pass(mi, mf, ws, tau, fext, True):
        return False
    acceleration_pass(mi, mf, ws, True, True, s.a)
    for j in range(v.shape[0]):
        s.vfree[j] = v[j] + dt * s.a[j]
    free_joint_rotation(model_tables(mi, mf), v, dt, s.vfree)
    return True


@helper
def free_joint_rotation(m, v, dt, vfree):
    """The rotating-frame term of a free joint on the world, integrated exactly. Its linear
    velocity v is in the body frame, whose rate holds −ω × v (v̇ = Rᵀ a_world − ω × v): the
    explicit step v + dt(−ω × v) lengthens it by √(1 + (ω dt)²) a step, so that a rolling
    or spinning body speeds up. Over the step the body turns by exp([ω] dt) (the screw of
    :func:`~soadyn.core.configuration.integrate_into`), under which a constant world
    velocity has body coordinates exp(−[ω] dt) v: that rotation replaces −dt ω × v, and the
    world velocity of a force-free body stays what it was."""
    for i in range(m.nb):
        if m.joint_type[i] != FREE or m.parent[i] >= 0:
            continue
        o = m.v_index[i]
        wx, wy, wz = v[o], v[o + 1], v[o + 2]
        vx, vy, vz = v[o + 3], v[o + 4], v[o + 5]
        th = math.sqrt(wx * wx + wy * wy + wz * wz) * dt
        if th == 0.0:
            continue
        kx, ky, kz = wx * dt / th, wy * dt / th, wz * dt / th
        c, sn = math.cos(th), math.sin(th)
        kv = kx * vx + ky * vy + kz * vz
        cx, cy, cz = ky * vz - kz * vy, kz * vx - kx * vz, kx * vy - ky * vx  # k × v
        # exp(−[ω] dt) v − v (Rodrigues), in place of the explicit −dt ω × v the ABA left
        rx = (c - 1.0) * vx - sn * cx + (1.0 - c) * kv * kx
        ry = (c - 1.0) * vy - sn * cy + (1.0 - c) * kv * ky
        rz = (c - 1.0) * vz - sn * cz + (1.0 - c) * kv * kz
        vfree[o + 3] += rx + dt * (wy * vz - wz * vy)
        vfree[o + 4] += ry + dt * (wz * vx - wx * vz)
        vfree[o + 5] += rz + dt * (wx * vy - wy * vx)


@helper
def vector_stage(mi, mf, ws, k, K, dt, prm, s):
    """g = J v_free − b (3k,) into ``s.g`` for the k contacts of the detect stage
    (:func:`normal_bias`) and the compliance R into ``s.R``. Leaves the body velocities of
    v_free in the workspace."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    n = 3 * k
    bodies, point, frame = carve(s.cil, 2 * K, (k, 2)), carve(s.cfl, 0, (k, 3)), carve(s.cfl, 8 * K, (k, 3, 3))
    body_velocities(mi, mf, ws, s.vfree)
    contact_velocities_pass(w, bodies, point, frame, w.scratch[0], carve(s.g, 0, (k, 3)))
    depth = carve(s.cfl, 6 * K, k)
    for i in range(k):
        s.g[3 * i + 2] -= normal_bias(depth[i], dt, prm[STABILIZATION], prm[SLOP])
    for r in range(n):
        s.R[r] = prm[COMPLIANCE]


@helper
def matrix_stage(mi, mf, ws, k, K, s):
    """G (3k, 3k) into ``s.Gf`` for the k contacts of the detect stage, on the free
    stage's ATBI and the detect stage's world poses (:func:`~.delassus.delassus_after_atbi`)."""
    n = 3 * k
    delassus_after_atbi(mi, mf, ws, carve(s.cil, 2 * K, (k, 2)), carve(s.cfl, 0, (k, 3)),
                        carve(s.cfl, 8 * K, (k, 3, 3)), s.ofl, s.oin, carve(s.Gf, 0, (n, n)))


@helper
def delassus_stage(mi, mf, ws, k, K, dt, prm, s):
    """G (3k, 3k) into ``s.Gf`` and g = J v_free − b (3k,) into ``s.g`` for the k
    contacts of the detect stage (:func:`normal_bias`), the compliance R into ``s.R``:
    :func:`vector_stage`, then :func:`matrix_stage`."""
    vector_stage(mi, mf, ws, k, K, dt, prm, s)
    matrix_stage(mi, mf, ws, k, K, s)


@helper(forceinline=True)
def start_pays(nv, k):
    """Whether a step of k contacts on nv velocities tests its start without G first
    (:func:`start_stage`): when the contact rows outnumber the velocities, 3k > nv. Then
    G (3k × 3k, of rank ≤ nv) costs more to form than the O(N) impulse response that tests
    the start, and a resting body's impulses, not unique, stay a solution from step to step
    (a stack of boxes: 60 rows on 30 velocities). With fewer rows (a floating base on a few
    feet: solo12, 12 rows on 18; talos, 24 on 38) the start seldom solves the next step and
    the test cost more than it saved: G is formed and the solver tests the start itself
    (the measurements: benchmarks/results/design_notes.md, "start_pays")."""
    return 3 * k > nv


@helper
def start_stage(mi, mf, ws, k, K, prm, warm_objects, warm_points, warm_lam, warm_scale, s, info):
    """Whether the solve's start already solves the NCP of the step (after
    :func:`vector_stage`), tested without G: the start is the warm start of
    :func:`solve_stage` (each contact from the nearest previous contact of its pair,
    projected onto its cone, when every contact matched one: :func:`warm_usable`) or
    λ = 0, and its velocities

        σ = J (v_free + M⁻¹Jᵀλ) − b + Rλ = (G + R)λ + g

    come from the impulse response on the free stage's ATBI (:mod:`.response`, O(N + k))
    instead of the product with G, whose formation (:func:`matrix_stage`, O(k²)) is the
    largest part of a step whose contacts hold as they did (the 5-box stack standing: 20
    contacts, 0 iterations in most steps). The test is the one the solvers apply to
    their start (:func:`~.admm.admm_solve`, :func:`~.pgs.pgs_solve`: the three NCP
    residuals at most ``tol``), so a start it accepts is the λ they return, with
    0 iterations. When it holds: λ in ``s.lam``, σ in ``s.sigma``, Δv = M⁻¹Jᵀλ in
    ``s.a``, the solver's ``info`` as the solver writes it for such a start (ADMM's
    penalty scale carried over: the given one, or none), and True. Otherwise False, and
    the step forms G and solves (:func:`matrix_stage`, :func:`solve_stage`)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    n = 3 * k
    bodies, point, frame = carve(s.cil, 2 * K, (k, 2)), carve(s.cfl, 0, (k, 3)), carve(s.cfl, 8 * K, (k, 3, 3))
    lam, sigma, mu = s.lam[:n], s.sigma[:n], carve(s.cfl, 7 * K, k)
    matched = match_warm_start(carve(s.cil, 0, (k, 2)), point, warm_objects, warm_points, warm_lam, lam)
    warm = warm_usable(k, matched, warm_objects.shape[0])
    if warm:
        for i in range(k):
            project_cone(mu[i], lam, i, lam)
        contact_forces_pass(w, bodies, point, frame, carve(s.lam, 0, (k, 3)), w.scratch[0], s.F)
        impulse_response(mi, mf, ws, s.F, s.a)
        body_velocities(mi, mf, ws, s.a)
        contact_velocities_pass(w, bodies, point, frame, w.scratch[0], carve(s.sigma, 0, (k, 3)))
        for r in range(n):
            sigma[r] += s.g[r] + s.R[r] * lam[r]
    else:
        for r in range(n):
            lam[r] = 0.0
            sigma[r] = s.g[r]
        for j in range(s.a.shape[0]):
            s.a[j] = 0.0
    res = s.Vf[n:n + 3]
    ncp_residuals(mu, lam, sigma, s.Vf[:n], res)
    if max(res[0], max(res[1], res[2])) > prm[TOL]:
        return False
    solved_without_iterations(prm, warm, warm_scale, res, info)
    return True


@helper(forceinline=True)
def solved_without_iterations(prm, warm, warm_scale, res, info):
    """The solver's ``info`` of a step whose NCP was solved before the solver iterated (its
    start, or the sticking solve), with residuals ``res``: 0 iterations, converged, and for
    ADMM the penalty scale the next solve starts from (the warm start's, or none)."""
    write_info(info, 0, True, res, 0.0)
    if int(prm[SOLVER]) == ADMM:
        info[SCALE_L], info[SCALE_POWER] = (warm_scale[0], warm_scale[1]) if warm else (0.0, RHO_POWER)
    info[WARMED] = 1.0 if warm else 0.0


@helper
def solve_stage(k, K, nv, prm, warm_objects, warm_points, warm_lam, warm_sigma, warm_scale, s, info):
    """λ (3k,) into ``s.lam`` from the NCP of the delassus stage (nv velocities); the
    solver's info into ``info``. First, with no more contact rows than velocities and a
    start that shows every contact sticking, by the sticking solve (:mod:`.sticking`: one
    factorization of G + R, taken when its λ solves the NCP to the tolerance; then 0
    iterations). Else by the settings' solver, warm started from the previous step's
    contacts (``warm_objects`` (W, 2) their
    object pairs, ``warm_points`` (W, 3) their world points [m], ``warm_lam`` (3W,) their
    impulses, ``warm_sigma`` (3W,) their velocities σ, or empty): each contact from the
    impulse (and σ, ADMM's dual start) of the nearest previous contact of its pair
    (:func:`~.warm.match_warm_start`), with ADMM's penalty scale ``warm_scale`` (L, p;
    L = 0: none), when every contact matched one and the count is the same
    (:func:`warm_usable`). Otherwise the solve starts from zero and estimates the scale
    afresh. Starts with new contacts at zero, or from a neighbour's impulse where the count
    changed, were measured and not taken (benchmarks/results/design_notes.md,
    "solve_stage"): the impulses such a start ends at, one of the many solutions of a
    rank-deficient G, start the next steps worse.
    Returns False when G + R is not positive semidefinite."""
    n = 3 * k
    lam = s.lam[:n]
    matched = match_warm_start(carve(s.cil, 0, (k, 2)), carve(s.cfl, 0, (k, 3)), warm_objects, warm_points,
                               warm_lam, lam)
    warm = warm_usable(k, matched, warm_objects.shape[0])
    if not warm:
        for r in range(n):
            lam[r] = 0.0
    G, g, R, mu = carve(s.Gf, 0, (n, n)), s.g[:n], s.R[:n], carve(s.cfl, 7 * K, k)
    tol, max_iter = prm[TOL], int(prm[MAX_ITER])
    if n <= nv and sticking_start(mu, lam, warm):
        rows = carve(s.Vf, 0, (3, n))  # x, scratch, residuals (the solver's scratch: free until it runs)
        if sticking_solve(G, g, mu, R, tol, carve(s.Af, 0, (n, n)), rows[0], s.sigma[:n], rows[1], rows[2, :3]):
            for r in range(n):
                lam[r] = rows[0, r]
            solved_without_iterations(prm, warm, warm_scale, rows[2, :3], info)
            return True
    if int(prm[SOLVER]) == PGS:
        pgs_solve(G, g, mu, R, tol, max_iter, warm, lam, s.sigma[:n], info, carve(s.Vf, 0, (2, n)))
    else:
        L0, p0 = (warm_scale[0], warm_scale[1]) if warm else (0.0, RHO_POWER)
        dual = s.dual[:0]
        if warm and warm_sigma.shape[0] == warm_lam.shape[0]:
            dual = s.dual[:n]
            match_warm_start(carve(s.cil, 0, (k, 2)), carve(s.cfl, 0, (k, 3)), warm_objects, warm_points,
                             warm_sigma, dual)
        st, L, power = admm_solve(G, g, mu, R, tol, max_iter, warm, lam, s.sigma[:n], info, carve(s.Af, 0, (n, n)),
                                  carve(s.Vf, 0, ADMM_ROWS * n + AA_SMALL), L0, p0, dual)
        if st != 0:
            return False
        info[SCALE_L], info[SCALE_POWER] = L, power
    info[WARMED] = 1.0 if warm else 0.0
    return True


@helper
def update_stage(mi, mf, ws, q, k, K, dt, s, q1, v1):
    """v⁺ = v_free + M⁻¹Jᵀλ into ``v1`` (k > 0: the response on the free stage's ATBI) and
    q⁺ = q ⊕ dt v⁺ into ``q1``. Returns the integration's status."""
    if k > 0:
        w = workspace_views(ws, model_tables(mi, mf))
        contact_forces_pass(w, carve(s.cil, 2 * K, (k, 2)), carve(s.cfl, 0, (k, 3)), carve(s.cfl, 8 * K, (k, 3, 3)),
                            carve(s.lam, 0, (k, 3)), w.scratch[0], s.F)
        impulse_response(mi, mf, ws, s.F, s.a)
    return advance_stage(mi, mf, ws, q, k, dt, s, q1, v1)


@helper
def advance_stage(mi, mf, ws, q, k, dt, s, q1, v1):
    """v⁺ = v_free + Δv into ``v1``, Δv = M⁻¹Jᵀλ in ``s.a`` (k > 0; none for k = 0), and
    q⁺ = q ⊕ dt v⁺ into ``q1``. Returns the integration's status."""
    for j in range(v1.shape[0]):
        v1[j] = s.vfree[j] + s.a[j] if k > 0 else s.vfree[j]
    return integrate_into(mi, mf, ws, q, v1, dt, q1)


@helper
def step_state(mi, mf, ws, q, v, tau, fext, dt, ci, cf, prm, K, s, warm_objects, warm_points, warm_lam, warm_sigma,
               warm_scale, q1, v1, info):
    """One step from (q, v) under (τ, f_ext) into (q1, v1) (module docstring), inputs
    checked by the caller. ``info`` (:data:`STEP_INFO_SIZE`): the solver's info, the
    contact count (more than K: the step stopped after the detection) and whether the
    solve was warm started. Returns a status (OVERFLOW: the new state is not finite)."""
    for r in range(STEP_INFO_SIZE):
        info[r] = 0.0
    info[CONVERGED] = 1.0  # no contacts: nothing to solve
    joint_placements(mi, mf, ws, q)
    k = detect_stage(mi, mf, ws, ci, cf, prm[MARGIN], s, K)
    if k < 0:
        return BAD_SHAPE
    info[COUNT] = k
    if k > K:
        return OK
    if not free_stage(mi, mf, ws, v, tau, fext, dt, s):
        return SINGULAR
    started = False  # the solve's start solves the NCP (no G formed)
    if k > 0:
        vector_stage(mi, mf, ws, k, K, dt, prm, s)
        if start_pays(model_tables(mi, mf).nv, k):
            started = start_stage(mi, mf, ws, k, K, prm, warm_objects, warm_points, warm_lam, warm_scale, s, info)
    if k > 0 and not started:
        matrix_stage(mi, mf, ws, k, K, s)
        if not solve_stage(k, K, model_tables(mi, mf).nv, prm, warm_objects, warm_points, warm_lam, warm_sigma,
                           warm_scale, s, info):
            return SINGULAR
        st = update_stage(mi, mf, ws, q, k, K, dt, s, q1, v1)
    else:
        st = advance_stage(mi, mf, ws, q, k, dt, s, q1, v1)
    if st != OK or nonfinite(q1) or nonfinite(v1):
        return OVERFLOW
    return OK


# --------------------------------------------------------------------------- one step from Python
#: The parts of a thread's packed step tables (:func:`~soadyn.core.layout.pack_parts`, in this
#: order: the integer parts, then the float parts): the model's tables ``mi``, ``mf``, the
#: collision tables ``ci``, ``cf``, the dimensions ``dims`` (:data:`DIM_CAPACITY` …), the
#: step's scratch ``ibuf``, ``fbuf`` (:func:`step_sizes`), the q index of each dof a joint PD
#: servo acts on ``pd_q`` (nv,; −1: none) and the thread's workspace ``ws``.
#: One array for all of them: the step kernel is called from Python once a step, and each
#: array argument costs the dispatcher.
TABLE_PARTS = ("mi", "ci", "dims", "ibuf", "pd_q", "mf", "cf", "ws", "fbuf")
StepTablesView = namedtuple("StepTablesView", TABLE_PARTS)

#: The record of one step: the step kernel's ``out``, which the next step takes as its
#: ``warm`` start as it is (one float64 array; its integers as int64 bits):
#: [K, k, σ given | info (:data:`STEP_INFO_SIZE`) | the contacts' floats (17 K) and integers
#: (4 K, int64 bits) in the detection's flat layout of capacity K | σ (3 K) | λ (3 K) | q⁺ (nq)
#: | v⁺ (nv)], k ≤ K the contacts found (k > K: the step stopped after the detection).
#: ADMM's penalty scale of the warm start is info[SCALE_L], info[SCALE_POWER]; σ given 0:
#: no dual start (the solve starts σ from the warm impulses).
RECORD_CAPACITY, RECORD_COUNT, RECORD_SIGMA = range(3)
RECORD_HEAD = 3
StepRecord = namedtuple("StepRecord", ["info", "cfl", "cil", "sigma", "lam", "q", "v"])


@helper(forceinline=True)
def record_offsets(K, nq, nv):
    """The offsets of the fields of a step record of capacity K (:data:`StepRecord`, in
    its order) and its length; Python calls ``record_offsets.py_func`` (its body calls no
    compiled function)."""
    info = RECORD_HEAD
    cfl = info + STEP_INFO_SIZE
    cil = cfl + CONTACT_FLOATS * K
    sigma = cil + CONTACT_INTS * K
    lam = sigma + 3 * K
    q = lam + 3 * K
    v = q + nq
    return info, cfl, cil, sigma, lam, q, v, v + nv


@helper(forceinline=True)
def record_size(K, nq, nv):
    """The length of a step record of capacity K (:data:`StepRecord`)."""
    return record_offsets(K, nq, nv)[7]


@helper(forceinline=True)
def record_views(rec, K, nq, nv):
    """Named views (:data:`StepRecord`) of a step record of capacity K (its length checked
    by the caller)."""
    info, cfl, cil, sigma, lam, q, v, end = record_offsets(K, nq, nv)
    return StepRecord(carve(rec, info, STEP_INFO_SIZE), carve(rec, cfl, CONTACT_FLOATS * K),
                      carve(rec, cil, CONTACT_INTS * K).view(np.int64), carve(rec, sigma, 3 * K),
                      carve(rec, lam, 3 * K), carve(rec, q, nq), carve(rec, v, nv))


def numpy_record_views(rec, K, nq, nv):
    """:func:`record_views` in NumPy, for Python (views of ``rec``)."""
    info, cfl, cil, sigma, lam, q, v, end = record_offsets.py_func(K, nq, nv)
    return StepRecord(rec[info:cfl], rec[cfl:cil], rec[cil:sigma].view(np.int64), rec[sigma:lam], rec[lam:q],
                      rec[q:v], rec[v:end])


@helper(forceinline=True)
def warm_record_ok(rec):
    """Whether ``rec`` reads as a step record: a whole capacity K ≥ 0, a whole count
    0 ≤ k ≤ K, and long enough for K (the warm start of a step; an empty start is a record
    of K = 0)."""
    if rec.shape[0] < RECORD_HEAD:
        return False
    K, k = rec[RECORD_CAPACITY], rec[RECORD_COUNT]
    if not (0.0 <= k <= K < 1e9) or K != math.floor(K) or k != math.floor(k):
        return False
    return rec.shape[0] >= record_size(int(K), 0, 0)


@helper(forceinline=True)
def step_tables_view(T):
    """Named views (:data:`StepTablesView`) of a thread's packed step tables (checked by
    :func:`~soadyn.core.layout.packed_ok` first)."""
    n = len(TABLE_PARTS)
    return StepTablesView(packed_part(T, n, 0).view(np.int64), packed_part(T, n, 1).view(np.int64),
                          packed_part(T, n, 2).view(np.int64), packed_part(T, n, 3).view(np.int64),
                          packed_part(T, n, 4).view(np.int64), packed_part(T, n, 5), packed_part(T, n, 6),
                          packed_part(T, n, 7), packed_part(T, n, 8))


@helper(forceinline=True)
def pd_torques(tau, qref, k, q, v, kp, kd, pd_q, out):
    """out = τ + K_p (q_ref[k] − q) − K_d v on the dofs j with ``pd_q[j]`` ≥ 0 (the q
    index of a 1-coordinate joint's dof), τ elsewhere (:mod:`soadyn.contact.servo`);
    ``qref`` (T, nq), or empty: no PD."""
    pd = qref.shape[0] > 0
    for j in range(tau.shape[0]):
        x = tau[j]
        c = pd_q[j]
        if pd and c >= 0:
            x += kp[j] * (qref[k, c] - q[c]) - kd[j] * v[j]
        out[j] = x


@helper(forceinline=True)
def servo_ok(kp, kd, qref, pd_q, nq):
    """Whether a step's joint PD servo (:mod:`soadyn.contact.servo`) reads as one: all three
    empty (none), or gains ``kp``, ``kd`` (nv,) finite, ≥ 0 and zero where ``pd_q`` < 0 (no
    PD: a floating base) and a finite reference ``qref`` (nq,)."""
    if qref.shape[0] == 0:
        return kp.shape[0] == 0 and kd.shape[0] == 0
    if kp.shape[0] != pd_q.shape[0] or kd.shape[0] != pd_q.shape[0] or qref.shape[0] != nq or nonfinite(qref):
        return False
    for j in range(pd_q.shape[0]):
        if not (kp[j] >= 0.0 and kd[j] >= 0.0 and kp[j] < math.inf and kd[j] < math.inf):
            return False
        if pd_q[j] < 0 and (kp[j] != 0.0 or kd[j] != 0.0):
            return False
    return True


#: The step kernel's statuses of a step done, beside OK: its solve did not converge (the
#: record complete, its info says how far it got), or it found more contacts than the
#: tables' capacity K (the record holds the count only: the caller steps again with room).
#: Negative, apart from the error statuses of :mod:`soadyn.core.status`; returned so that
#: the caller reads one integer, not the record, to know the step is the common one.
UNCONVERGED, NO_ROOM = -1, -2


@kernel(nogil=True)
def step_kernel(T, q, v, tau, fext, dt, prm, warm, out, kp, kd, qref):
    """One step (:func:`step_state`) from Python, with its checks: the packed tables ``T``
    (:data:`TABLE_PARTS`) and the configuration, the shapes and finiteness of v, τ, f_ext
    (statuses BAD_FIRST … BAD_FEXT), the joint PD servo (``kp``, ``kd`` (nv,) gains,
    ``qref`` (nq,) its reference, added to τ at (q, v) by :func:`pd_torques`; all three
    empty: none; :func:`servo_ok`), the settings ``prm`` (:data:`SETTINGS_SIZE`), the warm
    start ``warm`` (the previous step's record, or a record of no contacts) and ``out``, the
    step's record (:data:`StepRecord`, of the scratch's capacity K: its length
    :func:`record_size`), into which the step writes q⁺, v⁺, its info, contacts, σ and λ.
    Returns OK, :data:`UNCONVERGED` or :data:`NO_ROOM` (the step done), or an error status
    of :mod:`soadyn.core.status` (positive)."""
    if not packed_ok(T, len(TABLE_PARTS)):
        return BAD_SHAPE
    t = step_tables_view(T)
    if t.dims.shape[0] != 3:
        return BAD_SHAPE
    m = model_tables(t.mi, t.mf)
    st = configuration_status(m, q, t.ws)
    if st != OK:
        return st
    K = t.dims[DIM_CAPACITY]
    of, oi = delassus_buffer_sizes(m.nb, m.nv, K)
    nf, ni = step_sizes(m.nb, m.nv, K, t.dims[DIM_DETECT_FLOATS], t.dims[DIM_DETECT_INTS], of, oi)
    if (v.shape[0] != m.nv or tau.shape[0] != m.nv or not forces_shape_ok(m, fext) or t.fbuf.shape[0] < nf
            or t.ibuf.shape[0] < ni or prm.shape[0] != SETTINGS_SIZE or out.shape[0] != record_size(K, m.nq, m.nv)
            or not warm_record_ok(warm) or not servo_ok(kp, kd, qref, t.pd_q, m.nq)):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    W, Kw = int(warm[RECORD_COUNT]), int(warm[RECORD_CAPACITY])
    w = record_views(warm, Kw, 0, 0)
    o = record_views(out, K, m.nq, m.nv)
    out[RECORD_CAPACITY], out[RECORD_SIGMA] = K, 1.0
    s = step_scratch(t.fbuf, t.ibuf, m.nb, m.nv, t.dims)
    wsigma = w.sigma[:3 * W] if warm[RECORD_SIGMA] != 0.0 else w.sigma[:0]
    pd_torques(tau, qref.reshape((1 if qref.shape[0] > 0 else 0, m.nq)), 0, q, v, kp, kd, t.pd_q, s.tau)
    st = step_state(t.mi, t.mf, t.ws, q, v, s.tau, fext, dt, t.ci, t.cf, prm, K, s, carve(w.cil, 0, (W, 2)),
                    carve(w.cfl, 0, (W, 3)), w.lam[:3 * W], wsigma, w.info[SCALE_L:SCALE_POWER + 1], o.q, o.v, o.info)
    k = int(o.info[COUNT])
    out[RECORD_COUNT] = k
    if st != OK:
        return st
    if k > K:  # no contacts kept: the caller steps again with room for k
        return NO_ROOM
    for r in range(o.cfl.shape[0]):
        o.cfl[r] = s.cfl[r]
    for r in range(o.cil.shape[0]):
        o.cil[r] = s.cil[r]
    for r in range(3 * K):
        o.sigma[r], o.lam[r] = s.sigma[r], s.lam[r]
    return OK if o.info[CONVERGED] != 0.0 else UNCONVERGED


# --------------------------------------------------------------------------- rollouts
@helper
def _record(stats, k, info, s, K):
    """Row k of a rollout's record from the step's ``info`` and contacts."""
    n = int(info[COUNT])
    stats[k, STAT_COUNT] = n
    stats[k, STAT_ITERATIONS] = info[0]
    stats[k, STAT_CONVERGED] = info[CONVERGED]
    stats[k, STAT_PRIMAL] = info[PRIMAL]
    stats[k, STAT_DUAL] = info[DUAL]
    stats[k, STAT_COMPLEMENTARITY] = info[COMPLEMENTARITY]
    normal = 0.0
    depth = 0.0
    if n <= K:
        for i in range(n):
            normal += s.lam[3 * i + 2]
            depth = max(depth, s.cfl[6 * K + i])
    stats[k, STAT_NORMAL] = normal
    stats[k, STAT_DEPTH] = depth


@helper
def _diverged(qs, vs, stats, k):
    """Rows k.. of the trajectory (and rows k.. of its record) as NaN: the state left the
    finite numbers at step k, or step k − 1 found more contacts than the capacity."""
    for r in range(k, qs.shape[0]):
        for j in range(qs.shape[1]):
            qs[r, j] = np.nan
        for j in range(vs.shape[1]):
            vs[r, j] = np.nan
    for r in range(k, stats.shape[0]):
        for c in range(STATS_SIZE):
            stats[r, c] = np.nan


@helper(inline="always")
def _rollout_state(mi, mf, ws, q0, v0, tau, qref, dt, ci, cf, prm, K, kp, kd, pd_q, warm, s, fext, qs, vs, stats,
                   info):
    """The trajectory from (q0, v0) under ``tau`` (T, nv) and the PD references ``qref``
    (T, nq, or empty) into ``qs`` (T + 1, nq), ``vs`` (T + 1, nv) and the per-step record
    ``stats`` (T, :data:`STATS_SIZE`). Each step is :func:`step_state`, warm started (with
    ``warm``) from the previous step's impulses and velocities σ (ADMM's dual start). A step with more than K contacts ends the
    trajectory (NaN rows; its record row says the count); a state that leaves the finite
    numbers continues as NaN rows. Returns a status."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q0, ws)
    if st != OK:
        return st
    T = tau.shape[0]
    if (v0.shape[0] != m.nv or tau.shape[1] != m.nv or qs.shape[0] != T + 1 or vs.shape[0] != T + 1
            or qs.shape[1] != m.nq or vs.shape[1] != m.nv or stats.shape[0] != T or stats.shape[1] != STATS_SIZE
            or (qref.shape[0] != 0 and (qref.shape[0] != T or qref.shape[1] != m.nq))):
        return BAD_SHAPE
    if nonfinite(v0):
        return BAD_SECOND
    for k in range(T):
        if nonfinite(tau[k]):
            return BAD_THIRD
    for j in range(m.nq):
        qs[0, j] = q0[j]
    for j in range(m.nv):
        vs[0, j] = v0[j]
    nprev = 0
    s.prev_scale[0], s.prev_scale[1] = 0.0, RHO_POWER
    for k in range(T):
        pd_torques(tau[k], qref, k, qs[k], vs[k], kp, kd, pd_q, s.tau)
        st = step_state(mi, mf, ws, qs[k], vs[k], s.tau, fext, dt, ci, cf, prm, K, s,
                        carve(s.prev_objects, 0, (nprev, 2)), carve(s.prev_points, 0, (nprev, 3)),
                        carve(s.prev_lam, 0, 3 * nprev), carve(s.prev_sigma, 0, 3 * nprev), s.prev_scale, qs[k + 1],
                        vs[k + 1], info)
        _record(stats, k, info, s, K)
        if st == SINGULAR:
            return st
        if int(info[COUNT]) > K or st != OK:
            _diverged(qs, vs, stats, k + 1)
            return OK
        nprev = int(info[COUNT]) if warm else 0
        for i in range(nprev):
            s.prev_objects[2 * i] = s.cil[2 * i]
            s.prev_objects[2 * i + 1] = s.cil[2 * i + 1]
        for r in range(3 * nprev):
            s.prev_lam[r] = s.lam[r]
            s.prev_sigma[r] = s.sigma[r]
            s.prev_points[r] = s.cfl[r]  # the points (k, 3) lead the contacts' float block
        s.prev_scale[0], s.prev_scale[1] = info[SCALE_L], info[SCALE_POWER]
    return OK


@kernel(nogil=True)
def rollout_contact_kernel(mi, mf, ws, q0, v0, tau, qref, dt, ci, cf, prm, dims, kp, kd, pd_q, warm, fbuf, ibuf,
                           qs, vs, stats):
    """The trajectories of :func:`_rollout_state` for B = len(q0) / nq states stored one
    after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a block of a
    batch's rows; ``tau``, ``qref``, ``qs``, ``vs``, ``stats`` likewise), with one scratch
    (``fbuf``, ``ibuf`` of :func:`step_sizes` for the capacity ``dims[0]``). ``kp``, ``kd``
    (nv,) the PD gains, ``pd_q`` (nv,) the q index of each PD dof (−1: none). Returns the
    first status other than OK."""
    m = model_tables(mi, mf)
    B = state_count(q0.shape[0], m.nq)
    K = dims[DIM_CAPACITY]
    of, oi = delassus_buffer_sizes(m.nb, m.nv, K)
    nf, ni = step_sizes(m.nb, m.nv, K, dims[DIM_DETECT_FLOATS], dims[DIM_DETECT_INTS], of, oi)
    if (fbuf.shape[0] < nf or ibuf.shape[0] < ni or prm.shape[0] != SETTINGS_SIZE or kp.shape[0] != m.nv
            or kd.shape[0] != m.nv or pd_q.shape[0] != m.nv):
        return BAD_SHAPE
    s = step_scratch(fbuf, ibuf, m.nb, m.nv, dims)
    info = s.info
    fext = no_forces(ws)
    for b in range(B):
        st = _rollout_state(mi, mf, ws, state_of(q0, b, B), state_of(v0, b, B), state_of(tau, b, B),
                            state_of(qref, b, B), dt, ci, cf, prm, K, kp, kd, pd_q, warm, s, fext, state_of(qs, b, B),
                            state_of(vs, b, B), state_of(stats, b, B), info)
        if st != OK:
            return st
    return OK
