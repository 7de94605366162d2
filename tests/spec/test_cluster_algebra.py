"""[Chignoli23, §V]: the cluster spatial algebra as dense matrices, its identities, and the
compiled recursions against it."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.spec.cluster_algebra import (cluster_force_subspaces, cluster_motion_subspace, cluster_transform,
                                           remapping_force_transform, remapping_transform)
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.closed.embedding import cluster_motion_subspaces

from conftest import mechanism, random_state


@pytest.mark.parametrize("name", ["mit_humanoid", "urdf:six_bar", "tello", "belt_chain"])
def test_cluster_algebra_identities_and_recursion(name):
    model = mechanism(name)
    tree = cluster_tree(model)
    rng = np.random.default_rng(8)
    y, yd = random_state(model, rng)
    q, v = tree.spanning_state(y, yd)
    subspaces = cluster_motion_subspaces(model, y, yd)
    for c in tree:
        k = c.index
        X = remapping_transform(model, q, k)
        Xf = remapping_force_transform(model, q, k)
        assert np.allclose(np.linalg.inv(Xf), X.T, atol=1e-12)  # eq. 21
        S = cluster_motion_subspace(model, q, k)
        assert np.allclose(subspaces[k][0], S, atol=1e-12)  # the recursion forms eq. 24
        Ta, Tc = cluster_force_subspaces(model, q, k)
        assert np.allclose(S.T @ Ta, np.eye(S.shape[1]), atol=1e-10)  # eq. 31
        assert np.allclose(S.T @ Tc, 0.0, atol=1e-10)
        assert Tc.shape[1] == 6 * len(c.bodies) - S.shape[1]  # T^a, T^c together span all forces
        assert np.linalg.matrix_rank(np.hstack([Ta, Tc])) == 6 * len(c.bodies)
        # cluster velocity: stacked body velocities = ^kX_λ v_λ + S_k ẏ_k (eq. 33)
        vb = sd.forward_kinematics(model, q, v).velocities
        v_parent = np.zeros(6) if c.parent < 0 else vb[list(tree[c.parent].bodies)].ravel()
        Xk = cluster_transform(model, q, k, c.parent)
        assert np.allclose(vb[list(c.bodies)].ravel(), Xk @ v_parent + S @ yd[c.y_v], atol=1e-10)


def test_force_transform_is_the_transpose_of_the_motion_transform():
    """Eq. 17–18: ^kX*_l = (^lX_k)ᵀ collects child forces on the output bodies; the Fig. 5
    structure (one nonzero block per row of ^lX_k)."""
    model = mechanism("mit_humanoid")
    tree = cluster_tree(model)
    q = tree.spanning_positions(random_state(model, np.random.default_rng(1))[0])
    for c in tree:
        if c.parent < 0:
            continue
        X = cluster_transform(model, q, c.index, c.parent)
        blocks = X.reshape(len(c.bodies), 6, -1, 6).transpose(0, 2, 1, 3)
        assert all(sum(np.any(blocks[a, b]) for b in range(blocks.shape[1])) == 1 for a in range(len(c.bodies)))
