"""URDF ``<mimic>`` joints: ``load_urdf(..., mimic="couple")`` turns q_j = m·q_i + c into a
constant-G transmission; the constrained dynamics must equal the tree's dynamics with the
relation substituted, Gᵀ M G ÿ = Gᵀ (τ − h), q̈ = G ÿ (M and h from the spanning tree, G
built here from the file's ``<mimic>`` tags), and Pinocchio's mimic models where it reads
them (``pin.buildModelFromUrdf(path, mimic=True)``)."""
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import soadyn as sd
from conftest import assert_close, peers, pinocchio

METHODS = ("embedding", "direct", "augmented", "projection")
TOL = 1e-9  # relative: both sides are exact

#: example-robot-data files with <mimic> tags on moving joints (fixed base unless True)
ROBOT_FILES = {
    "panda": ("panda_description/urdf/panda.urdf", False),  # one prismatic finger
    "pr2": ("pr2_description/urdf/pr2.urdf", False),  # 5 followers per gripper
    "talos": ("talos_data/robots/talos_full_v2.urdf", True),  # 6 followers per gripper
}


def robot_file(rel):
    d = peers.robots_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed")
    path = os.path.join(d, rel)
    if not os.path.exists(path):
        pytest.skip(f"{rel} is not in this example-robot-data")
    return path


