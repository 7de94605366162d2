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
from ..dynamics._layout import JTYPE, NQ, NV, PARENT, QIDX, VIDX, model_views, workspace_views
from ..dynamics._primitives import (add_cross_force, add_force_to_parent, add_inertia_to_parent,
                                    gravity_to_child, inertia_times_motion, motion_to_child, spd_inverse)
from ..dynamics.kinematics import body_velocities, check_quaternions, joint_placements, nonfinite
from ._cluster_layout import (B_CLUSTER, B_LOCAL, B_OUT, B_OUTLOCAL, B_PLOCAL, B_ROW, C_ARM, C_B0, C_C,
                              C_DINV, C_G, C_GB, C_IA, C_KIND, C_NB, C_NC, C_NYQ, C_NYV, C_PA, C_PARENT, C_R0,
                              C_S, C_U, C_UV, C_W, C_Y, C_YQ0, C_YV0, LINEAR, NONLINEAR, RIGID,
                              cluster_views, cluster_workspace_views, pack)
from .clusters import cluster_tree

__all__ = ["cluster_rnea", "cluster_aba", "cluster_efpa", "cluster_mass_matrix",
           "embedding_forward_dynamics", "EmbeddingResult", "ClusterWorkspace"]


# --------------------------------------------------------------------------- shared passes
@njit(cache=True)
def spanning_state(mi, ci, cf, y, yd, q, qd, with_velocity):
    """q = γ(y), q̇ = G ẏ (seed 004 eq. 3) for rigid and linear clusters; nonlinear
    clusters' positions are set by the caller, their velocities here."""
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0]):
        kind = C[k, C_KIND]
        yq0, yv0, ny = C[k, C_YQ0], C[k, C_YV0], C[k, C_NYV]
        if kind == RIGID:
            oq, ov = yq0, yv0
            for a in range(C[k, C_NB]):
                i = cbodies[C[k, C_B0] + a]
                for c in range(mi[i, NQ]):
                    q[mi[i, QIDX] + c] = y[oq + c]
                oq += mi[i, NQ]
                if with_velocity:
                    for c in range(mi[i, NV]):
                        qd[mi[i, VIDX] + c] = yd[ov + c]
                ov += mi[i, NV]
            continue
        G = cf[C[k, C_G]:C[k, C_G] + C[k, C_NC] * ny].reshape((C[k, C_NC], ny))
        r0 = C[k, C_R0]
        for r in range(C[k, C_NC]):
            if kind == LINEAR:
                acc = 0.0
                for j in range(ny):
                    acc += G[r, j] * y[yq0 + j]
                q[rows_q[r0 + r]] = acc
            if with_velocity:
                acc = 0.0
                for j in range(ny):
                    acc += G[r, j] * yd[yv0 + j]
                qd[rows_v[r0 + r]] = acc


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


@njit(inline="always", cache=True)
def _cluster_block(cws, C, k, col, shape0, shape1):
    n = shape0 * shape1 * 6
    return cws[C[k, col]:C[k, col] + n].reshape((shape0 * shape1, 6))


@njit(cache=True)
def cluster_subspaces(mi, ci, cf, ws, nv, cws, has_bias):
    """S_k (eq. 24) and, with ``has_bias``, c_k = Ṡ_k ẏ_k (eq. 25–26) for every cluster.

    Needs ``joint_placements`` (S columns, poses) and, for c_k, ``body_velocities`` (the
    tree joints' Coriolis terms) and the constraint maps G, g in ``cf``.
    """
    nb = mi.shape[0]
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for k in range(C.shape[0]):
        nbk, ny, nc = C[k, C_NB], C[k, C_NYV], C[k, C_NC]
        G = cf[C[k, C_G]:C[k, C_G] + nc * ny].reshape((nc, ny))
        g = cf[C[k, C_GB]:C[k, C_GB] + nc]
        Sk = _cluster_block(cws, C, k, C_S, ny, nbk)
        ck = _cluster_block(cws, C, k, C_C, 1, nbk)
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            pl = B[i, B_PLOCAL]
            row = B[i, B_ROW]
            vi = mi[i, VIDX]
            for j in range(ny):
                ra = j * nbk + a
                if pl >= 0:
                    motion_to_child(R, t, i, Sk, j * nbk + pl, Sk, ra)
                else:
                    for e in range(6):
                        Sk[ra, e] = 0.0
                for c in range(mi[i, NV]):
                    x = G[row + c, j]
                    if x != 0.0:
                        for e in range(6):
                            Sk[ra, e] += S[vi + c, e] * x
            if has_bias:
                if pl >= 0:
                    motion_to_child(R, t, i, ck, pl, ck, a)
                else:
                    for e in range(6):
                        ck[a, e] = 0.0
                for e in range(6):
                    ck[a, e] += Cor[i, e]
                if C[k, C_KIND] == NONLINEAR:
                    for c in range(mi[i, NV]):
                        x = g[row + c]
                        for e in range(6):
                            ck[a, e] += S[vi + c, e] * x


