"""Centre of mass and centroidal dynamics on random trees (every joint type), against
truths computed without the functions under test: the momentum summed body by body from
the forward kinematics and the bodies' spatial inertias (soadyn.core.spatial, numpy),
the locked system's inertia summed the same way, and central differences along a
trajectory for the rates. Pinocchio's values on the bench robots at the end."""
import numpy as np
import pytest

import soadyn as sd
from hypothesis import given

from conftest import (PINOCCHIO_TOL, PROPERTY_SETTINGS, assert_close, build_tree, pinocchio, rel, robot_pin_states,
                      swap_lin_ang, tree_motion, tree_params)
from soadyn.core import spatial as sp
from soadyn.interop import pinocchio as sdpin

CASES = [(10, seed, floating) for seed in range(4) for floating in (False, True)]


def body_sums(model, q, v):
    """(total mass, centre of mass, h_G, I_G) from the bodies one by one: each body's
    momentum M(k)V(k) and inertia M(k) (body frame, about its origin) moved to world axes at
    the centre of mass by the rigid-body transforms of soadyn.core.spatial."""
    k = sd.forward_kinematics(model, q, v)
    mass = sum(b.mass for b in model.bodies)
    c = sum(b.mass * (k.positions[i] + k.rotations[i] @ b.com) for i, b in enumerate(model.bodies)) / mass
    h, I = np.zeros(6), np.zeros((6, 6))
    for i, b in enumerate(model.bodies):
        R, p = k.rotations[i], k.positions[i] - c  # body i's pose in world axes at c
        h += sp.transform_force(R, p, b.inertia @ k.velocities[i])
        I += sp.force_transform(R, p) @ b.inertia @ sp.motion_transform(R, p)
    return mass, c, h, I


def along(model, q, v, a, t):
    """The state at time t of the motion q(t) = q ⊕ (v t + a t²/2), whose velocity is v + a t
    to first order in t: its second-order term is a commutator that vanishes at t = 0."""
    return sd.integrate(model, q, v * t + 0.5 * a * t * t, 1.0), v + a * t


def rate(f, h=1e-3):
    """df/dt at 0 by the five-point central difference (error O(h⁴))."""
    return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h)


@pytest.mark.parametrize("case", CASES)
def test_momentum_matrix_times_velocity_is_the_momentum_summed_body_by_body(case):
    model, q, v, _, _ = tree_motion(*case)
    mass, c, h, I = body_sums(model, q, v)
    A = sd.centroidal_momentum_matrix(model, q)
    assert_close(A @ v, h, what="A_G v")
    assert_close(sd.centroidal_momentum(model, q, v), h, what="h_G")
    assert_close(sd.centroidal_inertia(model, q), I, what="I_G")
    assert_close(sd.center_of_mass(model, q), c, what="c")
    # the linear rows: m J_c (the CoM Jacobian), and l_G = m ċ
    assert_close(A[3:], mass * sd.center_of_mass_jacobian(model, q), what="linear rows")


@pytest.mark.parametrize("case", CASES)
def test_rates_are_the_derivatives_along_a_trajectory(case):
    model, q, v, a, _ = tree_motion(*case)
    c, cd, cdd = sd.center_of_mass(model, q, v=v, a=a)
    assert_close(sd.center_of_mass_jacobian(model, q) @ v, cd, what="J_c v")
    assert_close(rate(lambda t: sd.center_of_mass(model, sd.integrate(model, q, v, t))), cd, 1e-9, "ċ")
    assert_close(rate(lambda t: sd.center_of_mass(model, *along(model, q, v, a, t))[1]), cdd, 1e-9, "c̈")
    assert_close(rate(lambda t: sd.centroidal_momentum(model, *along(model, q, v, a, t))),
                 sd.centroidal_momentum_rate(model, q, v, a), 1e-9, "ḣ_G")


def test_momentum_rate_is_the_net_external_wrench():
    """A free-floating system under gravity alone: ḣ_G of the forward dynamics is the weight,
    [0; m g] about the centre of mass (the momentum balance), the rate being kinematic."""
    model, q, v, _, _ = tree_motion(8, 3, True)
    qdd = sd.aba(model, q, v, np.zeros(model.nv))
    mass = sum(b.mass for b in model.bodies)
    assert_close(sd.centroidal_momentum_rate(model, q, v, qdd), np.concatenate([np.zeros(3), mass * model.gravity]),
                 1e-9, "ḣ_G = [0; m g]")
    assert_close(sd.center_of_mass(model, q, v, qdd)[2], model.gravity, 1e-9, "c̈ = g")


def test_batches_equal_single_calls():
    model, _, _, _, _ = tree_motion(7, 1, True)
    rng = np.random.default_rng(5)
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(40)])
    V, A = rng.normal(size=(2, 40, model.nv))
    batches = {"A_G": sd.centroidal_momentum_matrix(model, Q), "J_c": sd.center_of_mass_jacobian(model, Q),
               "h_G": sd.centroidal_momentum(model, Q, V), "dh_G": sd.centroidal_momentum_rate(model, Q, V, A),
               "I_G": sd.centroidal_inertia(model, Q)}
    c, cd, cdd = sd.center_of_mass(model, Q, V, A)
    for b in range(40):
        single = {"A_G": sd.centroidal_momentum_matrix(model, Q[b]), "J_c": sd.center_of_mass_jacobian(model, Q[b]),
                  "h_G": sd.centroidal_momentum(model, Q[b], V[b]),
                  "dh_G": sd.centroidal_momentum_rate(model, Q[b], V[b], A[b]), "I_G": sd.centroidal_inertia(model, Q[b])}
        for name, x in single.items():
            assert np.array_equal(batches[name][b], x), name
        for x, y in zip((c, cd, cdd), sd.center_of_mass(model, Q[b], V[b], A[b])):
            assert np.array_equal(x[b], y)


