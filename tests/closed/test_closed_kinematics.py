"""Constraint kinematics: G_c, the acceleration bias 𝔘̊, residuals, loop closure, errors."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn import models
from soadyn.closed import LoopClosureError, constraint_set, evaluate_constraints

from conftest import KINDS, cut_joint_pair, map_state, urdfplus

ROWS = {"weld": 6, "revolute": 5, "prismatic": 5, "spherical": 3, "universal": 4, "cylindrical": 4, "planar": 3}


def manifold_derivative(model, fn, q, h=1e-6):
    """Central differences of fn along each velocity coordinate on the configuration manifold."""
    cols = []
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        cols.append((fn(sd.integrate(model, q, e)) - fn(sd.integrate(model, q, -e))) / (2 * h))
    return np.array(cols).T


def path_derivative(model, q, v, a, t=0.0, h=1e-5):
    """d/dt of the velocity-level constraint G(q, t) v − 𝔘 along q̇ = v, v̇ = a."""
    def y(s):
        st = evaluate_constraints(model, sd.integrate(model, q, v, s), None, t + s, bias=False)
        return st.velocity_residual(v + a * s)
    return (y(h) - y(-h)) / (2 * h)


def closed_state(kind, seed):
    rng = np.random.default_rng(seed)
    tree, closed = cut_joint_pair(kind, rng)
    q = sd.random_configuration(tree, rng)
    v = rng.normal(size=tree.nv)
    qc, vc = map_state(tree, closed, q, v)
    return closed, qc, vc, rng


@pytest.mark.parametrize("kind", KINDS)
def test_loop_rows_vanish_on_the_joints_motion_and_are_the_residual_jacobian(kind):
    closed, q, v, rng = closed_state(kind, 11)
    st = evaluate_constraints(closed, q, v)
    assert st.G.shape == (ROWS[kind], closed.nv)
    # a configuration and velocity of the tree joint close the loop exactly
    assert np.abs(st.residual).max() < 1e-12
    assert np.abs(st.G @ v).max() < 1e-12
    # generic spatial mechanism: the rows are independent
    assert np.linalg.matrix_rank(st.G) == ROWS[kind]
    # at closure G is the derivative of the position residual on the manifold
    D = manifold_derivative(closed, lambda x: sd.constraint_residual(closed, x), q)
    assert np.allclose(D, st.G, atol=1e-8)


@pytest.mark.parametrize("kind", KINDS)
def test_acceleration_bias_is_the_derivative_of_the_velocity_constraint(kind):
    """𝔡̈ = G q̈ − 𝔘̊ at arbitrary (not closed) states: Q(R_rel, p_rel) varies as well."""
    rng = np.random.default_rng(5)
    _, closed = cut_joint_pair(kind, rng)
    q = sd.random_configuration(closed, rng)
    v, a = rng.normal(size=closed.nv), rng.normal(size=closed.nv)
    st = evaluate_constraints(closed, q, v)
    assert np.abs(sd.constraint_residual(closed, q)).max() > 1e-3  # really off the manifold
    assert np.allclose(path_derivative(closed, q, v, a), st.G @ a - st.acceleration_bias, atol=1e-7)


@pytest.mark.parametrize("build", [models.four_bar_linkage, lambda: models.four_bar_chain(3, 2),
                                   models.rssr_linkage, models.rolling_disk])
def test_bias_on_built_in_closed_chains(build):
    model = build()
    rng = np.random.default_rng(3)
    q = sd.random_configuration(model, rng)
    if model.name == "rolling_disk":
        q[2] = 0.3
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    st = evaluate_constraints(model, q, v)
    # numerical bias of the user constraints is accurate to ~1e-8
    assert np.allclose(path_derivative(model, q, v, a), st.G @ a - st.acceleration_bias, atol=1e-6)


def test_urdf_four_bar_rows_and_rank():
    model = urdfplus("four_bar.urdf")
    q, _ = sd.close_loops(model, np.array([0.4, -0.3, 0.5]))
    G = sd.constraint_jacobian(model, q)
    # a planar loop closed by a spatial revolute joint: 5 rows, 2 independent (x, y)
    assert G.shape == (5, 3)
    assert np.linalg.matrix_rank(G, tol=1e-10) == 2
    assert np.abs(G[[0, 1, 4]]).max() == 0.0  # tilt about x, y and the z translation never move
    # the parallelogram branch: q2 = −q1, q3 = q1 (links 1 and 3 equal, link 2 = ground)
    assert np.allclose(q, [0.4, -0.4, 0.4], atol=1e-10)


def test_coupling_rows_follow_the_transmission_rule():
    model = urdfplus("revolute_rotor_chain.urdf")
    G = sd.constraint_jacobian(model, sd.neutral(model))
    idx = {j.name: j.v_index for j in model.joints}
    expected = np.zeros((3, model.nv))
    for r, (link, rotor) in enumerate([("joint1", "joint1r"), ("joint2", "joint2r"), ("joint3", "joint3r")]):
        expected[r, idx[link]] = 6.0  # 6 × link rate = rotor rate (rotor on the link's parent)
        expected[r, idx[rotor]] = -1.0
    assert np.array_equal(G, expected)
    links = [idx["joint1"], idx["joint2"], idx["joint3"]]
    q0, v0 = np.zeros(model.nq), np.zeros(model.nv)
    q0[links], v0[links] = [0.3, -0.2, 0.1], [1.0, 2.0, 3.0]
    q, v = sd.close_loops(model, q0, v0)
    assert np.allclose(q[[idx["joint1r"], idx["joint2r"], idx["joint3r"]]], [1.8, -1.2, 0.6])
    assert np.allclose(v[[idx["joint1r"], idx["joint2r"], idx["joint3r"]]], [6.0, 12.0, 18.0])


def test_coupling_path_sums_joint_rates_from_the_common_ancestor():
    """Belt from a link to a link two joints further out: ratio·(ancestor→pred) = (ancestor→succ)."""
    m = sd.Model("belt")
    m.add_body("a", jt.Revolute("z"), None, mass=1.0, inertia=np.eye(3))
    m.add_body("b", jt.Revolute("z"), "a", mass=1.0, inertia=np.eye(3))
    m.add_body("c", jt.Revolute("z"), "b", mass=1.0, inertia=np.eye(3))
    m.add_body("pulley", jt.Revolute("z"), "a", mass=1.0, inertia=np.eye(3))
    m.add_coupling("belt", "pulley", "c", 2.0)
    assert np.array_equal(sd.constraint_jacobian(m, sd.neutral(m)), [[0.0, -1.0, -1.0, 2.0]])


def test_close_loops_holds_the_independent_coordinates():
    model = urdfplus("six_bar.urdf")
    rng = np.random.default_rng(0)
    guess = rng.normal(size=model.nq) * 0.5
    vg = rng.normal(size=model.nv)
    q, v = sd.close_loops(model, guess, vg)
    assert np.abs(sd.constraint_residual(model, q)).max() < 1e-10
    assert np.abs(sd.constraint_jacobian(model, q) @ v).max() < 1e-10
    assert np.array_equal(q[:3], guess[:3]) and np.array_equal(v[:3], vg[:3])  # joints 1–3 independent


def test_close_loops_lie_group_coordinates():
    model = models.rssr_linkage()
    q, v = sd.close_loops(model, sd.neutral(model), np.array([1.0, 0, 0, 0, 0]))
    assert np.isclose(np.linalg.norm(q[1:5]), 1.0)
    assert np.abs(sd.constraint_residual(model, q)).max() < 1e-10
    assert np.abs(sd.constraint_jacobian(model, q) @ v).max() < 1e-10
    tip = sd.frame_placement(model, q, "loop_predecessor")[:3, 3]
    assert np.allclose(tip, sd.frame_placement(model, q, "loop_successor")[:3, 3], atol=1e-10)


# --------------------------------------------------------------------------- bad input
FOUR_BAR_LOOP = """<robot name="r">
  <link name="base"/><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial></link>
  <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="jb" type="revolute" independent="false"><parent link="base"/><child link="b"/>
    <origin xyz="{ground} 0 0"/><axis xyz="0 0 1"/></joint>
  <loop name="L" type="{kind}"><predecessor link="{pred}"><origin xyz="1 0 0"/></predecessor>
    <successor link="b"><origin xyz="1 0 0"/></successor><axis xyz="0 0 1"/></loop>