@njit(cache=True)
def _add_transformed_block(Ro, to, ia, ib, M, dst, tmp):
    """dst += φ(Λ(a), a) M φ*(Λ(b), b) for a 6×6 block M of two different bodies a, b."""
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
            dst[r, c] += tmp[2, c, r]


@njit(inline="always", cache=True)
def _project_block(B, Ro, to, ia, ib, M, IAp, tmp):
    """Add block (a, b) of a child cluster's inertia onto the output bodies' block
    (Λ(a), Λ(b)) of the parent cluster: the ^λX*_k (·) ^kX_λ product of eq. 55, one
    nonzero transform per block row and column (eq. 17–18)."""
    la, lb = B[ia, B_OUTLOCAL], B[ib, B_OUTLOCAL]
    if ia == ib:
        add_inertia_to_parent(Ro, to, ia, M, IAp[la], lb, tmp)
    else:
        _add_transformed_block(Ro, to, ia, ib, M, IAp[la, lb], tmp)


@njit(cache=True)
def init_cluster_inertias(mi, mf, ci, ws, nv, cws, has_v, fext):
    """I^A_k = block(I_i) (eq. 14) and p^A_k = stack(v_i ×* I_i v_i − f_ext,i) (eq. 34)."""
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for k in range(C.shape[0]):
        nbk = C[k, C_NB]
        IA = cws[C[k, C_IA]:C[k, C_IA] + nbk * nbk * 36].reshape((nbk, nbk, 6, 6))
        pA = _cluster_block(cws, C, k, C_PA, 1, nbk)
        IA[:] = 0.0
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            for r in range(6):
                for c in range(6):
                    IA[a, a, r, c] = inertia[i, r, c]
                pA[a, r] = 0.0
            if has_v:
                inertia_times_motion(inertia, i, V, i, F, i)
                add_cross_force(V, i, F, i, pA, a)
            if fext is not None:
                for r in range(6):
                    pA[a, r] -= fext[i, r]


@njit(cache=True)
def _invert_D(C, k, cf, Sk, Uk, nbk, ny, Dinv, tmp):
    """D_k = S_kᵀ U_k + H̃_k (eq. 49; H̃_k the optional reflected inertia) and D_k⁻¹,
    row-major, into ``Dinv``. False when D_k is not positive definite."""
    if ny == 0:
        return True
    arm0 = C[k, C_ARM]
    if ny <= 6:
        D = tmp[2]
        for j1 in range(ny):
            for j2 in range(j1 + 1):
                acc = 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc += Sk[j1 * nbk + a, r] * Uk[j2 * nbk + a, r]
                D[j1, j2] = acc
                D[j2, j1] = acc
        if arm0 >= 0:
            for j1 in range(ny):
                for j2 in range(ny):
                    D[j1, j2] += cf[arm0 + j1 * ny + j2]
        D3 = Dinv[:36].reshape((1, 6, 6))
        if not spd_inverse(D, D3, 0, ny, tmp):
            return False
        for j1 in range(ny):
            for j2 in range(ny):
                tmp[1, j1, j2] = D3[0, j1, j2]
        for j1 in range(ny):
            for j2 in range(ny):
                Dinv[j1 * ny + j2] = tmp[1, j1, j2]
        return True
    Dm = np.empty((ny, ny))  # clusters with more than six freedoms: rare, allocate
    for j1 in range(ny):
        for j2 in range(ny):
            acc = 0.0
            for a in range(nbk):
                for r in range(6):
                    acc += Sk[j1 * nbk + a, r] * Uk[j2 * nbk + a, r]
            Dm[j1, j2] = acc + (cf[arm0 + j1 * ny + j2] if arm0 >= 0 else 0.0)
    if np.linalg.eigvalsh(Dm)[0] <= 0.0:
        return False
    Di = np.linalg.inv(Dm)
    for j1 in range(ny):
        for j2 in range(ny):
            Dinv[j1 * ny + j2] = Di[j1, j2]
    return True


