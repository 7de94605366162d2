"""The joint-torque and energy regressors on random trees (every joint type): the dynamics
are linear in the dynamic parameters, so Y π = rnea, y_T π = T and y_U π = U for the
model's π and for any other π given to the model with set_dynamic_parameters — the
regressor itself does not depend on π. The truths are the RNEA and the energy kernels
(other code). Pinocchio's regressors and dynamic parameters on the bench robots at the end."""
import numpy as np
import pytest

import soadyn as sd
from conftest import PINOCCHIO_TOL, assert_close, pinocchio, rel, robot_pin_states, tree_motion
from soadyn.core.parameters import body_parameters
from soadyn.models import random_rigid_inertia

CASES = [(10, seed, floating) for seed in range(4) for floating in (False, True)]


def random_parameters(model, rng):
    """A physically consistent π for the model's bodies."""
    return np.concatenate([body_parameters(*random_rigid_inertia(rng)) for _ in model.bodies])


@pytest.mark.parametrize("case", CASES)
def test_regressors_times_parameters_are_the_dynamics(case):
    model, q, v, a, rng = tree_motion(*case)
    Y = sd.joint_torque_regressor(model, q, v, a)
    yT, yU = sd.kinetic_energy_regressor(model, q, v), sd.potential_energy_regressor(model, q)
    for _ in range(3):
        pi = sd.dynamic_parameters(model)
        assert_close(Y @ pi, sd.rnea(model, q, v, a), what="Y π")
        assert_close(sd.joint_torque_regressor(model, q, v, a, gravity=False) @ pi,
                     sd.rnea(model, q, v, a, gravity=False), what="Y π without gravity")
        assert_close(yT @ pi, sd.kinetic_energy(model, q, v), what="y_T π")
        assert_close(yU @ pi, sd.potential_energy(model, q), what="y_U π")
        model.set_dynamic_parameters(random_parameters(model, rng))
        # the regressors are functions of the motion only
        assert_close(sd.joint_torque_regressor(model, q, v, a), Y, 1e-14, "Y after set_dynamic_parameters")
        assert_close(sd.kinetic_energy_regressor(model, q, v), yT, 1e-14, "y_T after set_dynamic_parameters")


def test_blocks_of_bodies_a_dof_does_not_support_are_zero():
    model, q, v, a, _ = tree_motion(10, 2, False)
    Y = sd.joint_torque_regressor(model, q, v, a)
    for k in range(model.nbodies):
        supported_by = {j.name for j in (model.bodies[i].joint for i in model.ancestors(k))}  # (k included)
        for j in model.joints:
            if j.nv and j.name not in supported_by:
                assert not Y[j.v_index:j.v_index + j.nv, 10 * k:10 * k + 10].any(), (k, j.name)


def test_absent_rates_batches_and_guard_rail():
    model, q, v, a, rng = tree_motion(7, 1, True)
    pi = sd.dynamic_parameters(model)
    assert_close(sd.joint_torque_regressor(model, q, None, None) @ pi, sd.generalized_gravity(model, q), what="Y(q, 0, 0) π")
    assert not sd.kinetic_energy_regressor(model, q, None).any()
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(40)])
    V, A = rng.normal(size=(2, 40, model.nv))
    Y, yT, yU = (sd.joint_torque_regressor(model, Q, V, A), sd.kinetic_energy_regressor(model, Q, V),
                 sd.potential_energy_regressor(model, Q))
    for b in range(40):
        assert np.array_equal(Y[b], sd.joint_torque_regressor(model, Q[b], V[b], A[b]))
        assert np.array_equal(yT[b], sd.kinetic_energy_regressor(model, Q[b], V[b]))
        assert np.array_equal(yU[b], sd.potential_energy_regressor(model, Q[b]))
    closed = sd.models.four_bar_linkage()
    with pytest.raises(sd.ClosedChainError, match="cluster_rnea"):
        sd.joint_torque_regressor(closed, sd.neutral(closed), None, None)


def test_dynamic_parameters_are_pinocchios(pair):
    pin = pinocchio()
    m, pm = pair.sd, pair.pm
    ref = np.concatenate([pm.inertias[j].toDynamicParameters() for j in range(1, pm.njoints)])
    assert rel(sd.dynamic_parameters(m), ref[pair.parameter_columns()]) < PINOCCHIO_TOL


def test_joint_torque_regressor(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T, cols = pair.v_permutation(), pair.parameter_columns()
    for q, v, a, qp, vp, ap in robot_pin_states(pair, seed=3):
        Yp = pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)
        assert rel(sd.joint_torque_regressor(m, q, v, a), T.T @ Yp[:, cols]) < PINOCCHIO_TOL


def test_energy_regressors(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    cols = pair.parameter_columns()
    for q, v, _, qp, vp, _ in robot_pin_states(pair, seed=4):
        assert rel(sd.kinetic_energy_regressor(m, q, v), pin.computeKineticEnergyRegressor(pm, pd, qp, vp)[cols]) < PINOCCHIO_TOL
        assert rel(sd.potential_energy_regressor(m, q), pin.computePotentialEnergyRegressor(pm, pd, qp)[cols]) < PINOCCHIO_TOL