</robot>"""


def test_unknown_link_in_loop():
    with pytest.raises(sd.URDFError, match=r"<loop name='L'>/predecessor: unknown link 'nope'"):
        sd.load_urdf(FOUR_BAR_LOOP.format(ground=1.0, kind="revolute", pred="nope"))


def test_unknown_loop_type():
    with pytest.raises(sd.URDFError, match="unknown joint type 'screw'"):
        sd.load_urdf(FOUR_BAR_LOOP.format(ground=1.0, kind="screw", pred="a"))


def test_loop_that_cannot_close():
    # two unit arms on pivots 3 m apart never meet
    model = sd.load_urdf(FOUR_BAR_LOOP.format(ground=3.0, kind="revolute", pred="a"))
    with pytest.raises(LoopClosureError, match=r"cannot close.*loop 'L'"):
        sd.close_loops(model, np.array([0.1, 3.0]))


def test_wrong_shape_constraint_functions():
    model = models.rssr_linkage()  # nq = 6, nv = 5: a Jacobian over q is the wrong shape
    with pytest.raises(ValueError, match=r"constraint 'c': jacobian\(q, t\): expected shape \(1, 5\), got \(1, 6\)"):
        model.add_constraint(sd.HolonomicConstraint("c", lambda q, t: q[:1], jacobian=lambda q, t: np.ones((1, 6))))
    with pytest.raises(ValueError, match=r"constraint 'd': function\(q, t\) must return a non-empty 1-D array, "
                                         r"got shape \(2, 3\)"):
        model.add_constraint(sd.HolonomicConstraint("d", lambda q, t: np.zeros((2, 3))))
    with pytest.raises(ValueError, match=r"constraint 'e': jacobian\(q, t\) must return an \(n, 5\) array"):
        model.add_constraint(sd.NonholonomicConstraint("e", lambda q, t: np.zeros(5)))
    with pytest.raises(ValueError, match=r"constraint 'f': function\(q, t\) depends on t; pass time_dependent=True"):
        model.add_constraint(sd.HolonomicConstraint("f", lambda q, t: q[:1] - t))
    assert model.user_constraints == ()
    # a function whose output changes shape later is caught when evaluated
    state = {"n": 1}
    model.add_constraint(sd.HolonomicConstraint("g", lambda q, t: np.zeros(state["n"])))
    state["n"] = 2
    with pytest.raises(ValueError, match=r"constraint 'g': function\(q, t\): expected shape \(1,\), got \(2,\)"):
        sd.constraint_jacobian(model, sd.neutral(model))


def test_loop_builder_errors():
    model = models.four_bar_linkage()
    with pytest.raises(ValueError, match="unknown body 'ghost'"):
        model.add_loop("x", "revolute", "ghost", "rocker")
    with pytest.raises(ValueError, match="a loop named 'loop' already exists"):
        model.add_loop("loop", "revolute", "crank", "rocker")
    model.add_loop("same", "weld", "crank", "crank")
    with pytest.raises(ValueError, match="predecessor and successor frames are on the same body"):
        constraint_set(model)


def test_loop_to_the_world():
    """A spatial 4-link chain whose tip is held by a spherical joint fixed in the world."""
    model = models.serial_chain(4, axes="zyx")
    rng = np.random.default_rng(9)
    q_ref = sd.random_configuration(model, rng)
    model.add_loop("anchor", "spherical", "world", "tip",
                   predecessor_placement=(np.eye(3), sd.frame_placement(model, q_ref, "tip")[:3, 3]))
    q, v = sd.close_loops(model, q_ref + 0.05 * rng.normal(size=4), rng.normal(size=4))
    assert np.abs(sd.constraint_residual(model, q)).max() < 1e-10
    a = rng.normal(size=4)
    st = evaluate_constraints(model, q, v)
    assert np.allclose(path_derivative(model, q, v, a), st.G @ a - st.acceleration_bias, atol=1e-7)
    r = [sd.constrained_forward_dynamics(model, q, v, method=m) for m in ("direct", "projection")]
    assert r[0].constraint_rank == 3 and np.allclose(r[0].qdd, r[1].qdd, atol=1e-9)
    # the world holds the tip: its velocity and acceleration vanish
    assert np.allclose(sd.frame_velocity(model, q, v, "tip", "local_world_aligned")[3:], 0.0, atol=1e-10)
    # (classical acceleration = spatial one + ω × v, and v = 0 there)
    acc = sd.frame_acceleration(model, q, v, r[0].qdd, "tip", "local_world_aligned")
    assert np.allclose(acc[3:], 0.0, atol=1e-9)
