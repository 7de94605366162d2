"""Centroidal dynamics, the Coriolis matrix and the dynamic-parameter regressors against
Pinocchio on the example-robot-data robots, fixed and floating base, to 1e-10 relative.

Pinocchio is linear-first ([v; ω] free-flyer velocities, [l; k] momenta, linear rows first in
its Ag): states, momenta and Jacobians are mapped with soadyn.interop.pinocchio (through the
benchmark peers' PinPair, joints matched by name), never reordered by hand. Its dynamic
parameters are per joint (``pin.Inertia.toDynamicParameters`` of ``model.inertias``): the
columns of its regressors are matched to soadyn's bodies by joint name.
"""
import numpy as np
import pytest

import soadyn as sd
from conftest import ROBOTS, load_pair
from soadyn.interop import pinocchio as sdpin

pin = pytest.importorskip("pinocchio")

CASES = [(name, floating) for name in ROBOTS for floating in (False, True)]
TOL = 1e-10


def rel(x, y):
    return np.abs(x - y).max() / max(1.0, np.abs(y).max())


@pytest.fixture(scope="module", params=CASES, ids=[f"{n}-{'floating' if f else 'fixed'}" for n, f in CASES])
def pair(request):
    name, floating = request.param
    return load_pair(name, floating)


def states(pair, count=3, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = sd.random_configuration(pair.sd, rng)
        v, a = rng.normal(size=(2, pair.sd.nv))
        yield q, v, a, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a)


def parameter_columns(pair):
    """Indices into Pinocchio's regressor columns (10 per joint, joint order) of soadyn's
    columns (10 per body, body order): every soadyn body moves with its own Pinocchio joint
    (the URDF's fixed links are merged into their parents in both libraries)."""
    m, pm = pair.sd, pair.pm
    assert m.nbodies == pm.njoints - 1
    return np.concatenate([10 * (pm.getJointId(b.joint.name) - 1) + np.arange(10) for b in m.bodies])


def swap6(X):
    """Rows and columns of a 6 × 6 matrix between linear-first and angular-first."""
    order = [3, 4, 5, 0, 1, 2]
    return X[np.ix_(order, order)]


def test_dynamic_parameters_are_pinocchios(pair):
    m, pm = pair.sd, pair.pm
    ref = np.concatenate([pm.inertias[j].toDynamicParameters() for j in range(1, pm.njoints)])
    assert rel(sd.dynamic_parameters(m), ref[parameter_columns(pair)]) < TOL


def test_centroidal_momentum_matrix_momentum_and_inertia(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in states(pair):
        Ag = pin.computeCentroidalMap(pm, pd, qp).copy()
        A = sd.centroidal_momentum_matrix(m, q)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, Ag, pm)) < TOL
        pin.ccrba(pm, pd, qp, vp)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, pd.Ag, pm)) < TOL
        assert rel(sd.centroidal_inertia(m, q), swap6(pd.Ig.matrix())) < TOL
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        assert rel(sd.centroidal_momentum(m, q, v), sdpin.force_from_pinocchio(pd.hg.vector)) < TOL
        pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
        assert rel(sd.centroidal_momentum_rate(m, q, v, a), sdpin.force_from_pinocchio(pd.dhg.vector)) < TOL


def test_center_of_mass_jacobian_and_rates(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in states(pair, seed=1):
        Jp = pin.jacobianCenterOfMass(pm, pd, qp)
        assert rel(sd.center_of_mass_jacobian(m, q), sdpin.v_from_pinocchio(m, Jp, pm)) < TOL
        pin.centerOfMass(pm, pd, qp, vp, ap)
        for ours, ref in zip(sd.center_of_mass(m, q, v=v, a=a), (pd.com[0], pd.vcom[0], pd.acom[0])):
            assert rel(ours, ref) < TOL


def test_coriolis_matrix(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()  # v_pin = T v
    for q, v, _, qp, vp, _ in states(pair, seed=2):
        Cp = pin.computeCoriolisMatrix(pm, pd, qp, vp)
        assert rel(sd.coriolis_matrix(m, q, v), T.T @ Cp @ T) < TOL


def test_joint_torque_regressor(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T, cols = pair.v_permutation(), parameter_columns(pair)
    for q, v, a, qp, vp, ap in states(pair, seed=3):
        Yp = pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)
        assert rel(sd.joint_torque_regressor(m, q, v, a), T.T @ Yp[:, cols]) < TOL


def test_energy_regressors(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    cols = parameter_columns(pair)
    for q, v, _, qp, vp, _ in states(pair, seed=4):
        assert rel(sd.kinetic_energy_regressor(m, q, v), pin.computeKineticEnergyRegressor(pm, pd, qp, vp)[cols]) < TOL
        assert rel(sd.potential_energy_regressor(m, q), pin.computePotentialEnergyRegressor(pm, pd, qp)[cols]) < TOL
