"""The packed form of a cluster tree for the compiled cluster algorithms
(:mod:`soadyn.kernels.cluster`) and the per-thread workspaces they run in."""
from __future__ import annotations

import threading

import numpy as np

from ...core.compile import derived
from ...core.configuration import neutral
from ...kernels.cluster import implicit as imp
from ...kernels.cluster.inertia import rotor_pair_constants
from ...kernels.cluster.layout import (HEADER, LINEAR, NONLINEAR, RIGID, cluster_int_size, cluster_tables,
                                       fixed_workspace_size, independent_vectors_size)
from ..constraint_set import ConstraintSet, constraint_set
from .clusters import cluster_tree

__all__ = ["PackedClusters", "packed_clusters", "cluster_workspace_buffer"]


class PackedClusters:
    """A cluster tree packed for the kernels: ``ci`` (ints), ``cf`` (the constant G of linear
    clusters, the optional reflected inertias and the implicit clusters' tables),
    ``workspace_size``; ``nonlinear`` the clusters whose G and g change with q, with
    ``G_offset``/``g_offset`` into the workspace: ``compiled`` those the kernels prepare
    themselves (:mod:`soadyn.kernels.cluster.implicit`), ``python_prepared`` the others.

    ``armature`` maps cluster index → (n_y, n_y) matrix H̃_k added to D_k (the approximate
    models of [Chignoli23, §II-C])."""

    def __init__(self, tree, armature=None):
        model = tree.model
        nb, nq, nv = model.nbodies, model.nq, model.nv
        ncl = len(tree.clusters)
        nrows = sum(cl.joint.n for cl in tree.clusters)
        max_rows = 6 * nb + max(cl.joint.ny for cl in tree.clusters) * nb
        base_size = cluster_int_size(ncl, nb, nrows, tree.nyq, tree.nyv)
        compiled = [cl for cl in tree.clusters if cl.joint.constrained and not cl.joint.linear
                    and compiled_rows(cl.joint)]
        xi, xf, counts = _implicit_tables(model, compiled)
        self.ci = np.zeros(base_size + xi.size, dtype=np.int64)
        self.ci[:len(HEADER)] = (ncl, nb, nrows, 0, max_rows, tree.nyq, tree.nyv, base_size, 0, nv, nq)
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
            # position rows are read for clusters of vector joints only (nq = nv there): the
            # linear ones and the implicit ones whose dependent coordinates are solved
            vector = all(model.bodies[i].joint.nq == model.bodies[i].joint.nv for i in cl.bodies)
            c.rows_q[rows:rows + nc] = j.q_index if (j.constrained and vector) else 0
            c.y_positions[cl.y_q] = j.q_index[j.independent_q]
            c.yv_positions[cl.y_v] = j.v_index[j.independent_v]
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
            pair = (rotor_pair_constants(model, cl.bodies, cl.output_bodies, np.asarray(G, dtype=float))
                    if c.kind[k] == LINEAR else None)  # a geared rotor: constants of the C-ABA step
            c.rotor_offset[k], c.rotor_local[k] = (-1, -1) if pair is None else (len(cf), pair[0])
            if pair is not None:
                cf.extend(pair[1])
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
        # the implicit clusters' tables after the rest; their scratch and K_d⁺ after the
        # per-cluster quantities
        self.ci[base_size:] = xi
        self.ci[8] = len(cf)
        cf.extend(xf.tolist())
        x_header = self.ci[base_size:base_size + len(imp.HEADER)]
        x_header[imp.HEADER.index("workspace_offset")] = ws
        ws += imp.implicit_workspace_size(counts, nv)
        pinv = self.ci[base_size + len(imp.HEADER) + imp.CLUSTER_FIELDS.index("pinv_offset") * len(compiled):][
            :len(compiled)]
        for i, cl in enumerate(compiled):
            pinv[i] = ws
            ws += len(cl.joint.dependent_v) * counts["rows_of"][i]
        #: the nonlinear clusters prepared in compiled code, and those prepared in Python
        #: (constraints given as Python callables) before every kernel call
        self.compiled = compiled
        self.python_prepared = [cl for cl in self.nonlinear if cl not in compiled]
        ws += independent_vectors_size.py_func(nq, nv)  # (Python's own: no compiled entry point)
        self.ci[3] = ws
        self.tables = c  # views of ci, valid while this object lives
        # ci and cf stay writable (nothing writes them): read-only arrays would make Numba
        # compile the view builder cluster_tables, which filled ci above, a second time
        self.cf = np.array(cf, dtype=float)
        self.workspace_size = ws
        self.tree = tree
        self.threads = threading.local()  # per-thread workspaces (cluster_workspace_buffer)


