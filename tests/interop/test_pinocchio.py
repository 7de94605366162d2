"""soadyn.interop.pinocchio against Pinocchio itself.

The truths are Pinocchio's: its rnea, aba, crba, frame placements and frame Jacobians on
the same URDF file loaded by Pinocchio (``pin.buildModelFromUrdf``) and by soadyn
(``sd.load_urdf``), which give the joints in the same order (checked on every
example-robot-data URDF). soadyn's results converted with the module — without
``pin_model`` (Pinocchio's order assumed to be ``to_pinocchio``'s) and with it (joints
matched by name) — must equal them to 1e-10 (relative); the models built by
``from_pinocchio`` and ``to_pinocchio`` must reproduce Pinocchio's (resp. soadyn's) dynamics.
"""
import glob
import os
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import soadyn as sd  # noqa: E402
from conftest import peers  # noqa: E402
from soadyn import joints as jt  # noqa: E402
from soadyn import spatial as sp  # noqa: E402
from soadyn.interop import pinocchio as sdpin  # noqa: E402
from soadyn.models import random_rigid_inertia, random_tree  # noqa: E402

TOL = 1e-10
HERE = os.path.dirname(os.path.abspath(__file__))

#: example-robot-data robots: (path under robots/, floating base). kinova has continuous
#: joints (Pinocchio q = (cos θ, sin θ)); hyq and talos list a link's child joints in their
#: files in an order other than by name (so soadyn's URDF order before it followed
#: Pinocchio's differed); panda has an unaligned prismatic joint and fixed links.
ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "kinova": ("kinova_description/robots/kinova.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
}


def rel(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    return np.abs(x - y).max(initial=0.0) / max(1.0, np.abs(y).max(initial=0.0))


def quiet(f, *args, **kw):
    """Call f with warnings off (placeholder inertias in published robot files)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def full(M):
    """Pinocchio's crba and computeMinverse fill the upper triangle only."""
    M = np.array(M)
    return np.triu(M) + np.triu(M, 1).T


def matrix_from_pinocchio(model, M_pin, pm=None):
    """An (nv, nv) matrix in soadyn's v order (the module docstring's recipe)."""
    return sdpin.v_from_pinocchio(model, sdpin.v_from_pinocchio(model, M_pin, pm).T, pm).T


class Case:
    def __init__(self, name):
        directory = peers.robots_dir()
        if directory is None:
            pytest.skip("example-robot-data is not installed")
        rel_path, self.floating = ROBOTS[name]
        self.path = os.path.join(directory, rel_path)
        self.m = quiet(sd.load_urdf, self.path, floating_base=self.floating, mimic="ignore")  # Pinocchio's tree
        self.pm = (pin.buildModelFromUrdf(self.path, pin.JointModelFreeFlyer()) if self.floating
                   else pin.buildModelFromUrdf(self.path))
        self.pd = self.pm.createData()

    def states(self, count, seed):
        rng = np.random.default_rng(seed)
        for _ in range(count):
            q = sd.random_configuration(self.m, rng)
            v, a = rng.normal(size=(2, self.m.nv))
            yield q, v, a, rng.normal(size=(self.m.nbodies, 6))


@pytest.fixture(scope="module", params=list(ROBOTS))
def case(request):
    return Case(request.param)


def pin_fext(model, pm, f_ext):
    """Pinocchio's external forces (one per joint, joint frame) for soadyn's f_ext (body frames)."""
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for b in model.bodies:
        if b.joint.nv == 0:
            continue
        fext[pm.getJointId(b.joint.name)] = pin.Force(sdpin.force_to_pinocchio(f_ext[b.index]))
    return fext


def check_dynamics(model, pm, pd, q, v, a, f_ext, named=True):
    """soadyn's rnea (with external forces), aba and mass matrix against Pinocchio's, converted
    both ways, passing ``pm`` to the converters (``named``) or not (then ``pm`` must have
    ``to_pinocchio(model)``'s joint order). Bodies on fixed joints get no external force
    (Pinocchio welds them into their parent's joint: it has no such body)."""
    conv = pm if named else None
    f_ext = np.array(f_ext)
    f_ext[[b.index for b in model.bodies if b.joint.nv == 0]] = 0.0
    qp = sdpin.q_to_pinocchio(model, q, conv)
    vp, ap = sdpin.v_to_pinocchio(model, v, conv), sdpin.v_to_pinocchio(model, a, conv)
    tau_pin = pin.rnea(pm, pd, qp, vp, ap, pin_fext(model, pm, f_ext)).copy()
    tau = sd.rnea(model, q, v, a, f_ext)
    assert rel(tau, sdpin.v_from_pinocchio(model, tau_pin, conv)) < TOL
    assert rel(sdpin.v_to_pinocchio(model, tau, conv), tau_pin) < TOL
    qdd_pin = pin.aba(pm, pd, qp, vp, sdpin.v_to_pinocchio(model, tau, conv)).copy()
    assert rel(sd.aba(model, q, v, tau), sdpin.v_from_pinocchio(model, qdd_pin, conv)) < TOL
    M_pin = full(pin.crba(pm, pd, qp))
    assert rel(sd.mass_matrix(model, q), matrix_from_pinocchio(model, M_pin, conv)) < TOL


def check_both_ways(model, pm, pd, q, v, a, f_ext):
    """check_dynamics and check_frames, converting with ``pm`` (by joint name) and without
    (``pm`` in ``to_pinocchio(model)``'s order)."""
    for named in (True, False):
        check_dynamics(model, pm, pd, q, v, a, f_ext, named=named)
        check_frames(model, pm, pd, q, named=named)


def check_frames(model, pm, pd, q, frames=None, named=True):
    """Placements and the three kinds of frame Jacobian of soadyn's frames against Pinocchio's
    frames of the same name (``named``: as in check_dynamics)."""
    conv = pm if named else None
    qp = sdpin.q_to_pinocchio(model, q, conv)
    pin.framesForwardKinematics(pm, pd, qp)
    pin.computeJointJacobians(pm, pd, qp)
    for f in model.frames if frames is None else frames:
        assert pm.existFrame(f.name), f.name
        fid = pm.getFrameId(f.name)
        assert rel(sd.frame_placement(model, q, f.name), pd.oMf[fid].homogeneous) < TOL, f.name
        for ref, pref in (("local", pin.LOCAL), ("world", pin.WORLD), ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            J = sd.frame_jacobian(model, q, f.name, ref)
            Jp = pin.getFrameJacobian(pm, pd, fid, pref)
            assert rel(J, sdpin.jacobian_from_pinocchio(model, Jp, conv)) < TOL, (f.name, ref)
            assert rel(sdpin.jacobian_to_pinocchio(model, J, conv), Jp) < TOL, (f.name, ref)


# =========================================================================== URDF joint order
def file_joint_order(path):
    """The moving joints of a URDF file in the order the file lists them."""
    root = ET.parse(path).getroot()
    return [j.get("name") for j in root.findall("joint") if j.get("type") != "fixed"]


@pytest.fixture(scope="module")
def every_urdf():
    """(file under robots/, floating base, soadyn model, Pinocchio model) for every
    example-robot-data URDF both libraries load, fixed and floating base."""
    directory = peers.robots_dir()
    if directory is None:
        pytest.skip("example-robot-data is not installed")
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "**", "*.urdf"), recursive=True)):
        for floating in (False, True):
            try:
                pm = quiet(pin.buildModelFromUrdf, path, *([pin.JointModelFreeFlyer()] if floating else []))
            except (ValueError, RuntimeError):  # e.g. ur3.urdf: no robot name
                continue
            out.append((os.path.relpath(path, directory), floating,
                        quiet(sd.load_urdf, path, floating_base=floating, mimic="ignore", collisions=False), pm))
    assert len(out) >= 120, len(out)  # 68 files of example-robot-data 6.0, twice
    return out


