"""Guard rails: the tree-dynamics functions refuse models with loops, couplings or user
constraints; the spanning tree is asked for explicitly with ``model.spanning_tree()``."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.dynamics.innovations import apply_innovations_factor
from soadyn.dynamics.oscm import eoscm_diagonal

from conftest import urdfplus


def _closed_state(model, seed=0):
    rng = np.random.default_rng(seed)
    q, v = sd.close_loops(model, sd.neutral(model) + 0.1 * (sd.neutral(model) == 0), rng.normal(size=model.nv))
    return q, v, rng.normal(size=model.nv)


def _pendulum_with_user_constraint():
    model = sd.models.serial_chain(2, axes="y")
    model.add_constraint(sd.HolonomicConstraint("hold", lambda q, t: np.array([q[0] - 0.2]),
                                                lambda q, t: np.array([[1.0, 0.0]])))
    return model


#: every guarded function, called as a user would
GUARDED = {
    "aba": lambda m, q, v, t: sd.aba(m, q, v, t),
    "rnea": lambda m, q, v, t: sd.rnea(m, q, v, t),
    "bias_forces": lambda m, q, v, t: sd.bias_forces(m, q, v),
    "generalized_gravity": lambda m, q, v, t: sd.generalized_gravity(m, q),
    "mass_matrix": lambda m, q, v, t: sd.mass_matrix(m, q),
    "mass_matrix jtmj": lambda m, q, v, t: sd.mass_matrix(m, q, method="jtmj"),
    "mass_matrix_inverse": lambda m, q, v, t: sd.mass_matrix_inverse(m, q),
    "log_det_mass_matrix": lambda m, q, v, t: sd.log_det_mass_matrix(m, q),
    "articulated_inertias": lambda m, q, v, t: sd.articulated_inertias(m, q),
    "apply_innovations_factor": lambda m, q, v, t: apply_innovations_factor(m, q, t),
    "operational_space_compliance": lambda m, q, v, t: sd.operational_space_compliance(m, q, m.frames[-1].name),
    "operational_space_inertia": lambda m, q, v, t: sd.operational_space_inertia(m, q, m.frames[-1].name),
    "eoscm_diagonal": lambda m, q, v, t: eoscm_diagonal(m, q),
    "aba batch": lambda m, q, v, t: sd.aba(m, np.stack([q, q]), np.stack([v, v]), np.stack([t, t])),
    "coriolis_matrix": lambda m, q, v, t: sd.coriolis_matrix(m, q, v),
    "joint_torque_regressor": lambda m, q, v, t: sd.joint_torque_regressor(m, q, v, t),
}

MODELS = {
    "loop": sd.models.four_bar_linkage,
    "coupling": lambda: urdfplus("revolute_rotor_chain.urdf"),
    "user constraint": _pendulum_with_user_constraint,
}


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("function", sorted(GUARDED))
def test_tree_dynamics_refuse_constrained_models(kind, function):
    model = MODELS[kind]()
    q, v, tau = _closed_state(model)
    with pytest.raises(sd.ClosedChainError) as err:
        GUARDED[function](model, q, v, tau)
    assert isinstance(err.value, ValueError)
    msg = str(err.value)
    for word in ("constrained_forward_dynamics", "cluster_aba", "cluster_rnea", "model.spanning_tree()",
                 repr(model.name)):
        assert word in msg, (word, msg)
    constraint = (model.loops or model.couplings or model.user_constraints)[0].name
    assert constraint in msg


@pytest.mark.parametrize("function", sorted(set(GUARDED) - {"operational_space_inertia"}))  # singular for 2 dofs
def test_the_explicit_spanning_tree_gives_the_open_tree_dynamics(function):
    """The same function on ``model.spanning_tree()`` equals it on the same tree built
    without the constraint (an independent model of the same bodies)."""
    closed = _pendulum_with_user_constraint()
    open_tree = sd.models.serial_chain(2, axes="y")
    q, v, tau = np.array([0.2, -0.4]), np.array([0.3, 0.1]), np.array([0.5, -0.2])
    ours = GUARDED[function](closed.spanning_tree(), q, v, tau)
    ref = GUARDED[function](open_tree, q, v, tau)
    for a, b in zip(np.atleast_1d(ours) if not isinstance(ours, tuple) else ours,
                    np.atleast_1d(ref) if not isinstance(ref, tuple) else ref):
        assert np.array_equal(a, b)


def test_spanning_tree_of_a_loop_model_matches_the_dense_operators():
    """M of the explicit spanning tree (CRBA recursion) equals H φ M φ* H* of the dense
    operator layer on the closed model (the specification, which has no guard)."""
    model = urdfplus("six_bar.urdf")
    q, v, _ = _closed_state(model, 2)
    S = sd.operators.sko(model, q, v)
    M = sd.mass_matrix(model.spanning_tree(), q)
    assert np.allclose(M, S.mass_matrix, atol=1e-12 * (1 + np.abs(M).max()))


def test_kinematics_jacobians_and_energies_stay_allowed():
    """They are correct for the closed system at a consistent state: equal to the spanning tree's."""
    model = sd.models.four_bar_linkage()
    q, v, _ = _closed_state(model, 1)
    tree = model.spanning_tree()
    frame = model.frames[-1].name
    for f in (lambda m: sd.frame_jacobian(m, q, frame), lambda m: sd.frame_placement(m, q, frame),
              lambda m: sd.frame_velocity(m, q, v, frame), lambda m: sd.forward_kinematics(m, q, v).positions,
              lambda m: sd.kinetic_energy(m, q, v), lambda m: sd.potential_energy(m, q),
              lambda m: sd.center_of_mass(m, q), lambda m: sd.center_of_mass_jacobian(m, q),
              lambda m: sd.centroidal_momentum_matrix(m, q), lambda m: sd.centroidal_momentum(m, q, v),
              lambda m: sd.kinetic_energy_regressor(m, q, v), lambda m: sd.potential_energy_regressor(m, q)):
        assert np.array_equal(f(model), f(tree))
    # ½ vᵀ M v of the spanning tree's mass matrix
    assert np.isclose(sd.kinetic_energy(model, q, v), 0.5 * v @ sd.mass_matrix(tree, q) @ v, rtol=1e-12)


