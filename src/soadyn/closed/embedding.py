"""Constraint embedding: C-RNEA, C-ABA, C-EFPA and the cluster mass matrix (seed 004).

The algorithms run over the cluster connectivity tree (:func:`~soadyn.cluster_tree`)
exactly as the tree algorithms run over bodies, with cluster quantities (seed 004 §V):

* cluster motion subspace S_k = ^ΛX_λ · block(S_i) · G_k (eq. 24) and its velocity
  product term c_k = Ṡ_k ẏ_k (eq. 25–26, Algorithm 1 lines 17–19). Both are formed by a
  recursion inside the cluster instead of the dense remapping transform ^ΛX_λ: column j
  of S_k is the stack of body motions when q̇_k = G_k e_j and the output bodies are at
  rest (the lower-triangular ^ΛX_λ of eq. 20 is that recursion); c_k likewise with
  q̈_k = g_k, ÿ_k = 0 and the Coriolis terms of the tree joints;
* cluster transforms ^kX_λ(k) (eq. 17): one nonzero block per row, the transform from the
  output body Λ(i) to body i, kept as the pose (Ro, to)[i] of i in Λ(i);
* the articulated-cluster inertia I^A_k (6n × 6n) and bias p^A_k (eq. 38, 55–56).

Sparsity is used throughout: transforms are applied body by body (one block per row of
^kX_λ, one per column of its force dual), so the cost grows linearly with the number of
clusters and with the cube of the cluster size (004 §VII-C).

Public functions work with the independent coordinates y, ẏ, ÿ and the independent
generalized forces τ_ind = Gᵀτ (seed 004 §V-D, eq. 29–31).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _validation as val
from ..dynamics._layout import NQ, NV, PARENT, QIDX, VIDX, model_views, workspace_views
from ..dynamics._primitives import (add_cross_force, add_force_to_parent, add_inertia_to_parent,
                                    gravity_to_child, inertia_times_motion, motion_to_child, parent_acceleration,
                                    spd_inverse)
from ..dynamics.kinematics import body_velocities, check_quaternions, joint_placements, nonfinite, state_status
from ._cluster_layout import (B_CLUSTER, B_LOCAL, B_OUT, B_OUTLOCAL, B_PLOCAL, B_ROW, C_ARM, C_B0, C_C,
                              C_DINV, C_G, C_GB, C_IA, C_KIND, C_NB, C_NC, C_NYV, C_PA, C_PARENT, C_R0, C_S, C_T,
                              C_COUPLED, C_U, C_UV, C_Y, C_YQ0, C_YV0, LINEAR, NONLINEAR, RIGID, N_HEADER, N_CLUSTER_COLUMNS,
                              cluster_views, cluster_workspace_views, pack)
from ..model import neutral
from .clusters import cluster_tree

__all__ = ["cluster_rnea", "cluster_aba", "cluster_efpa", "cluster_mass_matrix",
           "embedding_accelerations", "ClusterWorkspace"]


# --------------------------------------------------------------------------- shared passes
@njit(cache=True)
def spanning_state(mi, ci, cf, y, yd, q, qd, with_velocity):
    """q = γ(y), q̇ = G ẏ (seed 004 eq. 3) for rigid and linear clusters; nonlinear
    clusters' positions are set by the caller, their velocities here."""
    explicit_map(mi, ci, cf, y, q, True, False)
    if with_velocity:
        explicit_map(mi, ci, cf, yd, qd, False, False)


@njit(cache=True)
def explicit_map(mi, ci, cf, x, out, positions, with_bias):
    """out = G x (+ g with ``with_bias``), cluster by cluster (seed 004 eq. 3): spanning-tree
    velocities or accelerations from independent ones, q̇ = G ẏ, q̈ = G ÿ + g; with
    ``positions`` the configuration q = γ(y) = G y of rigid and linear clusters (vector
    joints, so positions map like velocities; nonlinear clusters are left alone)."""
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    size, index, rows = (NQ, QIDX, rows_q) if positions else (NV, VIDX, rows_v)
    for k in range(C.shape[0]):
        kind = C[k, C_KIND]
        y0, ny = (C[k, C_YQ0] if positions else C[k, C_YV0]), C[k, C_NYV]
        if kind == RIGID:
            o = y0
            for a in range(C[k, C_NB]):
                i = cbodies[C[k, C_B0] + a]
                for c in range(mi[i, size]):
                    out[mi[i, index] + c] = x[o + c]
                o += mi[i, size]
            continue
        if positions and kind != LINEAR:
            continue
        og, ogb, r0 = C[k, C_G], C[k, C_GB], C[k, C_R0]
        for r in range(C[k, C_NC]):
            acc = cf[ogb + r] if with_bias else 0.0
            for j in range(ny):
                acc += cf[og + r * ny + j] * x[y0 + j]
            out[rows[r0 + r]] = acc


@njit(cache=True)
def explicit_map_transpose(mi, ci, cf, f, out):
    """out = Gᵀ f: independent generalized forces τ_ind = Gᵀτ from spanning-tree ones
    (virtual work, seed 004 §V-D)."""
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0]):
        yv0, ny = C[k, C_YV0], C[k, C_NYV]
        if C[k, C_KIND] == RIGID:
            ov = yv0
            for a in range(C[k, C_NB]):
                i = cbodies[C[k, C_B0] + a]
                for c in range(mi[i, NV]):
                    out[ov + c] = f[mi[i, VIDX] + c]
                ov += mi[i, NV]
            continue
        og, r0 = C[k, C_G], C[k, C_R0]
        for j in range(ny):
            acc = 0.0
            for r in range(C[k, C_NC]):
                acc += cf[og + r * ny + j] * f[rows_v[r0 + r]]
            out[yv0 + j] = acc