def test_urdf_joint_order_is_pinocchios_on_every_example_robot(every_urdf):
    """sd.load_urdf and pin.buildModelFromUrdf: the same joints in the same order, q and v laid
    out alike apart from continuous joints' (cos θ, sin θ) and the free flyer's [v; ω]; and
    to_pinocchio gives Pinocchio's URDF order back. The rule is not the files' order."""
    not_file_order = []
    for name, floating, m, pm in every_urdf:
        moving = [j for j in m.joints if j.nv]
        assert [j.name for j in moving] == list(pm.names)[1:], (name, floating)
        continuous = 0
        for jid, j in enumerate(moving, start=1):
            unbounded = j.kind == "continuous"
            assert pm.nqs[jid] == j.nq + unbounded and pm.nvs[jid] == j.nv, (name, j.name)
            assert pm.idx_qs[jid] == j.q_index + continuous and pm.idx_vs[jid] == j.v_index, (name, j.name)
            continuous += unbounded
        if floating:
            assert pm.names[1] == "root_joint" and m.joints[0].kind == "free" and pm.joints[1].shortname() == \
                "JointModelFreeFlyer"
            v = np.arange(float(m.nv))
            assert sdpin.v_to_pinocchio(m, v)[:6].tolist() == [3, 4, 5, 0, 1, 2]
        if moving and not floating:
            assert list(sdpin.to_pinocchio(m).names) == list(pm.names), name
            if file_joint_order(os.path.join(peers.robots_dir(), name)) != list(pm.names)[1:]:
                not_file_order.append(name)
    assert len(not_file_order) >= 20, not_file_order  # 33 of 68 files


