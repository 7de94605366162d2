"""The kernels' specialised paths and the public functions' fast call path.

* Joints whose joint map is a unit column (revolute or prismatic about ±x, ±y, ±z),
  with and without a rotation in their placement, take short paths in every pass;
  they must agree with Pinocchio (an independent implementation) to 1e-10.
* The public functions call their kernel directly when the argument types are exact
  and fall back to a validated path otherwise: every input form must give the same
  result, and bad input must still raise the documented errors.
"""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn import spatial as sp
from soadyn.models import random_rigid_inertia

pin = pytest.importorskip("pinocchio")
from conftest import pinocchio_model  # noqa: E402
from soadyn.interop import pinocchio as sdpin  # noqa: E402

TOL = 1e-10
UNIT_AXES = [s * np.eye(3)[k] for k in range(3) for s in (1.0, -1.0)]


def rel(x, y):
    return np.abs(x - y).max() / max(1.0, np.abs(y).max())


def unit_axis_tree(seed, n=9, floating=False):
    """A random tree of revolute/prismatic joints about ±x, ±y, ±z (plus one about a
    general axis), half of the placements rotated."""
    rng = np.random.default_rng(seed)
    m = sd.Model(f"axes{seed}")
    branch = []  # bodies from the root to the last one added: depth-first numbering, which
    for k in range(n):  # Pinocchio's CRBA assumes (subtrees are contiguous)
        if k == 0 and floating:
            joint = jt.Free()
        elif k == n - 1:
            joint = jt.Revolute(rng.normal(size=3))
        else:
            axis = UNIT_AXES[rng.integers(6)]
            joint = jt.Prismatic(axis) if rng.random() < 0.25 else jt.Revolute(axis)
        R = sp.exp3(rng.normal(size=3)) if rng.random() < 0.5 else np.eye(3)
        del branch[int(rng.integers(1, len(branch) + 1)) if branch else 0:]
        parent = branch[-1] if branch else None
        branch.append(k)
        mass, com, Ic = random_rigid_inertia(rng)
        m.add_body(f"b{k}", joint, parent, (R, rng.normal(size=3) * 0.3), mass=mass, com=com, inertia=Ic)
    return m


@pytest.mark.parametrize("seed", range(6))
def test_unit_axis_paths_match_pinocchio(seed):
    m = unit_axis_tree(seed, floating=seed % 2 == 1)
    P = pinocchio_model(m)
    pm, pd = P.pm, P.pd
    T = P.v_permutation()
    rng = np.random.default_rng(seed)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    fext = rng.normal(size=(m.nbodies, 6))
    qp, vp, ap = P.q_to_pin(q), P.v_to_pin(v), P.v_to_pin(a)
    fp = pin.StdVec_Force()
    for _ in range(pm.njoints):
        fp.append(pin.Force.Zero())
    for b, f in zip(m.bodies, fext):  # body frame = joint frame in both libraries; Pinocchio is linear-first
        fp[pm.getJointId(b.joint.name)] = pin.Force(sdpin.force_to_pinocchio(f))
    tau = sd.rnea(m, q, v, a, fext)
    assert rel(P.v_to_pin(tau), pin.rnea(pm, pd, qp, vp, ap, fp)) < TOL
    assert rel(P.v_to_pin(sd.aba(m, q, v, tau, fext)), pin.aba(pm, pd, qp, vp, P.v_to_pin(tau), fp)) < TOL
    Mp = pin.crba(pm, pd, qp).copy()
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    assert rel(T @ sd.mass_matrix(m, q) @ T.T, Mp) < TOL
    pin.computeJointJacobians(pm, pd, qp)
    for b in m.bodies:
        Jp = pin.getJointJacobian(pm, pd, pm.getJointId(b.joint.name), pin.LOCAL)
        assert rel(sd.frame_jacobian(m, q, b.name), sdpin.jacobian_from_pinocchio(m, Jp, pm)) < TOL


@pytest.fixture(scope="module")
def tree():
    m = unit_axis_tree(11, floating=True)
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    return m, q, v, a


