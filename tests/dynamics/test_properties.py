"""Identities and physical laws on random trees mixing every joint type (hypothesis)."""
import numpy as np
from hypothesis import assume, given, settings, strategies as st

import soadyn as sd
from soadyn.models import random_tree
from soadyn.simulate import simulate
from conftest import random_states

trees = st.tuples(st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
SETTINGS = settings(max_examples=25, deadline=None)


def build(params, gravity=(0.0, 0.0, -9.81)):
    n, seed, floating = params
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng, floating_base=floating, gravity=gravity)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    return model, q, v, a, rng


def assume_well_conditioned(model, q, limit=1e8):
    """Forward dynamics loses about log10 cond(M) digits; random gimbal axes can put a state
    next to a coordinate singularity, where no 1e-9 agreement is possible for any solver."""
    assume(np.linalg.cond(sd.mass_matrix(model, q)) < limit)


@SETTINGS
@given(trees)
def test_mass_matrix_spd_and_methods_agree(params):
    model, q, v, a, rng = build(params)
    M = sd.mass_matrix(model, q)
    assert np.allclose(M, M.T, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0
    assert np.allclose(sd.mass_matrix(model, q, method="jtmj"), M, rtol=1e-10, atol=1e-10 * np.abs(M).max())
    # kinetic energy is ½ vᵀ M v
    assert np.isclose(sd.kinetic_energy(model, q, v), 0.5 * v @ M @ v, rtol=1e-10)


@SETTINGS
@given(trees)
def test_rnea_is_mass_matrix_plus_bias_and_aba_inverts_it(params):
    model, q, v, a, rng = build(params)
    assume_well_conditioned(model, q)
    tau = sd.rnea(model, q, v, a)
    M = sd.mass_matrix(model, q)
    C = sd.bias_forces(model, q, v)
    scale = 1 + np.abs(tau).max()
    assert np.allclose(tau, M @ a + C, atol=1e-10 * scale)
    assert np.allclose(sd.aba(model, q, v, tau), a, atol=1e-9 * (1 + np.abs(a).max()))
    # gravity splits off: C = C(gravity off) + g(q)
    assert np.allclose(C, sd.bias_forces(model, q, v, gravity=False) + sd.generalized_gravity(model, q),
                       atol=1e-10 * scale)


@SETTINGS
@given(trees)
def test_external_forces_enter_through_body_jacobians(params):
    """Virtual work: τ(f_ext) = τ(0) − Σ_k J_kᵀ f_ext(k) with J_k the local body Jacobian."""
    model, q, v, a, rng = build(params)
    assume_well_conditioned(model, q)
    f = rng.normal(size=(model.nbodies, 6))
    expected = sd.rnea(model, q, v, a)
    for k, name in enumerate(model.body_names):
        expected -= sd.frame_jacobian(model, q, name, "local").T @ f[k]
    tau = sd.rnea(model, q, v, a, f)
    assert np.allclose(tau, expected, atol=1e-10 * (1 + np.abs(tau).max()))
    assert np.allclose(sd.aba(model, q, v, tau, f), a, atol=1e-9 * (1 + np.abs(a).max()))


@SETTINGS
@given(trees)
def test_jacobian_times_velocity_is_frame_velocity(params):
    model, q, v, a, rng = build(params)
    fk = sd.forward_kinematics(model, q, v)
    for frame in model.frames[:: max(1, len(model.frames) // 6)]:
        for ref in ("local", "local_world_aligned", "world"):
            J = sd.frame_jacobian(model, q, frame.name, ref)
            assert np.allclose(J @ v, sd.frame_velocity(model, q, v, frame.name, ref), atol=1e-10)
    # body velocities are the local body Jacobians times v
    for k, name in enumerate(model.body_names):
        assert np.allclose(sd.frame_jacobian(model, q, name) @ v, fk.velocities[k], atol=1e-10)


@SETTINGS
@given(trees)
def test_frame_velocity_is_derivative_of_placement(params):
    model, q, v, a, rng = build(params)
    h = 1e-6
    frame = model.frames[-1].name
    Tp = sd.frame_placement(model, sd.integrate(model, q, v, h), frame)
    Tm = sd.frame_placement(model, sd.integrate(model, q, v, -h), frame)
    V = sd.frame_velocity(model, q, v, frame, "local_world_aligned")
    assert np.allclose((Tp[:3, 3] - Tm[:3, 3]) / (2 * h), V[3:], atol=1e-6)
    dR = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h)
    R = sd.frame_placement(model, q, frame)[:3, :3]
    W = dR @ R.T  # = [ω]× in world axes
    assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], V[:3], atol=1e-6)


