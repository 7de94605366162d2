"""Model building, URDF/URDF+ loading, and clear errors on bad input."""
import os

import numpy as np
import pytest

import soadyn as sd
from conftest import URDFPLUS
from soadyn import joints as jt

needs_urdfplus = pytest.mark.skipif(not os.path.isdir(URDFPLUS), reason="../shared/models/urdfplus not present")

BOX = np.diag([0.1, 0.1, 0.1])


def two_link():
    m = sd.Model("two")
    m.add_body("a", jt.Revolute("z"), mass=1.0, com=(0.5, 0, 0), inertia=BOX)
    m.add_body("b", jt.Revolute("z"), "a", (np.eye(3), np.array([1.0, 0, 0])), mass=1.0, com=(0.5, 0, 0), inertia=BOX)
    return m


# ----------------------------------------------------------------------------- builder
def test_builder_basics_and_frames():
    m = two_link()
    assert (m.nq, m.nv, m.nbodies) == (2, 2, 2)
    assert m.body_names == ["a", "b"] and m.parents == [-1, 0]
    assert [(j.name, j.q_index, j.v_index, j.nq, j.nv) for j in m.joints] == [("a", 0, 0, 1, 1), ("b", 1, 1, 1, 1)]
    m.add_frame("tip", "b", (np.eye(3), np.array([1.0, 0, 0])))
    m.add_frame("ground", "world", (np.eye(3), np.array([0, 0, -1.0])))
    q = np.array([np.pi / 2, -np.pi / 2])
    # closed form: link a points along y, link b back along x
    assert np.allclose(sd.frame_placement(m, q, "tip")[:3, 3], [1.0, 1.0, 0.0])
    assert np.allclose(sd.frame_placement(m, q, "ground")[:3, 3], [0, 0, -1.0])
    assert "tip" in m.frame_names and "a" in m.frame_names
    assert "2 bodies" in m.summary()


