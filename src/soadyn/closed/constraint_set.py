"""Constraints of a closed-chain system: a spanning tree plus bilateral constraints.

[Jain24] ("Holonomic/Non-holonomic Bilateral Constraints", "Closed-chain Equations of
Motion"): every constraint contributes rows to

    𝔡̇(θ, t) = G_c(θ, t) θ̇ − 𝔘(t) = 0,       𝔡̈ = G_c θ̈ − 𝔘̊ = 0,

with 𝔘̊ ≜ 𝔘̇ − Ġ_c θ̇ (the acceleration bias). Three sources of rows, in this order:

* **loop (cut) joints** ([Jain24], "Single loop constraint", Q V_nd = 0 and
  G_c = Q B* φ* H*; [Jain12, §2.1–2.2]: the cut edges of a rooted digraph): a joint of
  type ``kind`` between a predecessor frame P and a successor frame S removes the
  relative spatial velocity components that the joint does not allow. The rows, in
  P axes, angular rows first, are

  ======================  ===============================  ==============================
  kind (dof)              rotation rows                    translation rows
  ======================  ===============================  ==============================
  weld (0)                e_x, e_y, e_z                    e_x, e_y, e_z
  revolute (1)            b₁, b₂ (⊥ axis a)                e_x, e_y, e_z
  prismatic (1)           e_x, e_y, e_z                    b₁, b₂
  spherical (3)           —                                e_x, e_y, e_z
  universal (2)           n = (R_rel c) × a                e_x, e_y, e_z
  cylindrical (2)         b₁, b₂                           b₁, b₂
  planar (3, normal a)    b₁, b₂                           a
  ======================  ===============================  ==============================

  (c: the universal joint's second axis, fixed in S). The position residuals whose
  derivatives these rows are (exactly for translation and universal rows, to first
  order at closure for the others) are T·p_rel, log(R_rel) (weld, prismatic) and
  b·(a × R_rel a) (revolute, cylindrical, planar), a·R_rel c (universal), where
  (R_rel, p_rel) is the pose of S in P.
* **couplings** (constant linear relations of joint rates,
  :class:`soadyn.core.constraints.LinearCoupling`, all in ``model.couplings``): URDF+
  :class:`~soadyn.core.constraints.Coupling` rows ratio·Σ e_pred − Σ e_succ over the
  1-dof joints on the two tree paths from the links' nearest common ancestor, and
  :class:`~soadyn.core.constraints.Transmission` rows Σ_i A[r, i] e_{J_i} on its named
  joints (block kind "transmission", m rows each);
* **user constraints**: :class:`HolonomicConstraint` 𝔡(q, t) = 0 — on the whole
  configuration, or on the coordinates of a few declared 1-dof joints (``joints=``; e.g.
  built from sympy expressions by :func:`symbolic_constraint`) — and
  :class:`NonholonomicConstraint` G_c(q, t) v = 𝔘(t).

The same constraints serve both closed-chain methods: the cut-joint methods evaluate all
of them (:class:`ConstraintSet`, evaluated in :mod:`soadyn.closed.kinematics`), and
constraint embedding ([Chignoli23]) evaluates the subset inside each body cluster to put it
in explicit form (:mod:`soadyn.closed.cluster_joints`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.compile import derived
from ..core.constraints import LOOP_KINDS, Coupling
from ..kernels import loops as loop_kernel
from ..kernels.loops import loop_float_size, loop_int_size, loop_tables

__all__ = ["ConstraintSet", "constraint_set", "LOOP_ROWS", "ConstraintBlock", "tree_paths", "coupling_paths",
           "coupling_bodies"]

# the kernel's kind codes are the positions in LOOP_KINDS
assert [getattr(loop_kernel, k.upper()) for k in LOOP_KINDS] == list(range(len(LOOP_KINDS)))

#: number of constraint rows (6 − joint dof) of each loop joint kind
LOOP_ROWS = dict(zip(LOOP_KINDS, loop_kernel.LOOP_ROWS_BY_KIND))


def orthonormal_complement(a):
    """Two unit vectors b₁, b₂ with (a, b₁, b₂) a right-handed orthonormal basis."""
    e = np.eye(3)[int(np.argmin(np.abs(a)))]
    b1 = e - (e @ a) * a
    b1 /= np.linalg.norm(b1)
    return b1, np.cross(a, b1)


# --------------------------------------------------------------------------- packing
@dataclass
class ConstraintBlock:
    """A named group of constraint rows: ``kind`` is "loop", "coupling", "transmission",
    "holonomic" or "nonholonomic"; ``rows`` its slice of G_c."""

    name: str
    kind: str
    rows: slice
    source: object


def tree_paths(model, a, b):
    """The bodies on the tree paths from the nearest common ancestor of bodies ``a`` and
    ``b`` (−1: the world) down to each of them, the ancestor excluded, child first."""
    up_a = model.ancestors(a) if a >= 0 else []
    up_b = model.ancestors(b) if b >= 0 else []
    common = set(up_a) & set(up_b)
    return [i for i in up_a if i not in common], [i for i in up_b if i not in common]


def coupling_paths(model, c):
    """(predecessor path, successor path) of a :class:`~soadyn.core.constraints.Coupling`
    (see :func:`tree_paths`)."""
    return c.paths(model)


def coupling_bodies(model, c):
    """The bodies whose joints a linear coupling (:class:`~soadyn.core.constraints.Coupling`
    or :class:`~soadyn.core.constraints.Transmission`) relates."""
    if isinstance(c, Coupling):
        pred, succ = c.paths(model)
        return set(pred) | set(succ)
    return {j.body for j in c.joint_rows(model)[0]}


def _coupling_rows(model, c):
    """(v coefficients (m, nv), q coefficients (m, nq), offsets (m,)) of a linear coupling
    A q̇_J = 0, A q_J = offset (:class:`~soadyn.core.constraints.LinearCoupling`)."""
    joints, A, offset = c.joint_rows(model)
    gv, gq = np.zeros((A.shape[0], model.nv)), np.zeros((A.shape[0], model.nq))
    for j, col in zip(joints, A.T):
        gv[:, j.v_index] += col
        gq[:, j.q_index] += col
    return gv, gq, np.asarray(offset, dtype=float)


class ConstraintSet:
    """The constraints of a model — all of them, or the given subsets (the constraints
    inside one body cluster) — in row order loops | couplings | user constraints.

    Attributes
    ----------
    m : number of rows of G_c; ``blocks``: list of :class:`ConstraintBlock`;
    holonomic : (m,) bool, rows with a position-level residual;
    loop_int, loop_float : the loop joints packed for the kernel (read through
        :func:`soadyn.kernels.loops.loop_tables`); ``m_loop`` their row count;
    node_frames : frame names [P₁, S₁, P₂, S₂, ...] of the cut-joint nodes, in the order
        of the 12 columns of each loop's node selection Q (see ConstraintState);
        ``node_body``, ``node_rotation``, ``node_translation``: their bodies and poses there;
        ``loop_of_row`` (m_loop,): the loop each loop row belongs to;
    coupling_v (nc, nv), coupling_q (nc, nq), coupling_offset (nc,): the constant rows of
    the couplings and transmissions (``m_coupling`` = nc of them).
    """

    def __init__(self, model, loops=None, couplings=None, user_constraints=None):
        self.model = model
        loops = model.loops if loops is None else list(loops)
        couplings = model.couplings if couplings is None else list(couplings)
        user_constraints = model.user_constraints if user_constraints is None else list(user_constraints)
        nl = len(loops)
        self.loop_int = np.zeros(loop_int_size(nl), dtype=np.int64)
        self.loop_int[0] = nl
        self.loop_float = np.zeros(loop_float_size(nl))
        L = loop_tables(self.loop_int, self.loop_float)
        self.blocks = []
        self.node_frames = []
        row = 0
        for l, lp in enumerate(loops):
            fP, fS = model.frame(lp.predecessor), model.frame(lp.successor)
            kind = LOOP_KINDS.index(lp.kind)
            n = LOOP_ROWS[lp.kind]
            if fP.body == fS.body:
                raise ValueError(f"loop {lp.name!r}: predecessor and successor frames are on the same "
                                 f"body {model.body_name(fP.body)!r}")
            L.pred_body[l], L.succ_body[l], L.kind[l], L.first_row[l] = fP.body, fS.body, kind, row
            L.R_pred[l], L.p_pred[l], L.R_succ[l], L.p_succ[l] = fP.rotation, fP.translation, fS.rotation, fS.translation
            L.axis[l], L.axis2[l] = lp.axis, lp.axis2
            L.b1[l], L.b2[l] = orthonormal_complement(lp.axis)
            self.blocks.append(ConstraintBlock(lp.name, "loop", slice(row, row + n), lp))
            self.node_frames += [fP.name, fS.name]
            row += n
        self.m_loop = row
        # node k of the list node_frames: its body and pose there; loop index of each loop row
        nodes = [model.frame(n) for n in self.node_frames]
        self.node_body = np.array([f.body for f in nodes], dtype=np.int64)
        self.node_rotation = np.array([f.rotation for f in nodes]).reshape(-1, 3, 3)
        self.node_translation = np.array([f.translation for f in nodes]).reshape(-1, 3)
        self.loop_of_row = np.zeros(row, dtype=np.int64)
        for l, b in enumerate(b for b in self.blocks if b.kind == "loop"):
            self.loop_of_row[b.rows] = l
        rows_v, rows_q, offsets = [], [], []
        for c in couplings:  # Coupling (URDF+) and Transmission rows: constant
            gv, gq, off = _coupling_rows(model, c)
            n = off.size
            rows_v.append(gv)
            rows_q.append(gq)
            offsets.append(off)
            kind = "coupling" if isinstance(c, Coupling) else "transmission"
            self.blocks.append(ConstraintBlock(c.name, kind, slice(row, row + n), c))
            row += n
        self.coupling_v = np.concatenate(rows_v).reshape(-1, model.nv) if rows_v else np.zeros((0, model.nv))
        self.coupling_q = np.concatenate(rows_q).reshape(-1, model.nq) if rows_q else np.zeros((0, model.nq))
        self.coupling_offset = np.concatenate(offsets) if offsets else np.zeros(0)
        self.m_coupling = self.coupling_v.shape[0]
        for uc in user_constraints:
            kind = "holonomic" if uc.holonomic else "nonholonomic"
            self.blocks.append(ConstraintBlock(uc.name, kind, slice(row, row + uc.size), uc))
            row += uc.size
        self.m = row
        self.user_blocks = self.blocks[len(self.blocks) - len(user_constraints):]
        self.holonomic = np.ones(row, dtype=bool)
        for b in self.blocks:
            if b.kind == "nonholonomic":
                self.holonomic[b.rows] = False

    def block(self, name):
        for b in self.blocks:
            if b.name == name:
                return b
        raise ValueError(f"constraint: unknown constraint {name!r}; known: {[b.name for b in self.blocks]}")


def constraint_set(model):
    """The packed :class:`ConstraintSet` of all of ``model``'s constraints (built once per
    model version)."""
    return derived(model).memo("constraint_set", ConstraintSet)
