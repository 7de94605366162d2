"""Flat array form of a cluster tree for the compiled cluster algorithms.

Like the model (``dynamics/_layout.py``), a cluster tree compiles to one integer array
``ci`` and one float array ``cf`` (the constraint maps G, g and the optional reflected
inertias), and each call gets a float workspace ``cws``; kernels carve named views with
:func:`cluster_views` and :func:`cluster_workspace_views`.

Per cluster k (row of ``C``): parent cluster, bodies (``cbodies[B0:B0+NB]``, ascending),
independent coordinate ranges in y and ẏ, the cluster's spanning velocity rows
(``rows_v``/``rows_q``: model v and q indices, body order), the constraint kind and the
offsets of its blocks in ``cf`` and ``cws``. Per body i (row of ``B``): its cluster, its
position in the cluster, its output body Λ(i) (seed 004 §IV-B) and that body's position
in its own cluster, its parent's position when the parent is in the same cluster, and
the first row of its joint velocities in the cluster's spanning vector.

Cluster quantities in ``cws`` (seed 004 §V): S_k as (ny, nb, 6) — column j of the
cluster motion subspace is the stack of nb body motion vectors; c_k = Ṡ_k ẏ_k (nb, 6);
the articulated-cluster inertia I^A_k as (nb, nb, 6, 6) blocks and bias p^A_k (nb, 6);
U_k = I^A_k S_k (ny, nb, 6), a second (ny, nb, 6) buffer, D_k⁻¹ (ny, ny), u_k (ny,) and
a (ny,) scratch vector.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# cluster rows
(C_PARENT, C_B0, C_NB, C_YQ0, C_NYQ, C_YV0, C_NYV, C_R0, C_NC, C_KIND, C_G, C_GB, C_ARM,
 C_S, C_C, C_IA, C_PA, C_U, C_W, C_DINV, C_UV, C_Y) = range(22)
N_CLUSTER_COLUMNS = 22
# body rows
B_CLUSTER, B_LOCAL, B_OUT, B_OUTLOCAL, B_PLOCAL, B_ROW = range(6)
N_BODY_COLUMNS = 6
# constraint kinds
RIGID, LINEAR, NONLINEAR = 0, 1, 2


@njit(inline="always", cache=True)
def cluster_views(ci):
    """``(C (ncl, 22), B (nb, 6), rows_v, rows_q, cbodies)`` views of the integer array."""
    ncl, nb, nrows = ci[0], ci[1], ci[2]
    o = 3
    C = ci[o:o + ncl * N_CLUSTER_COLUMNS].reshape((ncl, N_CLUSTER_COLUMNS)); o += ncl * N_CLUSTER_COLUMNS
    B = ci[o:o + nb * N_BODY_COLUMNS].reshape((nb, N_BODY_COLUMNS)); o += nb * N_BODY_COLUMNS
    rows_v = ci[o:o + nrows]; o += nrows
    rows_q = ci[o:o + nrows]; o += nrows
    cbodies = ci[o:o + nb]
    return C, B, rows_v, rows_q, cbodies


def global_workspace_size(nq, nv, nb, maxblock):
    return nq + nv + nv + nb * 12 + 4 * 36 + 8 * 6 + 2 * maxblock


@njit(inline="always", cache=True)
def cluster_workspace_views(cws, nq, nv, nb, maxblock):
    """``(q, qd, qdd, Ro, to, tmp, vec, F1, F2)``: spanning state; the pose (Ro, to)[i] of
    body i in its output body Λ(i); (4, 6, 6) and (8, 6) scratch; two scratch blocks of
    ``maxblock`` floats."""
    o = 0
    q = cws[o:o + nq]; o += nq
    qd = cws[o:o + nv]; o += nv
    qdd = cws[o:o + nv]; o += nv
    Ro = cws[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    to = cws[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    tmp = cws[o:o + 144].reshape((4, 6, 6)); o += 144
    vec = cws[o:o + 48].reshape((8, 6)); o += 48
    F1 = cws[o:o + maxblock]; o += maxblock
    F2 = cws[o:o + maxblock]
    return q, qd, qdd, Ro, to, tmp, vec, F1, F2


def pack(tree, armature=None):
    """``(ci, cf, cws_size, maxblock)`` for a :class:`~soadyn.closed.clusters.ClusterTree`.

    ``armature`` maps cluster index → (ny, ny) matrix added to D_k (reflected inertia).
    """
    model = tree.model
    nb, nq, nv = model.nbodies, model.nq, model.nv
    ncl = len(tree.clusters)
    C = np.zeros((ncl, N_CLUSTER_COLUMNS), dtype=np.int64)
    B = np.zeros((nb, N_BODY_COLUMNS), dtype=np.int64)
    rows_v, rows_q, cbodies = [], [], []
    cf = []
    local = {}
    for c in tree.clusters:
        for a, i in enumerate(c.bodies):
            local[i] = a
    maxblock = 0
    for c in tree.clusters:
        j = c.joint
        nbk, ny = len(c.bodies), j.ny
        maxblock = max(maxblock, ny * nb * 6, 6 * 6 * nb)
        C[c.index, C_PARENT] = c.parent
        C[c.index, C_B0] = len(cbodies)
        C[c.index, C_NB] = nbk
        C[c.index, C_YQ0], C[c.index, C_NYQ] = c.y_q.start, c.y_q.stop - c.y_q.start
        C[c.index, C_YV0], C[c.index, C_NYV] = c.y_v.start, ny
        C[c.index, C_R0] = len(rows_v)
        C[c.index, C_NC] = j.n
        C[c.index, C_KIND] = RIGID if not j.rows else (LINEAR if j.linear else NONLINEAR)
        cbodies.extend(c.bodies)
        rows_v.extend(j.v_index.tolist())
        rows_q.extend(j.q_index.tolist() if j.rows else [0] * j.n)
        row = 0
        for a, i in enumerate(c.bodies):
            p = model.bodies[i].parent
            o = c.output_bodies[a]
            B[i] = (c.index, a, o, local[o] if o >= 0 else -1,
                    local[p] if (p >= 0 and tree.cluster_of[p] == c.index) else -1, row)
            row += model.bodies[i].joint.nv
        G = j.G0 if j.G0 is not None else np.zeros((j.n, ny))
        C[c.index, C_G] = len(cf)
        cf.extend(np.asarray(G, dtype=float).ravel().tolist())
        C[c.index, C_GB] = len(cf)
        cf.extend([0.0] * j.n)
        if armature is not None and c.index in armature:
            C[c.index, C_ARM] = len(cf)
            cf.extend(np.asarray(armature[c.index], dtype=float).reshape(ny, ny).ravel().tolist())
        else:
            C[c.index, C_ARM] = -1
    o = global_workspace_size(nq, nv, nb, maxblock)
    for c in tree.clusters:
        nbk, ny = len(c.bodies), c.joint.ny
        for col, size in ((C_S, ny * nbk * 6), (C_C, nbk * 6), (C_IA, nbk * nbk * 36), (C_PA, nbk * 6),
                          (C_U, ny * nbk * 6), (C_W, ny * nbk * 6), (C_DINV, max(ny * ny, 36)), (C_UV, ny),
                          (C_Y, ny)):
            C[c.index, col] = o
            o += size
    ci = np.concatenate([np.array([ncl, nb, len(rows_v)], dtype=np.int64), C.ravel(), B.ravel(),
                         np.array(rows_v, dtype=np.int64), np.array(rows_q, dtype=np.int64),
                         np.array(cbodies, dtype=np.int64)])
    return ci, np.array(cf, dtype=float), o, maxblock
