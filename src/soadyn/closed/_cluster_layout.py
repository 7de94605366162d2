"""Flat array form of a cluster tree for the compiled cluster algorithms.

Like the model (``dynamics/_layout.py``), a cluster tree compiles to one integer array
``ci`` and one float array ``cf`` (the constraint maps G, g and the optional reflected
inertias H̃), and each call gets a float workspace ``cws``; kernels carve named views
once per call with :func:`cluster_views` and :func:`cluster_workspace_views` and then
address cluster data by row offsets (creating array views per cluster would cost more
than the arithmetic of small clusters).

Per cluster k (row of ``C``): parent cluster, bodies (``cbodies[B0:B0+NB]``, ascending),
independent coordinate ranges in y and ẏ, the cluster's spanning velocity rows
(``rows_v``/``rows_q``: model v and q indices, body order), the constraint kind, the
offsets of G (nc × ny, row-major), g and H̃ (ny × ny) in ``cf``, its workspace
offsets, and whether its inertia blocks couple different bodies (only when a child
cluster hangs from several of its bodies; otherwise I^A_k stays block diagonal). Per body i (row of ``B``): its cluster, its position in the cluster, its
output body Λ(i) (seed 004 §IV-B) and that body's position in its own cluster, its
parent's position when the parent is in the same cluster, and the first row of its
joint velocities in the cluster's spanning vector.

Workspace (seed 004 §V): ``R6`` rows of 6 — S_k (row j·n + a: body a's motion for
column j of the cluster motion subspace), c_k = Ṡ_k ẏ_k (n rows), p^A_k (n rows),
U_k = I^A_k S_k (ny·n rows), and two scratch areas F1, F2 of ``maxrows`` rows; ``R36``
6×6 blocks — the articulated-cluster inertia I^A_k as n × n blocks (a·n + b); ``RS``
scalars — D_k⁻¹ (ny × ny), u_k, ÿ-sized scratch y_k and t_k.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# cluster rows
(C_PARENT, C_B0, C_NB, C_YQ0, C_NYQ, C_YV0, C_NYV, C_R0, C_NC, C_KIND, C_G, C_GB, C_ARM,
 C_S, C_C, C_PA, C_U, C_IA, C_DINV, C_UV, C_Y, C_T, C_COUPLED) = range(23)
N_CLUSTER_COLUMNS = 23
# body rows
B_CLUSTER, B_LOCAL, B_OUT, B_OUTLOCAL, B_PLOCAL, B_ROW = range(6)
N_BODY_COLUMNS = 6
# constraint kinds
RIGID, LINEAR, NONLINEAR = 0, 1, 2
# header of ci: ncl, nb, nrows, n6 (rows of R6), n36 (blocks of R36), ns (scalars of RS), maxrows
N_HEADER = 7


@njit(inline="always", cache=True)
def cluster_views(ci):
    """``(C (ncl, 23), B (nb, 6), rows_v, rows_q, cbodies)`` views of the integer array."""
    ncl, nb, nrows = ci[0], ci[1], ci[2]
    o = N_HEADER
    C = ci[o:o + ncl * N_CLUSTER_COLUMNS].reshape((ncl, N_CLUSTER_COLUMNS)); o += ncl * N_CLUSTER_COLUMNS
    B = ci[o:o + nb * N_BODY_COLUMNS].reshape((nb, N_BODY_COLUMNS)); o += nb * N_BODY_COLUMNS
    rows_v = ci[o:o + nrows]; o += nrows
    rows_q = ci[o:o + nrows]; o += nrows
    cbodies = ci[o:o + nb]
    return C, B, rows_v, rows_q, cbodies


def workspace_size(nq, nv, nb, n6, n36, ns):
    return nq + 2 * nv + nb * 12 + 4 * 36 + 8 * 6 + n6 * 6 + n36 * 36 + ns


@njit(inline="always", cache=True)
def cluster_workspace_views(cws, ci, nq, nv):
    """``(q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS)``: spanning state; the pose (Ro, to)[i]
    of body i in its output body Λ(i); (4, 6, 6) and (8, 6) scratch; the row, block and
    scalar areas (module docstring)."""
    nb, n6, n36, ns = ci[1], ci[3], ci[4], ci[5]
    o = 0
    q = cws[o:o + nq]; o += nq
    qd = cws[o:o + nv]; o += nv
    qdd = cws[o:o + nv]; o += nv
    Ro = cws[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    to = cws[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    tmp = cws[o:o + 144].reshape((4, 6, 6)); o += 144
    vec = cws[o:o + 48].reshape((8, 6)); o += 48
    R6 = cws[o:o + n6 * 6].reshape((n6, 6)); o += n6 * 6
    R36 = cws[o:o + n36 * 36].reshape((n36, 6, 6)); o += n36 * 36
    RS = cws[o:o + ns]
    return q, qd, qdd, Ro, to, tmp, vec, R6, R36, RS


def pack(tree, armature=None):
    """``(ci, cf, cws_size)`` for a :class:`~soadyn.closed.clusters.ClusterTree`.

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
    maxrows = 6 * nb + max(c.joint.ny for c in tree.clusters) * nb
    n6, n36, ns = 2 * maxrows, 0, 0  # F1, F2 first
    for c in tree.clusters:
        j = c.joint
        k, nbk, ny = c.index, len(c.bodies), j.ny
        C[k, C_PARENT] = c.parent
        C[k, C_B0] = len(cbodies)
        C[k, C_NB] = nbk
        C[k, C_YQ0], C[k, C_NYQ] = c.y_q.start, c.y_q.stop - c.y_q.start
        C[k, C_YV0], C[k, C_NYV] = c.y_v.start, ny
        C[k, C_R0] = len(rows_v)
        C[k, C_NC] = j.n
        C[k, C_KIND] = RIGID if not j.constrained else (LINEAR if j.linear else NONLINEAR)
        cbodies.extend(c.bodies)
        rows_v.extend(j.v_index.tolist())
        # position rows are read for linear clusters only (nq = nv there)
        rows_q.extend(j.q_index.tolist() if j.constrained and j.linear else [0] * j.n)
        row = 0
        for a, i in enumerate(c.bodies):
            p = model.bodies[i].parent
            o = c.output_bodies[a]
            B[i] = (k, a, o, local[o] if o >= 0 else -1,
                    local[p] if (p >= 0 and tree.cluster_of[p] == k) else -1, row)
            row += model.bodies[i].joint.nv
        G = j.G0 if j.G0 is not None else np.zeros((j.n, ny))
        C[k, C_G] = len(cf)
        cf.extend(np.asarray(G, dtype=float).ravel().tolist())
        C[k, C_GB] = len(cf)
        cf.extend([0.0] * j.n)
        if armature is not None and k in armature:
            C[k, C_ARM] = len(cf)
            cf.extend(np.asarray(armature[k], dtype=float).reshape(ny, ny).ravel().tolist())
        else:
            C[k, C_ARM] = -1
        for col, size in ((C_S, ny * nbk), (C_C, nbk), (C_PA, nbk), (C_U, ny * nbk)):
            C[k, col] = n6
            n6 += size
        C[k, C_IA] = n36
        n36 += nbk * nbk
        for col, size in ((C_DINV, ny * ny), (C_UV, ny), (C_Y, ny), (C_T, ny)):
            C[k, col] = ns
            ns += size
    for c in tree.clusters:
        if c.parent >= 0 and len(set(c.output_bodies)) > 1:
            C[c.parent, C_COUPLED] = 1
    header = np.array([ncl, nb, len(rows_v), n6, n36, ns, maxrows], dtype=np.int64)
    ci = np.concatenate([header, C.ravel(), B.ravel(), np.array(rows_v, dtype=np.int64),
                         np.array(rows_q, dtype=np.int64), np.array(cbodies, dtype=np.int64)])
    return ci, np.array(cf, dtype=float), workspace_size(nq, nv, nb, n6, n36, ns)
