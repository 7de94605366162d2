"""soadyn.compiled: the tree kernels called from a user's own Numba loop.

Checked against physical identities (M M⁻¹ = I, ABA inverts the RNEA, τ = M a + h, V = J v),
the public functions, and the errors the public functions give. Against the public
functions to round-off, not bitwise: the kernel's code is optimized again inside the
caller's function, where the compiler may fuse other multiply-adds."""
import threading

import numba
import numpy as np
import pytest

import soadyn as sd
from soadyn import compiled
from conftest import random_states

B = 6


@pytest.fixture(scope="module")
def case():
    model = sd.models.random_tree(7, 2, floating_base=True)
    rng = np.random.default_rng(11)
    return (model, compiled.arguments(model)) + random_states(model, rng, B)


@numba.njit(cache=True)
def _dynamics(k, Q, V, A, TAU, QDD, M, MINV):
    """Every state through four of the functions; returns the first failing state, or −1."""
    for i in range(Q.shape[0]):
        if compiled.rnea(k, Q[i], V[i], A[i], TAU[i]) != compiled.OK:
            return i
        if compiled.aba(k, Q[i], V[i], TAU[i], QDD[i]) != compiled.OK:
            return i
        if compiled.mass_matrix(k, Q[i], M[i]) != compiled.OK:
            return i
        if compiled.mass_matrix_inverse(k, Q[i], MINV[i]) != compiled.OK:
            return i
    return -1


def _run(k, Q, V, A):
    nv = V.shape[1]
    TAU, QDD = np.empty((2, len(Q), nv))
    M, MINV = np.empty((2, len(Q), nv, nv))
    return _dynamics(k, Q, V, A, TAU, QDD, M, MINV), TAU, QDD, M, MINV


def test_a_compiled_loop_satisfies_the_equations_of_motion(case):
    model, k, Q, V, A = case
    failed, TAU, QDD, M, MINV = _run(k, Q, V, A)
    assert failed == -1
    eye = np.broadcast_to(np.eye(model.nv), M.shape)
    np.testing.assert_allclose(M @ MINV, eye, atol=1e-9)
    np.testing.assert_allclose(QDD, A, rtol=1e-9, atol=1e-9)  # the ABA inverts the RNEA
    # τ = M a + h, h = τ at a = 0 (the RNEA's bias: a different evaluation of the same law)
    h = np.array([sd.rnea(model, q, v, None) for q, v in zip(Q, V)])
    np.testing.assert_allclose(TAU, np.einsum("bij,bj->bi", M, A) + h, rtol=1e-9, atol=1e-9)


def test_results_equal_the_public_functions(case):
    model, k, Q, V, A = case
    _, TAU, QDD, M, MINV = _run(k, Q, V, A)
    close = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(TAU, sd.rnea(model, Q, V, A), **close)
    np.testing.assert_allclose(QDD, sd.aba(model, Q, V, TAU), **close)
    np.testing.assert_allclose(M, sd.mass_matrix(model, Q), **close)
    np.testing.assert_allclose(MINV, sd.mass_matrix_inverse(model, Q), **close)


@numba.njit(cache=True)
def _placements(k, q, R, p):
    return compiled.body_placements(k, q, R, p)


@numba.njit(cache=True)
def _bias(k, q, v, tau):
    return compiled.rnea(k, q, v, k.absent, tau)  # a = 0


