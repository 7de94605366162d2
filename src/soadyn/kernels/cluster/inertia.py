"""Cluster inertias [Chignoli23, §V]: the block-diagonal cluster inertia and bias force
(eq. 14, 34), their projection onto the parent cluster through the cluster transforms
(eq. 55), and the cluster joint-space inertia D_k = S_kᵀ U_k with its inverse (eq. 49).

The cluster transforms have one nonzero block per row and column (eq. 17–18), so every
projection works body by body: block (a, b) of cluster k lands on block (Λ(a), Λ(b)) of
its parent, and the cost grows linearly with the number of clusters and with the cube of
the cluster size [Chignoli23, §VII-C].
"""
from __future__ import annotations

import numpy as np

from ...core.jit import helper
from ...core import spatial as sp
from ...core.layout import model_tables, workspace_views
from ..primitives import add_bias_force, add_force_to_parent, add_inertia_to_parent, add_inertia_to_parent_about_axis, \
    cross_force6, cross_motion6, spd_inverse_in_place
from .layout import (articulated_inertia, bias_force, cluster_bodies, cluster_tables, cluster_workspace,
                     inertia_subspace, inverse_joint_inertia, motion_subspace, pair_rotor, reflected_inertia,
                     rotor_constants)


def rotor_pair_constants(model, bodies, output_bodies, G):
    """(rotor's position in the pair, [I_r (36), s_r (6), u_r (6), h_r (6)]) for a link–rotor
    pair, or None: the pair's constants of :func:`~.layout.rotor_constants`.

    A pair is two bodies on the same output body Λ (both hinged to it) with one independent
    velocity and a constant G (a geared motor: q̇_link = G_l ẏ, q̇_rotor = G_r ẏ), one of
    them — the rotor — a leaf body on a revolute joint whose inertia does not change as it
    turns (mass centre on the axis, rotational inertia symmetric about it). Then the
    rotor's blocks of the cluster quantities are constant in Λ's frame: its projected
    inertia ^ΛX*_r I_r ^rX_Λ [Chignoli23, eq. 55] and its column of ^ΛX* U_k, so the
    backward pass of C-ABA forms no per-call transform for it, and C-RNEA finds its force
    in Λ's frame without placing it (:func:`~.rnea.add_rotor_forces`)."""
    if len(bodies) != 2 or G.shape[1] != 1 or output_bodies[0] != output_bodies[1]:
        return None
    parents = [b.parent for b in model.bodies]
    if any(parents[i] != output_bodies[0] for i in bodies):
        return None
    for a in (1, 0):  # the second body first: rotors usually follow the link they drive
        b = model.bodies[bodies[a]]
        j = b.joint
        if j.kind not in ("revolute", "continuous") or bodies[a] in parents:
            continue
        Xj = sp.motion_transform(*j.pose(np.array([1.0])))  # a turn by 1 rad: invariance under it
        inertia = np.asarray(b.inertia, dtype=float)        # is invariance under every turn
        if not np.allclose(Xj.T @ inertia @ Xj, inertia, rtol=1e-12, atol=1e-14 * np.abs(inertia).max()):
            continue
        X = sp.motion_transform(*b.placement)  # Λ → rotor at q_rotor = 0
        row = 0 if a == 0 else model.bodies[bodies[0]].joint.nv
        I_r = X.T @ inertia @ X
        h_r = np.linalg.solve(X, j.motion_subspace(np.zeros(1))[:, 0])  # the rotor's joint axis in Λ
        s_r = h_r * G[row, 0]
        return a, np.concatenate([I_r.ravel(), s_r, I_r @ s_r, h_r]).tolist()
    return None


@helper(forceinline=True)
def rotor_bias(V, lam, I_r, h, qd, c_r, p_r, scratch):
    """A pair rotor seen from the body Λ it sits on (``lam``; −1: the world, at rest):
    with V = ``V[lam]`` Λ's velocity, h its joint axis and I_r its inertia in Λ's frame
    (:func:`~.layout.rotor_constants`) and q̇ its rate, its velocity v_r = V + h q̇, the
    velocity-product term c_r = V × h q̇ into ``c_r`` and its bias force
    p_r = v_r ×* I_r v_r into ``p_r`` [Jain12, eq. 11, 14] (6-vectors, angular first;
    ``scratch`` (2, 6)). Used by C-ABA's pair step and C-RNEA's rotor forces."""
    v, Iv = scratch[0], scratch[1]
    for e in range(6):
        v[e] = V[lam, e] if lam >= 0 else 0.0
    s0, s1, s2, s3, s4, s5 = h[0] * qd, h[1] * qd, h[2] * qd, h[3] * qd, h[4] * qd, h[5] * qd
    c_r[0], c_r[1], c_r[2], c_r[3], c_r[4], c_r[5] = cross_motion6(v[0], v[1], v[2], v[3], v[4], v[5],
                                                                  s0, s1, s2, s3, s4, s5)
    for e in range(6):
        v[e] += h[e] * qd
    for e in range(6):
        acc = 0.0
        for f in range(6):
            acc += I_r[e, f] * v[f]
        Iv[e] = acc
    p_r[0], p_r[1], p_r[2], p_r[3], p_r[4], p_r[5] = cross_force6(v[0], v[1], v[2], v[3], v[4], v[5],
                                                                 Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])