def test_two_argument_converters_on_every_example_robot(every_urdf):
    """rnea and aba of each URDF model equal Pinocchio's through q_to_pinocchio(model, q) and
    friends, without pin_model, fixed and floating base (aba where the mass matrix is regular:
    Pinocchio's is NaN for models with massless leaves, such as romeo's fingers)."""
    rng = np.random.default_rng(11)
    singular = []
    for name, floating, m, pm in every_urdf:
        if m.nv == 0:  # hector, iris without a floating base
            continue
        pd = pm.createData()
        q = sd.random_configuration(m, rng)
        v, a = rng.normal(size=(2, m.nv))
        qp, vp = sdpin.q_to_pinocchio(m, q), sdpin.v_to_pinocchio(m, v)
        tau = sd.rnea(m, q, v, a)
        assert rel(sdpin.v_from_pinocchio(m, pin.rnea(pm, pd, qp, vp, sdpin.v_to_pinocchio(m, a))), tau) < TOL, \
            (name, floating)
        qdd = sdpin.v_from_pinocchio(m, pin.aba(pm, pd, qp, vp, sdpin.v_to_pinocchio(m, tau)))
        if not np.all(np.isfinite(qdd)):
            singular.append((name, floating))
            continue
        assert rel(qdd, a) < 1e-8 and rel(sd.aba(m, q, v, tau), qdd) < 1e-8, (name, floating)
    assert {name.split("/")[0] for name, _ in singular} <= {"romeo_description"}, singular


def test_the_robots_cover_reordered_joints_and_continuous_joints():
    """The facts the tests below rely on hold on these robots (else they prove less): hyq's
    and talos's files list joints in another order than Pinocchio's; kinova has continuous
    joints."""
    cases = {name: Case(name) for name in ("hyq", "talos", "kinova")}
    for name in ("hyq", "talos"):
        c = cases[name]
        assert file_joint_order(c.path) != list(c.pm.names)[2:], name  # [1] is the root joint
    k = cases["kinova"]
    assert k.pm.nq > k.m.nq and "JointModelRUBZ" in {j.shortname() for j in k.pm.joints}


def test_dynamics_through_the_converters(case):
    for q, v, a, f in case.states(3, seed=0):
        check_dynamics(case.m, case.pm, case.pd, q, v, a, f, named=False)
        check_dynamics(case.m, case.pm, case.pd, q, v, a, f)


def test_without_pin_model_the_same_numbers(case):
    """For URDF models the converters give the same arrays with and without pin_model."""
    m, pm = case.m, case.pm
    rng = np.random.default_rng(12)
    q, v = sd.random_configuration(m, rng), rng.normal(size=m.nv)
    qp, vp = pin.randomConfiguration(pm), rng.normal(size=pm.nv)
    J, Jp = rng.normal(size=(6, m.nv)), rng.normal(size=(6, pm.nv))
    for f, x in ((sdpin.q_to_pinocchio, q), (sdpin.q_from_pinocchio, qp), (sdpin.v_to_pinocchio, v),
                 (sdpin.v_from_pinocchio, vp), (sdpin.jacobian_to_pinocchio, J), (sdpin.jacobian_from_pinocchio, Jp)):
        assert np.array_equal(f(m, x), f(m, x, pm)), f.__name__


