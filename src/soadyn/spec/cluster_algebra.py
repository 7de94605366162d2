"""Spatial vector algebra for clusters as dense matrices ([Chignoli23, §V]) — the specification.

The compiled cluster algorithms never form these matrices: they apply them block by
block (one nonzero transform per block row or column). This module builds them
literally from the equations so that the recursions can be checked against them and
their identities verified:

* :func:`cluster_transform` — ^lX_k between a cluster and its parent, eq. 17 (motion) and
  its force dual ^kX*_l = (^lX_k)ᵀ, eq. 18;
* :func:`remapping_transform` — ^Λ(k)X_λ(k), eq. 20 (parent-relative → output-relative
  motion), and :func:`remapping_force_transform` — ^Λ(k)X*_λ(k), eq. 23, with
  (^ΛX*_λ)⁻¹ = (^ΛX_λ)ᵀ (eq. 21);
* :func:`cluster_motion_subspace` — S_k = ^ΛX_λ block(S_i) G_k, eq. 24;
* :func:`cluster_force_subspaces` — T^a_k = ^ΛX*_λ block(T^a_i) P_k (eq. 30) with
  G_kᵀP_k = 1, and a constraint force subspace T^c_k with S_kᵀT^c_k = 0 (eq. 31).

All take the model configuration ``q`` (a point of the constraint manifold) and a
cluster index of :func:`~soadyn.cluster_tree`; blocks follow the cluster's body order.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import null_space

from ..closed.embedding.clusters import cluster_tree
from ..core import spatial as sp

__all__ = ["cluster_transform", "remapping_transform", "remapping_force_transform", "cluster_motion_subspace",
           "cluster_force_subspaces", "relative_motion_transform"]


def _pose_in_parent(model, q, i):
    b = model.bodies[i]
    j = b.joint
    Rj, pj = j.pose(q[j.q_index:j.q_index + j.nq])
    Rt, pt = b.placement
    return Rt @ Rj, pt + Rt @ pj


def relative_motion_transform(model, q, i, j):
    """^iX_j (6×6): motion from body j (−1: the world) to body i, j supporting i."""
    X = np.eye(6)
    k = i
    while k != j:
        if k < 0:
            raise ValueError(f"body {j} does not support body {i}")
        X = X @ sp.motion_transform(*_pose_in_parent(model, q, k))
        k = model.bodies[k].parent
    return X


def cluster_transform(model, q, l, k):
    """^lX_k (6n_l × 6n_k), eq. 17: block (a, b) = ^{C_l(a)}X_{C_k(b)} when C_k(b) is the
    output body of C_l(a), else 0 (k = −1: the world as a one-body cluster)."""
    tree = cluster_tree(model)
    cl = tree[l]
    kb = (-1,) if k < 0 else tree[k].bodies
    X = np.zeros((6 * len(cl.bodies), 6 * len(kb)))
    for a, (i, o) in enumerate(zip(cl.bodies, cl.output_bodies)):
        if o in kb:
            b = kb.index(o)
            X[6 * a:6 * a + 6, 6 * b:6 * b + 6] = relative_motion_transform(model, q, i, o)
    return X


def remapping_transform(model, q, k):
    """^Λ(k)X_λ(k) (6n × 6n), eq. 20: unit lower-triangular, block (a, b) = ^{C_k(a)}X_{C_k(b)}
    when C_k(b) supports C_k(a)."""
    bodies = cluster_tree(model)[k].bodies
    n = len(bodies)
    X = np.eye(6 * n)
    for a, i in enumerate(bodies):
        anc = model.ancestors(i)
        for b, j in enumerate(bodies[:a]):
            if j in anc:
                X[6 * a:6 * a + 6, 6 * b:6 * b + 6] = relative_motion_transform(model, q, i, j)
    return X


def remapping_force_transform(model, q, k):
    """^Λ(k)X*_λ(k) (6n × 6n), eq. 23: unit upper-triangular with −^{C_k(a)}X*_{C_k(b)} where
    C_k(a) is the parent of C_k(b)."""
    bodies = cluster_tree(model)[k].bodies
    n = len(bodies)
    X = np.eye(6 * n)
    for b, j in enumerate(bodies):
        p = model.bodies[j].parent
        if p in bodies:
            a = bodies.index(p)
            X[6 * a:6 * a + 6, 6 * b:6 * b + 6] = -sp.force_transform(*_pose_in_parent(model, q, j))
    return X


def _block_subspaces(model, q, bodies):
    cols = [model.bodies[i].joint.motion_subspace(
        q[model.bodies[i].joint.q_index:model.bodies[i].joint.q_index + model.bodies[i].joint.nq]) for i in bodies]
    n = len(bodies)
    S = np.zeros((6 * n, sum(c.shape[1] for c in cols)))
    o = 0
    for a, c in enumerate(cols):
        S[6 * a:6 * a + 6, o:o + c.shape[1]] = c
        o += c.shape[1]
    return S, cols


def cluster_motion_subspace(model, q, k):
    """S_k = ^Λ(k)X_λ(k) block(S_i) G_k (6n × ny), eq. 24."""
    c = cluster_tree(model)[k]
    S, _ = _block_subspaces(model, q, c.bodies)
    return remapping_transform(model, q, k) @ S @ c.joint.jacobian(q)


def cluster_force_subspaces(model, q, k):
    """(T^a_k, T^c_k), eq. 30–31: T^a_k = ^ΛX*_λ block(T^a_i) P_k with T^a_i = S_i(S_iᵀS_i)⁻¹
    and P_k = G_k(G_kᵀG_k)⁻¹ (so S_kᵀT^a_k = 1); T^c_k = ^ΛX*_λ [block(T^c_i), block(T^a_i)P^c_k]
    with S_iᵀT^c_i = 0 and G_kᵀP^c_k = 0 — the constraint forces of the tree joints and of
    the loop constraints (so S_kᵀT^c_k = 0)."""
    c = cluster_tree(model)[k]
    _, cols = _block_subspaces(model, q, c.bodies)
    n = len(c.bodies)
    Ta = np.zeros((6 * n, sum(s.shape[1] for s in cols)))
    Tc_blocks = []
    o = 0
    for a, s in enumerate(cols):
        Ta[6 * a:6 * a + 6, o:o + s.shape[1]] = s @ np.linalg.inv(s.T @ s)
        o += s.shape[1]
        ns = null_space(s.T)
        blk = np.zeros((6 * n, ns.shape[1]))
        blk[6 * a:6 * a + 6] = ns
        Tc_blocks.append(blk)
    G = c.joint.jacobian(q)
    P = G @ np.linalg.inv(G.T @ G)
    Pc = null_space(G.T)
    Xf = remapping_force_transform(model, q, k)
    return Xf @ Ta @ P, Xf @ np.hstack(Tc_blocks + [Ta @ Pc])
