"""Joint kinematics: the joint map and its bias term against numerical derivatives of the
joint transform, the compiled kernels against the Python definitions, and the
configuration-space operations."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn import spatial as sp


def make_joints(rng):
    return [
        jt.Revolute(rng.normal(size=3)), jt.Continuous(rng.normal(size=3)),
        jt.Prismatic(rng.normal(size=3)), jt.Helical(rng.normal(size=3), pitch=0.17),
        jt.Spherical(), jt.Free(), jt.Universal(rng.normal(size=3), rng.normal(size=3)),
        jt.Gimbal(tuple(rng.normal(size=(3, 3)))), jt.Gimbal(), jt.Planar(rng.normal(size=3)), jt.Planar(),
    ]


JOINT_IDS = ["revolute", "continuous", "prismatic", "helical", "spherical", "free", "universal",
             "gimbal", "gimbal_zyx", "planar", "planar_z"]


def single_joint_model(joint, rng):
    m = sd.Model("one", gravity=(0, 0, 0))
    placement = (sp.exp3(rng.normal(size=3)), rng.normal(size=3))
    m.add_body("b", joint, None, placement, mass=1.0, com=(0.1, 0.2, 0.3),
               inertia=np.diag([0.2, 0.3, 0.4]))
    return m, placement


def relative_velocity(joint, q0, q1, h):
    """[ω; v] of the child (child frame) from two nearby joint poses."""
    R0, p0 = (np.asarray(x, dtype=float) for x in joint.pose(q0))
    R1, p1 = (np.asarray(x, dtype=float) for x in joint.pose(q1))
    dR = R0.T @ R1
    w = sp.log3(dR) / h
    v = R0.T @ (p1 - p0) / h
    # v is the velocity of the child origin in the frame of pose 0; express in the child frame
    return w, v


@pytest.mark.parametrize("k", range(len(JOINT_IDS)), ids=JOINT_IDS)
def test_joint_map_is_derivative_of_joint_transform(k):
    rng = np.random.default_rng(10 + k)
    joint = make_joints(rng)[k]
    model, _ = single_joint_model(joint, rng)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    h = 1e-6
    qp, qm = sd.integrate(model, q, v, h), sd.integrate(model, q, v, -h)
    wp, vp = relative_velocity(joint, q, qp, h)
    wm, vm = relative_velocity(joint, q, qm, -h)
    w, vlin = (wp + wm) / 2, (vp + vm) / 2
    R, _ = joint.pose(q)
    Sv = joint.motion_subspace(q) @ v
    assert np.allclose(Sv[:3], w, atol=1e-7)
    assert np.allclose(Sv[3:], vlin, atol=1e-7)  # child-frame axes coincide at q (R0 = R(q))


@pytest.mark.parametrize("k", range(len(JOINT_IDS)), ids=JOINT_IDS)
def test_bias_term_is_derivative_of_joint_map(k):
    rng = np.random.default_rng(30 + k)
    joint = make_joints(rng)[k]
    model, _ = single_joint_model(joint, rng)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    h = 1e-6
    Sp = joint.motion_subspace(sd.integrate(model, q, v, h))
    Sm = joint.motion_subspace(sd.integrate(model, q, v, -h))
    assert np.allclose(joint.bias(q, v), (Sp - Sm) @ v / (2 * h), atol=1e-7)


@pytest.mark.parametrize("k", range(len(JOINT_IDS)), ids=JOINT_IDS)
def test_compiled_joint_kernels_match_definitions(k):
    """Body pose and local body Jacobian of a one-body model = placement ∘ pose(q), H*(q);
    the kernel's Coriolis term shows in the body acceleration at zero joint acceleration."""
    rng = np.random.default_rng(50 + k)
    joint = make_joints(rng)[k]
    model, (Rt, pt) = single_joint_model(joint, rng)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    Rj, pj = joint.pose(q)
    X = sd.frame_placement(model, q, "b")
    assert np.allclose(X[:3, :3], Rt @ Rj)
    assert np.allclose(X[:3, 3], pt + Rt @ pj)
    J = sd.frame_jacobian(model, q, "b", "local")
    assert np.allclose(J, joint.motion_subspace(q))
    fk = sd.forward_kinematics(model, q, v, np.zeros(model.nv))
    assert np.allclose(fk.velocities[0], joint.motion_subspace(q) @ v)
    # single body on a fixed base: α = Ḣ*v (the V × H*v term vanishes since V = H*v)
    assert np.allclose(fk.accelerations[0], joint.bias(q, v))