@njit(cache=True)
def articulated_cluster_pass(mi, ci, cf, cws, Ro, to, tmp, vec, tau, has_bias):
    """Backward pass of C-ABA (Algorithm 1, lines 25–35; seed 004 eq. 49, 55–56):

        U_k = I^A_k S_k,   D_k = S_kᵀ U_k,   u_k = τ_k − S_kᵀ p^A_k,
        I^a = I^A_k − U_k D_k⁻¹ U_kᵀ,   p^a = p^A_k + I^a c_k + U_k D_k⁻¹ u_k,
        I^A_λ(k) += ^λX*_k I^a ^kX_λ,   p^A_λ(k) += ^λX*_k p^a.

    ``tau`` of length 0 means τ = 0; without ``has_bias`` p^A, c_k and u_k are skipped
    (C-EFPA). Returns False when some D_k is not positive definite.
    """
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    has_tau = tau.shape[0] > 0
    for k in range(C.shape[0] - 1, -1, -1):
        nbk, ny, yv0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0]
        Sk = _cluster_block(cws, C, k, C_S, ny, nbk)
        Uk = _cluster_block(cws, C, k, C_U, ny, nbk)
        Wk = _cluster_block(cws, C, k, C_W, ny, nbk)
        ck = _cluster_block(cws, C, k, C_C, 1, nbk)
        IA = cws[C[k, C_IA]:C[k, C_IA] + nbk * nbk * 36].reshape((nbk, nbk, 6, 6))
        pA = _cluster_block(cws, C, k, C_PA, 1, nbk)
        Dinv = cws[C[k, C_DINV]:C[k, C_DINV] + max(ny * ny, 36)]
        uk = cws[C[k, C_UV]:C[k, C_UV] + ny]
        yk = cws[C[k, C_Y]:C[k, C_Y] + ny]
        for j in range(ny):
            for a in range(nbk):
                for r in range(6):
                    acc = 0.0
                    for b in range(nbk):
                        for c in range(6):
                            acc += IA[a, b, r, c] * Sk[j * nbk + b, c]
                    Uk[j * nbk + a, r] = acc
            if has_bias:
                acc = tau[yv0 + j] if has_tau else 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc -= Sk[j * nbk + a, r] * pA[a, r]
                uk[j] = acc
        if not _invert_D(C, k, cf, Sk, Uk, nbk, ny, Dinv, tmp):
            return False
        p = C[k, C_PARENT]
        if p < 0:
            continue
        nbp = C[p, C_NB]
        IAp = cws[C[p, C_IA]:C[p, C_IA] + nbp * nbp * 36].reshape((nbp, nbp, 6, 6))
        pAp = _cluster_block(cws, C, p, C_PA, 1, nbp)
        for j in range(ny):  # W = D⁻¹ Uᵀ (rows j), y = D⁻¹ u
            for a in range(nbk):
                for r in range(6):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j * ny + j2] * Uk[j2 * nbk + a, r]
                    Wk[j * nbk + a, r] = acc
            if has_bias:
                acc = 0.0
                for j2 in range(ny):
                    acc += Dinv[j * ny + j2] * uk[j2]
                yk[j] = acc
        M = tmp[3]
        for a in range(nbk):
            ia = cbodies[C[k, C_B0] + a]
            if has_bias:
                for r in range(6):
                    acc = pA[a, r]
                    for j in range(ny):
                        acc += Uk[j * nbk + a, r] * yk[j]
                    vec[0, r] = acc
            for b in range(nbk):
                ib = cbodies[C[k, C_B0] + b]
                for r in range(6):
                    for c in range(6):
                        acc = IA[a, b, r, c]
                        for j in range(ny):
                            acc -= Uk[j * nbk + a, r] * Wk[j * nbk + b, c]
                        M[r, c] = acc
                if has_bias:
                    for r in range(6):
                        acc = 0.0
                        for c in range(6):
                            acc += M[r, c] * ck[b, c]
                        vec[0, r] += acc
                _project_block(B, Ro, to, ia, ib, M, IAp, tmp)
            if has_bias:
                add_force_to_parent(Ro, to, ia, vec, 0, pAp, B[ia, B_OUTLOCAL])
    return True