@njit(cache=True)
def output_poses(mi, ci, R, t, Ro, to):
    """(Ro, to)[i]: pose of body i in its output body Λ(i), composed along the tree path
    inside the cluster; defines the nonzero blocks ^iX_Λ(i) of the cluster transforms
    (seed 004 eq. 17–18)."""
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for i in range(mi.shape[0]):
        if B[i, B_PLOCAL] >= 0:
            p = mi[i, PARENT]
            for a in range(3):
                acc = to[p, a]
                for k in range(3):
                    acc += Ro[p, a, k] * t[i, k]
                to[i, a] = acc
                for b in range(3):
                    acc = 0.0
                    for k in range(3):
                        acc += Ro[p, a, k] * R[i, k, b]
                    Ro[i, a, b] = acc
        else:
            for a in range(3):
                to[i, a] = t[i, a]
                for b in range(3):
                    Ro[i, a, b] = R[i, a, b]


@njit(cache=True)
def cluster_subspaces(mi, ci, cf, S, Cor, R, t, R6, has_bias):
    """S_k (eq. 24) and, with ``has_bias``, c_k = Ṡ_k ẏ_k (eq. 25–26) for every cluster.

    Column j of S_k stacks the body motions for q̇_k = G_k e_j with the output bodies at
    rest — the recursion inside the cluster that the lower-triangular remapping transform
    ^ΛX_λ of eq. 20 expresses; c_k is the same recursion for q̈_k = g_k with the tree
    joints' Coriolis terms ``Cor`` (from ``body_velocities``).
    """
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0]):
        nbk, ny = C[k, C_NB], C[k, C_NYV]
        og, ogb, rs, rc = C[k, C_G], C[k, C_GB], C[k, C_S], C[k, C_C]
        nonlinear = C[k, C_KIND] == NONLINEAR
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            pl = B[i, B_PLOCAL]
            row = B[i, B_ROW]
            vi = mi[i, VIDX]
            for j in range(ny):
                ra = rs + j * nbk + a
                if pl >= 0:
                    motion_to_child(R, t, i, R6, rs + j * nbk + pl, R6, ra)
                else:
                    for e in range(6):
                        R6[ra, e] = 0.0
                for c in range(mi[i, NV]):
                    x = cf[og + (row + c) * ny + j]
                    if x != 0.0:
                        for e in range(6):
                            R6[ra, e] += S[vi + c, e] * x
            if has_bias:
                if pl >= 0:
                    motion_to_child(R, t, i, R6, rc + pl, R6, rc + a)
                else:
                    for e in range(6):
                        R6[rc + a, e] = 0.0
                for e in range(6):
                    R6[rc + a, e] += Cor[i, e]
                if nonlinear:
                    for c in range(mi[i, NV]):
                        x = cf[ogb + row + c]
                        for e in range(6):
                            R6[rc + a, e] += S[vi + c, e] * x


@njit(cache=True)
def _add_transformed_block(Ro, to, ia, ib, M, dst, di, tmp):
    """dst[di] += φ(Λ(a), a) M φ*(Λ(b), b) for a 6×6 block M of two different bodies a, b."""
    for r in range(6):
        for e in range(6):
            tmp[0, r, e] = 0.0
        add_force_to_parent(Ro, to, ib, M, r, tmp[0], r)  # row r of M φ*_b
    for r in range(6):
        for e in range(6):
            tmp[1, e, r] = tmp[0, r, e]
    for c in range(6):
        for e in range(6):
            tmp[2, c, e] = 0.0
        add_force_to_parent(Ro, to, ia, tmp[1], c, tmp[2], c)  # column c of φ_a (M φ*_b)
    for r in range(6):
        for c in range(6):
            dst[di, r, c] += tmp[2, c, r]


@njit(inline="always", cache=True)
def _nonzero_block(R36, blk):
    for r in range(6):
        for c in range(6):
            if R36[blk, r, c] != 0.0:
                return True
    return False


@njit(cache=True)
def project_cluster_inertia(C, B, cbodies, k, Ro, to, R36, tmp):
    """I_λ(k) += ^λX*_k I_k ^kX_λ for the (n × n blocks) cluster inertia of cluster k (seed
    004 eq. 55): block (a, b) lands on the output bodies' block (Λ(a), Λ(b)).

    One nonzero transform per block row and column (eq. 17–18); diagonal blocks use the
    symmetric congruence of the tree ABA, off-diagonal blocks (present only when a child
    cluster hangs from several bodies of this one) the general two-sided transform.
    """
    p = C[k, C_PARENT]
    nbk, nbp = C[k, C_NB], C[p, C_NB]
    ik, ip, b0 = C[k, C_IA], C[p, C_IA], C[k, C_B0]
    coupled = C[k, C_COUPLED] == 1
    for a in range(nbk):
        ia = cbodies[b0 + a]
        la = B[ia, B_OUTLOCAL]
        add_inertia_to_parent(Ro, to, ia, R36[ik + a * nbk + a], R36, ip + la * nbp + la, tmp)
        if not coupled:
            continue
        for b in range(nbk):
            if b != a and _nonzero_block(R36, ik + a * nbk + b):
                ib = cbodies[b0 + b]
                _add_transformed_block(Ro, to, ia, ib, R36[ik + a * nbk + b], R36,
                                       ip + la * nbp + B[ib, B_OUTLOCAL], tmp)