@helper
def init_cluster_inertias(mi, mf, ws, ci, cws, with_bias, fext, rotors_apart):
    """I^A_k = block(I_i) [Chignoli23, eq. 14] and, with ``with_bias``,
    p^A_k = stack(v_i ×* I_i v_i − f_ext,i) (eq. 34), for every cluster (needs the body
    velocities in the tree workspace). With ``rotors_apart``, not for the rotors of
    link–rotor pairs (see :func:`~.kinematics.positions_pass`). The blocks off the
    diagonal are zeroed for coupled clusters only: nothing writes them in any other
    cluster (the projections into a parent reach its off-diagonal blocks only when a child
    hangs from several of its bodies, which makes it coupled), so there they stay the
    zeros the workspace was made with (fb4, four clusters of three bodies: 864 stores a
    call)."""
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        IA = articulated_inertia(c, w, k)
        pA = bias_force(c, w, k)
        nbk = c.n_bodies[k]
        if c.coupled[k] == 1:  # the blocks off the diagonal (the diagonal ones are set below)
            for a in range(nbk):
                for b in range(nbk):
                    if b != a:
                        IA[a, b] = 0.0
        for a, i in enumerate(cluster_bodies(c, k)):
            if rotors_apart and pair_rotor(c, i):
                continue
            for r in range(6):
                for e in range(6):
                    IA[a, a, r, e] = m.inertia[i, r, e]
            pA[a, :] = 0.0
            if with_bias:
                add_bias_force(m.rigid, i, t.V, i, pA, a)
                if fext.shape[0] > 0:
                    for r in range(6):
                        pA[a, r] -= fext[i, r]


@helper(forceinline=True)
def _nonzero(M):
    for r in range(6):
        for e in range(6):
            if M[r, e] != 0.0:
                return True
    return False


@helper
def _add_transformed_block(Ro, to, ia, ib, M, dst, tmp):
    """dst += φ(Λ(a), a) M φ*(Λ(b), b) for a 6×6 block M coupling two bodies a ≠ b."""
    for r in range(6):
        for e in range(6):
            tmp[0, r, e] = 0.0
        add_force_to_parent(Ro, to, ib, M, r, tmp[0], r)  # row r of M φ*_b
    for r in range(6):
        for e in range(6):
            tmp[1, e, r] = tmp[0, r, e]
    for col in range(6):
        for e in range(6):
            tmp[2, col, e] = 0.0
        add_force_to_parent(Ro, to, ia, tmp[1], col, tmp[2], col)  # column of φ_a (M φ*_b)
    for r in range(6):
        for col in range(6):
            dst[r, col] += tmp[2, col, r]


@helper(forceinline=True)
def turn_axis(c, i, axis_code, rotated):
    """k when body i's pose (Ro, to)[i] in its output body is a turn about the coordinate
    axis e_k (i hinged to Λ(i) by a revolute joint about e_k with an unrotated placement:
    ``axis_code``, ``rotated`` of the model's tables), else −1."""
    code = abs(axis_code[i])
    return code - 1 if c.parent_local[i] < 0 and 0 < code <= 3 and not rotated[i] else -1


@helper(forceinline=True)
def add_inertia_to_output(Ro, to, i, axis, src, dst, di):
    """dst[di] += ^ΛX*_i src ^iX_Λ for a symmetric 6×6 ``src`` of body i: the congruence
    about a coordinate axis when ``axis`` ≥ 0 (:func:`turn_axis`; ~50 multiplications for
    the rotation instead of ~140), else the general one."""
    if axis >= 0:
        add_inertia_to_parent_about_axis(Ro, to, i, axis, src, dst, di)
    else:
        add_inertia_to_parent(Ro, to, i, src, dst, di, dst)  # (its scratch argument is unused)