def compiled_rows(joint):
    """True when every constraint of a cluster joint is evaluated in compiled code: loop
    joints, couplings, and holonomic, time-invariant symbolic constraints on declared joints
    (:func:`~soadyn.core.constraints.symbolic_constraint`, whose tapes the kernels run)."""
    return all(b.source.tapes is not None and b.source.holonomic and not b.source.time_dependent
               for b in joint.constraint_set.user_blocks)


def _implicit_tables(model, compiled):
    """(int section, float section, counts) of the implicit clusters' tables
    (:func:`soadyn.kernels.cluster.implicit.implicit_tables`) for the clusters ``compiled``."""
    loops = [lp for cl in compiled for lp in cl.joint.constraint_set.blocks if lp.kind == "loop"]
    couplings = [b for cl in compiled for b in cl.joint.constraint_set.blocks if b.kind in ("coupling", "transmission")]
    users = [b for cl in compiled for b in cl.joint.constraint_set.user_blocks]
    cs = ConstraintSet(model, [b.source for b in loops], [b.source for b in couplings], [b.source for b in users])
    block_of = {id(b.source): b for b in cs.blocks}
    loop_index = {id(b.source): k for k, b in enumerate(b for b in cs.blocks if b.kind == "loop")}
    per = {f: [] for f in imp.CLUSTER_FIELDS}
    lists = {f: [] for f in imp.LISTS}
    refs, grefs, rows_of = [], [], []
    for k_cl, cl in enumerate(compiled):
        j = cl.joint
        mine = [block_of[id(b.source)] for b in j.constraint_set.blocks]
        rows = [r for b in mine for r in range(b.rows.start, b.rows.stop)]
        rows_of.append(len(rows))
        vector = all(model.bodies[i].joint.nq == model.bodies[i].joint.nv for i in j.bodies)
        values = dict(cluster=cl.index, rows_start=len(lists["rows"]), n_rows=len(rows),
                      dep_start=len(lists["dep"]), n_dep=len(j.dependent_v), ind_start=len(lists["ind"]),
                      periodic_start=len(lists["periodic"]), n_periodic=len(j._periodic),
                      loops_start=len(lists["loops"]), n_loops=sum(b.kind == "loop" for b in mine),
                      couplings_start=len(lists["couplings"]),
                      n_couplings=sum(b.stop - b.start for b in (b.rows for b in mine
                                                                  if b.kind in ("coupling", "transmission"))),
                      symbolic_start=len(lists["symbolics"]),
                      n_symbolics=sum(b.kind == "holonomic" for b in mine),
                      solvable=int(vector and j._moved_q is not None and j.reference is not None),
                      has_start_map=int(j._G_ref is not None), ref_offset=len(refs), gref_offset=len(grefs),
                      pinv_offset=0)
        for f in imp.CLUSTER_FIELDS:
            per[f].append(values[f])
        lists["rows"] += rows
        lists["dep"] += j.dependent_v.tolist()
        lists["ind"] += j.independent_v.tolist()
        lists["periodic"] += list(j._periodic)
        lists["loops"] += [loop_index[id(b.source)] for b in mine if b.kind == "loop"]
        lists["couplings"] += [r - cs.m_loop for b in mine if b.kind in ("coupling", "transmission")
                               for r in range(b.rows.start, b.rows.stop)]
        lists["symbolics"] += [users.index(next(u for u in users if u.source is b.source)) for b in mine
                               if b.kind == "holonomic"]
        nc, ny = j.n, j.ny
        refs += (j.reference.tolist() if (j.reference is not None and vector) else [0.0] * nc)
        grefs += (j._G_ref.ravel().tolist() if j._G_ref is not None else [0.0] * (nc * ny))
    sym = {f: [] for f in imp.SYMBOLIC_FIELDS}
    sym_q, sym_v, code_q, code_b, out_q, out_b, consts = [], [], [], [], [], [], []
    max_regs = 0
    for b in cs.user_blocks:
        uc = b.source
        tq, tb = uc.tapes
        k = len(uc.q_indices)
        for tape, code, out, start, length, ostart in ((tq, code_q, out_q, "code_q_start", "code_q_len", "out_q_start"),
                                                       (tb, code_b, out_b, "code_b_start", "code_b_len", "out_b_start")):
            shifted = tape.code.copy()
            shifted[shifted[:, 0] == 0, 2] += len(consts)  # CONST reads the shared constant array
            sym[start].append(len(code))
            sym[length].append(len(shifted))
            sym[ostart].append(len(out))
            code += shifted.tolist()
            out += tape.outputs.tolist()
            consts += tape.consts.tolist()
            max_regs = max(max_regs, tape.n_registers)
        sym["sym_first_row"].append(b.rows.start)
        sym["sym_n_rows"].append(b.rows.stop - b.rows.start)
        sym["sym_n_joints"].append(k)
        sym["sym_joints_start"].append(len(sym_q))
        sym_q += uc.q_indices.tolist()
        sym_v += uc.v_indices.tolist()
    counts = dict(n=len(compiled), m=cs.m, m_loop=cs.m_loop, n_coupling=cs.m_coupling, n_symbolic=len(cs.user_blocks),
                  max_registers=max_regs, len_code_q=len(code_q), len_code_b=len(code_b), len_out_q=len(out_q),
                  len_out_b=len(out_b), len_sym_joints=len(sym_q), li_size=cs.loop_int.size,
                  lf_size=cs.loop_float.size, len_refs=len(refs), len_grefs=len(grefs), len_consts=len(consts),
                  workspace_offset=0, max_rows=max(rows_of, default=0),
                  max_dep=max((len(cl.joint.dependent_v) for cl in compiled), default=0))
    counts.update({"len_" + f: len(v) for f, v in lists.items()})
    header = [counts[h] for h in imp.HEADER]
    ints = (header + [v for f in imp.CLUSTER_FIELDS for v in per[f]] + [v for f in imp.LISTS for v in lists[f]]
            + [v for f in imp.SYMBOLIC_FIELDS for v in sym[f]] + sym_q + sym_v
            + [v for row in code_q for v in row] + [v for row in code_b for v in row] + out_q + out_b
            + cs.loop_int.tolist())
    floats = (cs.loop_float.tolist() + cs.coupling_v.ravel().tolist() + cs.coupling_q.ravel().tolist()
              + np.asarray(cs.coupling_offset, dtype=float).tolist() + refs + grefs + consts)
    xi = np.array(ints, dtype=np.int64)
    assert xi.size == imp.implicit_int_size(counts)
    counts["rows_of"] = rows_of
    return xi, np.array(floats, dtype=float), counts


def packed_clusters(model):
    """The :class:`PackedClusters` of ``model``'s cluster tree (once per model version)."""
    return derived(model).memo("packed_clusters", lambda m: PackedClusters(cluster_tree(m)))


def cluster_workspace_buffer(model, packed):
    """This thread's flat cluster workspace for ``packed`` (neutral spanning positions
    until the first call writes them), kept by ``packed`` itself: each packed cluster tree
    (the model's own, an approximate model's) has its own, of its own size."""
    buf = getattr(packed.threads, "workspace", None)
    if buf is None:
        buf = packed.threads.workspace = np.zeros(packed.workspace_size)
        buf[:model.nq] = neutral(model)
    return buf