@njit(cache=True)
def cluster_acceleration_pass(mi, mf, ci, cws, ws, nv, Ro, to, gravity, ydd, solve):
    """Forward pass over clusters (seed 004 eq. 33; Algorithm 1 lines 38–43):

        a' = ^kX_λ(k) a_λ(k) + c_k,   ÿ_k = D_k⁻¹(u_k − U_kᵀ a')  (when ``solve``),
        a_k = a' + S_k ÿ_k,

    with a_0 = −a_g. Body accelerations go to the workspace's A; with ``solve`` False the
    given ÿ is used (C-RNEA).
    """
    nb = mi.shape[0]
    g = model_views(mf, nb)[7]
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv_t, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for k in range(C.shape[0]):
        nbk, ny, yv0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0]
        Sk = _cluster_block(cws, C, k, C_S, ny, nbk)
        ck = _cluster_block(cws, C, k, C_C, 1, nbk)
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            o = B[i, B_OUT]
            if o >= 0:
                motion_to_child(Ro, to, i, A, o, A, i)
            elif gravity:
                gravity_to_child(Ro, to, i, g, A, i)
            else:
                for e in range(6):
                    A[i, e] = 0.0
            for e in range(6):
                A[i, e] += ck[a, e]
        if solve:
            Uk = _cluster_block(cws, C, k, C_U, ny, nbk)
            Dinv = cws[C[k, C_DINV]:C[k, C_DINV] + max(ny * ny, 36)]
            uk = cws[C[k, C_UV]:C[k, C_UV] + ny]
            yk = cws[C[k, C_Y]:C[k, C_Y] + ny]
            for j in range(ny):
                acc = uk[j]
                for a in range(nbk):
                    i = cbodies[C[k, C_B0] + a]
                    for e in range(6):
                        acc -= Uk[j * nbk + a, e] * A[i, e]
                yk[j] = acc
            for j in range(ny):
                acc = 0.0
                for j2 in range(ny):
                    acc += Dinv[j * ny + j2] * yk[j2]
                ydd[yv0 + j] = acc
        for a in range(nbk):
            i = cbodies[C[k, C_B0] + a]
            for j in range(ny):
                x = ydd[yv0 + j]
                for e in range(6):
                    A[i, e] += Sk[j * nbk + a, e] * x


# --------------------------------------------------------------------------- kernels
@njit(cache=True)
def _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, maxblock, with_velocity, with_bias):
    """Spanning state, joint placements, body velocities, output poses, S_k (and c_k)."""
    nb = mi.shape[0]
    q, qd, qdd, Ro, to, tmp, vec, F1, F2 = cluster_workspace_views(cws, nq, nv, nb, maxblock)
    spanning_state(mi, ci, cf, y, yd, q, qd, with_velocity)
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    if with_velocity:
        R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
        body_velocities(mi, S, qd, R, t, V, Cor)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    output_poses(mi, ci, R, t, Ro, to)
    cluster_subspaces(mi, ci, cf, ws, nv, cws, with_bias)
    return val.OK


@njit(cache=True)
def cluster_aba_kernel(mi, mf, ci, cf, y, yd, tau, fext, ws, cws, nq, nv, maxblock, gravity, ydd):
    """C-ABA (seed 004 Algorithm 1): ÿ from (y, ẏ, τ_ind)."""
    if nonfinite(y):
        return val.BAD_FIRST
    if nonfinite(yd):
        return val.BAD_SECOND
    if nonfinite(tau):
        return val.BAD_THIRD
    if fext is not None:
        for i in range(fext.shape[0]):
            if nonfinite(fext[i]):
                return val.BAD_FEXT
    st = _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, maxblock, True, True)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    q, qd, qdd, Ro, to, tmp, vec, F1, F2 = cluster_workspace_views(cws, nq, nv, nb, maxblock)
    init_cluster_inertias(mi, mf, ci, ws, nv, cws, True, fext)
    if not articulated_cluster_pass(mi, ci, cf, cws, Ro, to, tmp, vec, tau, True):
        return val.SINGULAR
    cluster_acceleration_pass(mi, mf, ci, cws, ws, nv, Ro, to, gravity, ydd, True)
    return val.OK