@njit(cache=True)
def init_cluster_inertias(ci, inertia, V, F, R6, R36, has_v, fext):
    """I^A_k = block(I_i) (eq. 14) and p^A_k = stack(v_i ×* I_i v_i − f_ext,i) (eq. 34)."""
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0]):
        nbk, ik, rp = C[k, C_NB], C[k, C_IA], C[k, C_PA]
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            for b in range(nbk):
                blk = ik + a * nbk + b
                for r in range(6):
                    for c in range(6):
                        R36[blk, r, c] = inertia[i, r, c] if a == b else 0.0
            for r in range(6):
                R6[rp + a, r] = 0.0
            if has_v:
                inertia_times_motion(inertia, i, V, i, F, i)
                add_cross_force(V, i, F, i, R6, rp + a)
            if fext is not None:
                for r in range(6):
                    R6[rp + a, r] -= fext[i, r]


@njit(cache=True)
def _invert_D(C, k, cf, R6, RS, tmp):
    """D_k = S_kᵀ U_k + H̃_k (eq. 49; H̃_k the optional reflected inertia) and D_k⁻¹,
    row-major, into RS. False when D_k is not positive definite."""
    nbk, ny = C[k, C_NB], C[k, C_NYV]
    if ny == 0:
        return True
    rs, ru, od, arm0 = C[k, C_S], C[k, C_U], C[k, C_DINV], C[k, C_ARM]
    if ny <= 6:
        D = tmp[2]
        for j1 in range(ny):
            for j2 in range(j1 + 1):
                acc = 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc += R6[rs + j1 * nbk + a, r] * R6[ru + j2 * nbk + a, r]
                D[j1, j2] = acc
                D[j2, j1] = acc
        if arm0 >= 0:
            for j1 in range(ny):
                for j2 in range(ny):
                    D[j1, j2] += cf[arm0 + j1 * ny + j2]
        if not spd_inverse(D, tmp, 1, ny, tmp):  # D⁻¹ into tmp[1] (tmp[3] holds the factor)
            return False
        for j1 in range(ny):
            for j2 in range(ny):
                RS[od + j1 * ny + j2] = tmp[1, j1, j2]
        return True
    Dm = np.empty((ny, ny))  # clusters with more than six freedoms: rare, allocate
    for j1 in range(ny):
        for j2 in range(ny):
            acc = 0.0
            for a in range(nbk):
                for r in range(6):
                    acc += R6[rs + j1 * nbk + a, r] * R6[ru + j2 * nbk + a, r]
            Dm[j1, j2] = acc + (cf[arm0 + j1 * ny + j2] if arm0 >= 0 else 0.0)
    if np.linalg.eigvalsh(Dm)[0] <= 0.0:
        return False
    Di = np.linalg.inv(Dm)
    for j1 in range(ny):
        for j2 in range(ny):
            RS[od + j1 * ny + j2] = Di[j1, j2]
    return True


