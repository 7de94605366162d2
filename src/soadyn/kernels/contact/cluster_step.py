"""One time step with contact of a model whose clusters all have a constant explicit form
(rigid joints, gears, belts, rotors: q = G y, q̇ = G ẏ, [Chignoli23, eq. 3]), in one
compiled call: the compiled twin of :mod:`soadyn.contact.cluster_step` (whose module
docstring states the method), in five stages run by :func:`cluster_step_state`::

    detect    the tree's joint placements and world poses at q (every body, rotors
              too: the kinematics of every later stage), the contacts (capacity K),
              written into the caller's output arrays
    free      y, ẏ from (q, v); C-ABA ([Chignoli23, Alg. 1]) for τ_ind = Gᵀτ on the
              detection's placements: ẏ_free = ẏ + dt ÿ
    problem   g = J G ẏ_free − b (the body velocities of v_free = G ẏ_free at the
              contact points, b the penetration bias of :func:`.step.normal_bias`);
              D = (J G) H⁻¹ (J G)ᵀ by C-EFPA's force propagators ([Chignoli23, §VIII],
              eq. 57–58, 62) run on the free stage's factorization (S_k, U_k, D_k⁻¹:
              those of q, the same with and without velocities), three columns per
              contact — the point forces along its axes, both sides summed with their
              signs — instead of six per frame (:func:`contact_delassus`)
    solve     λ of the Coulomb NCP of (D + R, g, μ) by ADMM (warm started with the
              previous step's impulses and penalty scale, as the tree stepper) or PGS
    update    Δẏ = H⁻¹ (J G)ᵀ λ by the force-only sweeps of C-ABA on the same
              factorization (:mod:`soadyn.kernels.cluster.response`); ẏ⁺ = ẏ_free + Δẏ;
              y⁺ = y ⊕ dt ẏ⁺ (the joints of y are whole joints of the spanning tree,
              integrated as such from q ⊕ dt G ẏ⁺), q⁺ = G y⁺ = γ(y⁺), v⁺ = G ẏ⁺: on the
              constraint manifold to round-off

The one backward pass of the step is the free stage's, with the pair rotors from their
constants when no external force acts on them (:func:`~soadyn.kernels.cluster.aba.pair_step`);
a contact on a pair rotor then takes the backward pass again with the rotors placed
(:func:`~soadyn.kernels.cluster.response.refactor_with_rotors`) before the Delassus and the
response.

The settings vector is the tree stepper's (:meth:`soadyn.ContactSettings.vector`,
:mod:`.step`), the info layout :data:`COUNT` …; the outputs (the state, the contacts, σ and
λ) are the caller's arrays; the tables, the workspaces and the scratch (one float and one
integer buffer, :func:`cluster_step_sizes`) one packed array (:func:`pack_step_tables`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...core.configuration import integrate_into
from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables, pack_parts, packed_ok, packed_part, rows, workspace_views
from ...core.status import BAD_SHAPE, OK, OVERFLOW, SINGULAR
from ..cluster.aba import articulated_cluster_pass, cluster_acceleration_pass
from ..cluster.embedding import worst_residuals
from ..cluster.explicit import apply_explicit_map, apply_explicit_map_transpose
from ..cluster.inertia import init_cluster_inertias
from ..cluster.kinematics import positions_pass
from ..cluster.layout import (cluster_bodies, cluster_scratch, cluster_tables, cluster_workspace, force_columns,
                              inertia_subspace, inverse_joint_inertia, motion_subspace, no_rotor_forces, pair_rotor)
from ..cluster.response import cluster_force_response, refactor_with_rotors
from ..collision.detect import detect_contacts
from ..kinematics import joint_placements, nonfinite, state_status, velocity_step, world_poses
from ..primitives import add_force_to_parent
from .admm import AA_SMALL, ADMM_ROWS, CONVERGED, INFO_SIZE, RHO_POWER, admm_solve
from .warm import match_warm_start
from .pgs import pgs_solve
from .points import contact_forces_pass, contact_velocities_pass, point_pickoff
from .step import COMPLIANCE, MARGIN, MAX_ITER, PGS, SETTINGS_SIZE, SLOP, SOLVER, STABILIZATION, TOL, normal_bias

__all__ = ["cluster_step_kernel", "cluster_step_sizes", "pack_step_tables", "TABLE_PARTS", "contact_delassus", "COUNT", "WORST_Q",
           "WORST_V", "SCALE_L", "SCALE_POWER", "STEP_INFO_SIZE"]

#: ``info``: the solver's rows (:mod:`.admm`), then the contact count, the worst position
#: and velocity residuals of the state the step started from, and ADMM's penalty scale at
#: the end of the solve (L, p: the warm start of the next step; L = 0: none)
COUNT, WORST_Q, WORST_V, SCALE_L, SCALE_POWER = INFO_SIZE, INFO_SIZE + 1, INFO_SIZE + 2, INFO_SIZE + 3, INFO_SIZE + 4
STEP_INFO_SIZE = INFO_SIZE + 5


#: The parts of a thread's packed step tables (:func:`~soadyn.core.layout.pack_parts`, in this
#: order: the integer parts, then the float parts): the model's tables ``mi``, ``mf``, the
#: clusters' ``ci``, ``cf``, the collision tables ``col_ci``, ``col_cf``, the detection's
#: scratch sizes ``det_sizes`` (floats, integers), the step's scratch ``ibuf``, ``fbuf``
#: (:func:`cluster_step_sizes`) and the thread's tree and cluster workspaces ``ws``, ``cws``.
#: One array for all of them: each array argument of a call from Python costs the
#: dispatcher (the step took 29 before).
TABLE_PARTS = ("mi", "ci", "col_ci", "det_sizes", "ibuf", "mf", "cf", "col_cf", "ws", "cws", "fbuf")
ClusterStepTables = namedtuple("ClusterStepTables", TABLE_PARTS)


def pack_step_tables(mi, ci, col_ci, det_sizes, ibuf, mf, cf, col_cf, ws, cws, fbuf):
    """The one float64 array of :data:`TABLE_PARTS` (:func:`~soadyn.core.layout.pack_parts`)."""
    return pack_parts((mi, ci, col_ci, det_sizes, ibuf), (mf, cf, col_cf, ws, cws, fbuf))


@helper(forceinline=True)
def step_tables_view(T):
    """Named views (:data:`ClusterStepTables`) of an array of :func:`pack_step_tables`
    (checked by :func:`~soadyn.core.layout.packed_ok` first)."""
    n = len(TABLE_PARTS)
    return ClusterStepTables(packed_part(T, n, 0).view(np.int64), packed_part(T, n, 1).view(np.int64),
                             packed_part(T, n, 2).view(np.int64), packed_part(T, n, 3).view(np.int64),
                             packed_part(T, n, 4).view(np.int64), packed_part(T, n, 5), packed_part(T, n, 6),
                             packed_part(T, n, 7), packed_part(T, n, 8), packed_part(T, n, 9),
                             packed_part(T, n, 10))


@kernel
def cluster_step_sizes(nq, nb, nyq, nyv, K, det_floats, det_ints):
    """(floats, ints) of the scratch of a step of capacity K contacts (n = 3K): the
    detection's scratch, ẏ, ẏ_free, Δẏ (nyv each), y, y⁺ (nyq each), the spanning
    velocity (nq ≥ nv), the spanning q ⊕ dt G ẏ⁺ (nq), the impulses on the bodies (nb, 6),
    the NCP vectors g, R (n each), D and the solver's matrix (n² each), its scratch
    (:func:`~.admm.admm_scratch_size`),
    C-EFPA's projected propagators of the contacts and of one side (2K + 1)·3·nyv, a
    pick-off (18); integers: the detection's."""
    n = 3 * K
    floats = (det_floats + 3 * nyv + 2 * nyq + 2 * nq + 6 * nb + 2 * n + 2 * n * n + ADMM_ROWS * n + AA_SMALL
              + (2 * K + 1) * 3 * nyv + 18)
    ints = det_ints
    return floats, ints