@njit(cache=True)
def cluster_rnea_kernel(mi, mf, ci, cf, y, yd, ydd, fext, ws, cws, nq, nv, maxblock, gravity, tau):
    """C-RNEA (seed 004 §VI): forward pass eq. 33–34, backward pass eq. 35, τ_k = S_kᵀ f^J_k
    (eq. 31)."""
    if nonfinite(y):
        return val.BAD_FIRST
    if nonfinite(yd):
        return val.BAD_SECOND
    if nonfinite(ydd):
        return val.BAD_THIRD
    st = _positions_pass(mi, mf, ci, cf, y, yd, ws, cws, nq, nv, maxblock, True, True)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    q, qd, qdd, Ro, to, tmp, vec, F1, F2 = cluster_workspace_views(cws, nq, nv, nb, maxblock)
    cluster_acceleration_pass(mi, mf, ci, cws, ws, nv, Ro, to, gravity, ydd, False)
    R, t, Rw, pw, Rj, pj, S, V, A, F, Cor, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
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
        nbk, ny, yv0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0]
        Sk = _cluster_block(cws, C, k, C_S, ny, nbk)
        for j in range(ny):
            acc = 0.0
            for a in range(nbk):
                i = cbodies[C[k, C_B0] + a]
                for e in range(6):
                    acc += Sk[j * nbk + a, e] * F[i, e]
            tau[yv0 + j] = acc
    return val.OK


@njit(cache=True)
def cluster_mass_matrix_kernel(mi, mf, ci, cf, y, ws, cws, nq, nv, maxblock, H):
    """Cluster mass matrix H = GᵀMG by composite cluster inertias: I^C_k = I_k +
    Σ ^kX*_l I^C_l ^lX_k, H_kk = S_kᵀ I^C_k S_k, and F = I^C_k S_k carried to the ancestor
    clusters (H_jk = S_jᵀ ^jX*_k F), seed 002 Lemma 7–9 applied to the aggregated tree."""
    st = _positions_pass(mi, mf, ci, cf, y, y, ws, cws, nq, nv, maxblock, False, False)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    q, qd, qdd, Ro, to, tmp, vec, F1, F2 = cluster_workspace_views(cws, nq, nv, nb, maxblock)
    init_cluster_inertias(mi, mf, ci, ws, nv, cws, False, None)
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    for k in range(C.shape[0] - 1, -1, -1):
        p = C[k, C_PARENT]
        if p < 0:
            continue
        nbk, nbp = C[k, C_NB], C[p, C_NB]
        IC = cws[C[k, C_IA]:C[k, C_IA] + nbk * nbk * 36].reshape((nbk, nbk, 6, 6))
        ICp = cws[C[p, C_IA]:C[p, C_IA] + nbp * nbp * 36].reshape((nbp, nbp, 6, 6))
        for a in range(nbk):
            for b in range(nbk):
                M = tmp[3]
                for r in range(6):
                    for c in range(6):
                        M[r, c] = IC[a, b, r, c]
                _project_block(B, Ro, to, cbodies[C[k, C_B0] + a], cbodies[C[k, C_B0] + b], M, ICp, tmp)
    H[:] = 0.0
    for k in range(C.shape[0]):
        nbk, ny, yv0 = C[k, C_NB], C[k, C_NYV], C[k, C_YV0]
        Sk = _cluster_block(cws, C, k, C_S, ny, nbk)
        Fk = _cluster_block(cws, C, k, C_U, ny, nbk)
        IC = cws[C[k, C_IA]:C[k, C_IA] + nbk * nbk * 36].reshape((nbk, nbk, 6, 6))
        for j in range(ny):
            for a in range(nbk):
                for r in range(6):
                    acc = 0.0
                    for b in range(nbk):
                        for c in range(6):
                            acc += IC[a, b, r, c] * Sk[j * nbk + b, c]
                    Fk[j * nbk + a, r] = acc
        for j1 in range(ny):
            for j2 in range(ny):
                acc = 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc += Sk[j1 * nbk + a, r] * Fk[j2 * nbk + a, r]
                H[yv0 + j1, yv0 + j2] = acc
        cur, nbc = k, nbk
        Fc = Fk
        use_first = True
        while C[cur, C_PARENT] >= 0:
            p = C[cur, C_PARENT]
            nbp, nyp, yvp = C[p, C_NB], C[p, C_NYV], C[p, C_YV0]
            buf = F1 if use_first else F2
            Fp = buf[:ny * nbp * 6].reshape((ny * nbp, 6))
            Fp[:] = 0.0
            for j in range(ny):
                for a in range(nbc):
                    i = cbodies[C[cur, C_B0] + a]
                    add_force_to_parent(Ro, to, i, Fc, j * nbc + a, Fp, j * nbp + B[i, B_OUTLOCAL])
            Sp = _cluster_block(cws, C, p, C_S, nyp, nbp)
            for jp in range(nyp):
                for j in range(ny):
                    acc = 0.0
                    for b in range(nbp):
                        for r in range(6):
                            acc += Sp[jp * nbp + b, r] * Fp[j * nbp + b, r]
                    H[yvp + jp, yv0 + j] = acc
                    H[yv0 + j, yvp + jp] = acc
            cur, nbc, Fc = p, nbp, Fp
            use_first = not use_first
    return val.OK


