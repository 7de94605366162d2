"""C-EFPA: the inverse operational-space inertia Ω = J (GᵀMG)⁻¹ Jᵀ of a set of frames by
the cluster-based extended force propagator algorithm [Chignoli23, §VIII].

The backward pass of C-ABA without velocities or forces; then the cluster force
propagators χ^e_λ(k) = χ^e_k L_k ^kX_λ(k), L_kᵀ = 1 − U_k D_k⁻¹ S_kᵀ (eq. 62), started at
the frame's body (eq. 57–58); and Ω_e1e2 = Σ_k (χ^e1_k S_k) D_k⁻¹ (χ^e2_k S_k)ᵀ over the
clusters supporting both frames — the closed form of the forward recursion eq. 63–67 (the
EFPA with clusters for bodies).
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.layout import model_tables
from ...core.status import BAD_SHAPE, OK, SINGULAR
from ..kinematics import absent, no_forces
from ..primitives import add_force_to_parent
from .aba import articulated_cluster_pass
from .inertia import init_cluster_inertias
from .kinematics import cluster_configuration_status, positions_pass
from .layout import (cluster_bodies, cluster_scratch, cluster_tables, cluster_workspace, force_columns,
                     inertia_subspace, inverse_joint_inertia, motion_subspace, split_plain_tables)


@kernel
def cluster_efpa_kernel(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega):
    """Ω (6m, 6m) of the m frames at poses (fR, fp)[e] in bodies ``fbody[e]``; ``Z``
    (2m, n_y, 6) scratch for the projected propagators χ^e_k S_k (rows e) and
    D⁻¹ (χ^e_k S_k)ᵀ (rows m + e), so that each block of Ω costs 36 n_y products per
    cluster (the nonlinear clusters prepared in the workspace). Returns a status."""
    return cluster_efpa_linked(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega)


# the algorithm without a Python entry, for the kernels that run it: an entry called from
# compiled code is optimized and turned into machine code on its own as well (its whole
# closure), a helper is linked into its callers only (soadyn.numba_patches.link_helpers_only;
# measured on C-ABA, :func:`~.aba.cluster_aba_linked`)
@helper
def cluster_efpa_linked(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega):
    """:func:`cluster_efpa_kernel`."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    st = cluster_configuration_status(ci, y, c.nyv)
    if st != OK:
        return st
    nf = fbody.shape[0]
    if (Z.shape[0] != 2 * nf or Z.shape[1] != c.nyv or Omega.shape[0] != 6 * nf or Omega.shape[1] != 6 * nf
            or fR.shape[0] != nf or fp.shape[0] != nf):
        return BAD_SHAPE
    for e in range(nf):
        if not 0 <= fbody[e] < m.nb:
            return BAD_SHAPE
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, y, False, False, False, False)
    if st != OK:
        return st
    init_cluster_inertias(mi, mf, ws, ci, cws, False, no_forces(ws), False)
    if not articulated_cluster_pass(mi, mf, ws, ci, cf, cws, absent(ws), False, False):
        return SINGULAR
    efpa_propagation(mi, mf, ci, cws, fbody, fR, fp, Z, Omega, False)
    return OK


