"""``Model.add_transmission`` and ``Model.add_rotor``: what they build, and clear errors
naming the argument, the expected and the received value for bad input."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn.core.constraints import Transmission


def base_model():
    m = sd.Model("t")
    m.add_body("link", jt.Revolute("z"), None, mass=1.0, com=(0.3, 0.0, 0.0), inertia=np.eye(3) * 0.01)
    m.add_body("link2", jt.Revolute("z"), "link", (np.eye(3), np.array([1.0, 0.0, 0.0])), mass=1.0,
               inertia=np.eye(3) * 0.01)
    m.add_body("ball", jt.Spherical(), "link", mass=1.0, inertia=np.eye(3) * 0.01)
    m.add_body("r", jt.Revolute("z"), None, inertia=np.eye(3) * 1e-4)
    return m


def test_add_transmission_records_rows_and_marks_the_driven_joints():
    m = base_model()
    v0 = m.version
    t = m.add_transmission("belt", ["r", "link", "link2"], [1.0, -3.0, -2.0])
    assert isinstance(t, Transmission) and m.couplings == (t,) and m.version > v0
    assert t.joints == ("r", "link", "link2") and t.ratios.tolist() == [[1.0, -3.0, -2.0]]
    assert t.offset.tolist() == [0.0] and not t.has_offset
    assert [m.joint(n).independent for n in ("r", "link", "link2")] == [False, True, True]
    assert not t.ratios.flags.writeable
    m2 = base_model()
    m2.add_transmission("belt", ["r", "link", "link2"], [1.0, -3.0, -2.0], dependent="link2")
    assert [m2.joint(n).independent for n in ("r", "link", "link2")] == [True, True, False]
    m3 = base_model()
    m3.add_transmission("belt", ["r", "link"], [1.0, -3.0], dependent=())
    assert all(j.independent for j in m3.joints)


@pytest.mark.parametrize("kwargs, match", [
    (dict(joints=["r", "nope"], ratios=[1, -2]), r"transmission 'g': joint: unknown joint 'nope'"),
    (dict(joints=["r", "ball"], ratios=[1, -2]), r"joint 'ball' is a spherical joint; a transmission couples 1-dof"),
    (dict(joints=["r", "r"], ratios=[1, -2]), r"joints: a joint is listed twice"),
    (dict(joints="r", ratios=[1]), r"joints: expected a non-empty list of joint names, got 'r'"),
    (dict(joints=["r"], ratios=[1]), r"joints: a transmission relates at least 2 joints"),
    (dict(joints=["r", "link"], ratios=[1, -2, 3]), r"ratios: expected shape \(2,\) or \(m, 2\).*got shape \(3,\)"),
    (dict(joints=["r", "link"], ratios=[1, np.nan]), r"ratios: expected finite numbers"),
    (dict(joints=["r", "link"], ratios=[0, 0]), r"ratios: the rows .* are linearly dependent"),
    (dict(joints=["r", "link", "link2"], ratios=[[1, -2, 0], [2, -4, 0]]), r"linearly dependent"),
    (dict(joints=["r", "link"], ratios=[[1, -2], [0, 1]]), r"ratios: 2 rows on 2 joints leave no motion"),
    (dict(joints=["r", "link"], ratios=["a", "b"]), r"ratios: expected numbers"),
    (dict(joints=["r", "link"], ratios=[1, -2], offset=[0.0, 1.0]), r"offset: expected a finite number or 1"),
    (dict(joints=["r", "link"], ratios=[1, -2], dependent=["link2"]), r"dependent: expected 1 distinct name"),
    (dict(joints=["r", "link", "link2"], ratios=[1, -2, 0], dependent="link2"),
     r"dependent: the joints \['link2'\] cannot be solved"),
])
def test_add_transmission_rejects_bad_input(kwargs, match):
    m = base_model()
    with pytest.raises(ValueError, match=match):
        m.add_transmission("g", **kwargs)
    assert m.couplings == () and all(j.independent for j in m.joints)


def test_add_transmission_rejects_a_taken_name():
    m = base_model()
    m.add_transmission("g", ["r", "link"], [1, -2])
    with pytest.raises(ValueError, match="name: a constraint named 'g' already exists"):
        m.add_transmission("g", ["r", "link2"], [1, -2])
    with pytest.raises(ValueError, match="name: expected a non-empty string"):
        m.add_transmission("", ["r", "link2"], [1, -2])


def test_add_rotor_builds_body_joint_and_transmission():
    m = base_model()
    I = np.diag([1e-4, 1e-4, 2e-4])
    b = m.add_rotor("rotor", "link", "z", I, 6.0, drives="link2", mass=0.05,
                    placement=(np.eye(3), np.array([0.5, 0.0, 0.0])))
    body = m.bodies[b]
    assert body.name == "rotor" and body.parent == m.body_index("link") and body.mass == 0.05
    assert body.joint.kind == "revolute" and not body.joint.independent and body.joint.axis.tolist() == [0, 0, 1]
    assert np.array_equal(body.inertia_com, I) and body.placement[1].tolist() == [0.5, 0.0, 0.0]
    (t,) = m.couplings
    assert t.name == "rotor_transmission" and t.joints == ("rotor", "link2") and t.ratios.tolist() == [[1.0, -6.0]]
    # (mass, com, I) and a (6, 6) spatial inertia give the same body
    m2, m3 = base_model(), base_model()
    m2.add_rotor("rotor", "link", "z", (0.05, (0.0, 0.0, 0.0), I), 6.0, drives="link2")
    m3.add_rotor("rotor", "link", "z", sd.spatial.spatial_inertia(0.05, np.zeros(3), I), 6.0, drives="link2",
                 joint_name="rj", transmission_name="gear")
    for mm in (m2, m3):
        assert np.allclose(mm.bodies[-1].inertia, body.inertia, rtol=0, atol=1e-15)
    assert m3.joints[-1].name == "rj" and m3.couplings[0].name == "gear"


@pytest.mark.parametrize("kwargs, match", [
    (dict(parent="world"), r"parent: expected 'link', the parent of the link that joint 'link2' moves, got 'world'"),
    (dict(drives="nope"), r"drives: unknown joint 'nope'"),
    (dict(drives=3), r"drives: expected the name of the driven joint, got 3"),
    (dict(drives="ball"), r"drives: joint 'ball' is a spherical joint"),
    (dict(gear_ratio=0.0), r"gear_ratio: expected a finite nonzero number, got 0.0"),
    (dict(gear_ratio=np.inf), r"gear_ratio: expected a finite nonzero number, got inf"),
    (dict(gear_ratio="six"), r"gear_ratio: expected a finite nonzero number, got 'six'"),
    (dict(inertia=np.eye(2)), r"inertia: expected a \(3, 3\) rotational inertia .* got shape \(2, 2\)"),
    (dict(inertia=(0.1, (0, 0, 0), np.eye(3)), mass=0.2), r"mass: give the mass inside inertia"),
    (dict(inertia=-np.eye(3)), r"rotational inertia is not positive semi-definite"),
    (dict(axis=(0, 0, 0)), r"axis"),
    (dict(name="link"), r"name: a body or frame named 'link' already exists"),
    (dict(transmission_name=""), r"transmission_name: expected a new constraint name"),
])
def test_add_rotor_rejects_bad_input(kwargs, match):
    m = base_model()
    args = dict(name="rotor", parent="link", axis="z", inertia=np.eye(3) * 1e-4, gear_ratio=6.0, drives="link2")
    args.update(kwargs)
    nb = m.nbodies
    with pytest.raises(ValueError, match=match):
        m.add_rotor(**args)
    assert m.nbodies == nb and m.couplings == ()
