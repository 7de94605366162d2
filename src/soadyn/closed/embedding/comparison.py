"""The comparison methods of [Chignoli23, §II] that need only the spanning tree.

* **Approximate** (§II-C–E): the *independent tree* — the bodies whose joints carry
  independent coordinates — with the loop effects replaced by a constant reflected
  inertia H̃ added to its mass matrix, H̃ = Σ_r G_rᵀ (s_rᵀ I_r s_r) G_r over the
  transmission rotors r of each cluster (the classic N² I_rot for a geared rotor, with
  G_r the rotor's row of G at the reference configuration); loop clusters get H̃ = 0.
  Approximate RNEA: τ ≈ RNEA(G_ind, y, ẏ, ÿ) + H̃ÿ; approximate ABA and EFPA: the
  articulated-body recursions with H̃ added to the joint inertias D_k.
* **Unconstrained**: the same with H̃ = 0.
* **Projected** (§II-C–E): the spanning tree with the explicit constraint maps,
  τ_ind = Gᵀ RNEA(q, q̇, Gÿ + g); ÿ = (GᵀMG)⁻¹ Gᵀ(τ − C − M g) (projection method);
  Ω = JG (GᵀMG)⁻¹ GᵀJᵀ.

y, ẏ are the model's independent coordinates (:func:`~soadyn.cluster_tree` order); the
independent tree's coordinates are the same vector.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

from ...core import validation as val
from ...core.compile import derived, snapshot
from ...core.configuration import neutral
from ...core.model import Model
from ...dynamics.crba import mass_matrix
from ...dynamics.jacobians import frame_jacobian
from ...dynamics.rnea import bias_forces, rnea
from .algorithms import aba_with, efpa_with
from .clusters import cluster_tree, declare_cluster
from .compiled import PackedClusters

__all__ = ["ApproximateModel", "approximate_model", "projected_rnea", "projected_forward_dynamics",
           "projected_efpa", "ProjectedMethods"]


class ApproximateModel:
    """The independent tree of a model with its reflected inertia H̃ ([Chignoli23, §II-C]).

    Attributes: ``model`` (the independent-tree :class:`~soadyn.Model`), ``reflected``
    (H̃ (nyv, nyv), zero for the unconstrained variant), ``source`` (the original model).
    ``diagonal=True`` keeps only the diagonal of H̃ ([Chignoli23]'s H̃ = diag(N_i² I_i^rot);
    for a belt it drops the coupling between the joints a rotor drives together).
    Dependent bodies are dropped; a kept body whose parent was dropped hangs from the
    nearest kept ancestor with the dropped joints locked at their neutral position.
    """

    def __init__(self, model, reflected=True, diagonal=False):
        tree = cluster_tree(model)
        self.source = model
        keep = []
        for c in tree:
            j = c.joint
            kept = []
            for b in c.bodies:
                cols = [n for n, (i, _) in enumerate(j.cols) if i == b]
                if any(col in set(j.independent_v.tolist()) for col in cols) or not cols:
                    kept.append(b)
            keep.append(kept)
        order = [b for kept in keep for b in kept]
        new_index = {b: n for n, b in enumerate(order)}
        self.model = approx = Model(f"{model.name}_independent_tree", gravity=model.gravity)
        for b in order:
            body = model.bodies[b]
            R, p = body.placement
            parent = body.parent
            while parent >= 0 and parent not in new_index:  # compose through dropped bodies at q = 0
                pb = model.bodies[parent]
                Rj, pj = pb.joint.pose(pb.joint.neutral())
                Rp, pp = pb.placement
                Rl, tl = Rp @ Rj, pp + Rp @ pj
                R, p = Rl @ R, tl + Rl @ p
                parent = pb.parent
            joint = copy.copy(body.joint)
            joint.name = joint.q_index = joint.v_index = joint.body = None
            with warnings.catch_warnings():  # the source model already reported its inertias
                warnings.simplefilter("ignore", UserWarning)
                approx.add_body(body.name, joint, new_index[parent] if parent >= 0 else None, (R, p),
                                mass=body.mass, com=body.com, inertia=body.inertia_com,
                                joint_name=body.joint.name, strict_inertia=False)
        for f in model.frames:
            if f.body in new_index and f.name not in approx._frame_by_name:
                approx.add_frame(f.name, new_index[f.body], (f.rotation, f.translation))
        for kept in keep:
            if len(kept) > 1:
                declare_cluster(approx, [new_index[b] for b in kept])
        self.tree = cluster_tree(approx)
        if self.tree.nyv != tree.nyv:
            raise ValueError(f"model {model.name!r}: the independent tree has {self.tree.nyv} velocities, "
                             f"expected {tree.nyv}")
        self.reflected = np.zeros((tree.nyv, tree.nyv))
        self.armature = {}
        if reflected:
            for c, kept in zip(tree, keep):
                block = self._reflected(model, c, kept)
                if block is not None and diagonal:
                    block = np.diag(np.diag(block))
                if block is not None:
                    self.reflected[c.y_v, c.y_v] = block
                    self.armature[self.tree.cluster_of[new_index[kept[0]]]] = block
        self.packed = PackedClusters(self.tree, self.armature)

    @staticmethod
    def _reflected(model, cluster, kept):
        j = cluster.joint
        if not j.constrained or j.has_loops:
            return None  # rigid clusters have nothing to reflect; loops have no simple approximation
        q = neutral(model)
        if j.reference is not None:
            q[j.q_index] = j.reference
        G = j.jacobian(q)
        H = np.zeros((j.ny, j.ny))
        for row, (b, k) in enumerate(j.cols):
            if b in kept:
                continue
            body = model.bodies[b]
            s = body.joint.motion_subspace(q[body.joint.q_index:body.joint.q_index + body.joint.nq])[:, k]
            H += np.outer(G[row], G[row]) * (s @ body.inertia @ s)
        return H

    def rnea(self, y, yd, ydd, *, gravity=True):
        """Approximate inverse dynamics τ ≈ RNEA(G_ind, y, ẏ, ÿ) + H̃ ÿ ([Chignoli23, §II-C]);
        ``y, yd, ydd`` (nyv,) or a batch (B, nyv)."""
        tau = rnea(self.model, y, yd, ydd, gravity=gravity)
        return tau + np.asarray(ydd, dtype=float) @ self.reflected.T  # H̃ ÿ, row by row for a batch

    def aba(self, y, yd, tau, *, gravity=True):
        """Approximate forward dynamics ÿ = (H_ind + H̃)⁻¹(τ − C_ind) by the articulated-body
        recursion with H̃ in the joint inertias ([Chignoli23, §II-D])."""
        return aba_with(self.model, self.packed, y, yd, tau, None, gravity)

    def efpa(self, y, frames):
        """Approximate inverse operational-space inertia J_ind (H_ind + H̃)⁻¹ J_indᵀ (§II-E)."""
        return efpa_with(self.model, self.packed, y, frames)


def approximate_model(model, reflected=True, diagonal=False):
    """The :class:`ApproximateModel` of ``model`` (``reflected=False``: the unconstrained
    variant, H̃ = 0; ``diagonal=True``: H̃ restricted to its diagonal), cached per model."""
    model = snapshot(model)
    key = ("approximate_model", bool(reflected), bool(diagonal))
    return derived(model).memo(key, lambda m: ApproximateModel(m, reflected, diagonal))


class ProjectedMethods:
    """Projected RNEA, projection-method forward dynamics and projected EFPA on the spanning
    tree ([Chignoli23, §II-C]–E). For models whose clusters are all linear, G is constant and
    q = γ(y) is one matrix product; otherwise the cluster joints are evaluated."""

    def __init__(self, model):
        self.model = model
        self.spanning = model.spanning_tree()  # the tree functions run on the explicit spanning tree
        self.tree = tree = cluster_tree(model)
        self.linear = tree.linear
        self.q0 = neutral(model)
        if self.linear:
            self.G = tree.explicit_jacobian(self.q0)
            self.Gt = np.ascontiguousarray(self.G.T)
            # positions: rows of 1-dof joints follow G; multi-dof (free, spherical) joints copy y
            self.copy_q, self.copy_y = [], []
            self.lin_q, self.lin_rows = [], []
            for c in tree:
                j = c.joint
                if not j.constrained:
                    self.copy_q.extend(j.q_index.tolist())
                    self.copy_y.extend(range(c.y_q.start, c.y_q.stop))
                else:
                    self.lin_q.extend(j.q_index.tolist())
                    self.lin_rows.extend(j.v_index.tolist())
            self.copy_q, self.copy_y = np.array(self.copy_q, int), np.array(self.copy_y, int)
            self.lin_q, self.lin_rows = np.array(self.lin_q, int), np.array(self.lin_rows, int)
            # ẏ → y index map for the linear rows: positions equal G y on 1-dof joints, where y
            # positions and velocities coincide except for the free-joint block
            self.yq_of_v = np.empty(tree.nyv, dtype=int)
            for c in tree:
                if c.y_q.stop - c.y_q.start == c.y_v.stop - c.y_v.start:
                    self.yq_of_v[c.y_v] = np.arange(c.y_q.start, c.y_q.stop)
                else:
                    self.yq_of_v[c.y_v] = -1

    def state(self, y, yd, need_bias=True):
        """(q, v, G, g): the spanning-tree state of (y, ẏ)."""
        if self.linear:
            q = self.q0.copy()
            q[self.copy_q] = y[self.copy_y]
            ylin = np.where(self.yq_of_v >= 0, y[np.maximum(self.yq_of_v, 0)], 0.0)
            q[self.lin_q] = (self.G @ ylin)[self.lin_rows]
            return q, self.G @ yd, self.G, None
        q = self.tree.spanning_positions(y.copy())
        G = self.tree.explicit_jacobian(q)
        v = G @ yd
        return q, v, G, (self.tree.explicit_bias(q, v) if need_bias else None)

    def rnea(self, y, yd, ydd):
        """Projected RNEA: τ_ind = Gᵀ RNEA(q, q̇, Gÿ + g) ([Chignoli23, §II-C])."""
        q, v, G, g = self.state(y, yd)
        a = G @ ydd if g is None else G @ ydd + g
        return G.T @ rnea(self.spanning, q, v, a)

    def forward_dynamics(self, y, yd, tau):
        """Projection method: ÿ = (GᵀMG)⁻¹ Gᵀ(τ − C − M g) ([Chignoli23, §II-D]), one dense
        factorization of GᵀMG (LAPACK through numpy: less call overhead than a separate
        Cholesky factor and solve)."""
        q, v, G, g = self.state(y, yd)
        M = mass_matrix(self.spanning, q)
        c = bias_forces(self.spanning, q, v)
        if g is not None:
            c = c + M @ g
        H = G.T @ M @ G
        return np.linalg.solve(H, tau - G.T @ c)

    def efpa(self, y, frames):
        """Projected EFPA: Ω = JG (GᵀMG)⁻¹ GᵀJᵀ ([Chignoli23, §II-E])."""
        q, _, G, _ = self.state(y, np.zeros(self.tree.nyv), need_bias=False)
        M = mass_matrix(self.spanning, q)
        H = G.T @ M @ G
        frames = [frames] if isinstance(frames, str) else frames
        JG = np.vstack([frame_jacobian(self.model, q, f) for f in frames]) @ G
        return JG @ np.linalg.solve(H, JG.T)


def _projected(model):
    return derived(model).memo("projected_methods", ProjectedMethods)


def projected_rnea(model, y, yd, ydd):
    """Projected RNEA ([Chignoli23, §II-C]): τ_ind = Gᵀ RNEA(q, q̇, Gÿ + g), (nyv,).
    ``yd``, ``ydd`` (nyv,): None means zero."""
    model = snapshot(model)
    tree = cluster_tree(model)
    yd = np.zeros(tree.nyv) if yd is None else yd
    ydd = np.zeros(tree.nyv) if ydd is None else ydd
    return _projected(model).rnea(val.vector(y, tree.nyq, "y", False), val.vector(yd, tree.nyv, "yd", False),
                                  val.vector(ydd, tree.nyv, "ydd", False))


def projected_forward_dynamics(model, y, yd, tau_ind):
    """Projection method ([Chignoli23, §II-D]): ÿ = (GᵀMG)⁻¹ Gᵀ(τ − C − M g), (nyv,).
    ``yd`` (nyv,): None means zero."""
    model = snapshot(model)
    tree = cluster_tree(model)
    yd = np.zeros(tree.nyv) if yd is None else yd
    return _projected(model).forward_dynamics(val.vector(y, tree.nyq, "y", False),
                                              val.vector(yd, tree.nyv, "yd", False),
                                              val.vector(tau_ind, tree.nyv, "tau_ind", False))


def projected_efpa(model, y, frames):
    """Projected inverse operational-space inertia ([Chignoli23, §II-E]): Ω = JG (GᵀMG)⁻¹ GᵀJᵀ."""
    model = snapshot(model)
    tree = cluster_tree(model)
    return _projected(model).efpa(val.vector(y, tree.nyq, "y", False), frames)
