"""Forward kinematics and the frame functions (soadyn.kernels.kinematics, soadyn.kernels.frames):
placements, velocities and accelerations against Pinocchio on the bench robots, the frame velocity as the
derivative of the placement, and the frame walk against the recursion's body poses (random trees, every
joint type)."""
from __future__ import annotations

import numpy as np
from hypothesis import given

import soadyn as sd

from conftest import (PINOCCHIO_TOL, PROPERTY_SETTINGS, build_tree, pinocchio, rel, robot_states, swap_lin_ang,
                      tree_params)


def test_sizes_and_frames(pair):
    pin = pinocchio()
    m, pm = pair.sd, pair.pm
    assert m.nv == pm.nv
    for f in m.frames:
        assert pm.existFrame(f.name), f.name


def test_frame_velocity_and_acceleration(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, a, _ in robot_states(pair, count=2, seed=4):
        pin.forwardKinematics(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a))
        pin.updateFramePlacements(pm, pd)
        for f in m.frames[:: max(1, len(m.frames) // 6)]:
            fid = pm.getFrameId(f.name)
            for ref, pref in (("local", pin.LOCAL), ("world", pin.WORLD)):
                Vp = pin.getFrameVelocity(pm, pd, fid, pref).vector
                Ap = pin.getFrameAcceleration(pm, pd, fid, pref).vector
                assert rel(sd.frame_velocity(m, q, v, f.name, ref), swap_lin_ang(Vp)) < PINOCCHIO_TOL
                assert rel(sd.frame_acceleration(m, q, v, a, f.name, ref), swap_lin_ang(Ap)) < PINOCCHIO_TOL


@PROPERTY_SETTINGS
@given(tree_params)
def test_frame_velocity_is_derivative_of_placement(params):
    model, q, v, a, rng = build_tree(params)
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


@PROPERTY_SETTINGS
@given(tree_params)
def test_frame_placements_are_body_poses_times_frame_poses(params):
    """The walk from a frame's body to the root (frame placements) and the one-step world
    poses (forward kinematics without rates) agree with the world poses of the recursion
    with rates (joint placements, then their products), on every joint type."""
    model, q, v, a, rng = build_tree(params)
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
