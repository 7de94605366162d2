"""User constraints shared by the cut-joint methods and constraint embedding: constraints
on declared joints, sympy-derived constraints, and what embedding cannot take."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed import METHODS, constraint_set, evaluate_constraints
from soadyn.closed.embedding.clusters import cluster_tree

from conftest import urdfplus


def _phi(x):
    """A nonlinear relation between three joint angles (zero on a 2-dimensional surface)."""
    return np.array([np.sin(x[0]) + 0.5 * x[1] * np.cos(x[2]) + 0.2 * x[2] ** 2 - 0.1])


def _arm():
    return sd.models.serial_chain(4, axes="zyzy")


def _joint_names(model, bodies):
    return [model.bodies[b].joint.name for b in bodies]


def test_declared_joints_give_the_same_rows_as_the_whole_configuration():
    """𝔡 written on three joints' coordinates (with the joints declared) and on the whole
    configuration (no joints): the same G_c, residual and acceleration bias; the declared
    form's rows vanish outside its joints."""
    a, b = _arm(), _arm()
    joints = _joint_names(a, [0, 1, 3])
    a.add_constraint(sd.HolonomicConstraint("c", lambda x, t: _phi(x), joints=joints))
    b.add_constraint(sd.HolonomicConstraint("c", lambda q, t: _phi(q[[0, 1, 3]])))
    rng = np.random.default_rng(3)
    q, v = rng.normal(size=4), rng.normal(size=4)
    sa, sb = evaluate_constraints(a, q, v), evaluate_constraints(b, q, v)
    assert np.allclose(sa.G, sb.G, atol=1e-8) and sa.G[0, 2] == 0.0
    assert np.allclose(sa.residual, _phi(q[[0, 1, 3]]), atol=1e-15)
    assert np.allclose(sa.acceleration_bias, sb.acceleration_bias, rtol=1e-6, atol=1e-7)


def test_symbolic_constraint_jacobian_and_bias():
    """symbolic_constraint's K = ∂φ/∂q and 𝔘̊ = −K̇q̇ equal central differences of the same
    φ (HolonomicConstraint without derivatives: Richardson second differences along the
    path): the sign convention 𝔡̈ = G_c q̈ − 𝔘̊ of [Jain24]."""
    sympy = pytest.importorskip("sympy")
    a, b = _arm(), _arm()
    joints = _joint_names(a, [0, 1, 3])
    s = sympy.symbols("a b c", real=True)
    a.add_constraint(sd.symbolic_constraint("c", joints, [sympy.sin(s[0]) + s[1] * sympy.cos(s[2]) / 2
                                                          + s[2] ** 2 / 5 - sympy.Rational(1, 10)], s))
    b.add_constraint(sd.HolonomicConstraint("c", lambda x, t: _phi(x), joints=joints))
    rng = np.random.default_rng(5)
    q, v = rng.normal(size=4), rng.normal(size=4)
    sa, sb = evaluate_constraints(a, q, v), evaluate_constraints(b, q, v)
    assert np.allclose(sa.residual, sb.residual, atol=1e-14)
    assert np.allclose(sa.G, sb.G, atol=1e-8)
    assert np.allclose(sa.acceleration_bias, sb.acceleration_bias, rtol=1e-6, atol=1e-7)


def test_embedded_user_constraint_agrees_with_the_cut_joint_methods():
    """A nonlinear constraint on declared joints is embedded as a cluster of its joints'
    bodies (aggregation subgraph: bodies 0–3) and all four methods agree."""
    model = _arm()
    model.add_constraint(sd.HolonomicConstraint("c", lambda x, t: _phi(x), joints=_joint_names(model, [0, 1, 3])))
    tree = cluster_tree(model)
    (c,) = [c for c in tree if c.constraints]
    assert c.bodies == (0, 1, 2, 3) and c.constraints == ("c",) and tree.nyv == 3
    rng = np.random.default_rng(2)
    q, v = sd.close_loops(model, rng.normal(size=4) * 0.3, rng.normal(size=4), independent=[1, 2, 3])
    tau = rng.normal(size=4)
    res = {m: sd.constrained_forward_dynamics(model, q, v, tau, method=m) for m in METHODS}
    for r in res.values():
        assert np.allclose(r.qdd, res["direct"].qdd, atol=1e-9 * (1 + np.abs(res["direct"].qdd).max()))
        assert np.allclose(r.constraint_forces["c"], res["direct"].constraint_forces["c"], atol=1e-9)