def test_placements_and_absent_rates(case):
    model, k, Q, V, _ = case
    R, p = np.empty((model.nbodies, 3, 3)), np.empty((model.nbodies, 3))
    assert _placements(k, Q[0], R, p) == compiled.OK
    fk = sd.forward_kinematics(model, Q[0])
    np.testing.assert_allclose(R, fk.rotations, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(p, fk.positions, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.einsum("bij,bkj->bik", R, R), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    tau = np.empty(model.nv)
    assert _bias(k, Q[0], V[0], tau) == compiled.OK
    np.testing.assert_allclose(tau, sd.bias_forces(model, Q[0], V[0]), rtol=1e-12, atol=1e-12)


def test_a_bad_state_is_reported_and_named(case):
    model, k, Q, V, A = case
    Q = Q.copy()
    Q[3, 1] = np.nan
    failed, *_ = _run(k, Q, V, A)
    assert failed == 3
    tau = np.empty(model.nv)
    status = _bias(k, Q[3], V[3], tau)
    with pytest.raises(ValueError, match="q: expected finite values"):
        compiled.check(model, status, "rnea")
    assert compiled.check(model, compiled.OK) is None
    short = np.empty(model.nv - 1)
    with pytest.raises(ValueError):
        compiled.check(model, _bias(k, Q[0], V[0], short))
    with pytest.raises(ValueError, match="function: expected one of"):
        compiled.check(model, 0, "nope")


def test_models_with_loops_are_refused():
    model = sd.models.four_bar_linkage()
    with pytest.raises(sd.ClosedChainError):
        compiled.arguments(model)
    k = compiled.arguments(model.spanning_tree())  # the spanning tree, asked for explicitly
    assert k.ws.shape[0] > 0


def test_arguments_are_copies_with_their_own_workspace(case):
    """No hidden state: each thread's arguments are its own; the model's tables untouched."""
    model, k, Q, V, A = case
    k2 = compiled.arguments(model)
    assert k2.ws is not k.ws and not np.shares_memory(k2.ws, k.ws)
    assert not np.shares_memory(k2.mf, k.mf)
    reference = _run(k, Q, V, A)[1]
    results = {}

    def work(t):
        mine = compiled.arguments(model)
        for _ in range(20):
            results[t] = _run(mine, Q, V, A)[1]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(2):
        np.testing.assert_array_equal(results[t], reference)


@numba.njit(cache=True)
def _constrained(k, Q, V, T, OUT, tol):
    for i in range(Q.shape[0]):
        status = compiled.constrained_forward_dynamics(k, Q[i], V[i], T[i], tol, OUT[i])
        if status != compiled.OK:
            return i, status
    return -1, 0


@pytest.mark.parametrize("name", ["four_bar_linkage", "planar_leg_linkage", "geared_chain"])
def test_constrained_forward_dynamics_in_a_compiled_loop(name):
    model = getattr(sd.models, name)() if name != "geared_chain" else sd.models.geared_chain(4)
    rng = np.random.default_rng(3)
    states = [sd.close_loops(model, sd.random_configuration(model, rng), rng.normal(size=model.nv))
              for _ in range(4)]
    Q, V = (np.array(x) for x in zip(*states))
    T = rng.normal(size=V.shape)
    k = compiled.constrained_arguments(model)
    OUT = np.empty((len(Q), k.output_size))
    assert _constrained(k, Q, V, T, OUT, 1e-6) == (-1, 0)
    for i in range(len(Q)):
        qdd = OUT[i, :model.nv]
        # the constraints hold at the acceleration level: G_c q̈ = 𝔘̊ (an independent law)
        G = sd.constraint_jacobian(model, Q[i])
        np.testing.assert_allclose(G @ qdd, sd.constraint_acceleration_bias(model, Q[i], V[i]), atol=1e-8)
        # and the same q̈ as the public function's projection method (another algorithm)
        ref = sd.constrained_forward_dynamics(model, Q[i], V[i], T[i], method="projection").qdd
        np.testing.assert_allclose(qdd, ref, rtol=1e-8, atol=1e-8)


def test_constrained_states_off_the_constraints_are_reported():
    model = sd.models.four_bar_linkage()
    rng = np.random.default_rng(4)
    q, v = sd.close_loops(model, sd.random_configuration(model, rng), rng.normal(size=model.nv))
    k = compiled.constrained_arguments(model)
    Q, V, T = q[None] + np.array([0.0, 0.3, 0.0]), v[None], np.zeros((1, model.nv))
    i, status = _constrained(k, Q, V, T, np.empty((1, k.output_size)), 1e-6)
    assert (i, status) == (0, compiled.OFF_MANIFOLD)
    with pytest.raises(ValueError, match="violates the constraints"):
        compiled.check(model, status, "constrained_forward_dynamics")


def test_constraints_in_python_are_refused():
    model = sd.models.double_pendulum()
    model.add_constraint(sd.HolonomicConstraint("hold", lambda q, t: np.array([q[0] - 0.2])))
    with pytest.raises(ValueError, match="constraint evaluated in Python"):
        compiled.constrained_arguments(model)


@numba.njit(cache=True)
def _frames(k, fl, fw, Q, V, T, J, VL, VW):
    for i in range(Q.shape[0]):
        if compiled.frame_placement(k, fl, Q[i], T[i]) != compiled.OK:
            return i
        if compiled.frame_jacobian(k, fl, Q[i], J[i]) != compiled.OK:
            return i
        if compiled.frame_velocity(k, fl, Q[i], V[i], VL[i]) != compiled.OK:
            return i
        if compiled.frame_velocity(k, fw, Q[i], V[i], VW[i]) != compiled.OK:
            return i
    return -1


def test_frame_functions(case):
    model, k, Q, V, _ = case
    name = model.frames[-1].name
    fl, fw = compiled.frame(model, name), compiled.frame(model, name, "world")
    T, J = np.empty((B, 4, 4)), np.empty((B, 6, model.nv))
    VL, VW = np.empty((2, B, 6))
    assert _frames(k, fl, fw, Q, V, T, J, VL, VW) == -1
    np.testing.assert_allclose(VL, np.einsum("bij,bj->bi", J, V), rtol=1e-10, atol=1e-10)  # V = J v
    close = dict(rtol=1e-12, atol=1e-12)
    for i in range(B):
        np.testing.assert_allclose(T[i], sd.frame_placement(model, Q[i], name), **close)
        np.testing.assert_allclose(J[i], sd.frame_jacobian(model, Q[i], name), **close)
        np.testing.assert_allclose(VW[i], sd.frame_velocity(model, Q[i], V[i], name, "world"), **close)
    with pytest.raises(ValueError, match="reference: expected one of"):
        compiled.frame(model, name, "global")
