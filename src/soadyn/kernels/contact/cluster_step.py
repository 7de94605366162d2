"""One time step with contact of a model whose clusters all have a constant explicit form
(rigid joints, gears, belts, rotors: q = G y, q̇ = G ẏ, [Chignoli23, eq. 3]), in one
compiled call: the compiled twin of :mod:`soadyn.contact.cluster_step` (whose module
docstring states the method), in five stages run by :func:`cluster_step_state`::

    free      y, ẏ from (q, v); C-ABA ([Chignoli23, Alg. 1]) for τ_ind = Gᵀτ:
              ẏ_free = ẏ + dt ÿ
    detect    the tree's world poses at q, the contacts (capacity K)
    problem   g = J G ẏ_free − b (the body velocities of v_free = G ẏ_free at the
              contact points, b the penetration bias of :func:`.step.normal_bias`);
              D = (J G) H⁻¹ (J G)ᵀ from C-EFPA's Ω of the contact sides
              ([Chignoli23, §VIII]), its propagators run on the free stage's
              articulated quantities (those of q): each side on a body a frame at the
              point with the contact axes, the linear rows of Ω, signed and summed per
              contact
    solve     λ of the Coulomb NCP of (D + R, g, μ) by ADMM or PGS
    update    Δẏ = H⁻¹ (J G)ᵀ λ by C-ABA with the contact impulses as body forces (no
              velocity, no gravity); ẏ⁺ = ẏ_free + Δẏ; y⁺ = y ⊕ dt ẏ⁺ (the joints of
              y are whole joints of the spanning tree, integrated as such from
              q ⊕ dt G ẏ⁺), q⁺ = G y⁺ = γ(y⁺), v⁺ = G ẏ⁺: on the constraint
              manifold to round-off

The settings vector is the tree stepper's (:meth:`soadyn.ContactSettings.vector`,
:mod:`.step`), the info layout :data:`COUNT` …; the
scratch one float and one integer buffer of capacity K (:func:`cluster_step_sizes`).
"""
from __future__ import annotations

from ...core.configuration import integrate_kernel
from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables, workspace_views
from ...core.status import BAD_SHAPE, OK, OVERFLOW, SINGULAR
from ..cluster.aba import articulated_cluster_pass, cluster_aba_linked, cluster_acceleration_pass
from ..cluster.efpa import cluster_efpa_linked, efpa_propagation
from ..cluster.embedding import worst_residuals
from ..cluster.explicit import apply_explicit_map, apply_explicit_map_transpose
from ..cluster.inertia import init_cluster_inertias
from ..cluster.kinematics import positions_pass
from ..cluster.layout import cluster_tables, cluster_workspace, no_rotor_forces, pair_rotor
from ..collision.detect import CONTACT_FLOATS, CONTACT_INTS, detect_contacts_kernel
from ..kinematics import body_velocities, joint_placements, nonfinite, state_status, world_poses
from .admm import CONVERGED, INFO_SIZE, admm_kernel
from .warm import match_warm_start
from .pgs import pgs_kernel
from .points import contact_forces_pass, contact_velocities_pass
from .step import COMPLIANCE, MARGIN, MAX_ITER, PGS, SETTINGS_SIZE, SLOP, SOLVER, STABILIZATION, TOL, normal_bias

__all__ = ["cluster_step_kernel", "cluster_step_sizes", "COUNT", "WORST_Q", "WORST_V", "STEP_INFO_SIZE"]

#: ``info``: the solver's rows (:mod:`.admm`), then the contact count and the worst
#: position and velocity residuals of the state the step started from
COUNT, WORST_Q, WORST_V = INFO_SIZE, INFO_SIZE + 1, INFO_SIZE + 2
STEP_INFO_SIZE = INFO_SIZE + 3


@kernel
def cluster_step_sizes(nq, nb, nyq, nyv, K, det_floats, det_ints):
    """(floats, ints) of the scratch of a step of capacity K contacts (n = 3K, at most 2K
    contact sides on bodies): the detection's scratch and outputs, ẏ, ẏ_free, Δẏ, zeros
    (nyv each), y, y⁺ (nyq each), v_free (nq ≥ nv), the spanning q ⊕ dt G ẏ⁺ (nq), the
    impulses on the bodies (nb, 6), the NCP vectors g, R, σ, λ (n each), D and the solver's
    matrix (n² each), its rows (8n), the sides' poses (2K × 12), C-EFPA's Z (4K nyv 6) and
    Ω ((12K)²), a pick-off (18); integers: the detection's, the contacts' objects and
    bodies (4K), the sides' bodies and owners (4K)."""
    n = 3 * K
    m = 2 * K
    floats = (det_floats + CONTACT_FLOATS * K + 4 * nyv + 2 * nyq + 2 * nq + 6 * nb + 4 * n + 2 * n * n + 8 * n
              + 12 * m + 2 * m * nyv * 6 + 36 * m * m + 18)
    ints = det_ints + CONTACT_INTS * K + 2 * m
    return floats, ints