@helper(forceinline=True)
def project_cluster_inertia(c, w, k, axis_code, rotated):
    """I_λ(k) += ^λX*_k I_k ^kX_λ for the cluster inertia I_k (n × n body blocks) of
    cluster k [Chignoli23, eq. 55]: block (a, b) lands on the output bodies' block
    (Λ(a), Λ(b)). Diagonal blocks use the symmetric congruence of the tree ABA (about a
    coordinate axis when it can: :func:`turn_axis`, ``axis_code``, ``rotated`` of the
    model's tables); off-diagonal blocks (present only when a child cluster hangs from
    several bodies of this one) the general two-sided transform."""
    p = c.parent[k]
    IA = articulated_inertia(c, w, k)
    IAp = articulated_inertia(c, w, p)
    bodies = cluster_bodies(c, k)
    for a in range(bodies.shape[0]):
        ia = bodies[a]
        la = c.output_local[ia]
        add_inertia_to_output(w.Ro, w.to, ia, turn_axis(c, ia, axis_code, rotated), IA[a, a], IAp[la], la)
        if c.coupled[k] != 1:
            continue
        for b in range(bodies.shape[0]):
            if b != a and _nonzero(IA[a, b]):
                ib = bodies[b]
                _add_transformed_block(w.Ro, w.to, ia, ib, IA[a, b], IAp[la, c.output_local[ib]], w.tmp)


@helper(forceinline=True)
def project_rotor_pair(c, cf, w, k, axis_code, rotated):
    """I^A_λ(k) += ^λX*_k I^a ^kX_λ(k) for a link–rotor pair k (``c.rotor_offset[k] ≥ 0``,
    n_y = 1), I^a = I^A_k − U_k D_k⁻¹ U_kᵀ [Chignoli23, eq. 55–56], on the one block of
    the output body Λ of both bodies: with W = ^ΛX*_l U_l + u_r (the column ^λX* U_k),

        I^A_Λ += ^ΛX*_l I^A_l ^lX_Λ + I_r − W D_k⁻¹ Wᵀ,

    the rotor's projected inertia I_r and its column u_r being constants
    (:func:`~.layout.rotor_constants`): one congruence per pair instead of one per body,
    and no rank-one update over body blocks; the cheaper congruence about a coordinate axis
    when the link turns about one in an unrotated frame (``axis_code``, ``rotated``: the
    model's tables). Needs U_k and D_k⁻¹."""
    bodies = cluster_bodies(c, k)
    r = c.rotor_local[k]
    link = 1 - r
    il = bodies[link]
    lo = c.output_local[il]
    IA, IAp = articulated_inertia(c, w, k), articulated_inertia(c, w, c.parent[k])
    I_r, _, u_r, _ = rotor_constants(c, cf, k)
    add_inertia_to_output(w.Ro, w.to, il, turn_axis(c, il, axis_code, rotated), IA[link, link], IAp[lo], lo)
    W = w.vec[1]
    for e in range(6):
        W[e] = u_r[e]
    add_force_to_parent(w.Ro, w.to, il, inertia_subspace(c, w, k)[0], link, w.vec, 1)  # W = ^ΛX*_l U_l + u_r
    dinv = inverse_joint_inertia(c, w, k)[0, 0]
    B = IAp[lo, lo]
    for a in range(6):
        x = W[a] * dinv
        for e in range(6):
            B[a, e] += I_r[a, e] - x * W[e]


@helper(forceinline=True)
def invert_joint_inertia(c, cf, w, k):
    """D_k = S_kᵀ U_k + H̃_k [Chignoli23, eq. 49; H̃_k the optional reflected inertia] and
    D_k⁻¹ into ``inverse_joint_inertia(c, w, k)``. False when D_k is not positive definite."""
    ny = c.n_y[k]
    if ny == 0:
        return True
    S = motion_subspace(c, w, k)
    U = inertia_subspace(c, w, k)
    Dinv = inverse_joint_inertia(c, w, k)
    if ny == 1 and c.armature_offset[k] < 0:  # the common 1-dof cluster (a geared rotor): D⁻¹ = 1/(SᵀU)
        acc = 0.0
        for a in range(c.n_bodies[k]):
            for r in range(6):
                acc += S[0, a, r] * U[0, a, r]
        if not acc > 0.0:
            return False
        Dinv[0, 0] = 1.0 / acc
        return True
    # D_k in D⁻¹'s own place, inverted there (no scratch, whatever the cluster's freedoms)
    D = Dinv
    for j1 in range(ny):
        for j2 in range(j1 + 1):
            acc = 0.0
            for a in range(c.n_bodies[k]):
                for r in range(6):
                    acc += S[j1, a, r] * U[j2, a, r]
            D[j1, j2] = acc
            D[j2, j1] = acc
    if c.armature_offset[k] >= 0:
        H = reflected_inertia(c, cf, k)
        for j1 in range(ny):
            for j2 in range(ny):
                D[j1, j2] += H[j1, j2]
    # (numpy's inv and eigvalsh would cost ~10 s of compilation, and allocate)
    return spd_inverse_in_place(Dinv, ny)
