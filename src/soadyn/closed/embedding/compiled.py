"""The packed form of a cluster tree for the compiled cluster algorithms
(:mod:`soadyn.kernels.cluster`) and the per-thread workspaces they run in."""
from __future__ import annotations

import numpy as np

from ...core.compile import derived
from ...core.configuration import neutral
from ...kernels.cluster.layout import (HEADER, LINEAR, NONLINEAR, RIGID, cluster_int_size, cluster_tables,
                                       fixed_workspace_size)
from ..constraint_set import constraint_set
from .clusters import cluster_tree

__all__ = ["PackedClusters", "packed_clusters", "cluster_workspace_buffer"]


class PackedClusters:
    """A cluster tree packed for the kernels: ``ci`` (ints), ``cf`` (the constant G of linear
    clusters and the optional reflected inertias), ``workspace_size``; ``nonlinear`` the
    clusters whose G and g are given per call, with ``G_offset``/``g_offset`` into the
    workspace.

    ``armature`` maps cluster index → (n_y, n_y) matrix H̃_k added to D_k (the approximate
    models of [Chignoli23, §II-C])."""

    def __init__(self, tree, armature=None):
        model = tree.model
        nb, nq, nv = model.nbodies, model.nq, model.nv
        ncl = len(tree.clusters)
        nrows = sum(cl.joint.n for cl in tree.clusters)
        max_rows = 6 * nb + max(cl.joint.ny for cl in tree.clusters) * nb
        self.ci = np.zeros(cluster_int_size(ncl, nb, nrows), dtype=np.int64)
        self.ci[:len(HEADER)] = (ncl, nb, nrows, 0, max_rows, tree.nyq, tree.nyv)
        c = cluster_tables(self.ci)
        local = {i: a for cl in tree.clusters for a, i in enumerate(cl.bodies)}
        cf = []
        ws = fixed_workspace_size(nq, nv, nb, max_rows)
        rows, body_slot = 0, 0
        self.nonlinear = []
        for cl in tree.clusters:
            j, k = cl.joint, cl.index
            nbk, ny, nc = len(cl.bodies), j.ny, j.n
            c.parent[k] = cl.parent
            c.body_start[k], c.n_bodies[k] = body_slot, nbk
            c.bodies[body_slot:body_slot + nbk] = cl.bodies
            body_slot += nbk
            c.yq_start[k], c.n_yq[k] = cl.y_q.start, cl.y_q.stop - cl.y_q.start
            c.yv_start[k], c.n_y[k] = cl.y_v.start, ny
            c.row_start[k], c.n_spanning[k] = rows, nc
            c.rows_v[rows:rows + nc] = j.v_index
            # position rows are read for linear clusters only (nq = nv there)
            c.rows_q[rows:rows + nc] = j.q_index if (j.constrained and j.linear) else 0
            rows += nc
            c.kind[k] = RIGID if not j.constrained else (LINEAR if j.linear else NONLINEAR)
            row = 0
            for i in cl.bodies:
                p = model.bodies[i].parent
                o = cl.output_bodies[cl.bodies.index(i)]
                c.cluster_of[i], c.local_index[i], c.output_body[i] = k, local[i], o
                c.output_local[i] = local[o] if o >= 0 else -1
                c.parent_local[i] = local[p] if (p >= 0 and tree.cluster_of[p] == k) else -1
                c.row_in_cluster[i] = row
                row += model.bodies[i].joint.nv
            if c.kind[k] == NONLINEAR:  # G and g change with q: in the per-call workspace
                c.G_offset[k], c.g_offset[k] = ws, ws + nc * ny
                ws += nc * ny + nc
                self.nonlinear.append(cl)
            else:
                G = j.G0 if j.G0 is not None else np.zeros((nc, ny))
                c.G_offset[k] = len(cf)
                cf.extend(np.asarray(G, dtype=float).ravel().tolist())
                c.g_offset[k] = len(cf)
                cf.extend([0.0] * nc)
            if armature is not None and k in armature:
                c.armature_offset[k] = len(cf)
                cf.extend(np.asarray(armature[k], dtype=float).reshape(ny, ny).ravel().tolist())
            else:
                c.armature_offset[k] = -1
            for field, size in (("S_offset", 6 * ny * nbk), ("c_offset", 6 * nbk), ("pA_offset", 6 * nbk),
                                ("U_offset", 6 * ny * nbk), ("IA_offset", 36 * nbk * nbk), ("Dinv_offset", ny * ny),
                                ("u_offset", ny), ("y_offset", ny), ("t_offset", ny)):
                getattr(c, field)[k] = ws
                ws += size
        for cl in tree.clusters:
            if cl.parent >= 0 and len(set(cl.output_bodies)) > 1:
                c.coupled[cl.parent] = 1
        # each nonlinear cluster's rows in the model-wide constraint set (the cut-joint
        # evaluation, from which the embedding method takes them)
        everything = constraint_set(model)
        self.model_rows = {}
        for cl in self.nonlinear:
            mine = {id(b.source) for b in cl.joint.constraint_set.blocks}
            rows = [np.arange(b.rows.start, b.rows.stop) for b in everything.blocks if id(b.source) in mine]
            self.model_rows[cl.index] = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        self.ci[3] = ws
        self.tables = c  # views of ci, valid while this object lives
        # ci and cf stay writable (nothing writes them): read-only arrays would make Numba
        # compile the view builder cluster_tables, which filled ci above, a second time
        self.cf = np.array(cf, dtype=float)
        self.workspace_size = ws
        self.tree = tree


def packed_clusters(model):
    """The :class:`PackedClusters` of ``model``'s cluster tree (once per model version)."""
    return derived(model).memo("packed_clusters", lambda: PackedClusters(cluster_tree(model)))


def cluster_workspace_buffer(model, packed, key="cluster_workspace"):
    """This thread's flat cluster workspace for ``packed`` (neutral spanning positions
    until the first call writes them)."""
    d = derived(model)

    def build():
        buf = np.zeros(packed.workspace_size)
        buf[:d.compiled.nq] = neutral(model)
        return buf

    return d.per_thread(key, build)
