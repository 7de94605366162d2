"""The response Δẏ = H⁻¹ Gᵀ Jᵀ_bodies F of spatial forces (or impulses) F on the bodies,
on the factorization of a C-ABA backward pass already in the cluster workspace
([Chignoli23, Alg. 1]; H = GᵀMG).

C-ABA is linear in the applied forces, and its articulated inertias I^A_k, U_k = I^A_k S_k
and D_k⁻¹ depend on q only (in Featherstone's ABA as in C-ABA, the inertia recursion
never reads a velocity or a force). The response to F alone — no velocity, no joint
force, no gravity — is therefore the force half of the recursion on the factors of any
backward pass at the same q (the free-velocity C-ABA of a time step, with or without
velocities and forces; C-EFPA's, without): O(N) with force 6-vectors, no 6 × 6 block and
no factorization. With c_k = 0 and τ = 0 the two passes of the module docstring of
:mod:`.aba` become

tips to base (:func:`force_bias_pass`)::

    p_k = −F_k + Σ_children ^λX*_c p^a_c,   u_k = −S_kᵀ p_k,   p^a_k = p_k + U_k D_k⁻¹ u_k

base to tips (:func:`force_acceleration_pass`)::

    a'_k = ^kX_λ(k) a_λ(k)  (a_0 = 0),   Δẏ_k = D_k⁻¹ (u_k − U_kᵀ a'_k),   a_k = a'_k + S_k Δẏ_k

A link–rotor pair factored with its rotor from its constants (``rotors_apart``,
:func:`~.aba.pair_step`: the rotor's slot of U_k holds u_r in the frame of the body Λ the
pair sits on, its slot of S_k is not formed) needs no force on its rotor: its rotor's
p^a = u_r D⁻¹ u goes to Λ as it is, and its a' is Λ's acceleration.
"""
from __future__ import annotations

from ...core.jit import helper, kernel
from ...core.layout import model_tables, workspace_views
from ...core.status import BAD_SHAPE, OK, SINGULAR
from ..kinematics import absent, no_forces, result_status
from ..primitives import acceleration_entry, add_force_to_parent, parent_acceleration
from .aba import articulated_cluster_pass, cluster_aba_linked
from .inertia import init_cluster_inertias
from .kinematics import positions_pass
from .layout import (bias_force, cluster_bodies, cluster_scratch, cluster_tables, cluster_workspace,
                     inertia_subspace, innovation, inverse_joint_inertia, motion_subspace, no_rotor_forces)

__all__ = ["force_bias_pass", "force_acceleration_pass", "cluster_force_response", "cluster_response_kernel"]


@helper(forceinline=True)
def _rotor_slot(c, k, rotors_apart):
    """The local index of pair k's rotor when it was factored from its constants, else −1."""
    return c.rotor_local[k] if rotors_apart and c.rotor_offset[k] >= 0 else -1


