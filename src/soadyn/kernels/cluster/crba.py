"""The mass matrix of the independent coordinates, H = GᵀMG, by composite cluster
inertias over the cluster tree ([Jain12, Lemma 7–9] applied to the aggregated tree;
[Chignoli23, §V]):

    I^C_k = I_k + Σ_{l: λ(l) = k} ^kX*_l I^C_l ^lX_k,    H_kk = S_kᵀ I^C_k S_k,

and F = I^C_k S_k carried to the ancestor clusters j: H_jk = S_jᵀ ^jX*_k F.
"""
from __future__ import annotations


from ...core.jit import kernel
from ...core.layout import model_tables
from ...core.status import BAD_SHAPE, OK
from ..kinematics import no_forces
from ..primitives import add_force_to_parent
from .inertia import init_cluster_inertias, project_cluster_inertia
from .kinematics import cluster_configuration_status, positions_pass
from .layout import (articulated_inertia, cluster_bodies, cluster_tables, cluster_workspace, force_columns,
                     inertia_subspace, motion_subspace)


@kernel
def cluster_mass_matrix_kernel(mi, mf, ws, y, ci, cf, cws, H):
    """H = GᵀMG (n_y, n_y) into ``H`` (the nonlinear clusters prepared in the workspace);
    returns a status."""
    st = cluster_configuration_status(ci, y, H.shape[0])
    if st != OK:
        return st
    if H.shape[1] != H.shape[0]:
        return BAD_SHAPE
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, y, False, False, False, False)
    if st != OK:
        return st
    init_cluster_inertias(mi, mf, ws, ci, cws, False, no_forces(ws), False)
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n - 1, -1, -1):  # composite cluster inertias
        if c.parent[k] >= 0:
            project_cluster_inertia(c, w, k, m.axis_code, m.rotated)
    H[:] = 0.0
    for k in range(c.n):
        ny, y0 = c.n_y[k], c.yv_start[k]
        bodies = cluster_bodies(c, k)
        nbk = bodies.shape[0]
        S, F, IC = motion_subspace(c, w, k), inertia_subspace(c, w, k), articulated_inertia(c, w, k)
        for j in range(ny):  # F = I^C_k S_k
            for a in range(nbk):
                for r in range(6):
                    acc = 0.0
                    for b in range(nbk):
                        for e in range(6):
                            acc += IC[a, b, r, e] * S[j, b, e]
                    F[j, a, r] = acc
        for j1 in range(ny):  # H_kk = S_kᵀ F
            for j2 in range(ny):
                acc = 0.0
                for a in range(nbk):
                    for r in range(6):
                        acc += S[j1, a, r] * F[j2, a, r]
                H[y0 + j1, y0 + j2] = acc
        cur, area = k, 0
        while c.parent[cur] >= 0:  # H_jk = S_jᵀ ^jX*_k F for the ancestors j
            p = c.parent[cur]
            nbp = c.n_bodies[p]
            Fp = force_columns(w, area, ny, nbp)
            Fp[:] = 0.0
            cur_bodies = cluster_bodies(c, cur)
            for j in range(ny):
                for a in range(cur_bodies.shape[0]):
                    i = cur_bodies[a]
                    add_force_to_parent(w.Ro, w.to, i, F[j], a, Fp[j], c.output_local[i])
            Sp = motion_subspace(c, w, p)
            for jp in range(c.n_y[p]):
                for j in range(ny):
                    acc = 0.0
                    for b in range(nbp):
                        for r in range(6):
                            acc += Sp[jp, b, r] * Fp[j, b, r]
                    H[c.yv_start[p] + jp, y0 + j] = acc
                    H[y0 + j, c.yv_start[p] + jp] = acc
            cur, F, area = p, Fp, 1 - area
    return OK