@njit(cache=True)
def cluster_efpa_kernel(mi, mf, ci, cf, y, fbody, fR, fp, ws, cws, nq, nv, maxblock, Z, Omega):
    """C-EFPA (seed 004 §VIII): inverse operational-space inertia Ω of the frames.

    Backward pass as C-ABA without velocities or forces; the cluster force propagators
    χ^e_λ(k) = χ^e_k L_k ^kX_λ(k), L_kᵀ = 1 − U_k D_k⁻¹ S_kᵀ (eq. 62), started at the
    frame's body (eq. 57–58); then Ω_e1e2 = Σ_k (χ^e1_k S_k) D_k⁻¹ (χ^e2_k S_k)ᵀ over the
    clusters supporting both frames — the closed form of the forward recursion eq. 63–67
    (the EFPA of [13] with clusters for bodies).
    """
    st = _positions_pass(mi, mf, ci, cf, y, y, ws, cws, nq, nv, maxblock, False, False)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    q, qd, qdd, Ro, to, tmp, vec, F1, F2 = cluster_workspace_views(cws, nq, nv, nb, maxblock)
    init_cluster_inertias(mi, mf, ci, ws, nv, cws, False, None)
    empty = np.zeros(0)
    if not articulated_cluster_pass(mi, ci, cf, cws, Ro, to, tmp, vec, empty, False):
        return val.SINGULAR
    C, B, rows_v, rows_q, cbodies = cluster_views(ci)
    m = fbody.shape[0]
    Z[:] = 0.0
    for e in range(m):
        b = fbody[e]
        k = B[b, B_CLUSTER]
        nbc = C[k, C_NB]
        W = F1[:6 * nbc * 6].reshape((6 * nbc, 6))  # W[d·n + a]: body a's force for a unit force d at the frame
        W[:] = 0.0
        for d in range(6):
            for r in range(6):
                vec[0, r] = 0.0
            vec[0, d] = 1.0
            add_force_to_parent(fR, fp, e, vec, 0, W, d * nbc + B[b, B_LOCAL])
        use_second = True
        while True:
            ny, yv0 = C[k, C_NYV], C[k, C_YV0]
            Sk = _cluster_block(cws, C, k, C_S, ny, nbc)
            for j in range(ny):
                for d in range(6):
                    acc = 0.0
                    for a in range(nbc):
                        for r in range(6):
                            acc += Sk[j * nbc + a, r] * W[d * nbc + a, r]
                    Z[e, yv0 + j, d] = acc
            p = C[k, C_PARENT]
            if p < 0:
                break
            Uk = _cluster_block(cws, C, k, C_U, ny, nbc)
            Dinv = cws[C[k, C_DINV]:C[k, C_DINV] + max(ny * ny, 36)]
            yk = cws[C[k, C_Y]:C[k, C_Y] + ny]
            for d in range(6):  # W ← L_kᵀ W = W − U D⁻¹ (Sᵀ W)
                for j in range(ny):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j * ny + j2] * Z[e, yv0 + j2, d]
                    yk[j] = acc
                for a in range(nbc):
                    for r in range(6):
                        acc = 0.0
                        for j in range(ny):
                            acc += Uk[j * nbc + a, r] * yk[j]
                        W[d * nbc + a, r] -= acc
            nbp = C[p, C_NB]
            Wp = (F2 if use_second else F1)[:6 * nbp * 6].reshape((6 * nbp, 6))
            Wp[:] = 0.0
            for d in range(6):
                for a in range(nbc):
                    i = cbodies[C[k, C_B0] + a]
                    add_force_to_parent(Ro, to, i, W, d * nbc + a, Wp, d * nbp + B[i, B_OUTLOCAL])
            W = Wp
            k, nbc = p, nbp
            use_second = not use_second
    for e1 in range(m):
        for e2 in range(e1, m):
            k = B[fbody[e1], B_CLUSTER]
            for d1 in range(6):
                for d2 in range(6):
                    Omega[6 * e1 + d1, 6 * e2 + d2] = 0.0
            while k >= 0:
                ny, yv0 = C[k, C_NYV], C[k, C_YV0]
                Dinv = cws[C[k, C_DINV]:C[k, C_DINV] + max(ny * ny, 36)]
                for d1 in range(6):
                    for d2 in range(6):
                        acc = 0.0
                        for j1 in range(ny):
                            z1 = Z[e1, yv0 + j1, d1]
                            if z1 != 0.0:
                                for j2 in range(ny):
                                    acc += z1 * Dinv[j1 * ny + j2] * Z[e2, yv0 + j2, d2]
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
        self.ci, self.cf, size, self.maxblock = pack(tree, armature)
        self.cws = np.zeros(size)
        self.ws = Workspace(self.model)
        c = self.model.compiled
        self.nq, self.nv, self.nb = c.nq, c.nv, c.nb
        self.nonlinear = [cl for cl in tree.clusters if cl.joint.rows and not cl.joint.linear]
        self._g_offsets = {}
        ncl = len(tree.clusters)
        Cview = self.ci[3:3 + ncl * 22].reshape(ncl, 22)
        for cl in self.nonlinear:
            self._g_offsets[cl.index] = (Cview[cl.index, C_G], Cview[cl.index, C_GB])
        self.q = self.cws[:self.nq]
        self.qd = self.cws[self.nq:self.nq + self.nv]

    def prepare(self, y, yd, need_bias):
        """γ(y), G and g of the nonlinear clusters (solved in Python, written where the
        kernels read them)."""
        for cl in self.nonlinear:
            j = cl.joint
            j.solve_positions(y[cl.y_q], self.q)
            G = j.jacobian(self.q)
            og, ob = self._g_offsets[cl.index]
            self.cf[og:og + G.size] = G.ravel()
            if need_bias:
                self.qd[j.v_index] = G @ yd[cl.y_v]
                self.cf[ob:ob + j.n] = j.bias(self.q, self.qd)

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