@pytest.mark.parametrize("k", range(len(JOINT_IDS)), ids=JOINT_IDS)
def test_integrate_difference_roundtrip(k):
    rng = np.random.default_rng(70 + k)
    joint = make_joints(rng)[k]
    model, _ = single_joint_model(joint, rng)
    q0 = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv) * 0.8
    q1 = sd.integrate(model, q0, v, 1.0)
    assert np.allclose(sd.difference(model, q0, q1), v, atol=1e-10)
    assert np.allclose(sd.integrate(model, q0, np.zeros(model.nv), 1.0), q0)
    # integrate(v, a + b) = integrate(integrate(v, a), b) for a constant velocity
    q_ab = sd.integrate(model, sd.integrate(model, q0, v, 0.3), v, 0.4)
    assert np.allclose(q_ab, sd.integrate(model, q0, v, 0.7), atol=1e-12)


def test_free_joint_integrate_is_body_screw_motion():
    """Constant body-frame twist: pose(t) = pose(0) exp(t V); checked against the matrix
    exponential of the 4×4 twist."""
    from scipy.linalg import expm
    rng = np.random.default_rng(5)
    model = sd.Model("free")
    model.add_body("b", jt.Free(), mass=1.0, inertia=np.eye(3))
    q0 = sd.random_configuration(model, rng)
    V = rng.normal(size=6)
    T0 = sd.frame_placement(model, q0, "b")
    tw = np.zeros((4, 4))
    tw[:3, :3] = sp.skew(V[:3])
    tw[:3, 3] = V[3:]
    T1 = sd.frame_placement(model, sd.integrate(model, q0, V, 0.7), "b")
    assert np.allclose(T1, T0 @ expm(0.7 * tw), atol=1e-12)


def test_random_configuration_respects_limits_and_neutral():
    rng = np.random.default_rng(0)
    m = sd.Model("lim")
    m.add_body("a", jt.Revolute("z", lower=[-0.5], upper=[0.25]), mass=1.0, inertia=np.eye(3))
    m.add_body("b", jt.Prismatic("x", lower=[1.0], upper=[2.0]), "a", mass=1.0, inertia=np.eye(3))
    m.add_body("c", jt.Spherical(), "b", mass=1.0, inertia=np.eye(3))
    qs = np.array([sd.random_configuration(m, rng) for _ in range(200)])
    assert qs[:, 0].min() >= -0.5 and qs[:, 0].max() <= 0.25
    assert qs[:, 1].min() >= 1.0 and qs[:, 1].max() <= 2.0
    assert np.allclose(np.linalg.norm(qs[:, 2:6], axis=1), 1.0)
    assert np.allclose(sd.neutral(m), [0, 0, 0, 0, 0, 1])


def test_configuration_rate_matches_integrate():
    rng = np.random.default_rng(9)
    m = sd.models.random_tree(8, rng)
    q = sd.random_configuration(m, rng)
    v = rng.normal(size=m.nv)
    h = 1e-6
    fd = (sd.integrate(m, q, v, h) - sd.integrate(m, q, v, -h)) / (2 * h)
    assert np.allclose(sd.configuration_rate(m, q, v), fd, atol=1e-7)


def test_joint_argument_errors():
    with pytest.raises(ValueError, match="axis"):
        jt.Revolute((0, 0, 0))
    with pytest.raises(ValueError, match="axis"):
        jt.Prismatic("w")
    with pytest.raises(ValueError, match="lower limit"):
        jt.Revolute("x", lower=[1.0], upper=[0.0])
    with pytest.raises(ValueError, match="3 axes"):
        jt.Gimbal(("x", "y"))
    with pytest.raises(ValueError, match="joint type"):
        jt.joint_from_name("ball-and-socket")
