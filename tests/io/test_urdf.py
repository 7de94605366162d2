"""Model building, URDF/URDF+ loading, and clear errors on bad input."""
import glob
import os
import warnings

import numpy as np
import pytest

import soadyn as sd
from conftest import URDFPLUS, peers
from soadyn import joints as jt

needs_urdfplus = pytest.mark.skipif(not os.path.isdir(URDFPLUS), reason="../shared/models/urdfplus not present")

BOX = np.diag([0.1, 0.1, 0.1])


def two_link():
    m = sd.Model("two")
    m.add_body("a", jt.Revolute("z"), mass=1.0, com=(0.5, 0, 0), inertia=BOX)
    m.add_body("b", jt.Revolute("z"), "a", (np.eye(3), np.array([1.0, 0, 0])), mass=1.0, com=(0.5, 0, 0), inertia=BOX)
    return m


# ----------------------------------------------------------------------------- URDF
SIMPLE = """<robot name="r">
  <link name="base"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><inertial><origin xyz="0 0 0.5" rpy="0 0 0"/><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 1" rpy="0 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="fix" type="fixed"><parent link="l1"/><child link="tool"/><origin xyz="0 0 1" rpy="0.3 0 0"/></joint>
</robot>"""


def test_urdf_fixed_joint_merge_keeps_link_as_frame():
    m = sd.load_urdf(SIMPLE)
    assert m.nbodies == 1 and m.nv == 1 and m.joints[0].name == "j1"
    assert set(m.frame_names) >= {"base", "l1", "tool"}
    assert np.isclose(m.bodies[0].mass, 1.5)  # l1 + tool merged
    # the merged centre of mass: (1·(0,0,0.5) + 0.5·(0.1, 0, 1) in l1) / 1.5
    R = sd.spatial.rotation_x(0.3)
    c_tool = np.array([0, 0, 1.0]) + R @ np.array([0.1, 0, 0])
    assert np.allclose(m.bodies[0].com, (np.array([0, 0, 0.5]) + 0.5 * c_tool) / 1.5)
    assert np.allclose(m.joints[0].lower, [-1]) and np.allclose(m.joints[0].upper, [1])
    fl = sd.load_urdf(SIMPLE, floating_base=True)
    assert fl.nbodies == 2 and fl.joints[0].kind == "free" and fl.nq == 8


def tree_urdf():
    """A tree whose joints are listed in the file neither by name nor depth-first: base has
    child joints "z_hip" (a chain via a fixed link), "B_arm" and "a_leg" (sorted by name:
    B before a before z, code-point order), "a_leg" has children "knee2" and "knee10".
    Valid for urdfdom too (tests/interop checks Pinocchio's order on it)."""
    link = lambda n: (f'<link name="{n}"><inertial><mass value="1"/>'
                      '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>')

    def joint(name, parent, child, kind="continuous"):
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<axis xyz="0 0 1"/></joint>')
    links = "".join(link(n) for n in ("base", "hip", "hip_fixed", "foot", "arm", "leg", "shin", "calf"))
    joints = "".join([joint("z_hip", "base", "hip"), joint("knee2", "leg", "shin"), joint("B_arm", "base", "arm"),
                      joint("hip_fix", "hip", "hip_fixed", "fixed"), joint("ankle", "hip_fixed", "foot"),
                      joint("knee10", "leg", "calf"), joint("a_leg", "base", "leg")])
    return f'<robot name="tree">{links}{joints}</robot>'


def test_urdf_bodies_are_depth_first_children_by_joint_name():
    """Pinocchio's URDF order (see soadyn.io.urdf): depth-first, a link's child joints by name
    (urdfdom's std::map), through fixed joints; parent-first."""
    for floating in (False, True):
        m = sd.load_urdf(tree_urdf(), floating_base=floating)
        names = [j.name for j in m.joints]
        expected = ["B_arm", "a_leg", "knee10", "knee2", "z_hip", "ankle"]
        assert names == (["root_joint"] if floating else []) + expected
        assert [b.name for b in m.bodies][-6:] == ["arm", "leg", "calf", "shin", "hip", "foot"]
        assert all(b.parent < b.index for b in m.bodies)
        assert m.frame("hip_fixed").body == m.body_index("hip")