def _aba(cw, y, yd, tau, f_ext, gravity, out):
    tree = cw.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    yd = val.vector(yd, tree.nyv, "yd", batch_ok=False)
    tau = val.vector(tau, tree.nyv, "tau_ind", batch_ok=False)
    f_ext = val.external_forces(f_ext, cw.nb, None)
    ydd = val.output(out, (tree.nyv,))
    if cw.nonlinear:
        cw.prepare(y, yd, True)
    st = cluster_aba_kernel(cw.model.compiled.mi, cw.model.compiled.mf, cw.ci, cw.cf, y, yd, tau, f_ext,
                            cw.ws.buffer, cw.cws, cw.nq, cw.nv, cw.maxblock, gravity, ydd)
    _raise(st, ("y", "yd", "tau_ind"))
    return ydd


def _rnea(cw, y, yd, ydd, f_ext, gravity, out):
    tree = cw.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    yd = val.vector(yd, tree.nyv, "yd", batch_ok=False)
    ydd = val.vector(ydd, tree.nyv, "ydd", batch_ok=False)
    f_ext = val.external_forces(f_ext, cw.nb, None)
    tau = val.output(out, (tree.nyv,))
    if cw.nonlinear:
        cw.prepare(y, yd, True)
    st = cluster_rnea_kernel(cw.model.compiled.mi, cw.model.compiled.mf, cw.ci, cw.cf, y, yd, ydd, f_ext,
                             cw.ws.buffer, cw.cws, cw.nq, cw.nv, cw.maxblock, gravity, tau)
    _raise(st, ("y", "yd", "ydd"))
    return tau