def test_every_input_form_gives_the_same_result(tree):
    m, q, v, a = tree
    want = {"rnea": sd.rnea(m, q, v, a), "aba": sd.aba(m, q, v, a), "M": sd.mass_matrix(m, q),
            "J": sd.frame_jacobian(m, q, "b3"), "R": sd.forward_kinematics(m, q).rotations}
    strided = np.zeros((m.nq, 3))
    strided[:, 1] = q
    readonly = q.copy()
    readonly.flags.writeable = False
    assert not strided[:, 1].flags.c_contiguous
    for qq in (list(q), strided[:, 1], readonly, q.astype(np.longdouble)):
        assert np.array_equal(sd.rnea(m, qq, list(v), a), want["rnea"])
        assert np.array_equal(sd.aba(m, qq, v, tuple(a)), want["aba"])
        assert np.array_equal(sd.mass_matrix(m, qq), want["M"])
        assert np.array_equal(sd.frame_jacobian(m, qq, "b3"), want["J"])
        assert np.array_equal(sd.forward_kinematics(m, qq).rotations, want["R"])
    ws, out, M = sd.Workspace(m), np.empty(m.nv), np.empty((m.nv, m.nv))
    assert sd.rnea(m, q, v, a, out=out, workspace=ws) is out and np.array_equal(out, want["rnea"])
    assert sd.aba(m, q, v, a, out=out, workspace=ws) is out and np.array_equal(out, want["aba"])
    M[:] = np.nan  # entries the kernel does not compute must still come out zero
    assert sd.mass_matrix(m, q, out=M, workspace=ws) is M and np.array_equal(M, want["M"])
    assert np.array_equal(sd.bias_forces(m, q, v), sd.rnea(m, q, v, np.zeros(m.nv)))
    assert np.array_equal(sd.generalized_gravity(m, q), sd.rnea(m, q, None, None))


def test_fast_path_errors(tree):
    m, q, v, a = tree
    other = unit_axis_tree(12, n=4)
    with pytest.raises(ValueError, match="workspace"):
        sd.rnea(m, q, v, a, workspace=sd.Workspace(other))
    with pytest.raises(ValueError, match="workspace"):
        sd.mass_matrix(m, q, workspace=object())
    with pytest.raises(ValueError, match="out: expected"):
        sd.aba(m, q, v, a, out=np.empty(m.nv, dtype=np.float32))
    with pytest.raises(ValueError, match="out: expected"):
        sd.mass_matrix(m, q, out=np.empty((m.nv, m.nv))[:, ::-1])
    with pytest.raises(ValueError, match=r"v: expected shape"):
        sd.rnea(m, q, v[:-1], a)
    with pytest.raises(ValueError, match=r"q: expected shape"):
        sd.frame_jacobian(m, q[:-1], "b3")
    bad = a.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="a: expected finite"):
        sd.rnea(m, q, v, bad)
    with pytest.raises(ValueError, match="tau: expected finite"):
        sd.aba(m, q, v, bad)