def test_frames_through_the_converters(case):
    m = case.m
    frames = m.frames[:: max(1, len(m.frames) // 10)]
    for q, _, _, _ in case.states(2, seed=1):
        check_frames(m, case.pm, case.pd, q, frames, named=False)
        check_frames(m, case.pm, case.pd, q, frames[::2])


def test_free_flyer_velocity_is_swapped(case):
    """Pinocchio's root-joint velocity data.v[1] is [v; ω] of the base in its frame; soadyn's
    base velocity is [ω; v] in the same frame."""
    if not case.floating:
        pytest.skip("fixed base")
    m, pm, pd = case.m, case.pm, case.pd
    for q, v, _, _ in case.states(2, seed=2):
        pin.forwardKinematics(pm, pd, sdpin.q_to_pinocchio(m, q), sdpin.v_to_pinocchio(m, v))
        V = sd.forward_kinematics(m, q, v).velocities[0]
        assert rel(V[3:], pd.v[pm.getJointId("root_joint")].linear) < TOL
        assert rel(V[:3], pd.v[pm.getJointId("root_joint")].angular) < TOL


def test_round_trips(case):
    m, pm = case.m, case.pm
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = sd.random_configuration(m, rng)  # continuous angles in [-π, π]
        assert rel(sdpin.q_from_pinocchio(m, sdpin.q_to_pinocchio(m, q, pm), pm), q) < 1e-14
        assert rel(sdpin.q_from_pinocchio(m, sdpin.q_to_pinocchio(m, q)), q) < 1e-14
        qp = pin.normalize(pm, rng.normal(size=pm.nq))  # Pinocchio's own configuration
        assert rel(sdpin.q_to_pinocchio(m, sdpin.q_from_pinocchio(m, qp, pm), pm), qp) < 1e-14
        v, vp = rng.normal(size=m.nv), rng.normal(size=pm.nv)
        assert np.array_equal(sdpin.v_from_pinocchio(m, sdpin.v_to_pinocchio(m, v, pm), pm), v)
        assert np.array_equal(sdpin.v_to_pinocchio(m, sdpin.v_from_pinocchio(m, vp, pm), pm), vp)
        assert np.array_equal(sdpin.v_to_pinocchio(m, sdpin.v_from_pinocchio(m, vp)), vp)
        J, Jp = rng.normal(size=(6, m.nv)), rng.normal(size=(6, pm.nv))
        assert np.array_equal(sdpin.jacobian_from_pinocchio(m, sdpin.jacobian_to_pinocchio(m, J, pm), pm), J)
        assert np.array_equal(sdpin.jacobian_to_pinocchio(m, sdpin.jacobian_from_pinocchio(m, Jp, pm), pm), Jp)
        assert np.array_equal(sdpin.jacobian_to_pinocchio(m, sdpin.jacobian_from_pinocchio(m, Jp)), Jp)
        f = rng.normal(size=(m.nbodies, 6))
        assert np.array_equal(sdpin.force_from_pinocchio(sdpin.force_to_pinocchio(f)), f)


def test_batches_convert_row_by_row(case):
    m, pm = case.m, case.pm
    rng = np.random.default_rng(4)
    Q = np.stack([[sd.random_configuration(m, rng) for _ in range(3)] for _ in range(2)])  # (2, 3, nq)
    V = rng.normal(size=(2, 3, m.nv))
    J = rng.normal(size=(2, 6, m.nv))
    Qp = sdpin.q_to_pinocchio(m, Q, pm)
    assert Qp.shape == (2, 3, pm.nq)
    for i in range(2):
        for k in range(3):
            assert np.array_equal(Qp[i, k], sdpin.q_to_pinocchio(m, Q[i, k], pm))
            assert np.array_equal(sdpin.v_to_pinocchio(m, V, pm)[i, k], sdpin.v_to_pinocchio(m, V[i, k], pm))
        assert np.array_equal(sdpin.jacobian_to_pinocchio(m, J, pm)[i], sdpin.jacobian_to_pinocchio(m, J[i], pm))
    assert np.array_equal(sdpin.q_from_pinocchio(m, Qp, pm)[1, 2], sdpin.q_from_pinocchio(m, Qp[1, 2], pm))
    assert np.array_equal(sdpin.q_to_pinocchio(m, Q), Qp) and np.array_equal(sdpin.q_from_pinocchio(m, Qp)[0, 1],
                                                                             sdpin.q_from_pinocchio(m, Qp[0, 1]))


def test_from_pinocchio_has_pinocchios_dynamics_and_frames(case):
    m, pm, pd = case.m, case.pm, case.pd
    m2 = quiet(sdpin.from_pinocchio, pm)
    assert [j.name for j in m2.joints] == list(pm.names)[1:]  # Pinocchio's joint order
    assert [b.name for b in m2.bodies] == [b.name for b in m.bodies if b.joint.nv]  # and the URDF loader's
    assert m2.nv == pm.nv and np.allclose(m2.gravity, pm.gravity.linear)
    pin_frames = [f.name for f in pm.frames][1:]  # every frame but the universe
    assert set(m2.frame_names) == set(pin_frames)
    for q, v, a, f in case.states(2, seed=5):
        q2 = sdpin.q_from_pinocchio(m2, sdpin.q_to_pinocchio(m, q, pm), pm)
        v2, a2 = (sdpin.v_from_pinocchio(m2, sdpin.v_to_pinocchio(m, x, pm), pm) for x in (v, a))
        assert np.array_equal(v2, v) and np.array_equal(a2, a)  # the same v layout: m2's bodies are m's moving ones
        check_dynamics(m2, pm, pd, q2, v2, a2, f)
        check_dynamics(m2, pm, pd, q2, v2, a2, f, named=False)
        check_frames(m2, pm, pd, q2, m2.frames[:: max(1, len(m2.frames) // 10)])
        for fr in m.frames:  # soadyn's own URDF frames are there, in the same places
            assert rel(sd.frame_placement(m2, q2, fr.name), sd.frame_placement(m, q, fr.name)) < TOL, fr.name


def test_to_pinocchio_has_soadyns_dynamics_and_the_urdf_parsers_joints(case):
    m, pm = case.m, case.pm
    pm3 = sdpin.to_pinocchio(m)
    pd3 = pm3.createData()
    assert pm3.nq == pm.nq and pm3.nv == pm.nv and np.allclose(pm3.gravity.linear, m.gravity)
    assert list(pm3.names) == list(pm.names)  # in the URDF parser's order
    for name in list(pm.names)[1:]:  # the joints Pinocchio's URDF parser makes, in the same places
        j, j3 = pm.getJointId(name), pm3.getJointId(name)
        assert pm3.joints[j3].shortname() == pm.joints[j].shortname(), name
        assert pm3.names[pm3.parents[j3]] == pm.names[pm.parents[j]], name
        assert pm3.jointPlacements[j3].isApprox(pm.jointPlacements[j], 1e-12), name
        assert pm3.inertias[j3].isApprox(pm.inertias[j], 1e-10), name
    for q, v, a, f in case.states(2, seed=6):
        check_dynamics(m, pm3, pd3, q, v, a, f, named=False)
        check_frames(m, pm3, pd3, q, m.frames[:: max(1, len(m.frames) // 10)], named=False)


# =========================================================================== every joint type
def every_joint_model():
    """Every convertible joint type, bodies not numbered depth-first, a fixed body with a child,
    a free joint inside the tree and frames on the world, a fixed body and moving bodies."""
    rng = np.random.default_rng(7)
    m = sd.Model("every_joint", gravity=(0.3, -0.2, -9.81))

    def add(name, joint, parent):
        mass, com, Ic = random_rigid_inertia(rng)
        place = (sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        return m.add_body(name, joint, parent, place, mass=mass, com=com, inertia=Ic, joint_name=f"{name}_joint")

    add("base", jt.Revolute((0.0, 0.0, 1.0), lower=[-1.0], upper=[2.0]), None)
    add("a", jt.Continuous((0.0, 1.0, 0.0)), "base")
    add("b", jt.Continuous(rng.normal(size=3)), "base")  # -> RevoluteUnaligned in Pinocchio
    add("c", jt.Helical(rng.normal(size=3), pitch=0.1), "a")  # breadth-first: c is a's child, after b
    add("d", jt.Universal(rng.normal(size=3), rng.normal(size=3)), "b")
    add("e", jt.Gimbal(("z", "y", "x")), "c")
    add("f", jt.Fixed(), "d")
    add("g", jt.Prismatic(rng.normal(size=3)), "f")
    add("h", jt.Spherical(), "e")
    add("i", jt.Free(), "g")
    add("k", jt.Helical((1.0, 0.0, 0.0), pitch=-0.05), "base")
    m.add_frame("tool", "i", (sp.exp3(rng.normal(size=3)), rng.normal(size=3)))
    m.add_frame("on_fixed", "f", (sp.exp3(rng.normal(size=3)), rng.normal(size=3)))
    m.add_frame("on_world", "world", (sp.exp3(rng.normal(size=3)), rng.normal(size=3)))
    return m


def test_every_joint_type_both_ways():
    m = every_joint_model()
    pm = sdpin.to_pinocchio(m)
    pd = pm.createData()
    assert [pm.joints[pm.getJointId(f"{n}_joint")].shortname() for n in "abcdeghik"] == [
        "JointModelRUBY", "JointModelRevoluteUnboundedUnaligned", "JointModelHelicalUnaligned", "JointModelUniversal",
        "JointModelSphericalZYX", "JointModelPrismaticUnaligned", "JointModelSpherical", "JointModelFreeFlyer",
        "JointModelHX"]
    assert list(pm.names)[1:5] == ["base_joint", "a_joint", "c_joint", "e_joint"]  # depth-first
    # ... so the converters without pin_model reorder this model's v (bodies not depth-first)
    assert not np.array_equal(sdpin.v_to_pinocchio(m, np.arange(float(m.nv))), np.arange(m.nv))
    axis = np.asarray(m.joint("b_joint").axis)  # the unaligned continuous joint's, through Pinocchio's URDF parser
    assert np.allclose(sdpin._subspace_axis(pm.joints[pm.getJointId("b_joint")]), axis / np.linalg.norm(axis),
                       rtol=0.0, atol=1e-14)
    assert pm.lowerPositionLimit[pm.joints[1].idx_q] == -1.0 and pm.upperPositionLimit[pm.joints[1].idx_q] == 2.0
    m2 = sdpin.from_pinocchio(pm)
    assert [b.name for b in m2.bodies] == ["base", "a", "c", "e", "h", "b", "d", "g", "i", "k"]  # f: a frame on d
    assert [j.kind for j in m2.joints] == ["revolute", "continuous", "helical", "gimbal", "spherical", "continuous",
                                           "universal", "prismatic", "free", "helical"]
    rng = np.random.default_rng(8)
    for _ in range(3):
        q = sd.random_configuration(m, rng)
        v, a = rng.normal(size=(2, m.nv))
        f = rng.normal(size=(m.nbodies, 6))
        check_both_ways(m, pm, pd, q, v, a, f)
        q2 = sdpin.q_from_pinocchio(m2, sdpin.q_to_pinocchio(m, q, pm), pm)
        v2, a2 = (sdpin.v_from_pinocchio(m2, sdpin.v_to_pinocchio(m, x, pm), pm) for x in (v, a))
        f2 = np.zeros((m2.nbodies, 6))  # the same forces on the same bodies (none on f: see check_dynamics)
        for b in m2.bodies:
            f2[b.index] = f[m.body_index(b.name)]
        check_both_ways(m2, pm, pd, q2, v2, a2, f2)  # without pm: m2's bodies are in pm's depth-first order


@pytest.mark.parametrize("seed", range(3))
def test_random_trees_to_pinocchio(seed):
    m = random_tree(9, seed, kinds=("revolute", "prismatic", "helical", "spherical", "free", "universal", "fixed"),
                    floating_base=seed == 1)
    pm = sdpin.to_pinocchio(m)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    for _ in range(2):
        q = sd.random_configuration(m, rng)
        v, a = rng.normal(size=(2, m.nv))
        f = rng.normal(size=(m.nbodies, 6))
        check_dynamics(m, pm, pd, q, v, a, f)
        check_frames(m, pm, pd, q)
        check_dynamics(m, pm, pd, q, v, a, f, named=False)


def test_pinocchio_joints_without_a_python_axis():
    """A RevoluteUnboundedUnaligned's axis is not exposed by Pinocchio's Python bindings
    (from_pinocchio reads it from the motion subspace); also RUB, H, Universal and
    SphericalZYX joints built in Pinocchio."""
    rng = np.random.default_rng(9)
    pm = pin.Model()
    parent = 0
    for k, joint in enumerate([pin.JointModelRevoluteUnboundedUnaligned(), pin.JointModelRUBX(),
                               pin.JointModelHZ(0.2), pin.JointModelUniversal(np.array([0.0, 0.6, 0.8]),
                                                                              np.array([1.0, 0.0, 0.0])),
                               pin.JointModelSphericalZYX(), pin.JointModelSpherical()]):
        mass, com, Ic = random_rigid_inertia(rng)
        parent = pm.addJoint(parent, joint, pin.SE3(sp.exp3(rng.normal(size=3)), rng.normal(size=3)), f"j{k}")
        pm.appendBodyToJoint(parent, pin.Inertia(mass, com, Ic), pin.SE3.Identity())
    m = sdpin.from_pinocchio(pm)
    assert [j.kind for j in m.joints] == ["continuous", "continuous", "helical", "universal", "gimbal", "spherical"]
    assert m.body_names == [f"j{k}" for k in range(6)]  # no body frames: named after the joints
    assert np.array_equal(m.joints[0].axis, [1.0, 0.0, 0.0])  # Pinocchio's default axis
    pm2 = sdpin.to_pinocchio(m)  # and back: the same joint models, a continuous joint about x being a RUBX
    assert [j.shortname() for j in pm2.joints] == [j.shortname() for j in pm.joints][:1] + ["JointModelRUBX"] + [
        j.shortname() for j in pm.joints][2:]
    pd, pd2 = pm.createData(), pm2.createData()
    for _ in range(3):
        q = sd.random_configuration(m, rng)
        v, a = rng.normal(size=(2, m.nv))
        f = rng.normal(size=(m.nbodies, 6))
        check_dynamics(m, pm, pd, q, v, a, f)
        check_dynamics(m, pm, pd, q, v, a, f, named=False)
        check_dynamics(m, pm2, pd2, q, v, a, f, named=False)


def test_pinocchio_joints_not_numbered_depth_first_need_pin_model():
    """A Pinocchio model whose joints are not numbered depth-first (its crba then is wrong, so
    only rnea and aba are compared): from_pinocchio keeps its order, the converters need it."""
    rng = np.random.default_rng(13)
    pm = pin.Model()
    for name, parent in (("a", 0), ("b", 0), ("c", 1)):  # c is a's child, after a's sibling b
        mass, com, Ic = random_rigid_inertia(rng)
        jid = pm.addJoint(parent, pin.JointModelRX(), pin.SE3(sp.exp3(rng.normal(size=3)), rng.normal(size=3)), name)
        pm.appendBodyToJoint(jid, pin.Inertia(mass, com, Ic), pin.SE3.Identity())
    m = sdpin.from_pinocchio(pm)
    assert m.body_names == ["a", "b", "c"]
    assert sdpin.v_to_pinocchio(m, np.arange(3.0)).tolist() == [0, 2, 1]  # to_pinocchio's order: a, c, b
    assert list(sdpin.to_pinocchio(m).names)[1:] == ["a", "c", "b"]
    pd = pm.createData()
    q, v, a = rng.normal(size=(3, 3))
    tau_pin = pin.rnea(pm, pd, *(sdpin.v_to_pinocchio(m, x, pm) for x in (q, v, a)))
    assert rel(sdpin.v_from_pinocchio(m, tau_pin, pm), sd.rnea(m, q, v, a)) < TOL


# =========================================================================== errors
def test_unsupported_joints_are_named():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "slider")
    with pytest.raises(ValueError, match=r"joint 'slider' is a JointModelPlanar.*supported: revolute"):
        sdpin.from_pinocchio(pm)
    m = sd.Model("planar")
    m.add_body("p", jt.Planar("z"), None, mass=1.0, inertia=np.eye(3), joint_name="table")
    with pytest.raises(ValueError, match=r"joint 'table' is a planar joint.*JointModelPlanar"):
        sdpin.to_pinocchio(m)
    with pytest.raises(ValueError, match=r"joint 'table' is a planar joint.*JointModelPlanar"):
        sdpin.q_to_pinocchio(m, sd.neutral(m))  # no Pinocchio joint order to assume
    m = sd.Model("gimbal")
    m.add_body("g", jt.Gimbal(("x", "y", "z")), None, mass=1.0, inertia=np.eye(3), joint_name="wrist")
    with pytest.raises(ValueError, match=r"joint 'wrist' is a gimbal joint.*z, y, x"):
        sdpin.to_pinocchio(m)


def test_closed_chains_are_refused_by_to_pinocchio():
    model = sd.models.four_bar_linkage()
    with pytest.raises(ValueError, match=r"has constraints .*spanning_tree\(\)"):
        sdpin.to_pinocchio(model)
    pm = sdpin.to_pinocchio(model.spanning_tree())
    assert pm.nv == model.nv


def test_argument_errors():
    c = Case("ur5")
    m, pm = c.m, c.pm
    with pytest.raises(ValueError, match=r"q: expected shape \(6,\) or \(\.\.\., 6\) .* got \(7,\)"):
        sdpin.q_to_pinocchio(m, np.zeros(7), pm)
    with pytest.raises(ValueError, match=r"q_pin: expected shape \(6,\) or \(\.\.\., 6\) .* got \(2, 5\)"):
        sdpin.q_from_pinocchio(m, np.zeros((2, 5)), pm)
    with pytest.raises(ValueError, match=r"v: expected shape \(6,\) or \(\.\.\., 6\) .* got \(\)"):
        sdpin.v_to_pinocchio(m, 1.0, pm)
    with pytest.raises(ValueError, match=r"v_pin: expected shape"):
        sdpin.v_from_pinocchio(m, np.zeros(4), pm)
    k = Case("kinova").m  # continuous joints: Pinocchio's nq is larger
    with pytest.raises(ValueError, match=rf"q_pin: expected shape \({k.nq + 3},\) .*nq = {k.nq + 3}\), got \({k.nq},\)"):
        sdpin.q_from_pinocchio(k, sd.neutral(k))
    with pytest.raises(ValueError, match=r"v: expected shape \(6,\) or \(\.\.\., 6\) .* got \(5,\)"):
        sdpin.v_to_pinocchio(m, np.zeros(5))
    with pytest.raises(ValueError, match=r"J: expected shape \(6, 6\) or \(\.\.\., 6, 6\) .* got \(3, 6\)"):
        sdpin.jacobian_to_pinocchio(m, np.zeros((3, 6)), pm)
    with pytest.raises(ValueError, match=r"J_pin: expected shape \(6, 6\)"):
        sdpin.jacobian_from_pinocchio(m, np.zeros(6), pm)
    with pytest.raises(ValueError, match=r"f: expected shape \(6,\) or \(\.\.\., 6\) .* got \(5,\)"):
        sdpin.force_to_pinocchio(np.zeros(5))
    with pytest.raises(ValueError, match=r"f_pin: expected shape"):
        sdpin.force_from_pinocchio(np.zeros((6, 3)))
    with pytest.raises(TypeError, match=r"f: got a pinocchio\..*Force, which is in Pinocchio's order"):
        sdpin.force_to_pinocchio(pin.Force.Zero())
    x = np.arange(6.0)
    assert np.array_equal(sdpin.force_from_pinocchio(pin.Force(x)), sdpin.force_from_pinocchio(x))
    with pytest.raises(TypeError, match=r"q: expected an array of real numbers"):
        sdpin.q_to_pinocchio(m, ["a"] * 6, pm)
    with pytest.raises(TypeError, match=r"pin_model: expected a pinocchio.Model \(not its Data\), got .*Data"):
        sdpin.q_to_pinocchio(m, np.zeros(6), c.pd)
    with pytest.raises(TypeError, match=r"model: expected a soadyn.Model, got pinocchio\..*Model"):
        sdpin.v_to_pinocchio(pm, np.zeros(6), pm)
    with pytest.raises(TypeError, match=r"pin_model: expected a pinocchio.Model"):
        sdpin.from_pinocchio(m)
    with pytest.raises(TypeError, match=r"model: expected a soadyn.Model"):
        sdpin.to_pinocchio(pm)


def test_mismatched_models_are_refused():
    ur5, panda = Case("ur5"), Case("panda")
    with pytest.raises(ValueError, match=r"pin_model: has no joint named 'panda_joint1'"):
        sdpin.q_to_pinocchio(panda.m, sd.neutral(panda.m), ur5.pm)
    pm = pin.buildModelFromUrdf(ur5.path)
    pm.addJoint(pm.njoints - 1, pin.JointModelRX(), pin.SE3.Identity(), "extra")
    with pytest.raises(ValueError, match=r"joints without a moving soadyn joint of the same name: \['extra'\]"):
        sdpin.v_to_pinocchio(ur5.m, np.zeros(ur5.m.nv), pm)
    m = sd.Model("prismatic_not_revolute")
    m.add_body("link", jt.Prismatic("x"), None, mass=1.0, inertia=np.eye(3), joint_name="shoulder_pan_joint")
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelRX(), pin.SE3.Identity(), "shoulder_pan_joint")
    with pytest.raises(ValueError, match=r"joint 'shoulder_pan_joint' is a JointModelRX .* but a prismatic joint"):
        sdpin.v_to_pinocchio(m, np.zeros(1), pm)


def test_armature_is_left_out_with_a_warning():
    c = Case("ur5")
    pm = c.pm.copy()
    armature = np.zeros(pm.nv)
    armature[pm.joints[pm.getJointId("elbow_joint")].idx_v] = 0.1
    pm.armature = armature
    with pytest.warns(UserWarning, match=r"armature of joints \['elbow_joint'\] is left out"):
        sdpin.from_pinocchio(pm)


# =========================================================================== purity, optional import
def test_arguments_are_not_modified():
    c = Case("kinova")
    m, pm = c.m, c.pm
    version, nframes = m.version, pm.nframes
    lower = np.array(pm.lowerPositionLimit)
    q = sd.random_configuration(m, 0)
    q0 = q.copy()
    qp = sdpin.q_to_pinocchio(m, q, pm)
    qp0 = qp.copy()
    sdpin.q_from_pinocchio(m, qp, pm)
    v = np.arange(float(m.nv))
    out = sdpin.v_to_pinocchio(m, v, pm)
    out[:] = -1.0  # a new array, not a view of v
    quiet(sdpin.from_pinocchio, pm)
    sdpin.to_pinocchio(m)
    assert np.array_equal(q, q0) and np.array_equal(qp, qp0) and np.array_equal(v, np.arange(float(m.nv)))
    assert m.version == version and pm.nframes == nframes and np.array_equal(pm.lowerPositionLimit, lower)


def test_soadyn_imports_without_pinocchio():
    code = "\n".join([
        "import sys",
        "import soadyn, soadyn.interop, soadyn.interop.pinocchio as sdpin",
        "assert 'pinocchio' not in sys.modules, 'imported eagerly'",
        "sys.modules['pinocchio'] = None  # now as if it were not installed",
        "import numpy as np",
        "assert sdpin.force_to_pinocchio(np.arange(6.0)).tolist() == [3, 4, 5, 0, 1, 2]",
        ("m = soadyn.load_urdf('<robot name=\"r\"><link name=\"a\"/><link name=\"b\"/><joint name=\"j\" "
         "type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/></joint></robot>', floating_base=True)"),
        "qp = sdpin.q_to_pinocchio(m, np.r_[0, 0, 0, 0, 0, 0, 1, np.pi / 2])  # without pin_model: no Pinocchio",
        "assert np.allclose(qp, [0, 0, 0, 0, 0, 0, 1, 0, 1]) and np.allclose(sdpin.q_from_pinocchio(m, qp)[7], np.pi / 2)",
        "assert sdpin.v_from_pinocchio(m, np.arange(7.0)).tolist() == [3, 4, 5, 0, 1, 2, 6]",
        "try:",
        "    sdpin.to_pinocchio(soadyn.models.serial_chain(2))",
        "except ImportError as e:",
        "    assert 'pip install pin' in str(e), e",
        "else:",
        "    raise AssertionError('no ImportError')",
    ])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(sd.__file__)),
                                                       os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr


# ====================================================================== the user guide
def test_user_guide_example():
    """The user guide's Pinocchio example (docs/guide/interop.md) runs and its comment holds."""
    guide = open(os.path.join(HERE, "..", "..", "docs", "guide", "interop.md"), encoding="utf-8").read()
    section = guide.split("## Pinocchio", 1)[1]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    c = Case("hyq")  # its file lists joints in another order than Pinocchio's
    ns = {"np": np, "sd": sd, "path": c.path, "rng": np.random.default_rng(10)}
    quiet(exec, code, ns)
    model, q, v, a = ns["model"], ns["q"], ns["v"], ns["a"]
    assert rel(ns["tau"], sd.rnea(model, q, v, a)) < TOL
