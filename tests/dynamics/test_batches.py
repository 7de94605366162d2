"""Batched calls (a leading batch dimension) equal the single-state calls, state by state.

B = 70 states: more than one block per worker thread (soadyn.core.batch.run_blocks), so the
threaded path, not only the single-block one, is what is compared.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import soadyn as sd
from soadyn.core.batch import MIN_BLOCK
from conftest import PROPERTY_SETTINGS, build_tree, random_states, tree_params

B = 70


@pytest.fixture(scope="module")
def states():
    model = sd.models.random_tree(7, 3, floating_base=True)
    rng = np.random.default_rng(5)
    return (model,) + random_states(model, rng, B)


def test_the_batch_is_split_into_blocks():
    assert B > 2 * MIN_BLOCK


def same(batched, single):
    assert batched.shape[0] == B
    for b in range(B):
        np.testing.assert_allclose(batched[b], single(b), rtol=1e-13, atol=1e-13)


FRAMES = [-1, 4]


@pytest.mark.parametrize("reference", ["local", "local_world_aligned", "world"])
def test_frame_functions(states, reference):
    model, Q, V, A = states
    for k in FRAMES:
        f = model.frames[k].name
        same(sd.frame_jacobian(model, Q, f, reference), lambda b: sd.frame_jacobian(model, Q[b], f, reference))
        same(sd.frame_velocity(model, Q, V, f, reference), lambda b: sd.frame_velocity(model, Q[b], V[b], f, reference))
        same(sd.frame_acceleration(model, Q, V, A, f, reference),
             lambda b: sd.frame_acceleration(model, Q[b], V[b], A[b], f, reference))
        same(sd.frame_placement(model, Q, f), lambda b: sd.frame_placement(model, Q[b], f))


def test_frame_velocity_is_the_jacobian_times_v(states):
    """An independent identity on the batch: V_frame = J(q) v."""
    model, Q, V, _ = states
    f = model.frames[-1].name
    J = sd.frame_jacobian(model, Q, f, "world")
    np.testing.assert_allclose(sd.frame_velocity(model, Q, V, f, "world"), np.einsum("bij,bj->bi", J, V),
                               rtol=1e-10, atol=1e-10)


def test_energies_and_centre_of_mass(states):
    model, Q, V, _ = states
    same(sd.kinetic_energy(model, Q, V), lambda b: sd.kinetic_energy(model, Q[b], V[b]))
    same(sd.potential_energy(model, Q), lambda b: sd.potential_energy(model, Q[b]))
    c, cd = sd.center_of_mass(model, Q, V)
    same(c, lambda b: sd.center_of_mass(model, Q[b]))
    same(cd, lambda b: sd.center_of_mass(model, Q[b], V[b])[1])
    # T = ½ vᵀMv on every state (an independent identity)
    M = sd.mass_matrix(model, Q)
    np.testing.assert_allclose(sd.kinetic_energy(model, Q, V), 0.5 * np.einsum("bi,bij,bj->b", V, M, V), rtol=1e-10)


def test_operator_functions(states):
    model, Q, _, _ = states
    same(sd.log_det_mass_matrix(model, Q), lambda b: sd.log_det_mass_matrix(model, Q[b]))
    P, D, G = sd.articulated_inertias(model, Q)
    same(P, lambda b: sd.articulated_inertias(model, Q[b]).P)
    same(D, lambda b: sd.articulated_inertias(model, Q[b]).D)
    same(G, lambda b: sd.articulated_inertias(model, Q[b]).G)
    same(sd.mass_matrix_inverse(model, Q), lambda b: sd.mass_matrix_inverse(model, Q[b]))
    frames = [model.frames[k].name for k in FRAMES]
    same(sd.operational_space_compliance(model, Q, frames),
         lambda b: sd.operational_space_compliance(model, Q[b], frames))
    Lam_inv = sd.operational_space_inertia(model, Q, frames[:1])
    np.testing.assert_allclose(Lam_inv @ sd.operational_space_compliance(model, Q, frames[:1]),
                               np.broadcast_to(np.eye(6), (B, 6, 6)), atol=1e-8)
    # log det M from the factorization equals the dense log det (independent: numpy's LU)
    np.testing.assert_allclose(sd.log_det_mass_matrix(model, Q), np.linalg.slogdet(sd.mass_matrix(model, Q))[1],
                               rtol=1e-10)


def test_tree_dynamics(states):
    model, Q, V, A = states
    tau = sd.rnea(model, Q, V, A)
    same(tau, lambda b: sd.rnea(model, Q[b], V[b], A[b]))
    same(sd.aba(model, Q, V, tau), lambda b: sd.aba(model, Q[b], V[b], tau[b]))
    same(sd.mass_matrix(model, Q), lambda b: sd.mass_matrix(model, Q[b]))


BATCHED = {
    "rnea": lambda model, Q, V, A: sd.rnea(model, Q, V, A),  # a batched twin
    # kernels that evaluate the states of a block one after another (soadyn.core.batch.stacked_block):
    # a block with a bad state is run again state by state, to name it
    "rnea_derivatives": lambda model, Q, V, A: sd.rnea_derivatives(model, Q, V, A),
    "kinetic_energy": lambda model, Q, V, A: sd.kinetic_energy(model, Q, V),
    "forward_kinematics": lambda model, Q, V, A: sd.forward_kinematics(model, Q, V, A),
    "body_forces": lambda model, Q, V, A: sd.body_forces(model, Q, V, A),
    "oscm": lambda model, Q, V, A: sd.operational_space_compliance(model, Q, [model.frames[-1].name]),
    "rollout": lambda model, Q, V, A: sd.rollout(model, Q, V, A[:, None], 1e-3),
}


@pytest.mark.parametrize("function", list(BATCHED))
def test_a_bad_state_in_a_batch_is_named(states, function):
    model, Q, V, A = states
    Q = Q.copy()
    Q[41, 0] = np.nan
    Q[60, 0] = np.inf  # a later bad state, in another block: the first is named
    with pytest.raises(ValueError, match=r"\b41\b"):
        BATCHED[function](model, Q, V, A)


def test_batches_from_several_threads_at_once(states):
    """Callers on several threads share the worker threads (each also runs its own blocks):
    every batch equals its states' single calls."""
    from concurrent.futures import ThreadPoolExecutor
    model, q, v, a = states[:4]
    scales = [0.5 * k for k in range(1, 7)]  # six different batches, three at a time
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda s: sd.rnea(model, q, v, s * a), scales))
    for s, tau in zip(scales, results):
        expected = np.array([sd.rnea(model, q[b], v[b], s * a[b]) for b in range(B)])
        np.testing.assert_allclose(tau, expected, rtol=1e-13, atol=1e-12)