@needs_urdfplus
@pytest.mark.filterwarnings("ignore:body .* violate the triangle inequality")
def test_urdfplus_loops_couplings_and_independence():
    m = sd.load_urdf(os.path.join(URDFPLUS, "four_bar.urdf"))
    assert [lp.name for lp in m.loops] == ["loop1"]
    lp = m.loops[0]
    assert lp.kind == "revolute" and np.allclose(lp.axis, [0, 0, 1])
    # the loop's two end frames coincide at a closed configuration of the 1 m x 0.5 m four-bar:
    # crank 0.5 at θ1, coupler 1.0, rocker 0.5 hinged at (1, 0): θ1 = θ3 = 90°, θ2 = −90°
    q = np.array([np.pi / 2, -np.pi / 2, np.pi / 2])
    Xp = sd.frame_placement(m, q, lp.predecessor)
    Xs = sd.frame_placement(m, q, lp.successor)
    assert np.allclose(Xp[:3, 3], Xs[:3, 3])
    assert [j.independent for j in m.joints] == [True, False, False]
    r = sd.load_urdf(os.path.join(URDFPLUS, "jvrc1_humanoid.urdf"))
    assert len(r.couplings) > 10
    c = r.couplings[0]
    assert (c.predecessor, c.successor, c.ratio) == ("waist-yaw", "waist-yaw-rotor", 6.0)
    for name in ("mini_cheetah", "mit_humanoid", "six_bar", "revolute_rotor_chain"):
        model = sd.load_urdf(os.path.join(URDFPLUS, f"{name}.urdf"))
        assert model.nv > 0