@SETTINGS
@given(trees)
def test_generalized_gravity_is_gradient_of_potential(params):
    model, q, v, a, rng = build(params)
    g = sd.generalized_gravity(model, q)
    h = 1e-6
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1.0
        dU = (sd.potential_energy(model, sd.integrate(model, q, e, h))
              - sd.potential_energy(model, sd.integrate(model, q, e, -h))) / (2 * h)
        assert np.isclose(g[k], dU, atol=1e-6 * (1 + abs(dU)))


@SETTINGS
@given(trees)
def test_center_of_mass_velocity(params):
    model, q, v, a, rng = build(params)
    c, cd = sd.center_of_mass(model, q, v)
    h = 1e-6
    fd = (sd.center_of_mass(model, sd.integrate(model, q, v, h))
          - sd.center_of_mass(model, sd.integrate(model, q, v, -h))) / (2 * h)
    assert np.allclose(cd, fd, atol=1e-6)


@settings(max_examples=8, deadline=None)
@given(trees)
def test_kinetic_energy_conserved_without_gravity_and_torque(params):
    model, q, v, a, rng = build(params, gravity=(0.0, 0.0, 0.0))
    # keep away from gimbal/universal-joint singularities, where M itself turns singular
    assume(np.linalg.cond(sd.mass_matrix(model, q)) < 1e4)
    v = v / max(1.0, np.linalg.norm(v))
    res = simulate(model, q, v, 0.05, dt=5e-4)
    T0 = sd.kinetic_energy(model, q, v)
    T = np.array([sd.kinetic_energy(model, qq, vv) for qq, vv in zip(res.q, res.v)])
    assert np.abs(T - T0).max() < 1e-8 * max(T0, 1.0)


@SETTINGS
@given(trees, st.integers(1, 5))
def test_batched_calls_equal_single_calls(params, B):
    model, q, v, a, rng = build(params)
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
        # checked above on well-conditioned states only)
        assert np.allclose(qdd[b], sd.aba(model, Q[b], Vv[b], tau[b], F[b]), atol=1e-12, rtol=1e-12)
        assert np.allclose(M[b], sd.mass_matrix(model, Q[b]), atol=1e-12, rtol=1e-12)
        fk1 = sd.forward_kinematics(model, Q[b], Vv[b], A[b])
        assert np.allclose(fk.accelerations[b], fk1.accelerations)
        assert np.allclose(fk.rotations[b], fk1.rotations)


@SETTINGS
@given(trees)
def test_frame_placements_are_body_poses_times_frame_poses(params):
    """The walk from a frame's body to the root (frame placements) and the one-step world
    poses (forward kinematics without rates) agree with the world poses of the recursion
    with rates (joint placements, then their products), on every joint type."""
    model, q, v, a, rng = build(params)
    full = sd.forward_kinematics(model, q, v)
    poses = sd.forward_kinematics(model, q)
    assert np.allclose(poses.rotations, full.rotations, atol=1e-12)
    assert np.allclose(poses.positions, full.positions, atol=1e-12)
    for frame in model.frames:
        R, p = frame.rotation, frame.translation
        if frame.body >= 0:
            Rb, pb = full.rotations[frame.body], full.positions[frame.body]
            R, p = Rb @ R, pb + Rb @ p
        T = sd.frame_placement(model, q, frame.name)
        assert np.allclose(T[:3, :3], R, atol=1e-12) and np.allclose(T[:3, 3], p, atol=1e-12)
        assert np.array_equal(T[3], [0.0, 0.0, 0.0, 1.0])