@PROPERTY_SETTINGS
@given(tree_params, st.integers(1, 5))
def test_batched_calls_equal_single_calls(params, B):
    model, q, v, a, rng = build_tree(params)
    Q, Vv, A = random_states(model, rng, B)
    F = rng.normal(size=(B, model.nbodies, 6))
    tau = sd.rnea(model, Q, Vv, A, F)
    assert tau.shape == (B, model.nv)
    qdd = sd.aba(model, Q, Vv, tau, F)
    M = sd.mass_matrix(model, Q)
    fk = sd.forward_kinematics(model, Q, Vv, A)
    for b in range(B):
        assert np.allclose(tau[b], sd.rnea(model, Q[b], Vv[b], A[b], F[b]), atol=1e-12, rtol=1e-12)
        # the same kernel per state: equal to rounding (the round trip aba(rnea(a)) = a is
        # checked on well-conditioned states only, tests/kernels/test_rnea.py)
        assert np.allclose(qdd[b], sd.aba(model, Q[b], Vv[b], tau[b], F[b]), atol=1e-12, rtol=1e-12)
        assert np.allclose(M[b], sd.mass_matrix(model, Q[b]), atol=1e-12, rtol=1e-12)
        fk1 = sd.forward_kinematics(model, Q[b], Vv[b], A[b])
        assert np.allclose(fk.accelerations[b], fk1.accelerations)
        assert np.allclose(fk.rotations[b], fk1.rotations)
