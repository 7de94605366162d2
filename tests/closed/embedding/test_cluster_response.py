"""The response to body forces on the factorization of a C-ABA backward pass already run
(:mod:`soadyn.kernels.cluster.response`, the impulse response of the closed-chain time
step) against the dense specification: Δẏ = H⁻¹ Gᵀ (𝒥_bodies)ᵀ F with H = Gᵀ M G, M the
spanning tree's mass matrix HφMφ*H* and 𝒥_bodies = φ*H* the stacked body Jacobians, both
from :func:`soadyn.spec.sko` ([Jain12, eq. 17]; [Chignoli23, eq. 3]).

The factorization comes from a backward pass with velocities, joint forces, gravity and
external forces (the free-velocity pass of a step), none of which the response may see;
with the rotors taken from their constants (no force on a rotor), with forces on the
rotors after the pass (a refactorization with the rotors placed), and with external
forces on the rotors from the start (the general cluster path throughout).
"""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.algorithms import _explicit_call
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.core.compile import snapshot
from soadyn.kernels.cluster.response import cluster_response_kernel
from soadyn.spec.operators import sko


def _dense_response(model, q, F):
    """H⁻¹ Gᵀ (φ*H*)ᵀ F of the dense operators of the spanning tree at q."""
    tree = cluster_tree(model)
    ops = sko(model.spanning_tree(), q)
    G = tree.explicit_jacobian(q)
    H = G.T @ ops.mass_matrix @ G
    J = ops.phi.T @ ops.H.T  # (6 nb, nv): stacked body velocities (body frames) of q̇
    return np.linalg.solve(H, G.T @ (J.T @ F.reshape(-1)))


def _rotors(model):
    """The bodies that are rotors of link–rotor pairs (a rotor body of the model's couplings)."""
    m = snapshot(model)
    return sorted({m.body_index(c.successor) for c in m.couplings})


@pytest.mark.parametrize("robot", ["mini_cheetah", "mit_humanoid"])
@pytest.mark.parametrize("case", ["rotors apart", "force on a rotor", "external force on a rotor"])
def test_response_on_the_free_pass_factorization_is_the_dense_one(robot, case):
    model = getattr(sd.models, robot)()
    tree = cluster_tree(model)
    rng = np.random.default_rng(11)
    y = 0.4 * rng.normal(size=tree.nyq)
    y[3:7] /= np.linalg.norm(y[3:7])  # the base's unit quaternion
    q, _ = sd.spanning_state(model, y, None)
    y = q[tree.independent_q_index]
    yd = rng.normal(size=tree.nyv)
    tau = rng.normal(size=tree.nyv)
    nb = model.nbodies
    rotors = _rotors(model)
    fext = rng.normal(size=(nb, 6))
    F = rng.normal(size=(nb, 6))
    if robot == "mini_cheetah":
        assert rotors  # the pair path is exercised
    if case != "external force on a rotor":
        fext[rotors] = 0.0
    if case == "rotors apart":
        F[rotors] = 0.0
    mi, mf, ws, ci, cf, cws, nyv = _explicit_call(snapshot(model))
    ydd, dyd = np.empty(nyv), np.empty(nyv)
    status = cluster_response_kernel(mi, mf, ws, y, yd, tau, fext, F, ci, cf, cws, ydd, dyd)
    assert status == 0
    dense = _dense_response(model, q, F)
    assert np.abs(dyd - dense).max() <= 1e-10 * max(1.0, np.abs(dense).max())
    # the free pass itself is C-ABA's (its factorization is the one the response reused)
    np.testing.assert_allclose(ydd, sd.cluster_aba(model, y, yd, tau, fext, q=q), rtol=0, atol=1e-9)