def load(source, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias in published files
        return sd.load_urdf(source, collisions=False, **kw)  # the joints only: no collision meshes read


# ----------------------------------------------------------------------------- a gripper
def _link(name, mass, com):
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia ixx="0.02" iyy="0.03" izz="0.025" ixy="0.001" ixz="0" iyz="-0.002"/></inertial></link>')


def _joint(name, kind, parent, child, xyz, axis, mimic=None):
    m = "" if mimic is None else (f'<mimic joint="{mimic[0]}" multiplier="{mimic[1]}" offset="{mimic[2]}"/>')
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="0.1 -0.2 0.3"/><axis xyz="{axis}"/>{m}</joint>')


def gripper(offsets=True, kinds=None):
    """An arm with a gripper whose mimics chain: finger_r mimics finger_l (the master),
    tip_l mimics finger_r, tip_r mimics tip_l (q_tip_r depends on the master through
    three relations); ``kinds`` overrides joint types by name."""
    kinds = kinds or {}
    c = (0.1, -0.2, 0.05) if offsets else (0, 0, 0)
    links = "".join(_link(n, m, com) for n, m, com in [
        ("base", 3.0, "0 0 0.1"), ("arm", 2.0, "0.2 0 0"), ("palm", 1.0, "0 0.05 0.1"),
        ("finger_l", 0.3, "0 0.02 0.05"), ("finger_r", 0.4, "0 -0.02 0.05"), ("tip_l", 0.1, "0.01 0 0.03"),
        ("tip_r", 0.15, "0 0.01 0.03"), ("pad", 0.05, "0 0 0.01")])
    joints = [
        ("shoulder", "revolute", "base", "arm", "0 0 0.3", "0 0 1", None),
        ("wrist", "revolute", "arm", "palm", "0.4 0 0", "0 1 0", None),
        ("finger_l", "revolute", "palm", "finger_l", "0 0.03 0.1", "1 0 0", None),
        ("finger_r", "revolute", "palm", "finger_r", "0 -0.03 0.1", "1 0 0", ("finger_l", -1.5, c[0])),
        ("tip_l", "revolute", "finger_l", "tip_l", "0 0 0.08", "1 0 0", ("finger_r", 0.5, c[1])),
        ("tip_r", "prismatic", "finger_r", "tip_r", "0 0 0.08", "0 0 1", ("tip_l", 0.2, c[2])),
        ("pad", "fixed", "tip_r", "pad", "0 0 0.02", "1 0 0", ("finger_l", 1.0, 0.0)),
    ]
    body = "".join(_joint(n, kinds.get(n, k), p, ch, xyz, ax, mim) for n, k, p, ch, xyz, ax, mim in joints)
    return f'<robot name="gripper">{links}{body}</robot>'


# ----------------------------------------------------------------------------- the substitution
def mimic_tags(source):
    """{follower: (joint, multiplier, offset)} of the moving joints' <mimic> tags, read here."""
    root = ET.fromstring(source) if source.lstrip().startswith("<") else ET.parse(source).getroot()
    out = {}
    for j in root.findall("joint"):
        e = j.find("mimic")
        if e is not None and j.get("type") != "fixed":
            out[j.get("name")] = (e.get("joint"), float(e.get("multiplier", 1.0)), float(e.get("offset", 0.0)))
    return out


def substituted(model, tags, rng):
    """(q, v, G): a random configuration and velocity with every mimic relation substituted
    (followed link by link, so chains compose), and the constant G (nv, ny) with q̇ = G ẏ,
    ẏ the velocities of the joints that mimic nothing."""
    q = sd.random_configuration(model, rng)
    free = [j for j in model.joints if j.nv and j.name not in tags]
    ny = sum(j.nv for j in free)
    rows = {}
    col = 0
    for j in free:
        for k in range(j.nv):
            rows[j.v_index + k] = np.eye(ny)[col]
            col += 1

    def follow(name):  # q and the G row of joint ``name`` (1-dof when it is in a relation)
        j = model.joint(name)
        if name in tags:
            master, m, c = tags[name]
            qm, gm = follow(master)
            q[j.q_index], rows[j.v_index] = m * qm + c, m * gm
        return q[j.q_index], rows[j.v_index]

    for name in tags:
        follow(name)
    G = np.array([rows[i] for i in range(model.nv)])
    return q, G @ rng.normal(size=ny), G


def reduced_accelerations(model, q, v, tau, G):
    """q̈ = G ÿ with Gᵀ M G ÿ = Gᵀ (τ − h) on the spanning tree (the mimic relation substituted)."""
    tree = model.spanning_tree()
    M = sd.mass_matrix(tree, q)
    h = sd.rnea(tree, q, v, None)
    return G @ np.linalg.solve(G.T @ M @ G, G.T @ (tau - h))


def check_every_method(model, tags, seed, states=2):
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(states):
        q, v, G = substituted(model, tags, rng)
        tau = rng.normal(size=model.nv)
        expected = reduced_accelerations(model, q, v, tau, G)
        for method in METHODS:
            qdd = sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd
            assert_close(qdd, expected, TOL, method)
            worst = max(worst, float(np.abs(qdd - expected).max()))
    return worst


@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("offsets", [False, True])
def test_chained_gripper_mimics_equal_the_substituted_tree(offsets, floating):
    """A chain of three mimics (and one on a fixed joint, dropped) gives one transmission on
    the master; every method equals the reduced dynamics of the substituted tree."""
    text = gripper(offsets)
    m = sd.load_urdf(text, floating_base=floating)
    assert [c.name for c in m.couplings] == ["finger_l_mimic"]
    assert m.couplings[0].joints[-1] == "finger_l"
    assert sorted(m.couplings[0].joints[:-1]) == ["finger_r", "tip_l", "tip_r"]
    assert sorted(j.name for j in m.joints if not j.independent) == ["finger_r", "tip_l", "tip_r"]
    # constant G: without offsets no position solve (a linear cluster)
    assert sd.cluster_tree(m).linear == (not offsets)
    check_every_method(m, mimic_tags(text), seed=3)


def test_a_chain_is_composed_not_taken_as_a_direct_mimic_of_the_master():
    """The state of the chain substituted link by link is on the constraint manifold; one
    where tip_l follows the master with its own multiplier and offset (the chain ignored)
    is not."""
    text = gripper()
    m = sd.load_urdf(text)
    rng = np.random.default_rng(5)
    q, _, _ = substituted(m, mimic_tags(text), rng)
    assert np.abs(sd.constraint_residual(m, q)).max() < 1e-14
    fl, tl = m.joint("finger_l").q_index, m.joint("tip_l").q_index
    q[tl] = 0.5 * q[fl] - 0.2
    assert np.abs(sd.constraint_residual(m, q)).max() > 1e-3


@pytest.mark.parametrize("robot", sorted(ROBOT_FILES))
def test_example_robots_mimics_equal_the_substituted_tree(robot):
    rel, floating = ROBOT_FILES[robot]
    path = robot_file(rel)
    m = load(path, floating_base=floating)
    tags = mimic_tags(path)
    assert tags and {j for c in m.couplings for j in c.joints[:-1]} == set(tags)
    assert sd.cluster_tree(m).linear  # zero offsets: constant G, no position solve
    worst = check_every_method(m, tags, seed=7)
    print(f"{robot}: {len(tags)} mimics, max |q̈ − G ÿ| = {worst:.2e}")


@pytest.mark.parametrize("robot", ["panda", "pr2"])
def test_mimic_models_equal_pinocchios(robot):
    """Pinocchio 4.1's mimic model (its aba refuses mimic joints: crba and nonLinearEffects
    on the reduced coordinates): ÿ from Gᵀ τ equals soadyn's constrained q̈ on the master
    coordinates, and q̈ = G ÿ on the followers."""
    pin = pinocchio()
    path = robot_file(ROBOT_FILES[robot][0])
    m = load(path)
    pm = pin.buildModelFromUrdf(path, mimic=True)
    pd = pm.createData()
    tags = mimic_tags(path)
    rng = np.random.default_rng(2)
    for _ in range(2):
        q, v, G = substituted(m, tags, rng)  # ẏ: the masters' and other free joints' rates
        qp, cols = np.zeros(pm.nq), []
        for jid in range(1, pm.njoints):
            j = pm.joints[jid]
            if j.nq == 0:  # JointModelMimic: no coordinates of its own
                continue
            sj = m.joint(pm.names[jid])
            angle = q[sj.q_index]
            qp[j.idx_q:j.idx_q + j.nq] = [np.cos(angle), np.sin(angle)] if j.nq == 2 else [angle]
            cols.append((j.idx_v, sj.v_index))
        assert [iv for iv, _ in cols] == list(range(pm.nv))  # Pinocchio's v: the free joints, in order
        Gp = np.array([G[:, int(np.argmax(G[sv]))] for _, sv in cols]).T  # q̇ = Gp v_pin
        vp = v[[sv for _, sv in cols]]
        tau = rng.normal(size=m.nv)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        ydd = np.linalg.solve(Mp, Gp.T @ tau - pin.nonLinearEffects(pm, pd, qp, vp))
        qdd = sd.constrained_forward_dynamics(m, q, v, tau).qdd
        assert_close(qdd, Gp @ ydd, TOL, robot)
        print(f"{robot}: max |q̈ − G ÿ_pinocchio| = {np.abs(qdd - Gp @ ydd).max():.2e}")


def test_mimics_on_fixed_joints_are_dropped():
    """talos_reduced.urdf keeps the grippers' <mimic> tags on joints it made fixed: nothing
    moves, so no constraint is added and the model stays a tree."""
    path = robot_file("talos_data/robots/talos_reduced.urdf")
    m = load(path, floating_base=True)
    assert not m.couplings
    assert sd.rnea(m, sd.neutral(m), None, None).shape == (m.nv,)


def test_alex_mimics_name_a_missing_joint():
    """alex_psyonic_hands.urdf's fingers mimic 'index_q1' etc., joints the file does not
    have (its joints are 'Left_index_q1', ...): a clear error, and mimic='ignore' loads
    the tree with a warning."""
    path = robot_file("alex_description/urdf/alex_psyonic_hands.urdf")
    with pytest.raises(sd.URDFError, match=r"mimic@joint: unknown joint 'index_q1'.*mimic='ignore'"):
        load(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the file's placeholder inertias warn too
        m = sd.load_urdf(path, mimic="ignore", collisions=False)
    assert any("mimic='ignore': the <mimic> joints" in str(w.message) and "'Left_index_q2'" in str(w.message)
               for w in caught)
    assert not m.couplings


# ----------------------------------------------------------------------------- options and errors
def test_ignore_keeps_the_tree_with_a_warning():
    with pytest.warns(UserWarning, match=r"mimic='ignore'.*\['finger_r', 'tip_l', 'tip_r'\]"):
        m = sd.load_urdf(gripper(), mimic="ignore")
    assert not m.couplings and all(j.independent for j in m.joints)
    coupled = sd.load_urdf(gripper())
    assert [j.name for j in m.joints] == [j.name for j in coupled.joints]
    q = sd.random_configuration(m, np.random.default_rng(0))
    assert_close(sd.mass_matrix(m, q), sd.mass_matrix(coupled.spanning_tree(), q))


@pytest.mark.parametrize("value", ["Couple", "substitute", None, True])
def test_mimic_argument_is_checked(value):
    with pytest.raises(ValueError, match=r"mimic: expected one of \['couple', 'ignore'\], got"):
        sd.load_urdf(gripper(), mimic=value)


@pytest.mark.parametrize("kinds, match", [
    ({"finger_l": "planar"}, r"'finger_r' mimics 'finger_l' .*a planar joint; a mimic follows a 1-dof joint"),
    ({"finger_l": "floating"}, r"'finger_r' mimics 'finger_l' .*a floating joint"),
    ({"finger_l": "fixed"}, r"'finger_r' mimics 'finger_l' .*a fixed joint"),
    ({"finger_r": "fixed"}, r"'tip_l' mimics 'finger_r' \(chain tip_l -> finger_r\), a fixed joint"),
    ({"tip_l": "planar"}, r"<joint name='tip_l'>/mimic: the mimicking joint is a planar joint"),
])
def test_mimic_of_a_joint_that_is_not_1dof_is_refused(kinds, match):
    with pytest.raises(sd.URDFError, match=match):
        load(gripper(kinds=kinds))


def test_mimic_cycles_unknown_joints_and_bad_numbers_are_refused():
    cyclic = gripper().replace('<mimic joint="finger_l" multiplier="-1.5"', '<mimic joint="tip_r" multiplier="-1.5"')
    with pytest.raises(sd.URDFError, match="form a cycle: finger_r -> tip_r -> tip_l -> finger_r"):
        sd.load_urdf(cyclic)
    with pytest.raises(sd.URDFError, match=r"<joint name='finger_r'>/mimic@joint: unknown joint 'nope'"):
        sd.load_urdf(gripper().replace('mimic joint="finger_l" multiplier="-1.5"', 'mimic joint="nope" multiplier="-1.5"'))
    with pytest.raises(sd.URDFError, match=r"<joint name='finger_r'>/mimic@multiplier: expected a number"):
        sd.load_urdf(gripper().replace('multiplier="-1.5"', 'multiplier="two"'))
    with pytest.raises(sd.URDFError, match=r"<joint name='finger_r'>/mimic: missing attribute 'joint'"):
        sd.load_urdf(gripper().replace('mimic joint="finger_l" multiplier="-1.5"', 'mimic multiplier="-1.5"'))


def test_mimic_defaults_are_multiplier_one_offset_zero():
    text = gripper().replace('multiplier="-1.5" offset="0.1"', "")
    m = sd.load_urdf(text)
    t = m.couplings[0]
    r = t.joints.index("finger_r")
    assert t.ratios[r].tolist() == [1.0 if k == r else 0.0 for k in range(len(t.joints) - 1)] + [-1.0]
    assert t.offset[r] == 0.0