@njit(cache=True)
def articulated_cluster_pass(ci, cf, Ro, to, tmp, vec, R6, R36, RS, tau, has_bias):
    """Backward pass of C-ABA (Algorithm 1, lines 25–35; seed 004 eq. 49, 55–56):

        U_k = I^A_k S_k,   D_k = S_kᵀ U_k,   u_k = τ_k − S_kᵀ p^A_k,
        I^a = I^A_k − U_k D_k⁻¹ U_kᵀ,   p^a = p^A_k + I^a c_k + U_k D_k⁻¹ u_k,
        I^A_λ(k) += ^λX*_k I^a ^kX_λ,   p^A_λ(k) += ^λX*_k p^a.

    I^a is projected as ^λX* I^A ^kX − (^λX*U) D⁻¹ (^λX*U)ᵀ: the rank-ny correction is
    carried by the ny force columns ^λX*U_k rather than by 6n × 6n blocks. ``tau`` of
    length 0 means τ = 0; without ``has_bias`` p^A, c_k and u_k are skipped (C-EFPA).
    Returns False when some D_k is not positive definite.
    """
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    has_tau = tau.shape[0] > 0
    for k in range(C.shape[0] - 1, -1, -1):
        nbk, ny, yv0, b0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0], C[k, C_B0]
        rs, ru, rc, rp, ik = C[k, C_S], C[k, C_U], C[k, C_C], C[k, C_PA], C[k, C_IA]
        od, ou, oy, ot = C[k, C_DINV], C[k, C_UV], C[k, C_Y], C[k, C_T]
        coupled = C[k, C_COUPLED] == 1
        for j in range(ny):
            for a in range(nbk):
                ra = ru + j * nbk + a
                for r in range(6):
                    R6[ra, r] = 0.0
                for b in range(nbk):
                    blk = ik + a * nbk + b
                    if a != b and not (coupled and _nonzero_block(R36, blk)):
                        continue
                    sb = rs + j * nbk + b
                    for r in range(6):
                        acc = 0.0
                        for c in range(6):
                            acc += R36[blk, r, c] * R6[sb, c]
                        R6[ra, r] += acc
            if has_bias:
                acc = tau[yv0 + j] if has_tau else 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc -= R6[rs + j * nbk + a, r] * R6[rp + a, r]
                RS[ou + j] = acc
        if not _invert_D(C, k, cf, R6, RS, tmp):
            return False
        p = C[k, C_PARENT]
        if p < 0:
            continue
        nbp, ipb, rpp = C[p, C_NB], C[p, C_IA], C[p, C_PA]
        project_cluster_inertia(C, B, cbodies, k, Ro, to, R36, tmp)
        # Φ U: the columns of U_k gathered on the output bodies (rows j·n_p + Λ(a) of F1)
        for r in range(ny * nbp):
            for e in range(6):
                R6[r, e] = 0.0
        for a in range(nbk):
            ia = cbodies[b0 + a]
            la = B[ia, B_OUTLOCAL]
            for j in range(ny):
                add_force_to_parent(Ro, to, ia, R6, ru + j * nbk + a, R6, j * nbp + la)
        for la in range(nbp):  # −(ΦU)_A D⁻¹ (ΦU)_Bᵀ on the output bodies' blocks
            used_a = False
            for a in range(nbk):
                if B[cbodies[b0 + a], B_OUTLOCAL] == la:
                    used_a = True
            if not used_a:
                continue
            for lb in range(nbp):
                used_b = False
                for b in range(nbk):
                    if B[cbodies[b0 + b], B_OUTLOCAL] == lb:
                        used_b = True
                if not used_b:
                    continue
                blk = ipb + la * nbp + lb
                for r in range(6):
                    for j in range(ny):
                        acc = 0.0
                        for j2 in range(ny):
                            acc += RS[od + j * ny + j2] * R6[j2 * nbp + la, r]
                        RS[ot + j] = acc
                    for c in range(6):
                        acc = 0.0
                        for j in range(ny):
                            acc += RS[ot + j] * R6[j * nbp + lb, c]
                        R36[blk, r, c] -= acc
        if has_bias:
            # p^a = p^A + I^a c + U D⁻¹ u = p^A + I^A c + U D⁻¹ (u − Uᵀ c)
            for j in range(ny):
                acc = RS[ou + j]
                for a in range(nbk):
                    for r in range(6):
                        acc -= R6[ru + j * nbk + a, r] * R6[rc + a, r]
                RS[ot + j] = acc
            for j in range(ny):
                acc = 0.0
                for j2 in range(ny):
                    acc += RS[od + j * ny + j2] * RS[ot + j2]
                RS[oy + j] = acc
            for a in range(nbk):
                ia = cbodies[b0 + a]
                for r in range(6):
                    acc = R6[rp + a, r]
                    for b in range(nbk):
                        if a != b and not coupled:
                            continue
                        blk = ik + a * nbk + b
                        for c in range(6):
                            acc += R36[blk, r, c] * R6[rc + b, c]
                    for j in range(ny):
                        acc += R6[ru + j * nbk + a, r] * RS[oy + j]
                    vec[0, r] = acc
                add_force_to_parent(Ro, to, ia, vec, 0, R6, rpp + B[ia, B_OUTLOCAL])
    return True


@njit(cache=True)
def cluster_acceleration_pass(ci, g, A, Ro, to, R6, RS, gravity, ydd, solve):
    """Forward pass over clusters (seed 004 eq. 33; Algorithm 1 lines 38–43):

        a' = ^kX_λ(k) a_λ(k) + c_k,   ÿ_k = D_k⁻¹(u_k − U_kᵀ a')  (when ``solve``),
        a_k = a' + S_k ÿ_k,

    with a_0 = −a_g. Body accelerations go to ``A``; with ``solve`` False the given ÿ is
    used (C-RNEA).
    """
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0]):
        nbk, ny, yv0, b0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0], C[k, C_B0]
        rs, rc = C[k, C_S], C[k, C_C]
        for a in range(nbk):
            i = cbodies[b0 + a]
            parent_acceleration(Ro, to, i, B[i, B_OUT], g, gravity, A)
            for e in range(6):
                A[i, e] += R6[rc + a, e]
        if solve:
            ru, od, ou, ot = C[k, C_U], C[k, C_DINV], C[k, C_UV], C[k, C_T]
            for j in range(ny):
                acc = RS[ou + j]
                for a in range(nbk):
                    i = cbodies[b0 + a]
                    for e in range(6):
                        acc -= R6[ru + j * nbk + a, e] * A[i, e]
                RS[ot + j] = acc
            for j in range(ny):
                acc = 0.0
                for j2 in range(ny):
                    acc += RS[od + j * ny + j2] * RS[ot + j2]
                ydd[yv0 + j] = acc
        for a in range(nbk):
            i = cbodies[b0 + a]
            for j in range(ny):
                x = ydd[yv0 + j]
                for e in range(6):
                    A[i, e] += R6[rs + j * nbk + a, e] * x


# --------------------------------------------------------------------------- kernels
@njit(cache=True)
def _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, with_velocity, with_bias):
    """Spanning state, joint placements, body velocities, output poses, S_k (and c_k)."""
    nb = mi.shape[0]
    q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS = cluster_workspace_views(cws, ci, nq, nv)
    spanning_state(mi, ci, cf, y, yd, q, qd, with_velocity)
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    if with_velocity:
        body_velocities(mi, S, qd, R, t, V, Cor)
    output_poses(mi, ci, R, t, Ro, to)
    cluster_subspaces(mi, ci, cf, S, Cor, R, t, R6, with_bias)
    return val.OK