@helper
def efpa_propagation(mi, mf, ci, cws, fbody, fR, fp, Z, Omega, rotors_apart):
    """Ω of the frames from the articulated quantities in the cluster workspace (S_k, U_k,
    D_k⁻¹ and the output poses of a backward pass at the frames' configuration: the
    propagators and Ω of :func:`cluster_efpa_linked`). With ``rotors_apart`` the backward
    pass was C-ABA's with the pair rotors from their constants (:func:`~.aba.pair_step`:
    u_r in the frame of the body Λ the pair sits on, the rotor's slot of S_k and its pose
    in Λ not formed); no frame may then be on a pair rotor. A pair rotor's force column,
    zero until L_kᵀ gives it −u_r D⁻¹(·), is then in Λ's frame and goes to Λ as it is,
    as the pair step sends the rotor's bias force."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    nf = fbody.shape[0]
    w = cluster_workspace(cws, c, m.nq, m.nv)
    Z[:] = 0.0
    for e in range(nf):
        b = fbody[e]
        k = c.cluster_of[b]
        area = 0
        W = force_columns(w, area, 6, c.n_bodies[k])  # W[d, a]: body a's force for a unit force d
        W[:] = 0.0
        for d in range(6):
            w.vec[0, :] = 0.0
            w.vec[0, d] = 1.0
            add_force_to_parent(fR, fp, e, w.vec, 0, W[d], c.local_index[b])
        while True:
            ny, y0 = c.n_y[k], c.yv_start[k]
            S = motion_subspace(c, w, k)
            bodies = cluster_bodies(c, k)
            skip = c.rotor_local[k] if rotors_apart and c.rotor_offset[k] >= 0 else -1
            for j in range(ny):  # χ^e_k S_k (a pair rotor's column is zero here: its slot of S_k is skipped)
                for d in range(6):
                    acc = 0.0
                    for a in range(bodies.shape[0]):
                        if a == skip:
                            continue
                        for r in range(6):
                            acc += S[j, a, r] * W[d, a, r]
                    Z[e, y0 + j, d] = acc
            p = c.parent[k]
            if p < 0:
                break
            U, Dinv = inertia_subspace(c, w, k), inverse_joint_inertia(c, w, k)
            t, yk = cluster_scratch(c, w, k)
            for d in range(6):  # W ← L_kᵀ W = W − U D⁻¹ (Sᵀ W)
                for j in range(ny):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j, j2] * Z[e, y0 + j2, d]
                    t[j] = acc
                for a in range(bodies.shape[0]):
                    for r in range(6):
                        acc = 0.0
                        for j in range(ny):
                            acc += U[j, a, r] * t[j]
                        W[d, a, r] -= acc
            area = 1 - area
            Wp = force_columns(w, area, 6, c.n_bodies[p])  # carried to the parent cluster
            Wp[:] = 0.0
            for d in range(6):
                for a in range(bodies.shape[0]):
                    i = bodies[a]
                    if a == skip:  # in Λ's frame already (the docstring)
                        lo = c.output_local[i]
                        for r in range(6):
                            Wp[d, lo, r] += W[d, a, r]
                    else:
                        add_force_to_parent(w.Ro, w.to, i, W[d], a, Wp[d], c.output_local[i])
            W, k = Wp, p
    for e in range(nf):  # D_k⁻¹ (χ^e_k S_k)ᵀ, every cluster (zero off the frame's path)
        for k in range(c.n):
            ny, y0 = c.n_y[k], c.yv_start[k]
            Dinv = inverse_joint_inertia(c, w, k)
            for j1 in range(ny):
                for d in range(6):
                    acc = 0.0
                    for j2 in range(ny):
                        acc += Dinv[j1, j2] * Z[e, y0 + j2, d]
                    Z[nf + e, y0 + j1, d] = acc
    for e1 in range(nf):
        for e2 in range(e1, nf):
            B = Omega[6 * e1:6 * e1 + 6, 6 * e2:6 * e2 + 6]
            B[:] = 0.0
            k = c.cluster_of[fbody[e1]]
            while k >= 0:  # clusters not supporting e2 have Z[e2] = 0 there
                ny, y0 = c.n_y[k], c.yv_start[k]
                for j in range(ny):
                    for d1 in range(6):
                        z1 = Z[e1, y0 + j, d1]
                        if z1 != 0.0:
                            for d2 in range(6):
                                B[d1, d2] += z1 * Z[nf + e2, y0 + j, d2]
                k = c.parent[k]
            for d1 in range(6):
                for d2 in range(6):
                    Omega[6 * e2 + d2, 6 * e1 + d1] = B[d1, d2]


@kernel
def cluster_efpa_plain_kernel(tables, y, fbody, fR, fp, Z, Omega):
    """:func:`cluster_efpa_kernel` for the plain call, with all its tables in one array
    (:func:`~.layout.pack_plain_tables`). Returns a status."""
    ok, mi, mf, ws, ci, cf, cws, _ = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    return cluster_efpa_linked(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega)
