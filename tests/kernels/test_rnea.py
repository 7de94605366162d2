"""Inverse dynamics by the RNEA (soadyn.kernels.rnea): τ against Pinocchio's rnea with external
forces on the bench robots; τ = M a + C with aba its inverse, external forces through the body
Jacobians (virtual work) and the generalized gravity as the gradient of the potential energy on
random trees (every joint type); the hinge forces f(k) ([Jain12, eq. 12], ``sd.body_forces``)
against Pinocchio's ``data.f`` after ``rnea`` (the same forces, linear-first), against τ = H f
per joint, and batches."""
import numpy as np
import pytest

from hypothesis import given

import soadyn as sd
from conftest import (PINOCCHIO_TOL, PROPERTY_SETTINGS, ROBOTS, assume_well_conditioned, build_tree, load_pair,
                      pinocchio, rel, robot_states, swap_lin_ang, tree_params)
from soadyn.interop import pinocchio as sdpin


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("floating", [False, True])
def test_hinge_forces_equal_pinocchio_data_f(name, floating):
    import pinocchio as pin
    pair = load_pair(name, floating)
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(3)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    f = sd.body_forces(m, q, v, a)
    assert f.shape == (m.nbodies, 6)
    pin.rnea(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a))
    scale = 1.0 + np.abs(f).max()
    for b in m.bodies:
        jid = pm.getJointId(b.joint.name)
        ref = swap_lin_ang(pd.f[jid].vector)  # Pinocchio [f; n] -> [n; f], the joint frame = the body frame
        assert np.abs(f[b.index] - ref).max() < 1e-10 * scale, b.joint.name


def test_hinge_forces_project_to_the_joint_forces_and_batch():
    """τ(k) = H(k) f(k) [Jain12, eq. 12] for every joint (H(k): the columns of joint k in the
    Jacobian of body k's frame, local axes), with external forces; a batch equals single calls."""
    m = sd.models.random_tree(7, 3, floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.array([sd.random_configuration(m, rng) for _ in range(5)])
    V, A = rng.normal(size=(2, 5, m.nv))
    F = rng.normal(size=(5, m.nbodies, 6))
    fb = sd.body_forces(m, Q, V, A, F)
    for b in range(5):
        one = sd.body_forces(m, Q[b], V[b], A[b], F[b])
        assert np.array_equal(fb[b], one)
        tau = sd.rnea(m, Q[b], V[b], A[b], F[b])
        for body in m.bodies:  # every body has a frame of its own name at its origin
            jt = body.joint
            H = sd.frame_jacobian(m, Q[b], body.name, reference="local")[:, jt.v_index:jt.v_index + jt.nv]
            assert np.allclose(H.T @ one[body.index], tau[jt.v_index:jt.v_index + jt.nv], atol=1e-9)


def test_tree_functions_only():
    with pytest.raises(sd.ClosedChainError, match="body_forces"):
        sd.body_forces(sd.models.four_bar_linkage(), np.zeros(3), None, None)


def test_rnea_with_external_forces(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, rng in robot_states(pair):
        f = rng.normal(size=(m.nbodies, 6))
        tau = sd.rnea(m, q, v, a, f)
        fp = [pin.Force.Zero() for _ in range(pm.njoints)]
        for k, j in enumerate(m.joints):  # body frame = joint frame in both libraries
            fp[pm.getJointId(j.name)] = pin.Force(sdpin.force_to_pinocchio(f[k]))
        ref = pair.v_from_pin(pin.rnea(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), fp))
        assert rel(tau, ref) < PINOCCHIO_TOL


@PROPERTY_SETTINGS
@given(tree_params)
def test_rnea_is_mass_matrix_plus_bias_and_aba_inverts_it(params):
    model, q, v, a, rng = build_tree(params)
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


@PROPERTY_SETTINGS
@given(tree_params)
def test_external_forces_enter_through_body_jacobians(params):
    """Virtual work: τ(f_ext) = τ(0) − Σ_k J_kᵀ f_ext(k) with J_k the local body Jacobian."""
    model, q, v, a, rng = build_tree(params)
    assume_well_conditioned(model, q)
    f = rng.normal(size=(model.nbodies, 6))
    expected = sd.rnea(model, q, v, a)
    for k, name in enumerate(model.body_names):
        expected -= sd.frame_jacobian(model, q, name, "local").T @ f[k]
    tau = sd.rnea(model, q, v, a, f)
    assert np.allclose(tau, expected, atol=1e-10 * (1 + np.abs(tau).max()))
    assert np.allclose(sd.aba(model, q, v, tau, f), a, atol=1e-9 * (1 + np.abs(a).max()))


@PROPERTY_SETTINGS
@given(tree_params)
def test_generalized_gravity_is_gradient_of_potential(params):
    model, q, v, a, rng = build_tree(params)
    g = sd.generalized_gravity(model, q)
    h = 1e-6
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1.0
        dU = (sd.potential_energy(model, sd.integrate(model, q, e, h))
              - sd.potential_energy(model, sd.integrate(model, q, e, -h))) / (2 * h)
        assert np.isclose(g[k], dU, atol=1e-6 * (1 + abs(dU)))
