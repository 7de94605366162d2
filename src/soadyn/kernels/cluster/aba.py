"""C-ABA: constrained forward dynamics by the cluster-based articulated-body algorithm
[Chignoli23, Alg. 1]. With the cluster quantities of :mod:`.kinematics` and :mod:`.inertia`:

backward pass, clusters tips to base (Alg. 1, l. 25–35; eq. 49, 55–56)::

    U_k = I^A_k S_k,   D_k = S_kᵀ U_k,   u_k = τ_k − S_kᵀ p^A_k
    I^a = I^A_k − U_k D_k⁻¹ U_kᵀ,   p^a = p^A_k + I^a c_k + U_k D_k⁻¹ u_k
    I^A_λ(k) += ^λX*_k I^a ^kX_λ,   p^A_λ(k) += ^λX*_k p^a

forward pass, base to tips (Alg. 1, l. 38–43; eq. 33)::

    a' = ^kX_λ(k) a_λ(k) + c_k,   ÿ_k = D_k⁻¹ (u_k − U_kᵀ a'),   a_k = a' + S_k ÿ_k

with a_0 = −a_g (gravity as a base acceleration).
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.layout import borrow, model_tables, workspace_views
from ...core.status import BAD_SHAPE, OK, SINGULAR
from ..kinematics import result_status
from ..primitives import acceleration_entry, add_force_to_parent, parent_acceleration
from .implicit import run_states
from .inertia import (_nonzero, init_cluster_inertias, invert_joint_inertia, project_cluster_inertia,
                      project_rotor_pair, rotor_bias)
from .kinematics import cluster_state_status, positions_pass
from .layout import (articulated_inertia, bias_force, cluster_bodies, cluster_scratch, cluster_tables,
                     cluster_workspace, force_columns, inertia_subspace, innovation, inverse_joint_inertia,
                     motion_subspace, no_rotor_forces, reflected_inertia, rotor_constants, split_plain_tables,
                     velocity_product)


@helper
def articulated_cluster_pass(mi, mf, ws, ci, cf, cws, tau, with_bias, rotors_apart):
    """The backward pass of C-ABA (module docstring). I^a is projected as
    ^λX* I^A ^kX − (^λX*U) D⁻¹ (^λX*U)ᵀ: the rank-n_y correction is carried by the n_y
    force columns ^λX*U_k rather than by 6n × 6n blocks; a link–rotor pair by
    :func:`~.inertia.project_rotor_pair` (its rotor's blocks constant), and with
    ``rotors_apart`` (with ``with_bias``) by :func:`pair_step`. An empty ``tau`` means τ = 0;
    without ``with_bias`` p^A, c_k and u_k are skipped (C-EFPA). Needs the cluster
    inertias (:func:`~.inertia.init_cluster_inertias`). Returns False when some D_k is
    not positive definite."""
    m = model_tables(mi, mf)
    tree = workspace_views(ws, m)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n - 1, -1, -1):
        if rotors_apart and c.rotor_offset[k] >= 0:
            if not pair_step(m, tree, c, cf, w, k, tau):
                return False
            continue
        ny, y0 = c.n_y[k], c.yv_start[k]
        bodies = cluster_bodies(c, k)
        nbk = bodies.shape[0]
        S, U, IA = motion_subspace(c, w, k), inertia_subspace(c, w, k), articulated_inertia(c, w, k)
        pA, u = bias_force(c, w, k), innovation(c, w, k)
        coupled = c.coupled[k] == 1
        for j in range(ny):  # U_k = I^A_k S_k (block diagonal unless coupled)
            for a in range(nbk):
                x = _unit_axis(c, m.axis_code, bodies[a])
                for r in range(6):
                    acc = _diagonal_block_row(IA, S, j, a, x, r)
                    if coupled:
                        for b in range(nbk):
                            if b != a and _nonzero(IA[a, b]):
                                for e in range(6):
                                    acc += IA[a, b, r, e] * S[j, b, e]
                    U[j, a, r] = acc
            if with_bias:  # u_k = τ_k − S_kᵀ p^A_k
                acc = tau[y0 + j] if tau.shape[0] > 0 else 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc -= S[j, a, r] * pA[a, r]
                u[j] = acc
        if not invert_joint_inertia(c, cf, w, k):
            return False
        p = c.parent[k]
        if p < 0:
            continue
        Dinv = inverse_joint_inertia(c, w, k)
        pAp = bias_force(c, w, p)
        if c.rotor_offset[k] >= 0:  # a link–rotor pair: its rotor's blocks are constants
            project_rotor_pair(c, cf, w, k, m.axis_code, m.rotated)
        else:
            _project_articulated_inertia(c, w, k, m.axis_code, m.rotated)
        t, yk = cluster_scratch(c, w, k)
        if with_bias:
            # p^a = p^A + I^a c + U D⁻¹ u = p^A + I^A c + U D⁻¹ (u − Uᵀ c)
            ck = velocity_product(c, w, k)
            for j in range(ny):
                acc = u[j]
                for a in range(nbk):
                    for r in range(6):
                        acc -= U[j, a, r] * ck[a, r]
                t[j] = acc
            for j in range(ny):
                acc = 0.0
                for j2 in range(ny):
                    acc += Dinv[j, j2] * t[j2]
                yk[j] = acc
            pa = w.vec[0]
            for a in range(nbk):
                for r in range(6):
                    acc = pA[a, r]
                    for e in range(6):
                        acc += IA[a, a, r, e] * ck[a, e]
                    if coupled:
                        for b in range(nbk):
                            if b != a:
                                for e in range(6):
                                    acc += IA[a, b, r, e] * ck[b, e]
                    for j in range(ny):
                        acc += U[j, a, r] * yk[j]
                    pa[r] = acc
                add_force_to_parent(w.Ro, w.to, bodies[a], w.vec, 0, pAp, c.output_local[bodies[a]])
    return True


@helper(forceinline=True)
def _unit_axis(c, axis_code, i):
    """x when body i's motion in S_k is along its joint's unit axis ±e_x only (hinged to a
    body of another cluster by a 1-dof joint whose map H* is ±e_x: ``axis_code`` of the
    model's tables), else −1."""
    code = axis_code[i]
    return abs(code) - 1 if code != 0 and c.parent_local[i] < 0 else -1


@helper(forceinline=True)
def _diagonal_block_row(IA, S, j, a, x, r):
    """(I^A_aa S[j, a])[r]: row r of body a's diagonal block of I^A_k times its motion for
    ẏ_k = e_j. A body hinged to another cluster by a unit-axis joint moves along ±e_x only
    (S[j, a] = G e_x, :func:`~.kinematics._cluster_subspace`; x ≥ 0 from
    :func:`_unit_axis`): one product, a column of I^A, instead of six."""
    if x >= 0:
        return IA[a, a, r, x] * S[j, a, x]
    acc = 0.0
    for e in range(6):
        acc += IA[a, a, r, e] * S[j, a, e]
    return acc


@helper(forceinline=True)
def pair_step(m, t, c, cf, w, k, tau):
    """The backward-pass step of a link–rotor pair k whose rotor was not placed
    (``rotors_apart``: :func:`~.kinematics.positions_pass`). The rotor's quantities are
    taken in the frame of the body Λ both bodies sit on, from its constants I_r, s_r,
    u_r = I_r s_r and joint axis h_r (:func:`~.layout.rotor_constants`): with V the
    velocity of Λ and q̇_r the rotor's rate,

        v_r = V + h_r q̇_r,   c_r = V × h_r q̇_r,   p_r = v_r ×* I_r v_r,

    and the module docstring's step with S_k = (S_l, s_r), U_k = (U_l, u_r):
    D = S_lᵀU_l + s_rᵀu_r, u = τ − S_lᵀp_l − s_rᵀp_r, the projection of
    :func:`~.inertia.project_rotor_pair` and p^a = (p_l + I_l c_l + U_l y, p_r + I_r c_r +
    u_r y) with y = D⁻¹(u − U_lᵀc_l − u_rᵀc_r), the rotor's part added to Λ's without a
    transform. c_r and u_r are kept in the rotor's slots of c_k and U_k for the forward
    pass (:func:`cluster_acceleration_pass`). Returns False when D is not positive."""
    r = c.rotor_local[k]
    l = 1 - r
    bodies = cluster_bodies(c, k)
    il, ir = bodies[l], bodies[r]
    lam = c.output_body[ir]
    I_r, s_r, u_r, h_r = rotor_constants(c, cf, k)
    S, U, IA = motion_subspace(c, w, k), inertia_subspace(c, w, k), articulated_inertia(c, w, k)
    pA, ck, u = bias_force(c, w, k), velocity_product(c, w, k), innovation(c, w, k)
    # the rotor in Λ's frame: c_r and p_r into its slots of c_k and p^A_k
    rotor_bias(t.V, lam, I_r, h_r, w.qd[m.v_index[ir]], ck[r], pA[r], w.vec[2:4])
    # U_k = (I^A_l S_l, u_r), D = S_kᵀ U_k, u = τ − S_kᵀ p^A_k
    x = _unit_axis(c, m.axis_code, il)
    D = 0.0
    uu = tau[c.yv_start[k]] if tau.shape[0] > 0 else 0.0
    for e in range(6):
        acc = _diagonal_block_row(IA, S, 0, l, x, e)
        U[0, l, e] = acc
        U[0, r, e] = u_r[e]
        D += S[0, l, e] * acc + s_r[e] * u_r[e]
        uu -= S[0, l, e] * pA[l, e] + s_r[e] * pA[r, e]
    if c.armature_offset[k] >= 0:  # D + H̃_k (an approximate model's reflected inertia)
        D += reflected_inertia(c, cf, k)[0, 0]
    if not D > 0.0:
        return False
    inverse_joint_inertia(c, w, k)[0, 0] = 1.0 / D
    u[0] = uu
    p = c.parent[k]
    if p < 0:
        return True
    project_rotor_pair(c, cf, w, k, m.axis_code, m.rotated)
    # p^a, the link's through its pose in Λ, the rotor's as it is
    for e in range(6):
        uu -= U[0, l, e] * ck[l, e] + u_r[e] * ck[r, e]
    y = uu / D
    pAp = bias_force(c, w, p)
    pa = w.vec[4]
    for e in range(6):
        acc = pA[l, e] + U[0, l, e] * y
        for f in range(6):
            acc += IA[l, l, e, f] * ck[l, f]
        pa[e] = acc
    add_force_to_parent(w.Ro, w.to, il, w.vec, 4, pAp, c.output_local[il])
    lo = c.output_local[ir]
    for e in range(6):
        acc = pA[r, e] + u_r[e] * y
        for f in range(6):
            acc += I_r[e, f] * ck[r, f]
        pAp[lo, e] += acc
    return True


@helper(forceinline=True)
def _project_articulated_inertia(c, w, k, axis_code, rotated):
    """I^A_λ(k) += ^λX* I^A_k ^kX − (^λX*U_k) D_k⁻¹ (^λX*U_k)ᵀ, body block by body block
    (module docstring; any cluster; ``axis_code``, ``rotated``: the model's tables, for
    :func:`~.inertia.project_cluster_inertia`)."""
    ny = c.n_y[k]
    p = c.parent[k]
    bodies = cluster_bodies(c, k)
    U, Dinv = inertia_subspace(c, w, k), inverse_joint_inertia(c, w, k)
    nbp = c.n_bodies[p]
    IAp = articulated_inertia(c, w, p)
    project_cluster_inertia(c, w, k, axis_code, rotated)  # ^λX* I^A_k ^kX
    # ^λX* U_k: the columns of U_k gathered on the output bodies
    XU = force_columns(w, 0, ny, nbp)
    XU[:] = 0.0
    for a in range(bodies.shape[0]):
        for j in range(ny):
            add_force_to_parent(w.Ro, w.to, bodies[a], U[j], a, XU[j], c.output_local[bodies[a]])
    t, _ = cluster_scratch(c, w, k)
    for la in range(nbp):  # − (^λX*U) D⁻¹ (^λX*U)ᵀ on the output bodies' blocks
        if not _receives(c, bodies, la):
            continue
        for lb in range(nbp):
            if not _receives(c, bodies, lb):
                continue
            for r in range(6):
                for j in range(ny):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j, j2] * XU[j2, la, r]
                    t[j] = acc
                for e in range(6):
                    acc = 0.0
                    for j in range(ny):
                        acc += t[j] * XU[j, lb, e]
                    IAp[la, lb, r, e] -= acc


@helper(forceinline=True)
def _receives(c, bodies, local):
    """Whether some body of ``bodies`` has the parent cluster's body ``local`` as output body."""
    for i in bodies:
        if c.output_local[i] == local:
            return True
    return False


@helper
def cluster_acceleration_pass(mi, mf, ws, ci, cws, gravity, ydd, rotors_apart):
    """The forward pass over clusters (module docstring): ÿ_k = D_k⁻¹(u_k − U_kᵀ a') into
    ``ydd`` and the body accelerations into the tree workspace's ``alpha`` (with
    ``rotors_apart``, a pair's rotor by :func:`pair_acceleration`: its own is not kept)."""
    m = model_tables(mi, mf)
    A = workspace_views(ws, m).alpha
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        if rotors_apart and c.rotor_offset[k] >= 0:
            pair_acceleration(m, c, w, k, gravity, A, ydd)
            continue
        ny, y0 = c.n_y[k], c.yv_start[k]
        bodies = cluster_bodies(c, k)
        S, ck = motion_subspace(c, w, k), velocity_product(c, w, k)
        for a in range(bodies.shape[0]):  # a' = ^kX_λ a_λ + c_k
            i = bodies[a]
            parent_acceleration(w.Ro, w.to, i, c.output_body[i], m.gravity, gravity, A)
            for e in range(6):
                A[i, e] += ck[a, e]
        U, Dinv, u = inertia_subspace(c, w, k), inverse_joint_inertia(c, w, k), innovation(c, w, k)
        t, yk = cluster_scratch(c, w, k)
        for j in range(ny):
            acc = u[j]
            for a in range(bodies.shape[0]):
                for e in range(6):
                    acc -= U[j, a, e] * A[bodies[a], e]
            t[j] = acc
        for j in range(ny):
            acc = 0.0
            for j2 in range(ny):
                acc += Dinv[j, j2] * t[j2]
            ydd[y0 + j] = acc
        for a in range(bodies.shape[0]):  # a_k = a' + S_k ÿ_k
            i = bodies[a]
            for j in range(ny):
                x = ydd[y0 + j]
                for e in range(6):
                    A[i, e] += S[j, a, e] * x


@helper(forceinline=True)
def pair_acceleration(m, c, w, k, gravity, A, ydd):
    """The forward-pass step of a pair k taken by :func:`pair_step`: a'_l = ^lX_Λ a_Λ + c_l,
    a'_r = a_Λ + c_r in Λ's frame (a_Λ = −g for the world), ÿ = D⁻¹(u − U_lᵀa'_l −
    u_rᵀa'_r), a_l = a'_l + S_l ÿ."""
    r = c.rotor_local[k]
    l = 1 - r
    bodies = cluster_bodies(c, k)
    il, ir = bodies[l], bodies[r]
    lam = c.output_body[ir]
    S, U, ck = motion_subspace(c, w, k), inertia_subspace(c, w, k), velocity_product(c, w, k)
    parent_acceleration(w.Ro, w.to, il, c.output_body[il], m.gravity, gravity, A)
    acc = innovation(c, w, k)[0]
    for e in range(6):
        A[il, e] += ck[l, e]
        a_r = acceleration_entry(A, lam, e, m.gravity, gravity)
        acc -= U[0, l, e] * A[il, e] + U[0, r, e] * (a_r + ck[r, e])
    x = inverse_joint_inertia(c, w, k)[0, 0] * acc
    ydd[c.yv_start[k]] = x
    for e in range(6):
        A[il, e] += S[0, l, e] * x


@kernel
def cluster_aba_kernel(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, gravity, ydd):
    """C-ABA [Chignoli23, Alg. 1]: ÿ from (y, ẏ, τ_ind) into ``ydd`` (the nonlinear
    clusters prepared in the workspace); returns a status. (The validated path's entry:
    the kernels call :func:`cluster_aba_linked`.)"""
    return cluster_aba_linked(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, gravity, ydd)


# the algorithm without a Python entry, for the kernels that run it: an entry called from
# compiled code is optimized and turned into machine code on its own as well (its whole
# closure), a helper is linked into its callers only (soadyn.numba_patches.link_helpers_only):
# a shorter first cluster_aba call, per call unchanged (benchmarks/results/design_notes.md)
@helper
def cluster_aba_linked(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, gravity, ydd):
    """:func:`cluster_aba_kernel`."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, ci, cf, cws = borrow(mi), borrow(mf), borrow(ws), borrow(ci), borrow(cf), borrow(cws)
    y, yd, tau, ydd = borrow(y), borrow(yd), borrow(tau), borrow(ydd)
    st = cluster_state_status(mi, mf, ci, y, yd, tau, fext, ydd.shape[0])
    if st != OK:
        return st
    rotors_apart = no_rotor_forces(cluster_tables(ci), fext)  # pair rotors from their constants
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True, rotors_apart, False)
    if st != OK:
        return st
    init_cluster_inertias(mi, mf, ws, ci, cws, True, fext, rotors_apart)
    if not articulated_cluster_pass(mi, mf, ws, ci, cf, cws, tau, True, rotors_apart):
        return SINGULAR
    cluster_acceleration_pass(mi, mf, ws, ci, cws, gravity, ydd, rotors_apart)
    return result_status(ydd)


@kernel
def cluster_aba_plain_kernel(tables, y, yd, tau, gravity, ydd):
    """:func:`cluster_aba_kernel` for the plain call (no external forces) with all its
    tables in one array (:func:`~.layout.pack_plain_tables`: each array argument costs
    Numba's dispatcher). Returns a status."""
    ok, mi, mf, ws, ci, cf, cws, no_forces = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    return cluster_aba_linked(mi, mf, ws, y, yd, tau, no_forces, ci, cf, cws, gravity, ydd)


@kernel(nogil=True)
def cluster_aba_states(tables, Y, YD, TAU, FEXT, Q, gravity, mode, YDD, status, start, stop):
    """:func:`cluster_aba_kernel` after :func:`~.implicit.prepare_implicit` (q and ``mode``:
    the spanning configuration or the start of the solve, and how to use it) on states
    ``start`` to ``stop − 1`` of B states stored one after another in flat arrays
    (:func:`~.layout.states_fit`): one state of a call with ``q=`` or external forces
    (``status`` empty), or a block of a batch (``status`` (B,) receives each state's
    status). ``tables``: :func:`~.layout.pack_plain_tables`, whose workspaces it writes (a
    batch gives each block its own copy). Returns the first status other than OK.

    One compiled kernel for single states and batches: each entry point compiles (and
    keeps in the cache) its own copy of the whole algorithm, so a separate batch twin cost
    ~4 s of every cold compile."""
    return run_states(cluster_aba_linked, tables, Y, YD, TAU, FEXT, Q, gravity, mode, YDD, status, start, stop)