def test_absent_rates_and_return_forms():
    model, q, v, a, _ = tree_motion(6, 2, False)
    assert sd.center_of_mass(model, q).shape == (3,)
    c, cd = sd.center_of_mass(model, q, v)
    assert np.array_equal(sd.centroidal_momentum(model, q, None), np.zeros(6))
    assert_close(sd.centroidal_momentum_rate(model, q, None, a), sd.centroidal_momentum_matrix(model, q) @ a,
                 what="ḣ_G at q̇ = 0 is A_G q̈")
    assert np.array_equal(sd.center_of_mass(model, q, v, a)[1], cd)


def test_a_massless_system_has_no_centre_of_mass():
    model = sd.Model("ghost")
    model.add_body("link", sd.joints.Revolute("z"))
    q = sd.neutral(model)
    for call in (lambda: sd.centroidal_momentum_matrix(model, q), lambda: sd.center_of_mass_jacobian(model, q),
                 lambda: sd.center_of_mass(model, q), lambda: sd.centroidal_momentum(model, q, np.ones(1))):
        with pytest.raises(ValueError, match="'ghost' has no mass"):
            call()


def test_plain_calls_agree_with_the_validated_path_and_follow_edits():
    """The second call of A_G and J_c on a thread takes the plain kernel (soadyn.kernels.plain);
    it gives the validated path's result (a given workspace) bit for bit, and reads a model
    edited in between afresh (its body sums after the edit)."""
    from soadyn.dynamics.centroidal import _COM_JACOBIAN, _MAP
    model, q, v, _, _ = tree_motion(6, 4, True)
    ws = sd.Workspace(model)
    for _ in range(2):
        assert np.array_equal(sd.centroidal_momentum_matrix(model, q),
                              sd.centroidal_momentum_matrix(model, q, workspace=ws))
        assert np.array_equal(sd.center_of_mass_jacobian(model, q), sd.center_of_mass_jacobian(model, q, workspace=ws))
    assert _MAP.plain.general.signatures and _COM_JACOBIAN.plain.general.signatures
    before = sd.centroidal_momentum_matrix(model, q), sd.center_of_mass_jacobian(model, q)
    model.set_dynamic_parameters(2.0 * sd.dynamic_parameters(model))  # every body twice as dense
    _, _, h, _ = body_sums(model, q, v)
    assert_close(sd.centroidal_momentum_matrix(model, q) @ v, h, what="A_G v after the edit")
    assert_close(sd.centroidal_momentum_matrix(model, q), 2.0 * before[0], what="A_G doubled")
    assert_close(sd.center_of_mass_jacobian(model, q), before[1], what="J_c unchanged")


def test_centroidal_momentum_matrix_momentum_and_inertia(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in robot_pin_states(pair):
        Ag = pin.computeCentroidalMap(pm, pd, qp).copy()
        A = sd.centroidal_momentum_matrix(m, q)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, Ag, pm)) < PINOCCHIO_TOL
        pin.ccrba(pm, pd, qp, vp)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, pd.Ag, pm)) < PINOCCHIO_TOL
        assert rel(sd.centroidal_inertia(m, q), swap_lin_ang(swap_lin_ang(pd.Ig.matrix(), 0), 1)) < PINOCCHIO_TOL
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        assert rel(sd.centroidal_momentum(m, q, v), sdpin.force_from_pinocchio(pd.hg.vector)) < PINOCCHIO_TOL
        pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
        assert rel(sd.centroidal_momentum_rate(m, q, v, a), sdpin.force_from_pinocchio(pd.dhg.vector)) < PINOCCHIO_TOL


def test_center_of_mass_jacobian_and_rates(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in robot_pin_states(pair, seed=1):
        Jp = pin.jacobianCenterOfMass(pm, pd, qp)
        assert rel(sd.center_of_mass_jacobian(m, q), sdpin.v_from_pinocchio(m, Jp, pm)) < PINOCCHIO_TOL
        pin.centerOfMass(pm, pd, qp, vp, ap)
        for ours, ref in zip(sd.center_of_mass(m, q, v=v, a=a), (pd.com[0], pd.vcom[0], pd.acom[0])):
            assert rel(ours, ref) < PINOCCHIO_TOL


@PROPERTY_SETTINGS
@given(tree_params)
def test_center_of_mass_velocity(params):
    model, q, v, a, rng = build_tree(params)
    c, cd = sd.center_of_mass(model, q, v)
    h = 1e-6
    fd = (sd.center_of_mass(model, sd.integrate(model, q, v, h))
          - sd.center_of_mass(model, sd.integrate(model, q, v, -h))) / (2 * h)
    assert np.allclose(cd, fd, atol=1e-6)
