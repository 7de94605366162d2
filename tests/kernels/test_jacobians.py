"""Frame Jacobians (soadyn.kernels.jacobians) against Pinocchio's getFrameJacobian on the bench robots, in
the three reference frames, and J v the frame velocity on random trees (every joint type)."""
from __future__ import annotations

import numpy as np
from hypothesis import given

import soadyn as sd
from soadyn.interop import pinocchio as sdpin

from conftest import PINOCCHIO_TOL, PROPERTY_SETTINGS, build_tree, pinocchio, rel, robot_states, tree_params


def test_frame_placements_and_jacobians(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    refs = {"local": pin.LOCAL, "world": pin.WORLD, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    for q, v, _, _ in robot_states(pair, count=2, seed=3):
        qp = pair.q_to_pin(q)
        pin.framesForwardKinematics(pm, pd, qp)
        pin.computeJointJacobians(pm, pd, qp)
        for f in m.frames:
            fid = pm.getFrameId(f.name)
            assert rel(sd.frame_placement(m, q, f.name), pd.oMf[fid].homogeneous) < PINOCCHIO_TOL
        for f in m.frames[:: max(1, len(m.frames) // 8)]:
            fid = pm.getFrameId(f.name)
            for ref, pref in refs.items():
                J = sd.frame_jacobian(m, q, f.name, ref)
                Jp = sdpin.jacobian_from_pinocchio(m, pin.getFrameJacobian(pm, pd, fid, pref), pm)
                assert rel(J, Jp) < PINOCCHIO_TOL, (f.name, ref)


@PROPERTY_SETTINGS
@given(tree_params)
def test_jacobian_times_velocity_is_frame_velocity(params):
    model, q, v, a, rng = build_tree(params)
    fk = sd.forward_kinematics(model, q, v)
    for frame in model.frames[:: max(1, len(model.frames) // 6)]:
        for ref in ("local", "local_world_aligned", "world"):
            J = sd.frame_jacobian(model, q, frame.name, ref)
            assert np.allclose(J @ v, sd.frame_velocity(model, q, v, frame.name, ref), atol=1e-10)
    # body velocities are the local body Jacobians times v
    for k, name in enumerate(model.body_names):
        assert np.allclose(sd.frame_jacobian(model, q, name) @ v, fk.velocities[k], atol=1e-10)