def _mutate(text, old, new):
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("text, match", [
    ("<robot name='x'><link name='a'>", "not well-formed"),
    ("<model/>", "expected a <robot> root"),
    ("<robot name='x'></robot>", "no <link>"),
    (_mutate(SIMPLE, '<child link="l1"/>', '<child link="l9"/>'), "unknown link 'l9'"),
    (_mutate(SIMPLE, 'type="revolute"', 'type="ball"'), "unsupported joint type 'ball'"),
    (_mutate(SIMPLE, '<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>'), "expected 3 finite numbers"),
    (_mutate(SIMPLE, '<mass value="1"/>', '<mass value="heavy"/>'), "expected a number"),
    (_mutate(SIMPLE, '<link name="tool">', '<link name="l1">'), "duplicate link"),
    (_mutate(SIMPLE, '<parent link="l1"/><child link="tool"/>', '<parent link="base"/><child link="l1"/>'),
     "already the child"),
    ("<robot name='c'><link name='a'/><link name='b'/>"
     "<joint name='j1' type='continuous'><parent link='a'/><child link='b'/></joint>"
     "<joint name='j2' type='continuous'><parent link='b'/><child link='a'/></joint></robot>", "cycle"),
    (_mutate(SIMPLE, '</robot>', '<link name="stray"/></robot>'), "exactly one root link"),
    (_mutate(SIMPLE, '</robot>', '<loop name="L" type="revolute"><predecessor link="nope"/>'
                                 '<successor link="l1"/></loop></robot>'), "unknown link 'nope'"),
    (_mutate(SIMPLE, '</robot>', '<coupling name="c"><predecessor link="l1"/><successor link="base"/></coupling></robot>'),
     "missing <ratio"),
    (_mutate(SIMPLE, '<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), "axis must be nonzero"),
])
def test_malformed_urdf_errors_name_the_element(text, match):
    with pytest.raises(sd.URDFError, match=match):
        sd.load_urdf(text)


def test_missing_file():
    with pytest.raises(sd.URDFError, match="cannot read"):
        sd.load_urdf("/nonexistent/robot.urdf")


# ----------------------------------------------------------------------------- floating_base=True
_OWN_FLOATING = """<robot name="floater">
  <link name="base"/>
  <link name="dummy"/>
  <link name="trunk"><inertial><mass value="3"/><inertia ixx="0.1" iyy="0.2" izz="0.25" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="fix" type="fixed"><parent link="base"/><child link="dummy"/></joint>
  <joint name="base_to_trunk" type="floating"><parent link="dummy"/><child link="trunk"/></joint>
</robot>"""


@pytest.mark.parametrize("text", [_OWN_FLOATING,  # through a fixed, mass-less link, or directly
                                  _OWN_FLOATING.replace('<link name="dummy"/>', "").replace(
                                      '<joint name="fix" type="fixed"><parent link="base"/><child link="dummy"/></joint>',
                                      "").replace('parent link="dummy"', 'parent link="base"')])
def test_floating_base_refused_when_the_urdf_already_floats(text):
    """A mass-less root link with its own floating joint: a free joint added above it would
    make two free joints in a row (M singular). The error says so at load time."""
    with pytest.raises(sd.URDFError) as err:
        sd.load_urdf(text, floating_base=True)
    msg = str(err.value)
    for part in ("floating_base=True", "root link 'base'", "no mass or inertia", "floating joint 'base_to_trunk'",
                 "floating_base=False"):
        assert part in msg, (part, msg)
    m = sd.load_urdf(text)  # the URDF's own floating joint is the free base
    assert [j.kind for j in m.joints] == ["free"] and m.joints[0].name == "base_to_trunk"
    assert np.linalg.eigvalsh(sd.mass_matrix(m, sd.neutral(m))).min() > 0


def test_floating_base_over_a_massless_root_warns_when_M_would_be_singular():
    text = """<robot name="arm"><link name="world"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
        </inertial></link>
      <joint name="j" type="revolute"><parent link="world"/><child link="a"/><axis xyz="0 0 1"/></joint></robot>"""
    with pytest.warns(UserWarning, match=r"floating_base=True: the root link 'world' has no mass or inertia, so the "
                                         r"mass matrix is singular: .*revolute joint 'j'"):
        m = sd.load_urdf(text, floating_base=True)
    with pytest.raises(np.linalg.LinAlgError, match="body 'world' has no mass or inertia"):
        sd.aba(m, sd.neutral(m), None, np.zeros(m.nv))



@pytest.mark.parametrize("keyword", ["floating_base", "strict_inertia"])
@pytest.mark.parametrize("value", ["yes", "no", None, 2])
def test_the_flags_of_load_urdf_are_booleans(keyword, value):
    """``floating_base="no"`` would float the robot by its truth value (before: "yes"
    loaded a free joint): anything but True/False is a TypeError naming the keyword."""
    with pytest.raises(TypeError, match=f"{keyword}: expected True or False, got {value!r}"):
        sd.load_urdf(SIMPLE, **{keyword: value})
    assert sd.load_urdf(SIMPLE, **{keyword: False}).nq == sd.load_urdf(SIMPLE).nq

@needs_urdfplus
@pytest.mark.filterwarnings("ignore:body .* violate the triangle inequality")
@pytest.mark.parametrize("name, joint", [("mini_cheetah.urdf", "base_to_floating_base"),
                                         ("mit_humanoid.urdf", "world_to_base")])
def test_floating_base_refused_for_urdfplus_robots_with_a_floating_joint(name, joint):
    with pytest.raises(sd.URDFError, match=f"floating joint '{joint}'.*floating_base=False"):
        sd.load_urdf(os.path.join(URDFPLUS, name), floating_base=True)


def test_xml_syntax_error_shows_the_parser_message_and_an_excerpt_not_the_document(tmp_path):
    broken = SIMPLE.replace('<child link="l1"/>', '<child link="l1">', 1) + "<!-- a long tail -->\n" * 500
    line = next(k for k, s in enumerate(broken.splitlines(), 1) if '<child link="l1">' in s)
    for source, label in ((broken, "URDF string"), (tmp_path / "broken.urdf", str(tmp_path / "broken.urdf"))):
        if not isinstance(source, str):
            source.write_text(broken)
        with pytest.raises(sd.URDFError) as err:
            sd.load_urdf(source)
        msg = str(err.value)
        assert msg.startswith(f"{label}: not well-formed XML (mismatched tag: line {line + 1}, column "), msg
        assert "</joint>" in msg and "^" in msg  # the offending line, with a caret
        assert len(msg) < 400 + len(label) and "long tail" not in msg and "<robot" not in msg, msg


def test_urdf_text_as_bytes_or_with_a_byte_order_mark_and_clear_errors_for_other_input():
    assert sd.load_urdf(SIMPLE.encode()).nbodies == 1
    assert sd.load_urdf("\ufeff" + SIMPLE).nbodies == 1
    assert sd.load_urdf(("\ufeff" + SIMPLE).encode("utf-8")).nbodies == 1
    not_xml = SIMPLE.replace("<robot", "robot", 1) * 10  # neither a file name nor XML text
    with pytest.raises(sd.URDFError, match=r"characters; XML text must start with '<'\): cannot read") as err:
        sd.load_urdf(not_xml)
    assert len(str(err.value)) < 300
    with pytest.raises(TypeError, match="path: expected a file path or the URDF text .* got int"):
        sd.load_urdf(3)


@pytest.mark.parametrize("name", ["romeo.urdf", "romeo_laas_small.urdf"])
def test_romeo_loads_and_everything_but_the_inverse_of_M_works(name):
    """Romeo's grippers and fingers move no mass (and romeo_laas_small has inertias that are
    not positive semi-definite): the model loads; kinematics, Jacobians, RNEA, the (singular)
    mass matrix and energies work; only the calls that need M⁻¹ refuse, naming the cause."""
    if peers.robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    paths = glob.glob(os.path.join(peers.robots_dir(), "**", name), recursive=True)
    if not paths:
        pytest.skip(f"{name} is not in this example-robot-data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the inertia warnings of romeo_laas_small
        # the tree: the fingers independent; the dynamics only (no collision meshes read)
        m = sd.load_urdf(paths[0], floating_base=True, mimic="ignore", collisions=False)
    q, v = sd.neutral(m), np.ones(m.nv)
    frame = m.frame_names[-1]
    assert np.isfinite(sd.frame_placement(m, q, frame)).all()
    J = sd.frame_jacobian(m, q, frame)
    assert np.allclose(J @ v, sd.frame_velocity(m, q, v, frame))
    M = sd.mass_matrix(m, q)
    assert np.isclose(sd.kinetic_energy(m, q, v), 0.5 * v @ M @ v)
    assert np.allclose(sd.rnea(m, q, v, v) - sd.rnea(m, q, v, None), M @ v)
    with pytest.raises(np.linalg.LinAlgError, match="singular or indefinite"):
        sd.aba(m, q, v, np.zeros(m.nv))


def _edited_copy(tmp_path, name, old, new):
    """A copy of the URDF+ file ``name`` in ``tmp_path`` with the first ``old`` replaced by ``new``."""
    with open(os.path.join(URDFPLUS, name)) as f:
        text = f.read()
    assert old in text, (name, old)
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return str(path)


@needs_urdfplus
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_urdfplus_coupling_ratio_must_be_finite(tmp_path, value):
    """A ratio of NaN or inf used to load and give a finite, wrong q̈; the loader refuses it,
    naming the coupling, the attribute, what it expects and what it read."""
    path = _edited_copy(tmp_path, "revolute_rotor_chain.urdf", '<ratio value="6.0"/>', f'<ratio value="{value}"/>')
    with pytest.raises(sd.URDFError, match=rf"<coupling name='transmission1'>/ratio@value: expected a finite "
                                           rf"number, got '{value}'"):
        sd.load_urdf(path)


@needs_urdfplus
def test_urdfplus_unknown_coupling_type_is_refused(tmp_path):
    """``<coupling type="bogus">`` used to be read as a rolling transmission without a word."""
    path = _edited_copy(tmp_path, "revolute_rotor_chain.urdf", '<coupling name="transmission2" type="rolling">',
                        '<coupling name="transmission2" type="bogus">')
    with pytest.raises(sd.URDFError, match=r"<coupling name='transmission2'>@type: expected one of \['rolling'\].*"
                                           r"got 'bogus'"):
        sd.load_urdf(path)


@pytest.mark.parametrize("old, new, match", [
    ('<origin xyz="1.0 0.0 0.0"/>\n        </predecessor>', '<origin xyz="1.0 nan 0.0"/>\n        </predecessor>',
     r"<loop name='loop1'>/predecessor/origin@xyz: expected 3 finite numbers, got '1.0 nan 0.0'"),
    ('<origin xyz="0.5 0.0 0.0"/>\n        </successor>', '<origin xyz="0.5 0.0 0.0" rpy="0 inf 0"/>\n        </successor>',
     r"<loop name='loop1'>/successor/origin@rpy: expected 3 finite numbers, got '0 inf 0'"),
    ('<axis xyz="0 0 1"/>\n    </loop>', '<axis xyz="0 0 nan"/>\n    </loop>',
     r"<loop name='loop1'>/axis@xyz: expected 3 finite numbers, got '0 0 nan'"),
])
@needs_urdfplus
def test_urdfplus_loop_numbers_must_be_finite(tmp_path, old, new, match):
    """Every number of a ``<loop>`` (placements, axis) is checked for finiteness."""
    with pytest.raises(sd.URDFError, match=match):
        sd.load_urdf(_edited_copy(tmp_path, "four_bar.urdf", old, new))


@pytest.mark.parametrize("old, new, match", [
    ('lower="-10"', 'lower="nan"', r"<joint name='joint1'>/limit@lower: expected a finite number, got 'nan'"),
    ('<mass value="1"/>', '<mass value="inf"/>',
     r"<link name='link-0'>/inertial/mass@value: expected a finite number, got 'inf'"),
])
@needs_urdfplus
def test_urdf_scalars_must_be_finite(tmp_path, old, new, match):
    """The scalar attributes (limits, masses, inertias, mimic terms, visual sizes) share the
    ratio's check: NaN limits used to load (``nan > upper`` is False)."""
    with pytest.raises(sd.URDFError, match=match):
        sd.load_urdf(_edited_copy(tmp_path, "revolute_rotor_chain.urdf", old, new))