def _efpa(cw, y, frames):
    tree, model = cw.tree, cw.model
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    if isinstance(frames, (str, int, np.integer)):
        frames = [frames]
    fs = [model.frame(f) for f in frames]
    if not fs:
        raise ValueError("frames: expected at least one frame")
    for f in fs:
        if f.body < 0:
            raise ValueError(f"frames: frame {f.name!r} is fixed to the world; it has no operational-space inertia")
    fbody = np.array([f.body for f in fs], dtype=np.int64)
    fR = np.ascontiguousarray([f.rotation for f in fs], dtype=float)
    fp = np.ascontiguousarray([f.translation for f in fs], dtype=float)
    if cw.nonlinear:
        cw.prepare(y, np.zeros(tree.nyv), False)
    m = len(fs)
    Z = np.zeros((m, tree.nyv, 6))
    Om = np.empty((6 * m, 6 * m))
    st = cluster_efpa_kernel(model.compiled.mi, model.compiled.mf, cw.ci, cw.cf, y, fbody, fR, fp, cw.ws.buffer,
                             cw.cws, cw.nq, cw.nv, cw.maxblock, Z, Om)
    _raise(st, ("y",))
    return Om


def _mass_matrix(cw, y):
    tree = cw.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    if cw.nonlinear:
        cw.prepare(y, np.zeros(tree.nyv), False)
    H = np.empty((tree.nyv, tree.nyv))
    st = cluster_mass_matrix_kernel(cw.model.compiled.mi, cw.model.compiled.mf, cw.ci, cw.cf, y, cw.ws.buffer,
                                    cw.cws, cw.nq, cw.nv, cw.maxblock, H)
    _raise(st, ("y",))
    return H


def cluster_aba(model, y, yd, tau_ind, f_ext=None, *, gravity=True, out=None):
    """Constrained forward dynamics by the cluster-based articulated-body algorithm, C-ABA
    (seed 004 Algorithm 1): ÿ = (GᵀMG)⁻¹ (τ_ind − Gᵀ(C + M g)) in O(N) over clusters.

    Parameters
    ----------
    model : Model with loops, couplings or implicit constraints (see :func:`cluster_tree`).
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


class EmbeddingResult:
    """Result of :func:`embedding_forward_dynamics`.

    Attributes: ``qdd`` (nv,) spanning-tree accelerations G ÿ + g (consistent with the
    constraints); ``ydd`` (nyv,) independent accelerations; ``constraint_forces`` (nv,)
    the generalized constraint forces Kᵀλ on the spanning-tree joints, i.e. the joint
    forces the loops and transmissions exert: M q̈ + C − τ.
    """

    def __init__(self, qdd, ydd, constraint_forces):
        self.qdd = qdd
        self.ydd = ydd
        self.constraint_forces = constraint_forces


def embedding_forward_dynamics(model, q, v, tau, f_ext=None, *, gravity=True):
    """Closed-chain forward dynamics by constraint embedding (C-ABA on the cluster tree).

    Takes the spanning-tree state (q, v) — which must satisfy the constraints — and
    spanning-tree joint forces τ (nv,); the independent forces are τ_ind = Gᵀτ (virtual
    work, seed 004 §V-D). Returns an :class:`EmbeddingResult` with q̈ = G ÿ + g and the
    generalized constraint forces M q̈ + C − τ (from one RNEA pass).
    """
    from ..dynamics.rnea import rnea
    cw = _workspace(model)
    tree = cw.tree
    q = val.vector(q, model.nq, "q", batch_ok=False)
    v = val.vector(v, model.nv, "v", batch_ok=False)
    tau = val.vector(tau, model.nv, "tau", batch_ok=False)
    y, yd = tree.independent_state(q, v)
    G = tree.explicit_jacobian(q)
    ydd = _aba(cw, y, yd, G.T @ tau, f_ext, gravity, None)
    qdd = G @ ydd + tree.explicit_bias(q, v)
    forces = rnea(model, q, v, qdd, f_ext, gravity=gravity) - tau
    return EmbeddingResult(qdd, ydd, forces)
