"""Cross-check against Pinocchio on example-robot-data robots, fixed and floating base (also the centroidal
dynamics, the Coriolis matrix and the dynamic-parameter regressors).

Pinocchio is linear-first and its free-flyer velocity is [v; ω]; states, forces and Jacobians are converted with
soadyn.interop.pinocchio (through the benchmark peers' PinPair, benchmarks/peers.py), joints matched by name.
Agreement is required to 1e-10 relative.
"""
import numpy as np
import pytest

import soadyn as sd
from conftest import ROBOTS, load_pair, swap_lin_ang
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
        yield q, rng.normal(size=pair.sd.nv), rng.normal(size=pair.sd.nv), rng


def test_sizes_and_frames(pair):
    m, pm = pair.sd, pair.pm
    assert m.nv == pm.nv
    for f in m.frames:
        assert pm.existFrame(f.name), f.name


def test_rnea_with_external_forces(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, rng in states(pair):
        f = rng.normal(size=(m.nbodies, 6))
        tau = sd.rnea(m, q, v, a, f)
        fp = [pin.Force.Zero() for _ in range(pm.njoints)]
        for k, j in enumerate(m.joints):  # body frame = joint frame in both libraries
            fp[pm.getJointId(j.name)] = pin.Force(sdpin.force_to_pinocchio(f[k]))
        ref = pair.v_from_pin(pin.rnea(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a), fp))
        assert rel(tau, ref) < TOL


def test_aba(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, tau, rng in states(pair, seed=1):
        qdd = sd.aba(m, q, v, tau)
        ref = pair.v_from_pin(pin.aba(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau)))
        assert rel(qdd, ref) < TOL