def test_frame_functions_input_forms_and_errors(tree):
    """The compiled frame functions: a batch equals the states one by one, lists equal
    arrays, a frame fixed to the world has its own pose and no motion, and bad input
    raises errors naming the argument."""
    m, q, v, a = tree
    rng = np.random.default_rng(3)
    Q = np.stack([q, sd.random_configuration(m, rng)])
    V, A = np.stack([v, -v]), np.stack([a, 2 * a])
    for ref in ("local", "local_world_aligned", "world"):
        one = [sd.frame_velocity(m, Q[b], V[b], "b3", ref) for b in range(2)]
        assert np.array_equal(sd.frame_velocity(m, Q, V, "b3", ref), np.stack(one))
        acc = [sd.frame_acceleration(m, Q[b], V[b], A[b], "b3", ref) for b in range(2)]
        assert np.array_equal(sd.frame_acceleration(m, Q, V, A, "b3", ref), np.stack(acc))
        assert np.array_equal(sd.frame_velocity(m, list(q), list(v), "b3", ref), one[0])
    assert np.array_equal(sd.frame_placement(m, Q, "b3")[1], sd.frame_placement(m, Q[1], "b3"))
    # the pose of body 3 composed in NumPy from forward_kinematics (another kernel)
    fk = sd.forward_kinematics(m, q)
    f = m.frame("b3")
    T = sd.frame_placement(m, q, "b3")
    assert np.allclose(T[:3, :3], fk.rotations[f.body] @ f.rotation, atol=1e-14)
    assert np.allclose(T[:3, 3], fk.positions[f.body] + fk.rotations[f.body] @ f.translation, atol=1e-14)
    assert np.array_equal(T[3], [0.0, 0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"reference: expected one of"):
        sd.frame_velocity(m, q, v, "b3", "LOCAL")
    with pytest.raises(ValueError, match=r"v: expected shape"):
        sd.frame_velocity(m, q, v[:-1], "b3")
    bad = v.copy()
    bad[0] = np.inf
    with pytest.raises(ValueError, match="v: expected finite"):
        sd.frame_velocity(m, q, bad, "b3")
    with pytest.raises(ValueError, match="frame: unknown frame"):
        sd.frame_placement(m, q, "nope")


def test_frame_on_the_world():
    """A frame fixed to the world: its placement at every q, zero velocity and acceleration."""
    m = unit_axis_tree(5, n=4)
    R, p = sp.exp3(np.array([0.1, -0.4, 0.3])), np.array([0.5, -1.0, 2.0])
    m.add_frame("station", "world", (R, p))
    q = sd.random_configuration(m, 0)
    v = np.ones(m.nv)
    T = sd.frame_placement(m, q, "station")
    assert np.array_equal(T[:3, :3], R) and np.array_equal(T[:3, 3], p) and np.array_equal(T[3], [0, 0, 0, 1])
    for ref in ("local", "world"):
        assert np.array_equal(sd.frame_velocity(m, q, v, "station", ref), np.zeros(6))
        assert np.array_equal(sd.frame_acceleration(m, q, v, v, "station", ref), np.zeros(6))


def test_frame_functions_follow_an_edited_frame_pose():
    """Assigning a frame's rotation or translation after a call: the next frame placement,
    velocity and Jacobian use the new pose (the world pose composed in NumPy from
    forward_kinematics; the local Jacobian maps v to the local frame velocity)."""
    m = unit_axis_tree(7, n=5)
    m.add_frame("tool", m.bodies[-1].name, (sp.exp3(np.array([0.2, 0.1, -0.3])), np.array([0.1, 0.0, 0.2])))
    q = sd.random_configuration(m, 1)
    v = np.linspace(-1.0, 1.0, m.nv)
    sd.frame_placement(m, q, "tool"), sd.frame_jacobian(m, q, "tool"), sd.frame_velocity(m, q, v, "tool")
    f = m.frame("tool")
    f.rotation = sp.exp3(np.array([-0.5, 0.7, 0.4]))
    f.translation = np.array([0.3, -0.2, 0.05])
    fk = sd.forward_kinematics(m, q)
    T = sd.frame_placement(m, q, "tool")
    assert np.allclose(T[:3, :3], fk.rotations[f.body] @ f.rotation, atol=1e-14)
    assert np.allclose(T[:3, 3], fk.positions[f.body] + fk.rotations[f.body] @ f.translation, atol=1e-14)
    assert np.allclose(sd.frame_jacobian(m, q, "tool") @ v, sd.frame_velocity(m, q, v, "tool"), atol=1e-12)
    # the frame velocity in local axes from the body's velocity, in NumPy
    Vb = sd.forward_kinematics(m, q, v).velocities[f.body]
    R, p = f.rotation, f.translation
    w = R.T @ Vb[:3]
    assert np.allclose(sd.frame_velocity(m, q, v, "tool"), np.concatenate([w, R.T @ (Vb[3:] + np.cross(Vb[:3], p))]),
                       atol=1e-12)