@njit(cache=True)
def cluster_aba_kernel(mi, mf, ci, cf, y, yd, tau, fext, ws, cws, nq, nv, gravity, ydd):
    """C-ABA (seed 004 Algorithm 1): ÿ from (y, ẏ, τ_ind)."""
    st = state_status(y, yd, tau, fext)
    if st != val.OK:
        return st
    st = _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, True, True)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS = cluster_workspace_views(cws, ci, nq, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    init_cluster_inertias(ci, inertia, V, F, R6, R36, True, fext)
    if not articulated_cluster_pass(ci, cf, Ro, to, tmp, vec, R6, R36, RS, tau, True):
        return val.SINGULAR
    cluster_acceleration_pass(ci, g, A, Ro, to, R6, RS, gravity, ydd, True)
    return val.OK


@njit(cache=True)
def cluster_rnea_kernel(mi, mf, ci, cf, y, yd, ydd, fext, ws, cws, nq, nv, gravity, tau):
    """C-RNEA (seed 004 §VI): forward pass eq. 33–34, backward pass eq. 35, τ_k = S_kᵀ f^J_k
    (eq. 31)."""
    st = state_status(y, yd, ydd, fext)
    if st != val.OK:
        return st
    st = _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, True, True)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS = cluster_workspace_views(cws, ci, nq, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    cluster_acceleration_pass(ci, g, A, Ro, to, R6, RS, gravity, ydd, False)
    for i in range(nb):  # f^net_i = I_i a_i + v_i ×* I_i v_i − f_ext,i
        inertia_times_motion(inertia, i, A, i, F, i)
        inertia_times_motion(inertia, i, V, i, pb, i)
        add_cross_force(V, i, pb, i, F, i)
        if fext is not None:
            for e in range(6):
                F[i, e] -= fext[i, e]
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for i in range(nb - 1, -1, -1):  # f^J_Λ(i) += ^ΛX*_i f^J_i: forces gathered on output bodies
        o = B[i, B_OUT]
        if o >= 0:
            add_force_to_parent(Ro, to, i, F, i, F, o)
    for k in range(C.shape[0]):
        nbk, ny, yv0, rs = C[k, C_NB], C[k, C_NYV], C[k, C_YV0], C[k, C_S]
        for j in range(ny):
            acc = 0.0
            for a in range(nbk):
                i = cbodies[C[k, C_B0] + a]
                for e in range(6):
                    acc += R6[rs + j * nbk + a, e] * F[i, e]
            tau[yv0 + j] = acc
    return val.OK


@njit(cache=True)
def cluster_mass_matrix_kernel(mi, mf, ci, cf, y, ws, cws, nq, nv, H):
    """Cluster mass matrix H = GᵀMG by composite cluster inertias: I^C_k = I_k +
    Σ ^kX*_l I^C_l ^lX_k, H_kk = S_kᵀ I^C_k S_k, and F = I^C_k S_k carried to the ancestor
    clusters (H_jk = S_jᵀ ^jX*_k F), seed 002 Lemma 7–9 applied to the aggregated tree."""
    st = _positions_pass(mi, mf, ci, cf, y, y, ws, cws, nq, nv, False, False)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS = cluster_workspace_views(cws, ci, nq, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    init_cluster_inertias(ci, inertia, V, F, R6, R36, False, None)
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    maxrows = ci[6]
    for k in range(C.shape[0] - 1, -1, -1):
        if C[k, C_PARENT] >= 0:
            project_cluster_inertia(C, B, cbodies, k, Ro, to, R36, tmp)
    H[:] = 0.0
    for k in range(C.shape[0]):
        nbk, ny, yv0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0]
        rs, ru, ik = C[k, C_S], C[k, C_U], C[k, C_IA]
        for j in range(ny):  # F = I^C S into the U rows
            for a in range(nbk):
                ra = ru + j * nbk + a
                for r in range(6):
                    acc = 0.0
                    for b in range(nbk):
                        for c in range(6):
                            acc += R36[ik + a * nbk + b, r, c] * R6[rs + j * nbk + b, c]
                    R6[ra, r] = acc
        for j1 in range(ny):
            for j2 in range(ny):
                acc = 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc += R6[rs + j1 * nbk + a, r] * R6[ru + j2 * nbk + a, r]
                H[yv0 + j1, yv0 + j2] = acc
        cur, nbc, fc = k, nbk, ru
        fp = 0  # alternate between the scratch areas F1 (rows 0…) and F2 (rows maxrows…)
        while C[cur, C_PARENT] >= 0:
            p = C[cur, C_PARENT]
            nbp, nyp, yvp, rsp = C[p, C_NB], C[p, C_NYV], C[p, C_YV0], C[p, C_S]
            for r in range(fp, fp + ny * nbp):
                for e in range(6):
                    R6[r, e] = 0.0
            for j in range(ny):
                for a in range(nbc):
                    i = cbodies[C[cur, C_B0] + a]
                    add_force_to_parent(Ro, to, i, R6, fc + j * nbc + a, R6, fp + j * nbp + B[i, B_OUTLOCAL])
            for jp in range(nyp):
                for j in range(ny):
                    acc = 0.0
                    for b in range(nbp):
                        for r in range(6):
                            acc += R6[rsp + jp * nbp + b, r] * R6[fp + j * nbp + b, r]
                    H[yvp + jp, yv0 + j] = acc
                    H[yv0 + j, yvp + jp] = acc
            cur, nbc, fc = p, nbp, fp
            fp = maxrows if fp == 0 else 0
    return val.OK


@njit(cache=True)
def cluster_efpa_kernel(mi, mf, ci, cf, y, fbody, fR, fp, ws, cws, nq, nv, Z, Omega):
    """C-EFPA (seed 004 §VIII): inverse operational-space inertia Ω of the frames.

    Backward pass as C-ABA without velocities or forces; the cluster force propagators
    χ^e_λ(k) = χ^e_k L_k ^kX_λ(k), L_kᵀ = 1 − U_k D_k⁻¹ S_kᵀ (eq. 62), started at the
    frame's body (eq. 57–58); then Ω_e1e2 = Σ_k (χ^e1_k S_k) D_k⁻¹ (χ^e2_k S_k)ᵀ over the
    clusters supporting both frames — the closed form of the forward recursion eq. 63–67
    (the EFPA of [13] with clusters for bodies).
    """
    st = _positions_pass(mi, mf, ci, cf, y, y, ws, cws, nq, nv, False, False)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS = cluster_workspace_views(cws, ci, nq, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    init_cluster_inertias(ci, inertia, V, F, R6, R36, False, None)
    empty = np.zeros(0)
    if not articulated_cluster_pass(ci, cf, Ro, to, tmp, vec, R6, R36, RS, empty, False):
        return val.SINGULAR
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    maxrows = ci[6]
    m = fbody.shape[0]
    Z[:] = 0.0
    for e in range(m):
        b = fbody[e]
        k = B[b, B_CLUSTER]
        nbc = C[k, C_NB]
        w = 0  # W rows d·n + a (body a's force for a unit force d at the frame), in F1 then F2
        for r in range(6 * nbc):
            for c in range(6):
                R6[r, c] = 0.0
        for d in range(6):
            for r in range(6):
                vec[0, r] = 0.0
            vec[0, d] = 1.0
            add_force_to_parent(fR, fp, e, vec, 0, R6, d * nbc + B[b, B_LOCAL])
        while True:
            ny, yv0, rs = C[k, C_NYV], C[k, C_YV0], C[k, C_S]
            for j in range(ny):
                for d in range(6):
                    acc = 0.0
                    for a in range(nbc):
                        for r in range(6):
                            acc += R6[rs + j * nbc + a, r] * R6[w + d * nbc + a, r]
                    Z[e, yv0 + j, d] = acc
            p = C[k, C_PARENT]
            if p < 0:
                break
            ru, od, oy = C[k, C_U], C[k, C_DINV], C[k, C_Y]
            for d in range(6):  # W ← L_kᵀ W = W − U D⁻¹ (Sᵀ W)
                for j in range(ny):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += RS[od + j * ny + j2] * Z[e, yv0 + j2, d]
                    RS[oy + j] = acc
                for a in range(nbc):
                    for r in range(6):
                        acc = 0.0
                        for j in range(ny):
                            acc += R6[ru + j * nbc + a, r] * RS[oy + j]
                        R6[w + d * nbc + a, r] -= acc
            nbp = C[p, C_NB]
            wp = maxrows if w == 0 else 0
            for r in range(wp, wp + 6 * nbp):
                for c in range(6):
                    R6[r, c] = 0.0
            for d in range(6):
                for a in range(nbc):
                    i = cbodies[C[k, C_B0] + a]
                    add_force_to_parent(Ro, to, i, R6, w + d * nbc + a, R6, wp + d * nbp + B[i, B_OUTLOCAL])
            w = wp
            k, nbc = p, nbp
    for e1 in range(m):
        for e2 in range(e1, m):
            k = B[fbody[e1], B_CLUSTER]
            for d1 in range(6):
                for d2 in range(6):
                    Omega[6 * e1 + d1, 6 * e2 + d2] = 0.0
            while k >= 0:
                ny, yv0, od = C[k, C_NYV], C[k, C_YV0], C[k, C_DINV]
                for d1 in range(6):
                    for d2 in range(6):
                        acc = 0.0
                        for j1 in range(ny):
                            z1 = Z[e1, yv0 + j1, d1]
                            if z1 != 0.0:
                                for j2 in range(ny):
                                    acc += z1 * RS[od + j1 * ny + j2] * Z[e2, yv0 + j2, d2]
                        Omega[6 * e1 + d1, 6 * e2 + d2] += acc
                k = C[k, C_PARENT]
            for d1 in range(6):
                for d2 in range(6):
                    Omega[6 * e2 + d2, 6 * e1 + d1] = Omega[6 * e1 + d1, 6 * e2 + d2]
    return val.OK


# --------------------------------------------------------------------------- Python layer
class ClusterWorkspace:
    """Packed cluster tree (``ci``, ``cf``) and per-call buffers for one model.

    ``armature`` (cluster index → (ny, ny)) adds a reflected inertia H̃_k to D_k; used by
    the approximate methods (seed 004 §II-C, eq. for H̃).
    """

    def __init__(self, tree, armature=None):
        from ..dynamics._layout import Workspace
        self.tree = tree
        self.model = tree.model
        self.ci, self.cf, size = pack(tree, armature)
        self.cws = np.zeros(size)
        self.ws = Workspace(self.model)
        c = self.model.compiled
        self.nq, self.nv, self.nb = c.nq, c.nv, c.nb
        self.nonlinear = [cl for cl in tree.clusters if not cl.joint.linear]
        self._g_offsets = {}
        ncl = len(tree.clusters)
        Cview = self.ci[N_HEADER:N_HEADER + ncl * N_CLUSTER_COLUMNS].reshape(ncl, N_CLUSTER_COLUMNS)
        for cl in self.nonlinear:
            self._g_offsets[cl.index] = (Cview[cl.index, C_G], Cview[cl.index, C_GB])
        self.q = self.cws[:self.nq]
        self.q[:] = neutral(self.model)  # valid quaternions before the first call
        self.qd = self.cws[self.nq:self.nq + self.nv]
        self.frame_cache = {}
        self.zero_yd = np.zeros(tree.nyv)

    def prepare(self, y, yd, need_bias):
        """γ(y), G and g of the nonlinear clusters (solved in Python, written where the
        kernels read them)."""
        for cl in self.nonlinear:
            cl.joint.solve_positions(y[cl.y_q], self.q)
            self._write_explicit_form(cl, yd if need_bias else None)

    def prepare_at(self, q, v, state=None):
        """G and g of the nonlinear clusters at a given spanning state (q, v) that satisfies
        the constraints, without solving γ (the cut-joint methods' input). ``state``: the
        model's constraints evaluated at (q, v) (:class:`~soadyn.closed.ConstraintState`),
        whose rows the clusters then take instead of evaluating their own."""
        for cl in self.nonlinear:
            j = cl.joint
            self.q[j.q_index] = q[j.q_index]
            self.qd[j.v_index] = v[j.v_index]
            if state is None:
                self._write_explicit_form(cl, None, self.qd)
            else:
                rows = j.rows_in(state.constraints)
                self._write(cl, *j.explicit_form_of(state.G[np.ix_(rows, j.v_index)], state.acceleration_bias[rows]))

    def _write_explicit_form(self, cl, yd, qd=None):
        j = cl.joint
        if yd is None:
            self._write(cl, *j.explicit_form(self.q, qd))
            return
        G = j.jacobian(self.q)  # q̇ = G ẏ first, then g at (q, q̇)
        self.qd[j.v_index] = G @ yd[cl.y_v]
        self._write(cl, G, j.bias_given_jacobian(self.q, self.qd))

    def _write(self, cl, G, g):
        """Write G and g of a nonlinear cluster where the kernels read them."""
        j = cl.joint
        og, ob = self._g_offsets[cl.index]
        self.cf[og:og + G.size] = G.ravel()
        if g is not None:
            self.cf[ob:ob + j.n] = g

    def spanning(self):
        """(q, q̇) of the last call."""
        return self.q.copy(), self.qd.copy()


def _workspace(model):
    tree = cluster_tree(model)
    cw = getattr(tree, "_workspace", None)
    if cw is None:
        cw = tree._workspace = ClusterWorkspace(tree)
    return cw


def _raise(st, names):
    if st:
        val.raise_status(st, names)


def _dynamics(kernel, cw, y, yd, third, names, f_ext, gravity, out):
    """Validate (y, ẏ, third) and run C-ABA or C-RNEA; ``names`` name the three arguments."""
    tree = cw.tree
    y = val.vector(y, tree.nyq, names[0], batch_ok=False)
    yd = val.vector(yd, tree.nyv, names[1], batch_ok=False)
    third = val.vector(third, tree.nyv, names[2], batch_ok=False)
    f_ext = val.external_forces(f_ext, cw.nb, None)
    res = val.output(out, (tree.nyv,))
    if cw.nonlinear:
        cw.prepare(y, yd, True)
    st = kernel(cw.model.compiled.mi, cw.model.compiled.mf, cw.ci, cw.cf, y, yd, third, f_ext,
                cw.ws.buffer, cw.cws, cw.nq, cw.nv, gravity, res)
    _raise(st, names)
    return res


def _aba(cw, y, yd, tau, f_ext, gravity, out):
    return _dynamics(cluster_aba_kernel, cw, y, yd, tau, ("y", "yd", "tau_ind"), f_ext, gravity, out)


def _rnea(cw, y, yd, ydd, f_ext, gravity, out):
    return _dynamics(cluster_rnea_kernel, cw, y, yd, ydd, ("y", "yd", "ydd"), f_ext, gravity, out)


def _frames(cw, frames):
    """(body, rotation, translation) arrays of the frames, cached per frame list."""
    if isinstance(frames, (str, int, np.integer)):
        frames = [frames]
    key = tuple(frames)
    hit = cw.frame_cache.get(key)
    if hit is not None:
        return hit
    fs = [cw.model.frame(f) for f in frames]
    if not fs:
        raise ValueError("frames: expected at least one frame")
    for f in fs:
        if f.body < 0:
            raise ValueError(f"frames: frame {f.name!r} is fixed to the world; it has no operational-space inertia")
    hit = (np.array([f.body for f in fs], dtype=np.int64), np.ascontiguousarray([f.rotation for f in fs], dtype=float),
           np.ascontiguousarray([f.translation for f in fs], dtype=float), np.zeros((len(fs), cw.tree.nyv, 6)))
    cw.frame_cache[key] = hit
    return hit


def _efpa(cw, y, frames):
    tree, model = cw.tree, cw.model
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    fbody, fR, fp, Z = _frames(cw, frames)
    if cw.nonlinear:
        cw.prepare(y, cw.zero_yd, False)
    m = len(fbody)
    Om = np.empty((6 * m, 6 * m))
    st = cluster_efpa_kernel(model.compiled.mi, model.compiled.mf, cw.ci, cw.cf, y, fbody, fR, fp, cw.ws.buffer,
                             cw.cws, cw.nq, cw.nv, Z, Om)
    _raise(st, ("y",))
    return Om


def _mass_matrix(cw, y):
    tree = cw.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    if cw.nonlinear:
        cw.prepare(y, cw.zero_yd, False)
    H = np.empty((tree.nyv, tree.nyv))
    st = cluster_mass_matrix_kernel(cw.model.compiled.mi, cw.model.compiled.mf, cw.ci, cw.cf, y, cw.ws.buffer,
                                    cw.cws, cw.nq, cw.nv, H)
    _raise(st, ("y",))
    return H


def cluster_aba(model, y, yd, tau_ind, f_ext=None, *, gravity=True, out=None):
    """Constrained forward dynamics by the cluster-based articulated-body algorithm, C-ABA
    (seed 004 Algorithm 1): ÿ = (GᵀMG)⁻¹ (τ_ind − Gᵀ(C + M g)) in O(N) over clusters.

    Parameters
    ----------
    model : Model with loops, couplings or holonomic user constraints (see :func:`cluster_tree`).
    y : (nyq,) independent coordinates; yd : (nyv,) independent velocities.
    tau_ind : (nyv,) generalized forces on the independent coordinates (τ_ind = Gᵀτ for
        spanning-tree joint forces τ) [N m, N].
    f_ext : optional (nbodies, 6) spatial forces on the bodies (body frame).
    gravity : include the model's gravity.

    Returns ÿ (nyv,).
    """
    return _aba(_workspace(model), y, yd, tau_ind, f_ext, gravity, out)


def cluster_rnea(model, y, yd, ydd, f_ext=None, *, gravity=True, out=None):
    """Constrained inverse dynamics by the cluster-based RNEA, C-RNEA (seed 004 §VI):
    τ_ind = Gᵀ(M(Gÿ + g) + C) computed as S_kᵀ f^J_k per cluster (eq. 31, 35).

    Parameters: y (nyq,), yd, ydd (nyv,); f_ext optional (nbodies, 6). Returns τ_ind (nyv,).
    """
    return _rnea(_workspace(model), y, yd, ydd, f_ext, gravity, out)


def cluster_efpa(model, y, frames):
    """Inverse operational-space inertia Ω = J (GᵀMG)⁻¹ Jᵀ of ``frames`` by the cluster-based
    extended force propagator algorithm, C-EFPA (seed 004 §VIII).

    J stacks the frames' Jacobians with respect to ẏ, each mapping to the frame's spatial
    velocity [ω; v] in the frame's own axes (``reference="local"``). ``frames`` is a frame
    name or a list of names. Returns Ω (6m, 6m) for m frames.
    """
    return _efpa(_workspace(model), y, frames)


def cluster_mass_matrix(model, y):
    """The mass matrix of the independent coordinates, H = GᵀMG (nyv, nyv), by composite
    cluster inertias over the cluster tree (seed 002 Lemma 7–9, seed 004 §V)."""
    return _mass_matrix(_workspace(model), y)


def embedding_accelerations(model, q, v, tau, f_ext=None, state=None):
    """Closed-chain forward dynamics by constraint embedding at a spanning-tree state:
    q̈ = G ÿ + g with ÿ from C-ABA for τ_ind = Gᵀτ (seed 004 eq. 3, Algorithm 1, §V-D).

    (q, v) must satisfy the constraints (the nonlinear clusters' G and g are taken at q
    as given, and the dependent velocities follow from the independent ones); τ (nv,)
    are spanning-tree joint forces; ``state``, optional, the model's constraints evaluated
    at (q, v) (:func:`~soadyn.closed.evaluate_constraints`): the clusters then take their
    rows K and bias k from it (the cut-joint evaluation) instead of evaluating them again.
    The public entry point is
    ``soadyn.constrained_forward_dynamics(model, q, v, tau, method="embedding")``.
    """
    cw = _workspace(model)
    tree = cw.tree
    c = model.compiled
    y, yd = tree.independent_state(q, v)
    if cw.nonlinear:
        cw.prepare_at(q, v, state)
    tau_ind = np.empty(tree.nyv)
    explicit_map_transpose(c.mi, cw.ci, cw.cf, tau, tau_ind)
    f_ext = val.external_forces(f_ext, cw.nb, None)
    ydd = np.empty(tree.nyv)
    st = cluster_aba_kernel(c.mi, c.mf, cw.ci, cw.cf, y, yd, tau_ind, f_ext, cw.ws.buffer, cw.cws, cw.nq, cw.nv,
                            True, ydd)
    _raise(st, ("q", "v", "tau"))
    qdd = np.empty(model.nv)
    explicit_map(c.mi, cw.ci, cw.cf, ydd, qdd, False, True)
    return qdd


def cluster_motion_subspaces(model, y, yd=None):
    """The cluster motion subspaces S_k (6n_k, ny_k) and bias terms c_k = Ṡ_k ẏ_k (6n_k,) as
    the compiled recursion forms them (seed 004 eq. 24–26), for inspection and tests.
    Returns a list of (S_k, c_k) per cluster; c_k is None without ``yd``."""
    cw = _workspace(model)
    tree = cw.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    has_v = yd is not None
    yd = val.vector(yd, tree.nyv, "yd", batch_ok=False) if has_v else cw.zero_yd
    if cw.nonlinear:
        cw.prepare(y, yd, has_v)
    c = model.compiled
    st = _positions_pass(c.mi, c.mf, cw.ci, cw.cf, y, yd, cw.ws.buffer, cw.cws, cw.nq, cw.nv, has_v, has_v)
    _raise(st, ("y",))
    R6 = cluster_workspace_views(cw.cws, cw.ci, cw.nq, cw.nv)[7]
    C = cluster_views(cw.ci)[0]
    out = []
    for k, cl in enumerate(tree.clusters):
        nbk, ny = len(cl.bodies), cl.joint.ny
        S = R6[C[k, C_S]:C[k, C_S] + ny * nbk].reshape(ny, nbk * 6).T.copy()
        ck = R6[C[k, C_C]:C[k, C_C] + nbk].reshape(-1).copy() if has_v else None
        out.append((S, ck))
    return out