@helper(forceinline=True)
def _velocities(mi, mf, ws, ci, v, skip_rotors):
    """The body velocities (and Coriolis terms) of the spanning velocity ``v`` in the tree
    workspace (:func:`~soadyn.kernels.kinematics.body_velocities`), but for the pair rotors
    with ``skip_rotors``: leaves whose velocity no later stage reads when C-ABA takes them
    from their constants and no contact is on them."""
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    c = cluster_tables(ci)
    for i in range(m.nb):
        if not (skip_rotors and pair_rotor(c, i)):
            velocity_step(m, t, i, v)


@helper
def _free_stage(mi, mf, ws, ci, cf, cws, y, yd, tau, fext, dt, rotors_apart, vs, yd_free):
    """ẏ_free = ẏ + dt ÿ, ÿ by C-ABA for τ_ind = Gᵀτ on the joint placements in the tree
    workspace (the detection's, at q); ``vs`` (nv,) receives the spanning velocity G ẏ.
    False when the articulated inertias are singular (or a quaternion is not unit)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, yd, vs, False, False)
    _velocities(mi, mf, ws, ci, vs, rotors_apart)
    if positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True, rotors_apart, True) != OK:
        return False
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, tau, w.tau_ind)
    init_cluster_inertias(mi, mf, ws, ci, cws, True, fext, rotors_apart)
    if not articulated_cluster_pass(mi, mf, ws, ci, cf, cws, w.tau_ind, True, rotors_apart):
        return False
    cluster_acceleration_pass(mi, mf, ws, ci, cws, True, w.ydd, rotors_apart)
    for a in range(c.nyv):
        yd_free[a] = yd[a] + dt * w.ydd[a]
    return True


@helper
def contact_delassus(mi, mf, ws, ci, cws, cbody, cpoint, cframe, rotors_apart, Z, P, X, D):
    """D = (J G) H⁻¹ (J G)ᵀ (3k, 3k) of the k contacts (bodies ``cbody`` (k, 2), world
    points ``cpoint`` (k, 3), frames ``cframe`` (k, 3, 3)) from the factorization of a
    C-ABA backward pass in the cluster workspace and the world poses in the tree
    workspace, by C-EFPA's force propagators [Chignoli23, eq. 57–58, 62]: for each contact
    side on a body, the three columns of its pick-off X (:func:`.points.point_pickoff`,
    its sign included) as body forces W, projected Z_k = S_kᵀ W on each cluster k of its
    path and carried on by W ← ^λX*_k L_kᵀ W, L_kᵀ = 1 − U_k D_k⁻¹ S_kᵀ; the projections of
    both sides summed per contact, Z_i (nyv, 3), and D_ij = Σ_k Z_i,k D_k⁻¹ Z_j,kᵀ (the
    closed form of eq. 63–67). ``rotors_apart``: the backward pass took the pair rotors
    from their constants (no side may then be on a pair rotor). Scratch: ``Z`` (2k, nyv,
    3), ``P`` (nyv, 3), ``X`` (6, 3)."""
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    k = cbody.shape[0]
    Z[:] = 0.0
    for i in range(k):
        for s in range(2):
            b = cbody[i, s]
            if b < 0:
                continue
            point_pickoff(t.Rw, t.pw, b, cpoint, cframe, i, 2.0 * s - 1.0, X)
            kk = c.cluster_of[b]
            area = 0
            W = force_columns(w, area, 3, c.n_bodies[kk])  # W[d, a]: body a's force for axis d
            W[:] = 0.0
            lb = c.local_index[b]
            for d in range(3):
                for r in range(6):
                    W[d, lb, r] = X[r, d]
            while True:
                ny, y0 = c.n_y[kk], c.yv_start[kk]
                S = motion_subspace(c, w, kk)
                bodies = cluster_bodies(c, kk)
                nbk = bodies.shape[0]
                skip = c.rotor_local[kk] if rotors_apart and c.rotor_offset[kk] >= 0 else -1
                for j in range(ny):  # this side's S_kᵀ W, added to the contact's
                    for d in range(3):
                        acc = 0.0
                        for a in range(nbk):
                            if a != skip:
                                for r in range(6):
                                    acc += S[j, a, r] * W[d, a, r]
                        P[y0 + j, d] = acc
                        Z[i, y0 + j, d] += acc
                p = c.parent[kk]
                if p < 0:
                    break
                U, Dinv = inertia_subspace(c, w, kk), inverse_joint_inertia(c, w, kk)
                tt, _ = cluster_scratch(c, w, kk)
                for d in range(3):  # W ← L_kᵀ W = W − U D⁻¹ (Sᵀ W)
                    for j in range(ny):
                        acc = 0.0
                        for j2 in range(ny):
                            acc += Dinv[j, j2] * P[y0 + j2, d]
                        tt[j] = acc
                    for a in range(nbk):
                        for r in range(6):
                            acc = 0.0
                            for j in range(ny):
                                acc += U[j, a, r] * tt[j]
                            W[d, a, r] -= acc
                area = 1 - area
                Wp = force_columns(w, area, 3, c.n_bodies[p])  # carried to the parent cluster
                Wp[:] = 0.0
                for d in range(3):
                    for a in range(nbk):
                        lo = c.output_local[bodies[a]]
                        if a == skip:  # a rotor apart's column is in Λ's frame already
                            for r in range(6):
                                Wp[d, lo, r] += W[d, a, r]
                        else:
                            add_force_to_parent(w.Ro, w.to, bodies[a], W[d], a, Wp[d], lo)
                W, kk = Wp, p
    for i in range(k):  # D_k⁻¹ Z_i,k on every cluster (zero off the contact's paths)
        for kk in range(c.n):
            ny, y0 = c.n_y[kk], c.yv_start[kk]
            Dinv = inverse_joint_inertia(c, w, kk)
            for j1 in range(ny):
                for d in range(3):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j1, j2] * Z[i, y0 + j2, d]
                    Z[k + i, y0 + j1, d] = acc
    for i in range(k):
        for j in range(i, k):
            for a in range(3):
                for b in range(3):
                    D[3 * i + a, 3 * j + b] = 0.0
            for r in range(c.nyv):
                for a in range(3):
                    z = Z[i, r, a]
                    if z != 0.0:
                        for b in range(3):
                            D[3 * i + a, 3 * j + b] += z * Z[k + j, r, b]
            for a in range(3):
                for b in range(3):
                    D[3 * j + b, 3 * i + a] = D[3 * i + a, 3 * j + b]


@helper
def _solve_stage(k, prm, objects, points, friction, warm_objects, warm_points, warm_lam, warm_scale, D, g, R, lam,
                 sigma, A, V, info):
    """λ (k, 3) of the NCP (D + R, g, μ) into ``lam``, σ into ``sigma``, warm started from
    the previous step's contacts (``warm_objects`` (W, 2), ``warm_points`` (W, 3) [m],
    ``warm_lam`` (W, 3)) and ADMM's penalty scale ``warm_scale`` (L, p) when each of the
    k contacts (``objects``, ``points``) has a previous one of its pair and the count is
    the same, the nearest giving its impulse (:func:`~.warm.match_warm_start`, the tree
    stepper's rule); else from zero, the scale estimated afresh. False when D + R is not
    PSD."""
    n = 3 * k
    lamf, sigf = carve(lam, 0, n), carve(sigma, 0, n)
    W = warm_objects.shape[0]
    matched = match_warm_start(objects, points, warm_objects, warm_points, carve(warm_lam, 0, 3 * W), lamf)
    warm = k > 0 and matched == k and W == k
    if not warm:
        for r in range(n):
            lamf[r] = 0.0
    tol, max_iter = prm[TOL], int(prm[MAX_ITER])
    if int(prm[SOLVER]) == PGS:
        pgs_solve(D, g, friction, R, tol, max_iter, warm, lamf, sigf, info, carve(V, 0, (2, n)))
        return True
    L0, p0 = (warm_scale[0], warm_scale[1]) if warm else (0.0, RHO_POWER)
    st, L, power = admm_solve(D, g, friction, R, tol, max_iter, warm, lamf, sigf, info, A, carve(V, 0, ADMM_ROWS * n + AA_SMALL), L0,
                              p0, sigf[:0])
    info[SCALE_L], info[SCALE_POWER] = L, power
    return st == 0


@helper
def cluster_step_state(mi, mf, ws, ci, cf, cws, col_ci, col_cf, q, v, tau, fext, dt, prm, fbuf, ibuf, det_floats,
                       det_ints, warm_objects, warm_points, warm_lam, warm_scale, q1, v1, info, vectors, scalars,
                       frames, pairs):
    """One step from (q, v) under (τ, f_ext) into (q1, v1) (module docstring), the contacts
    into the outputs of capacity K = len(``frames``): ``pairs`` (2K, 2) their objects then
    their bodies, ``vectors`` (4K, 3) their points, normals, then σ and λ, ``scalars``
    (2K,) their depths then frictions, ``frames`` (K, 3, 3). Returns a
    status; ``info[COUNT]`` > K: the step stopped after the detection (call again with
    that capacity)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    nq, nb, nyq, nyv = m.nq, m.nb, c.nyq, c.nyv
    K = frames.shape[0]
    n = 3 * K
    o = 0
    det_fs = carve(fbuf, o, det_floats); o += det_floats
    yd = carve(fbuf, o, nyv); o += nyv
    yd_free = carve(fbuf, o, nyv); o += nyv
    dyd = carve(fbuf, o, nyv); o += nyv
    y = carve(fbuf, o, nyq); o += nyq
    y1 = carve(fbuf, o, nyq); o += nyq
    vs = carve(fbuf, o, m.nv); o += nq
    qs = carve(fbuf, o, nq); o += nq
    F = carve(fbuf, o, (nb, 6)); o += 6 * nb
    g = carve(fbuf, o, n); o += n
    R = carve(fbuf, o, n); o += n
    Df = carve(fbuf, o, n * n); o += n * n
    Af = carve(fbuf, o, n * n); o += n * n
    V = carve(fbuf, o, ADMM_ROWS * n + AA_SMALL); o += ADMM_ROWS * n + AA_SMALL
    Zf = carve(fbuf, o, 2 * K * nyv * 3); o += 2 * K * nyv * 3
    P = carve(fbuf, o, (nyv, 3)); o += 3 * nyv
    X = carve(fbuf, o, (6, 3))
    det_js = carve(ibuf, 0, det_ints)
    for r in range(STEP_INFO_SIZE):
        info[r] = 0.0
    info[CONVERGED] = 1.0  # no contacts: nothing to solve
    info[SCALE_POWER] = RHO_POWER  # no ADMM solve (no contacts, or PGS): no scale, the rule's start
    for a in range(nyq):
        y[a] = q[c.y_positions[a]]
    for a in range(nyv):
        yd[a] = v[c.yv_positions[a]]
    info[WORST_Q], info[WORST_V] = worst_residuals(mi, mf, ci, cf, cws, q, v, y, yd)
    # detect, on the tree's kinematics at q (every body placed, the rotors too)
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    k = detect_contacts(col_ci, col_cf, w.Rw, w.pw, prm[MARGIN], det_fs, det_js, rows(pairs, 0, K),
                               rows(pairs, K, K), rows(vectors, 0, K), rows(vectors, K, K), rows(scalars, 0, K),
                               rows(scalars, K, K), frames)
    if k < 0:
        return BAD_SHAPE
    info[COUNT] = k
    if k > K:
        return OK
    rotors_apart = no_rotor_forces(c, fext)  # pair rotors from their constants
    if not _free_stage(mi, mf, ws, ci, cf, cws, y, yd, tau, fext, dt, rotors_apart, vs, yd_free):
        return SINGULAR
    for a in range(nyv):
        dyd[a] = 0.0
    if k > 0:
        objects, cbody = rows(pairs, 0, k), rows(pairs, K, k)
        cpoint, cframe = rows(vectors, 0, k), rows(frames, 0, k)
        depth, friction = rows(scalars, 0, k), rows(scalars, K, k)
        on_rotor = False
        for i in range(k):
            for s in range(2):
                on_rotor = on_rotor or (cbody[i, s] >= 0 and pair_rotor(c, cbody[i, s]))
        # g = J G ẏ_free − b
        apply_explicit_map(mi, mf, ci, cf, cws, yd_free, vs, False, False)  # v_free = G ẏ_free
        _velocities(mi, mf, ws, ci, vs, not on_rotor)
        gk = carve(g, 0, (k, 3))
        contact_velocities_pass(w, cbody, cpoint, cframe, X, gk)
        for i in range(k):
            gk[i, 2] -= normal_bias(depth[i], dt, prm[STABILIZATION], prm[SLOP])
        for r in range(3 * k):
            R[r] = prm[COMPLIANCE]
        if rotors_apart and on_rotor:  # a contact on a rotor the free stage took from its constants
            if not refactor_with_rotors(mi, mf, ws, ci, cf, cws, y):
                return SINGULAR
            rotors_apart = False
        D = carve(Df, 0, (3 * k, 3 * k))
        contact_delassus(mi, mf, ws, ci, cws, cbody, cpoint, cframe, rotors_apart, carve(Zf, 0, (2 * k, nyv, 3)), P,
                         X, D)
        sigma, lam = rows(vectors, 2 * K, k), rows(vectors, 3 * K, k)
        if not _solve_stage(k, prm, objects, cpoint, friction, warm_objects, warm_points, warm_lam, warm_scale, D,
                            carve(g, 0, 3 * k), carve(R, 0, 3 * k), lam, sigma, carve(Af, 0, (3 * k, 3 * k)), V, info):
            return SINGULAR
        contact_forces_pass(w, cbody, cpoint, cframe, lam, X, F)
        cluster_force_response(mi, mf, ws, ci, cws, F, rotors_apart, dyd)  # Δẏ on the same factorization
    for a in range(nyv):
        dyd[a] += yd_free[a]  # ẏ⁺
    apply_explicit_map(mi, mf, ci, cf, cws, dyd, v1, False, False)  # v⁺ = G ẏ⁺
    st = integrate_into(mi, mf, ws, q, v1, dt, qs)
    if st != OK:
        return st
    for a in range(nyq):
        y1[a] = qs[c.y_positions[a]]
    apply_explicit_map(mi, mf, ci, cf, cws, y1, q1, True, False)  # q⁺ = γ(y⁺)
    if nonfinite(q1) or nonfinite(v1):
        return OVERFLOW
    return OK


@kernel(nogil=True)
def cluster_step_kernel(T, q, v, tau, fext, dt, prm, warm_objects, warm_points, warm_lam, warm_scale, q1, v1, info,
                        vectors,
                        scalars, frames, pairs):
    """:func:`cluster_step_state` with its checks: the packed tables ``T``
    (:func:`pack_step_tables`), shapes, finiteness (statuses BAD_FIRST … of q, v, τ,
    f_ext), the scratch sizes (:func:`cluster_step_sizes`) and the outputs' capacity
    K = len(``frames``). Returns a status."""
    if not packed_ok(T, len(TABLE_PARTS)):
        return BAD_SHAPE
    t = step_tables_view(T)
    if t.mi.shape[0] < 3 or t.ci.shape[0] < 11 or t.det_sizes.shape[0] != 2:
        return BAD_SHAPE
    det_floats, det_ints = t.det_sizes[0], t.det_sizes[1]
    m = model_tables(t.mi, t.mf)
    c = cluster_tables(t.ci)
    K = frames.shape[0]
    nf, ni = cluster_step_sizes(m.nq, m.nb, c.nyq, c.nyv, K, det_floats, det_ints)
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or tau.shape[0] != m.nv or q1.shape[0] != m.nq
            or v1.shape[0] != m.nv or t.fbuf.shape[0] < nf or t.ibuf.shape[0] < ni or prm.shape[0] != SETTINGS_SIZE
            or info.shape[0] != STEP_INFO_SIZE or warm_lam.shape[0] != warm_objects.shape[0]
            or warm_objects.shape[1] != 2 or warm_lam.shape[1] != 3 or warm_scale.shape[0] != 2
            or warm_points.shape[0] != warm_objects.shape[0] or warm_points.shape[1] != 3
            or (fext.shape[0] != 0 and fext.shape[0] != m.nb) or vectors.shape[0] != 4 * K or vectors.shape[1] != 3
            or scalars.shape[0] != 2 * K or pairs.shape[0] != 2 * K or pairs.shape[1] != 2 or frames.shape[1] != 3
            or frames.shape[2] != 3):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    return cluster_step_state(t.mi, t.mf, t.ws, t.ci, t.cf, t.cws, t.col_ci, t.col_cf, q, v, tau, fext, dt, prm,
                              t.fbuf, t.ibuf, det_floats, det_ints, warm_objects, warm_points, warm_lam, warm_scale, q1,
                              v1, info, vectors, scalars, frames, pairs)