@pytest.mark.parametrize("call, match", [
    (lambda m: m.add_body("c", jt.Revolute("z"), "nope"), "unknown body 'nope'"),
    (lambda m: m.add_body("a", jt.Revolute("z")), "already exists"),
    (lambda m: m.add_body("c", jt.Revolute("z"), joint_name="a"), "joint named 'a' already exists"),
    (lambda m: m.add_body("c", m.joints[0]), "already connects"),
    (lambda m: m.add_body("c", jt.Revolute("z"), 7), "out of range"),
    (lambda m: m.add_body("c", jt.Revolute("z"), placement=(np.ones((3, 3)), np.zeros(3))), "orthonormal"),
    (lambda m: m.add_body("c", jt.Revolute("z"), mass=-1.0), "mass must be finite and non-negative"),
    (lambda m: m.add_body("c", jt.Revolute("z"), mass=1.0, inertia=-np.eye(3)), "positive semi-definite"),
    (lambda m: m.add_body("c", jt.Revolute("z"), mass=1.0, inertia=np.diag([0.1, 0.1, 0.5])), "triangle"),
    (lambda m: m.add_body("c", jt.Revolute("z"), mass=1.0, inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), "symmetric"),
    (lambda m: m.add_body("c", "revolute"), "expected a soadyn.joints.Joint"),
    (lambda m: m.add_frame("a", "b"), "already exists"),
    (lambda m: m.add_frame("f", "zzz"), "unknown body"),
])
def test_builder_errors_name_the_problem(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call(two_link())


def test_massless_bodies_allowed_and_singular_models_refused_only_where_M_is_inverted():
    m = sd.Model("massless")
    m.add_body("a", jt.Revolute("x"))  # mass-less intermediate body ([Jain23p] partitioning)
    m.add_body("b", jt.Revolute("y"), "a", mass=1.0, inertia=np.diag([0.1, 0.2, 0.25]))
    assert np.linalg.eigvalsh(sd.mass_matrix(m, np.zeros(2))).min() > 0
    bad = sd.Model("singular")
    bad.add_body("a", jt.Revolute("x"))
    bad.add_body("b", jt.Prismatic("y"), "a")
    # nothing moves: M = 0 is the right answer, and only the calls needing M⁻¹ refuse
    assert np.array_equal(sd.mass_matrix(bad, np.zeros(2)), np.zeros((2, 2)))
    assert np.array_equal(sd.rnea(bad, np.zeros(2), np.ones(2), np.ones(2)), np.zeros(2))
    with pytest.raises(np.linalg.LinAlgError, match=r"joints \['a', 'b'\] move no mass"):
        sd.aba(bad, np.zeros(2), np.zeros(2), np.zeros(2))


def test_indefinite_inertia_is_named_where_M_is_inverted():
    """A rotational inertia with a negative principal moment (accepted with a warning when
    not strict, or assigned directly) makes M indefinite: the error names that body, not
    joints moving no inertia."""
    m = two_link()
    with pytest.warns(UserWarning, match="body 'c'.*not positive semi-definite.*indefinite"):
        m.add_body("c", jt.Revolute("x"), "b", mass=1.0, inertia=np.diag([-1.0, 0.1, 0.1]), strict_inertia=False)
    q = np.zeros(3)
    assert np.linalg.eigvalsh(sd.mass_matrix(m, q)).min() < 0  # M itself is still computed
    for call in (lambda: sd.aba(m, q, None, np.zeros(3)), lambda: sd.mass_matrix_inverse(m, q),
                 lambda: sd.mass_matrix_inverse(m, q, method="innovations")):
        with pytest.raises(np.linalg.LinAlgError) as err:
            call()
        msg = str(err.value)
        assert "body 'c'" in msg and "not positive semi-definite" in msg and "-1" in msg, msg
        assert "move no mass" not in msg
    edited = two_link()
    edited.bodies[1].inertia_com = -BOX  # assigned directly, unchecked
    with pytest.raises(np.linalg.LinAlgError, match="body 'b' has a rotational inertia .* not positive semi-definite"):
        sd.aba(edited, np.zeros(2), None, np.zeros(2))


@pytest.mark.parametrize("build, match", [
    # a mass-less free root over a single hinge: rotating the root about the hinge axis is undone by the hinge
    (lambda m: (m.add_body("root", jt.Free()),
                m.add_body("arm", jt.Revolute("x"), "root", mass=1.0, com=(0, 0, -1), inertia=BOX)),
     (r"body 'root' has no mass or inertia and the joints of its children \(revolute joint 'arm' of 'arm'\) "
      r"can undo 1 of the 6 directions of motion of its free joint 'root'")),
    # two free joints in a row (what floating_base=True on a URDF with its own floating joint built)
    (lambda m: (m.add_body("base", jt.Free()), m.add_body("trunk", jt.Free(), "base", mass=1.0, inertia=BOX)),
     r"body 'base' has no mass or inertia .* can undo every motion of its free joint 'base'"),
    # coaxial hinges with a mass-less body between them
    (lambda m: (m.add_body("a", jt.Revolute("z")),
                m.add_body("b", jt.Revolute("z"), "a", (np.eye(3), np.array([0, 0, 1.0])), mass=1.0, inertia=BOX)),
     r"can undo every motion of its revolute joint 'a'"),
    # a body with rotational inertia but no mass on a free joint: translating it moves nothing
    (lambda m: m.add_body("spinner", jt.Free(), inertia=BOX),
     r"the free joint 'spinner' can translate the bodies \['spinner'\], which have rotational inertia but no mass"),
    # a point mass on its own hinge's axis: turning it moves nothing (M_bead,bead = 0)
    (lambda m: (m.add_body("arm", jt.Revolute("x"), mass=1.0, com=(0, 0, -1), inertia=BOX),
                m.add_body("bead", jt.Revolute("z"), "arm", (np.eye(3), np.array([0, 0, -1.0])), mass=0.5)),
     r"the revolute joint 'bead' moves no inertia in any direction at the neutral configuration: the bodies it "
     r"carries \(\['bead'\]\) have no mass away from its axis"),
    # a point mass on a free joint: its three rotations move nothing
    (lambda m: m.add_body("ball", jt.Free(), mass=2.0),
     r"the free joint 'ball' moves no inertia in 3 of its 6 directions"),
])
def test_redundant_and_massless_motions_are_named_where_M_is_inverted(build, match):
    m = sd.Model("singular")
    build(m)
    q = sd.random_configuration(m, 3)
    assert np.linalg.eigvalsh(sd.mass_matrix(m, q)).min() < 1e-9  # singular, and still computed
    with pytest.raises(np.linalg.LinAlgError, match=match):
        sd.aba(m, q, None, np.zeros(m.nv))


def test_no_singularity_cause_is_reported_for_regular_models():
    for name in ("double_pendulum", "satellite_with_arrays", "three_link_arm", "branched_tree"):
        assert sd.models.get(name).singular_mass_matrix_causes() == []
    for seed in range(10):
        assert sd.models.random_tree(8, seed, floating_base=True).singular_mass_matrix_causes() == []
    # a mass-less free root whose two hinges cannot undo a common motion is regular
    m = sd.Model("two arms")
    m.add_body("root", jt.Free())
    m.add_body("arm1", jt.Revolute("x"), "root", mass=1.0, com=(0, 0, -1), inertia=BOX)
    m.add_body("arm2", jt.Revolute("y"), "root", mass=1.0, com=(0, 0, -1), inertia=BOX)
    assert m.singular_mass_matrix_causes() == []
    assert np.linalg.eigvalsh(sd.mass_matrix(m, sd.random_configuration(m, 1))).min() > 1e-6


# ----------------------------------------------------------------------------- bad algorithm input
@pytest.fixture(scope="module")
def tree():
    return sd.models.random_tree(6, 3, floating_base=True)


def test_shape_errors_name_argument_and_shapes(tree):
    q, v = sd.neutral(tree), np.zeros(tree.nv)
    with pytest.raises(ValueError, match=rf"q: expected shape \({tree.nq},\)"):
        sd.rnea(tree, q[:-1], v, v)
    with pytest.raises(ValueError, match="tau: expected shape"):
        sd.aba(tree, q, v, v[:2])
    with pytest.raises(ValueError, match="f_ext: expected shape"):
        sd.aba(tree, q, v, v, np.zeros((2, 6)))
    with pytest.raises(ValueError, match="batch"):
        sd.aba(tree, np.stack([q, q]), np.stack([v, v, v]), np.stack([v, v, v]))
    with pytest.raises(ValueError, match="out: expected"):
        sd.aba(tree, q, v, v, out=np.zeros(3))
    with pytest.raises(TypeError, match="q: expected an array"):
        sd.mass_matrix(tree, "abc")


@pytest.mark.parametrize("which", ["q", "v", "tau", "f_ext"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_states_raise(tree, which, bad):
    args = {"q": sd.neutral(tree), "v": np.zeros(tree.nv), "tau": np.zeros(tree.nv),
            "f_ext": np.zeros((tree.nbodies, 6))}
    args[which] = args[which].copy()
    args[which].flat[-1] = bad
    with pytest.raises(ValueError, match=f"{which}: expected finite values"):
        sd.aba(tree, args["q"], args["v"], args["tau"], args["f_ext"])
    if which in ("q", "v"):
        with pytest.raises(ValueError, match=f"{which}: expected finite"):
            sd.rnea(tree, args["q"], args["v"], np.zeros(tree.nv))


def test_zero_quaternion_and_unknown_frame(tree):
    q = sd.neutral(tree)
    q[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        sd.mass_matrix(tree, q)
    with pytest.raises(ValueError, match="unknown frame 'nowhere'"):
        sd.frame_jacobian(tree, sd.neutral(tree), "nowhere")
    with pytest.raises(ValueError, match="reference"):
        sd.frame_jacobian(tree, sd.neutral(tree), "b0", reference="global")
    with pytest.raises(ValueError, match="unknown frame"):
        sd.frame_placement(tree, sd.neutral(tree), "nowhere")