@helper
def force_bias_pass(mi, mf, ci, cws, F, rotors_apart):
    """The tips-to-base pass of the module docstring: p_k into the bias-force slots and u_k
    into the innovation slots of every cluster, for the spatial forces ``F`` (nb, 6) [N m,
    N] (or impulses [N m s, N s]; body frames, at the body origins), on S_k, U_k, D_k⁻¹ and
    the output poses of the backward pass in the workspace. ``rotors_apart``: how that pass
    took the pair rotors (then F must be zero on them)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        pA = bias_force(c, w, k)
        skip = _rotor_slot(c, k, rotors_apart)
        for a, i in enumerate(cluster_bodies(c, k)):
            for r in range(6):
                pA[a, r] = 0.0 if a == skip else -F[i, r]
    for k in range(c.n - 1, -1, -1):
        ny = c.n_y[k]
        bodies = cluster_bodies(c, k)
        nbk = bodies.shape[0]
        S, U, pA, u = motion_subspace(c, w, k), inertia_subspace(c, w, k), bias_force(c, w, k), innovation(c, w, k)
        skip = _rotor_slot(c, k, rotors_apart)
        for j in range(ny):  # u_k = −S_kᵀ p_k (a rotor apart carries no force: its term is zero)
            acc = 0.0
            for a in range(nbk):
                if a != skip:
                    for r in range(6):
                        acc -= S[j, a, r] * pA[a, r]
            u[j] = acc
        p = c.parent[k]
        if p < 0:
            continue
        Dinv = inverse_joint_inertia(c, w, k)
        _, yk = cluster_scratch(c, w, k)
        for j in range(ny):  # D_k⁻¹ u_k
            acc = 0.0
            for j2 in range(ny):
                acc += Dinv[j, j2] * u[j2]
            yk[j] = acc
        pAp = bias_force(c, w, p)
        pa = w.vec[0]
        for a in range(nbk):  # p^a_k = p_k + U_k D_k⁻¹ u_k, to the output bodies
            i = bodies[a]
            for r in range(6):
                acc = pA[a, r]
                for j in range(ny):
                    acc += U[j, a, r] * yk[j]
                pa[r] = acc
            lo = c.output_local[i]
            if a == skip:  # u_r D⁻¹u, in Λ's frame already
                for r in range(6):
                    pAp[lo, r] += pa[r]
            else:
                add_force_to_parent(w.Ro, w.to, i, w.vec, 0, pAp, lo)


@helper
def force_acceleration_pass(mi, mf, ws, ci, cws, rotors_apart, dyd):
    """The base-to-tips pass of the module docstring: Δẏ into ``dyd`` (nyv,) from the
    innovations of :func:`force_bias_pass`; the bodies' accelerations in the tree
    workspace's ``alpha`` (a rotor apart's not kept)."""
    m = model_tables(mi, mf)
    A = workspace_views(ws, m).alpha
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        ny, y0 = c.n_y[k], c.yv_start[k]
        bodies = cluster_bodies(c, k)
        nbk = bodies.shape[0]
        S, U, Dinv, u = motion_subspace(c, w, k), inertia_subspace(c, w, k), inverse_joint_inertia(c, w, k), \
            innovation(c, w, k)
        skip = _rotor_slot(c, k, rotors_apart)
        for a in range(nbk):  # a' = ^kX_λ a_λ (the world at rest: no gravity)
            if a != skip:
                i = bodies[a]
                parent_acceleration(w.Ro, w.to, i, c.output_body[i], m.gravity, False, A)
        t, _ = cluster_scratch(c, w, k)
        for j in range(ny):
            acc = u[j]
            for a in range(nbk):
                i = bodies[a]
                if a == skip:  # the rotor's a' is Λ's acceleration, in Λ's frame
                    lam = c.output_body[i]
                    for e in range(6):
                        acc -= U[j, a, e] * acceleration_entry(A, lam, e, m.gravity, False)
                else:
                    for e in range(6):
                        acc -= U[j, a, e] * A[i, e]
            t[j] = acc
        for j in range(ny):
            acc = 0.0
            for j2 in range(ny):
                acc += Dinv[j, j2] * t[j2]
            dyd[y0 + j] = acc
        for a in range(nbk):  # a_k = a' + S_k Δẏ_k
            if a != skip:
                i = bodies[a]
                for j in range(ny):
                    x = dyd[y0 + j]
                    for e in range(6):
                        A[i, e] += S[j, a, e] * x


@helper
def cluster_force_response(mi, mf, ws, ci, cws, F, rotors_apart, dyd):
    """Δẏ = H⁻¹ Gᵀ Jᵀ_bodies F (nyv,) into ``dyd`` for the body forces ``F`` (nb, 6) on the
    factorization in the workspace (module docstring). Overwrites the bias-force,
    innovation and scratch slots of every cluster and the tree workspace's ``alpha``."""
    force_bias_pass(mi, mf, ci, cws, F, rotors_apart)
    force_acceleration_pass(mi, mf, ws, ci, cws, rotors_apart, dyd)


@helper
def refactor_with_rotors(mi, mf, ws, ci, cf, cws, y):
    """The backward pass of C-ABA at y without velocities or forces and with every rotor
    placed (C-EFPA's: :func:`~.efpa.cluster_efpa_linked`), for forces that reach a pair
    rotor after a pass that took the rotors from their constants. False when some D_k is
    not positive definite."""
    if positions_pass(mi, mf, ws, ci, cf, cws, y, y, False, False, False, False) != OK:
        return False
    init_cluster_inertias(mi, mf, ws, ci, cws, False, no_forces(ws), False)
    return articulated_cluster_pass(mi, mf, ws, ci, cf, cws, absent(ws), False, False)


@kernel
def cluster_response_kernel(mi, mf, ws, y, yd, tau, fext, F, ci, cf, cws, ydd, dyd):
    """C-ABA at (y, ẏ, τ_ind, f_ext) with gravity into ``ydd``, then on the factorization of
    that same backward pass the response Δẏ = H⁻¹ Gᵀ Jᵀ_bodies F of the body forces ``F``
    (nb, 6) into ``dyd`` — what a time step does with its free-velocity pass and the contact
    impulses (:mod:`soadyn.kernels.contact.cluster_step`); when F reaches a pair rotor that
    the pass took from its constants, after :func:`refactor_with_rotors`. Returns a status."""
    st = cluster_aba_linked(mi, mf, ws, y, yd, tau, fext, ci, cf, cws, True, ydd)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    if F.shape[0] != m.nb or F.shape[1] != 6 or dyd.shape[0] != c.nyv:
        return BAD_SHAPE
    rotors_apart = no_rotor_forces(c, fext)
    if rotors_apart and not no_rotor_forces(c, F):
        if not refactor_with_rotors(mi, mf, ws, ci, cf, cws, y):
            return SINGULAR
        rotors_apart = False
    cluster_force_response(mi, mf, ws, ci, cws, F, rotors_apart, dyd)
    return result_status(dyd)