def test_mass_matrix(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()
    for q, _, _, _ in states(pair, seed=2):
        Mp = pin.crba(pm, pd, pair.q_to_pin(q)).copy()
        Mp = np.triu(Mp) + np.triu(Mp, 1).T  # Pinocchio fills the upper triangle
        ref = T.T @ Mp @ T
        assert rel(sd.mass_matrix(m, q), ref) < TOL
        assert rel(sd.mass_matrix(m, q, method="jtmj"), ref) < TOL


def test_frame_placements_and_jacobians(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    refs = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    for q, v, _, _ in states(pair, count=2, seed=3):
        qp = pair.q_to_pin(q)
        pin.framesForwardKinematics(pm, pd, qp)
        pin.computeJointJacobians(pm, pd, qp)
        for f in m.frames:
            fid = pm.getFrameId(f.name)
            assert rel(sd.frame_placement(m, q, f.name), pd.oMf[fid].homogeneous) < TOL
        for f in m.frames[:: max(1, len(m.frames) // 8)]:
            fid = pm.getFrameId(f.name)
            for ref, pref in refs.items():
                J = sd.frame_jacobian(m, q, f.name, ref)
                Jp = sdpin.jacobian_from_pinocchio(m, pin.getFrameJacobian(pm, pd, fid, pref), pm)
                assert rel(J, Jp) < TOL, (f.name, ref)


def test_frame_velocity_and_acceleration(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, _ in states(pair, count=2, seed=4):
        pin.forwardKinematics(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a))
        pin.updateFramePlacements(pm, pd)
        for f in m.frames[:: max(1, len(m.frames) // 6)]:
            fid = pm.getFrameId(f.name)
            for ref, pref in (("local", pin.LOCAL), ("world", pin.WORLD)):
                Vp = pin.getFrameVelocity(pm, pd, fid, pref).vector
                Ap = pin.getFrameAcceleration(pm, pd, fid, pref).vector
                assert rel(sd.frame_velocity(m, q, v, f.name, ref), swap_lin_ang(Vp)) < TOL
                assert rel(sd.frame_acceleration(m, q, v, a, f.name, ref), swap_lin_ang(Ap)) < TOL


def test_energy_and_center_of_mass(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, _, _ in states(pair, count=2, seed=5):
        qp, vp = pair.q_to_pin(q), pair.v_to_pin(v)
        assert np.isclose(sd.kinetic_energy(m, q, v), pin.computeKineticEnergy(pm, pd, qp, vp), rtol=TOL)
        assert np.isclose(sd.potential_energy(m, q), pin.computePotentialEnergy(pm, pd, qp), rtol=TOL, atol=TOL)
        c = sd.center_of_mass(m, q)
        assert rel(c, pin.centerOfMass(pm, pd, qp)) < TOL


# --------------------------------------------------------------------------- centroidal dynamics, the Coriolis
# matrix and the dynamic-parameter regressors (issue 42). Pinocchio's momenta are [l; k] and its Ag has the
# linear rows first: mapped by soadyn.interop.pinocchio. Its dynamic parameters are per joint
# (pin.Inertia.toDynamicParameters of model.inertias): its regressors' columns are matched to soadyn's bodies
# by joint name.
def pin_states(pair, count=3, seed=0):
    """(q, v, a) and their Pinocchio counterparts."""
    for q, v, a, _ in states(pair, count, seed):
        yield q, v, a, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a)


def test_dynamic_parameters_are_pinocchios(pair):
    m, pm = pair.sd, pair.pm
    ref = np.concatenate([pm.inertias[j].toDynamicParameters() for j in range(1, pm.njoints)])
    assert rel(sd.dynamic_parameters(m), ref[pair.parameter_columns()]) < TOL


def test_centroidal_momentum_matrix_momentum_and_inertia(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in pin_states(pair):
        Ag = pin.computeCentroidalMap(pm, pd, qp).copy()
        A = sd.centroidal_momentum_matrix(m, q)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, Ag, pm)) < TOL
        pin.ccrba(pm, pd, qp, vp)
        assert rel(A, sdpin.jacobian_from_pinocchio(m, pd.Ag, pm)) < TOL
        assert rel(sd.centroidal_inertia(m, q), swap_lin_ang(swap_lin_ang(pd.Ig.matrix(), 0), 1)) < TOL
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        assert rel(sd.centroidal_momentum(m, q, v), sdpin.force_from_pinocchio(pd.hg.vector)) < TOL
        pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
        assert rel(sd.centroidal_momentum_rate(m, q, v, a), sdpin.force_from_pinocchio(pd.dhg.vector)) < TOL


def test_center_of_mass_jacobian_and_rates(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, qp, vp, ap in pin_states(pair, seed=1):
        Jp = pin.jacobianCenterOfMass(pm, pd, qp)
        assert rel(sd.center_of_mass_jacobian(m, q), sdpin.v_from_pinocchio(m, Jp, pm)) < TOL
        pin.centerOfMass(pm, pd, qp, vp, ap)
        for ours, ref in zip(sd.center_of_mass(m, q, v=v, a=a), (pd.com[0], pd.vcom[0], pd.acom[0])):
            assert rel(ours, ref) < TOL


def test_coriolis_matrix(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()  # v_pin = T v
    for q, v, _, qp, vp, _ in pin_states(pair, seed=2):
        Cp = pin.computeCoriolisMatrix(pm, pd, qp, vp)
        assert rel(sd.coriolis_matrix(m, q, v), T.T @ Cp @ T) < TOL


def test_joint_torque_regressor(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T, cols = pair.v_permutation(), pair.parameter_columns()
    for q, v, a, qp, vp, ap in pin_states(pair, seed=3):
        Yp = pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)
        assert rel(sd.joint_torque_regressor(m, q, v, a), T.T @ Yp[:, cols]) < TOL


def test_energy_regressors(pair):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    cols = pair.parameter_columns()
    for q, v, _, qp, vp, _ in pin_states(pair, seed=4):
        assert rel(sd.kinetic_energy_regressor(m, q, v), pin.computeKineticEnergyRegressor(pm, pd, qp, vp)[cols]) < TOL
        assert rel(sd.potential_energy_regressor(m, q), pin.computePotentialEnergyRegressor(pm, pd, qp)[cols]) < TOL