def test_spanning_tree_structure():
    model = sd.models.mini_cheetah()
    tree = model.spanning_tree()
    assert isinstance(tree, sd.Model) and not tree.has_constraints
    assert (tree.nq, tree.nv, tree.body_names, tree.frame_names) == (model.nq, model.nv, model.body_names,
                                                                      model.frame_names)
    assert np.array_equal(tree.gravity, model.gravity)
    for a, b in zip(model.joints, tree.joints):
        assert a is not b
        assert (a.name, a.kind, a.q_index, a.v_index, a.independent) == (b.name, b.kind, b.q_index, b.v_index,
                                                                          b.independent)
    assert model.spanning_tree() is tree  # cached
    ordinary = sd.models.serial_chain(3)
    assert ordinary.spanning_tree() is ordinary


def test_spanning_tree_follows_edits_of_the_model():
    model = sd.models.four_bar_linkage()
    tree = model.spanning_tree()
    model.gravity = (0.0, -9.81, 0.0)
    edited = model.spanning_tree()
    assert edited is not tree and np.array_equal(edited.gravity, [0.0, -9.81, 0.0])
    model.add_body("extra", sd.joints.Revolute("z"), model.body_names[-1], mass=1.0, inertia=np.eye(3) * 0.01)
    grown = model.spanning_tree()
    assert grown.body_names[-1] == "extra" and grown.nv == model.nv
    model.set_inertia("extra", 2.0, inertia=np.eye(3) * 0.01)
    assert model.spanning_tree().bodies[-1].mass == 2.0


def test_editing_the_spanning_tree_detaches_it():
    model = sd.models.four_bar_linkage()
    tree = model.spanning_tree()
    mass = model.bodies[0].mass
    tree.set_inertia(0, 10 * mass + 1.0)
    assert model.bodies[0].mass == mass  # the model is untouched
    fresh = model.spanning_tree()
    assert fresh is not tree and fresh.bodies[0].mass == mass


def test_a_constraint_added_later_arms_the_guard():
    model = sd.models.serial_chain(2, axes="y")
    q = np.array([0.2, 0.0])
    sd.mass_matrix(model, q)  # compiled as a tree
    model.add_constraint(sd.HolonomicConstraint("hold", lambda q, t: np.array([q[0] - 0.2])))
    with pytest.raises(sd.ClosedChainError):
        sd.mass_matrix(model, q)