def test_tello_differentials_reach_the_cut_joint_methods():
    """Tello's differentials are user constraints on the model: the cut-joint methods see
    their rows (two per differential) and the motion keeps them closed."""
    pytest.importorskip("sympy")
    model = sd.models.tello()
    cs = constraint_set(model)
    blocks = {b.name: b for b in cs.blocks}
    for side in ("left", "right"):
        for part in ("hip", "knee-ankle"):
            b = blocks[f"{side}-{part}-differential"]
            assert b.kind == "holonomic" and b.rows.stop - b.rows.start == 2
    rng = np.random.default_rng(0)
    y, yd = sd.closed.embedding.clusters.random_independent_state(model, rng, 0.3)
    q, v = sd.spanning_state(model, y, yd)
    r = sd.constrained_forward_dynamics(model, q, v, rng.normal(size=model.nv), method="augmented")
    st = r.state
    assert np.abs(st.G @ r.qdd - st.acceleration_bias).max() < 1e-9 * (1 + np.abs(r.qdd).max())
    assert r.constraint_rank == model.nv - 24 and r.degrees_of_freedom == 24  # [Chignoli23, §IX]


def test_what_constraint_embedding_cannot_take():
    """Non-holonomic, time-dependent and joint-less user constraints raise a clear error in
    constraint embedding (the cut-joint methods handle them); so do Baumgarte terms."""
    disk = sd.models.rolling_disk()
    q, v = sd.close_loops(disk, np.array([0.0, 0.0, 0.3, -0.7071067811865476, 0.0, 0.0, 0.7071067811865476]),
                          np.array([0.0, 0.0, 5.0, 1.5, 0.0, 0.0]))
    with pytest.raises(sd.ConstraintError, match="'contact' does not declare the joints it acts on: .*joints="):
        sd.constrained_forward_dynamics(disk, q, v, method="embedding")
    arm = _arm()
    arm.add_constraint(sd.NonholonomicConstraint("rate", lambda q, t: np.array([[0.0, 1.0, 0.0, 0.0]])))
    with pytest.raises(sd.ConstraintError, match="'rate' is non-holonomic: .*cut-joint method"):
        cluster_tree(arm)
    arm = _arm()
    arm.add_constraint(sd.HolonomicConstraint("drive", lambda x, t: x - np.sin(t), joints=["joint0"],
                                              time_dependent=True))
    with pytest.raises(sd.ConstraintError, match="'drive' depends on time"):
        cluster_tree(arm)
    model = urdfplus("four_bar.urdf")
    q, v = sd.close_loops(model, [0.3, -0.3, 0.3], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="baumgarte: method='embedding'"):
        sd.constrained_forward_dynamics(model, q, v, method="embedding", baumgarte=(1.0, 1.0))


def test_declared_joint_errors():
    model = sd.models.rssr_linkage()
    with pytest.raises(ValueError, match="unknown joint 'elbow'"):
        model.add_constraint(sd.HolonomicConstraint("c", lambda x, t: x, joints=["elbow"]))
    with pytest.raises(ValueError, match="joint 'coupler' is a spherical joint; the joints of a constraint must be "
                                         "1-dof joints"):
        model.add_constraint(sd.HolonomicConstraint("c", lambda x, t: x[:1], joints=["coupler"]))
    with pytest.raises(ValueError, match=r"constraint 'c': jacobian\(q, t\): expected shape \(1, 2\), got \(1, 5\)"):
        model.add_constraint(sd.HolonomicConstraint("c", lambda x, t: x[:1], jacobian=lambda x, t: np.ones((1, 5)),
                                                    joints=["crank", "rocker"]))
    with pytest.raises(ValueError, match="joints: a joint is listed twice"):
        sd.HolonomicConstraint("c", lambda x, t: x, joints=["crank", "crank"])
    assert model.user_constraints == ()