@helper
def _free_stage(mi, mf, ws, ci, cf, cws, y, yd, tau, fext, dt, yd_free):
    """ẏ_free = ẏ + dt ÿ, ÿ by C-ABA for τ_ind = Gᵀτ (as the embedding kernel). False
    when the articulated inertias are singular."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    rotors_apart = no_rotor_forces(c, fext)
    if positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True, rotors_apart, False) != OK:
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
def _problem_stage(mi, mf, ws, ci, cf, cws, y, fext, yd_free, vfree, k, cbody, cpoint, cframe, depth, dt, prm, g,
                   R, D, fbody, owner, fRf, fpf, Zf, Omega, X):
    """g (3k,) and D (3k, 3k) of the k contacts (module docstring); R (3k,). Needs the
    tree's joint placements and world poses at q, and the free stage's backward pass in
    the cluster workspace: C-EFPA's propagators run on it (the articulated quantities of
    q, the same with and without velocities), unless a contact is on a rotor that pass
    took from its constants (then C-EFPA from the start); ``fRf``, ``fpf``, ``Zf``,
    ``Omega`` flat scratch of the sides' poses, C-EFPA's Z and Ω. Returns a status."""
    m = model_tables(mi, mf)
    nyv = cluster_tables(ci).nyv
    fR, fp = carve(fRf, 0, (fbody.shape[0], 3, 3)), carve(fpf, 0, (fbody.shape[0], 3))
    w = workspace_views(ws, m)
    apply_explicit_map(mi, mf, ci, cf, cws, yd_free, vfree, False, False)  # v_free = G ẏ_free
    body_velocities(mi, mf, ws, vfree)
    contact_velocities_pass(w, cbody, cpoint, cframe, X, carve(g, 0, (k, 3)))
    for i in range(k):
        g[3 * i + 2] -= normal_bias(depth[i], dt, prm[STABILIZATION], prm[SLOP])
    for r in range(3 * k):
        R[r] = prm[COMPLIANCE]
    # the contact sides on bodies: frames at the point with the contact axes, in the body
    ns = 0
    for i in range(k):
        for s in range(2):
            b = cbody[i, s]
            if b < 0:
                continue
            fbody[ns] = b
            owner[ns] = 2 * i + s
            for a in range(3):
                acc = 0.0
                for e in range(3):
                    acc += w.Rw[b, e, a] * (cpoint[i, e] - w.pw[b, e])
                fp[ns, a] = acc
                for col in range(3):
                    acc = 0.0
                    for e in range(3):
                        acc += w.Rw[b, e, a] * cframe[i, e, col]
                    fR[ns, a, col] = acc
            ns += 1
    Om = carve(Omega, 0, (6 * ns, 6 * ns))
    c = cluster_tables(ci)
    rotors_apart = no_rotor_forces(c, fext)  # how the free stage's C-ABA took the pair rotors
    on_rotor = False
    for h in range(ns):
        on_rotor = on_rotor or pair_rotor(c, fbody[h])
    sides, poses, at = carve(fbody, 0, ns), carve(fRf, 0, (ns, 3, 3)), carve(fpf, 0, (ns, 3))
    if rotors_apart and on_rotor:
        st = cluster_efpa_linked(mi, mf, ws, y, sides, poses, at, carve(Zf, 0, (2 * ns, nyv, 6)), ci, cf, cws, Om)
        if st != OK:
            return st
    else:
        efpa_propagation(mi, mf, ci, cws, sides, poses, at, carve(Zf, 0, (2 * ns, nyv, 6)), Om, rotors_apart)
    n = 3 * k
    for r in range(n):
        for col in range(n):
            D[r, col] = 0.0
    for h in range(ns):  # the linear rows of Ω: the velocity of the point, in the contact axes
        i, sh = owner[h] // 2, 2.0 * (owner[h] % 2) - 1.0
        for e in range(ns):
            j, se = owner[e] // 2, 2.0 * (owner[e] % 2) - 1.0
            for a in range(3):
                for b in range(3):
                    D[3 * i + a, 3 * j + b] += sh * se * Om[6 * h + 3 + a, 6 * e + 3 + b]
    return OK


@helper
def _solve_stage(k, prm, objects, points, friction, warm_objects, warm_points, warm_lam, D, g, R, lam, sigma, A, V,
                 info):
    """λ of the NCP (D + R, g, μ), warm started from the previous step's contacts
    (``warm_objects`` (W, 2), ``warm_points`` (W, 3), ``warm_lam`` (3W,)) when each of
    the k contacts (``objects``, ``points``) has a previous one of its pair, the nearest
    giving its impulse (:func:`~.warm.match_warm_start`, as the tree's step). False when
    D + R is not PSD."""
    n = 3 * k
    matched = match_warm_start(objects, points, warm_objects, warm_points, warm_lam, lam)
    warm = k > 0 and matched == k and warm_objects.shape[0] == k
    if not warm:
        for r in range(n):
            lam[r] = 0.0
    tol, max_iter = prm[TOL], int(prm[MAX_ITER])
    if int(prm[SOLVER]) == PGS:
        pgs_kernel(D, g, friction, R, tol, max_iter, warm, lam, sigma, info, carve(V, 0, (2, n)))
        return True
    return admm_kernel(D, g, friction, R, tol, max_iter, warm, lam, sigma, info, A, carve(V, 0, (8, n))) == 0


@helper
def cluster_step_state(mi, mf, ws, ci, cf, cws, col_ci, col_cf, q, v, tau, fext, dt, prm, K, fbuf, ibuf,
                       det_floats, det_ints, warm_objects, warm_points, warm_lam, q1, v1, info):
    """One step from (q, v) under (τ, f_ext) into (q1, v1) (module docstring). Returns a
    status; ``info[COUNT]`` > K: the step stopped after the detection (call again with
    that capacity)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    nq, nv, nb, nyq, nyv = m.nq, m.nv, m.nb, c.nyq, c.nyv
    n, ms = 3 * K, 2 * K
    o = 0
    det_fs = carve(fbuf, o, det_floats); o += det_floats
    cfl = carve(fbuf, o, CONTACT_FLOATS * K); o += CONTACT_FLOATS * K
    yd = carve(fbuf, o, nyv); o += nyv
    yd_free = carve(fbuf, o, nyv); o += nyv
    dyd = carve(fbuf, o, nyv); o += nyv
    zeros = carve(fbuf, o, nyv); o += nyv
    y = carve(fbuf, o, nyq); o += nyq
    y1 = carve(fbuf, o, nyq); o += nyq
    vfree = carve(fbuf, o, nq); o += nq
    qs = carve(fbuf, o, nq); o += nq
    F = carve(fbuf, o, (nb, 6)); o += 6 * nb
    g = carve(fbuf, o, n); o += n
    R = carve(fbuf, o, n); o += n
    sigma = carve(fbuf, o, n); o += n
    lam = carve(fbuf, o, n); o += n
    Df = carve(fbuf, o, n * n); o += n * n
    Af = carve(fbuf, o, n * n); o += n * n
    V = carve(fbuf, o, 8 * n); o += 8 * n
    fR = carve(fbuf, o, 9 * ms); o += 9 * ms
    fp = carve(fbuf, o, 3 * ms); o += 3 * ms
    Z = carve(fbuf, o, 12 * ms * nyv); o += 12 * ms * nyv
    Omega = carve(fbuf, o, 36 * ms * ms); o += 36 * ms * ms
    X = carve(fbuf, o, (6, 3))
    p = 0
    det_js = carve(ibuf, p, det_ints); p += det_ints
    cil = carve(ibuf, p, CONTACT_INTS * K); p += CONTACT_INTS * K
    fbody = carve(ibuf, p, ms); p += ms
    owner = carve(ibuf, p, ms)
    for r in range(STEP_INFO_SIZE):
        info[r] = 0.0
    info[CONVERGED] = 1.0  # no contacts: nothing to solve
    for a in range(nyq):
        y[a] = q[c.y_positions[a]]
    for a in range(nyv):
        yd[a] = v[c.yv_positions[a]]
        zeros[a] = 0.0
    info[WORST_Q], info[WORST_V] = worst_residuals(mi, mf, ci, cf, cws, q, v, y, yd)
    # detect (the tree's own kinematics at q: every body placed, rotors too)
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    k = detect_contacts_kernel(col_ci, col_cf, w.Rw, w.pw, prm[MARGIN], det_fs, det_js, carve(cil, 0, (K, 2)),
                               carve(cil, 2 * K, (K, 2)), carve(cfl, 0, (K, 3)), carve(cfl, 3 * K, (K, 3)),
                               carve(cfl, 6 * K, K), carve(cfl, 7 * K, K), carve(cfl, 8 * K, (K, 3, 3)))
    if k < 0:
        return BAD_SHAPE
    info[COUNT] = k
    if k > K:
        return OK
    if not _free_stage(mi, mf, ws, ci, cf, cws, y, yd, tau, fext, dt, yd_free):
        return SINGULAR
    for a in range(nyv):
        dyd[a] = 0.0
    if k > 0:
        objects, cbody = carve(cil, 0, (k, 2)), carve(cil, 2 * K, (k, 2))
        cpoint, cframe = carve(cfl, 0, (k, 3)), carve(cfl, 8 * K, (k, 3, 3))
        depth, friction = carve(cfl, 6 * K, k), carve(cfl, 7 * K, k)
        joint_placements(mi, mf, ws, q)  # (C-ABA left the pair rotors unplaced; the world poses are the detection's)
        D = carve(Df, 0, (3 * k, 3 * k))
        st = _problem_stage(mi, mf, ws, ci, cf, cws, y, fext, yd_free, carve(vfree, 0, nv), k, cbody, cpoint,
                            cframe, depth, dt, prm, g, R, D, fbody, owner, fR, fp, Z, Omega, X)
        if st != OK:
            return st
        if not _solve_stage(k, prm, objects, cpoint, friction, warm_objects, warm_points, warm_lam, D,
                            carve(g, 0, 3 * k), carve(R, 0, 3 * k), carve(lam, 0, 3 * k), carve(sigma, 0, 3 * k),
                            carve(Af, 0, (3 * k, 3 * k)), V, info):
            return SINGULAR
        contact_forces_pass(w, cbody, cpoint, cframe, carve(lam, 0, (k, 3)), X, F)
        st = cluster_aba_linked(mi, mf, ws, y, zeros, zeros, F, ci, cf, cws, False, dyd)
        if st != OK:
            return st
    for a in range(nyv):
        dyd[a] += yd_free[a]  # ẏ⁺
    apply_explicit_map(mi, mf, ci, cf, cws, dyd, v1, False, False)  # v⁺ = G ẏ⁺
    st = integrate_kernel(mi, mf, ws, q, v1, dt, qs)
    if st != OK:
        return st
    for a in range(nyq):
        y1[a] = qs[c.y_positions[a]]
    apply_explicit_map(mi, mf, ci, cf, cws, y1, q1, True, False)  # q⁺ = γ(y⁺)
    if nonfinite(q1) or nonfinite(v1):
        return OVERFLOW
    return OK


@kernel(nogil=True)
def cluster_step_kernel(mi, mf, ws, ci, cf, cws, col_ci, col_cf, q, v, tau, fext, dt, prm, K, fbuf, ibuf,
                        det_floats, det_ints, warm_objects, warm_points, warm_lam, q1, v1, info):
    """:func:`cluster_step_state` with its checks: shapes, finiteness (statuses BAD_FIRST
    … of q, v, τ, f_ext), the scratch sizes (:func:`cluster_step_sizes`). The contacts are
    left in the float and integer scratch (the detection's outputs after its scratch), λ
    and σ in their blocks. Returns a status."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    nf, ni = cluster_step_sizes(m.nq, m.nb, c.nyq, c.nyv, K, det_floats, det_ints)
    if (q.shape[0] != m.nq or v.shape[0] != m.nv or tau.shape[0] != m.nv or q1.shape[0] != m.nq
            or v1.shape[0] != m.nv or fbuf.shape[0] < nf or ibuf.shape[0] < ni or prm.shape[0] != SETTINGS_SIZE
            or info.shape[0] != STEP_INFO_SIZE or warm_objects.shape[1] != 2
            or warm_points.shape[0] != warm_objects.shape[0] or warm_points.shape[1] != 3
            or warm_lam.shape[0] != 3 * warm_objects.shape[0] or (fext.shape[0] != 0 and fext.shape[0] != m.nb)):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    return cluster_step_state(mi, mf, ws, ci, cf, cws, col_ci, col_cf, q, v, tau, fext, dt, prm, K, fbuf, ibuf,
                              det_floats, det_ints, warm_objects, warm_points, warm_lam, q1, v1, info)
