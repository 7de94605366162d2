"""A model is edited through its methods only: its public collections are read-only (an
edit behind the model's back would leave it reporting its old sizes), loops and
couplings are immutable, the loaders go through the model's methods; and a
``Workspace`` belongs to one model version, refused by every function for any other."""
import dataclasses
import os

import numpy as np
import pytest

import soadyn as sd
from conftest import URDFPLUS, mechanism
from soadyn import joints as jt
from soadyn.dynamics.innovations import apply_innovations_factor
from soadyn.dynamics.oscm import eoscm_diagonal
from soadyn.dynamics.spo import spo_product


def _tree():
    return sd.models.random_tree(5, 3, floating_base=True)


# =========================================================================== read-only parts
def test_the_public_collections_cannot_be_changed_behind_the_models_back():
    m = mechanism("urdf:four_bar")
    nb, nq, nv, version = m.nbodies, m.nq, m.nv, m.version
    for name in ("bodies", "frames", "loops", "couplings", "user_constraints", "declared_clusters", "visuals",
                 "joints"):
        items = getattr(m, name)
        assert isinstance(items, tuple), name
        for edit in (lambda: items.pop(), lambda: items.append(None), lambda: items.clear()):
            with pytest.raises(AttributeError):
                edit()
    for name, value in (("bodies", []), ("loops", []), ("nq", 3), ("nv", 3)):
        with pytest.raises(AttributeError):
            setattr(m, name, value)
    assert (m.nbodies, m.nq, m.nv, m.version) == (nb, nq, nv, version)
    # a state of the old size is still what the model takes
    with pytest.raises(ValueError, match=rf"q: expected shape \({nq},\)"):
        sd.constraint_jacobian(m, np.zeros(nq - 1))


def test_loops_couplings_and_transmissions_are_immutable():
    four_bar = mechanism("urdf:four_bar")
    rotors = mechanism("urdf:revolute_rotor_chain")
    loop, coupling = four_bar.loops[0], rotors.couplings[0]
    cheetah = sd.models.mini_cheetah()
    cheetah.add_transmission("extra", ["FR_hip_to_knee_j", "FL_hip_to_knee_j"], [1.0, -2.0], dependent=())
    transmission = cheetah.couplings[-1]
    for item, field in ((loop, "kind"), (loop, "axis"), (coupling, "ratio"), (transmission, "ratios")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(item, field, getattr(item, field))
    for array in (loop.axis, loop.axis2, transmission.ratios, transmission.offset):
        assert not array.flags.writeable


def test_declared_clusters_are_read_only():
    m = _tree()
    sd.declare_cluster(m, ["b1"])
    declared = m.declared_clusters[0]
    assert declared["bodies"] == (m.body_index("b1"),)
    with pytest.raises(TypeError):
        declared["bodies"] = (0, 1)


def test_constraint_objects_are_added_through_the_model():
    m = sd.Model("two links")
    m.add_body("link", jt.Revolute("z"), mass=1.0, com=(0.2, 0, 0), inertia=np.eye(3) * 0.01)
    rotor = jt.Revolute("z")
    rotor.independent = False
    m.add_body("rotor", rotor, inertia=np.eye(3) * 1e-4)
    version = m.version
    c = m.add_constraint(sd.core.constraints.Coupling("gear", "link", "rotor", 4.0))
    assert m.couplings == (c,) and m.version == version + 1
    with pytest.raises(ValueError, match="name: a coupling named 'gear' already exists"):
        m.add_constraint(sd.core.constraints.Coupling("gear", "link", "rotor", 2.0))
    with pytest.raises(ValueError, match=r"ratio, offset: expected finite numbers, got nan"):
        m.add_constraint(sd.core.constraints.Coupling("bad", "link", "rotor", float("nan")))
    with pytest.raises(ValueError, match="loop 'l': unknown predecessor frame 'nowhere'"):
        m.add_constraint(sd.core.constraints.Loop("l", "revolute", "nowhere", "rotor"))
    with pytest.raises(TypeError, match="constraint: expected a HolonomicConstraint, NonholonomicConstraint, Loop"):
        m.add_constraint("gear")
    assert m.couplings == (c,) and m.loops == ()


def test_the_urdf_loader_adds_couplings_through_the_model():
    """A URDF+ file with two couplings of one name is refused (the model's add_constraint,
    named by the element), where the coupling list took both."""
    path = os.path.join(URDFPLUS, "revolute_rotor_chain.urdf")
    if not os.path.isfile(path):
        pytest.skip(f"{path} is not available")
    xml = open(path).read()
    start = xml.index("<coupling")
    end = xml.index("</coupling>", start) + len("</coupling>")
    name = xml[start:end].split('name="')[1].split('"')[0]
    with pytest.raises(sd.URDFError, match=rf"<coupling name='{name}'>: name: a coupling named '{name}' already "
                                           "exists"):
        sd.load_urdf(xml[:end] + xml[start:end] + xml[end:])


def test_visuals_are_added_through_the_model():
    from soadyn.core.visuals import Visual
    m = _tree()
    version = m.version
    v = m.add_visual(Visual("ball", "b2", "sphere", (0.1,)))
    assert m.visuals == (v,) and m.version == version  # (not data the dynamics uses)
    with pytest.raises(ValueError, match="visual: 'cube' is fixed to the unknown frame 'nowhere'"):
        m.add_visual(Visual("cube", "nowhere", "box", (0.1, 0.1, 0.1)))
    with pytest.raises(ValueError, match="visual: a visual named 'ball' already exists"):
        m.add_visual(Visual("ball", "b1", "sphere", (0.2,)))


def test_a_frame_object_is_resolved_to_the_models_own():
    m = _tree()
    tree_frame = sd.models.random_tree(5, 3, floating_base=True).frames[3]  # same name and index
    assert m.frame(tree_frame) is m.frames[3]
    other = sd.Model("other")
    other.add_body("x", jt.Revolute("z"), mass=1.0, inertia=np.eye(3))
    with pytest.raises(ValueError, match=r"frame: 'x' \(index 0\) is not a frame of model"):
        m.frame(other.frames[0])


# =========================================================================== workspaces
def _workspace_calls(m, q, v, a):
    frame = m.frames[-1].name
    f = np.zeros((m.nbodies, 6))
    return {
        "aba": lambda ws: sd.aba(m, q, v, a, workspace=ws),
        "aba f_ext": lambda ws: sd.aba(m, q, v, a, f, workspace=ws),
        "aba batch": lambda ws: sd.aba(m, np.stack([q, q]), np.stack([v, v]), np.stack([a, a]), workspace=ws),
        "rnea": lambda ws: sd.rnea(m, q, v, a, workspace=ws),
        "bias_forces": lambda ws: sd.bias_forces(m, q, v, workspace=ws),
        "generalized_gravity": lambda ws: sd.generalized_gravity(m, q, workspace=ws),
        "body_forces": lambda ws: sd.body_forces(m, q, v, a, workspace=ws),
        "mass_matrix": lambda ws: sd.mass_matrix(m, q, workspace=ws),
        "mass_matrix jtmj": lambda ws: sd.mass_matrix(m, q, "jtmj", workspace=ws),
        "mass_matrix_inverse": lambda ws: sd.mass_matrix_inverse(m, q, workspace=ws),
        "mass_matrix_inverse ltdl": lambda ws: sd.mass_matrix_inverse(m, q, method="ltdl", workspace=ws),
        "log_det_mass_matrix": lambda ws: sd.log_det_mass_matrix(m, q, workspace=ws),
        "articulated_inertias": lambda ws: sd.articulated_inertias(m, q, workspace=ws),
        "articulated_inertias partitioned": lambda ws: sd.articulated_inertias(m, q, partitioned=True, workspace=ws),
        "apply_innovations_factor": lambda ws: apply_innovations_factor(m, q, v, workspace=ws),
        "spo_product": lambda ws: spo_product(m, q, np.ones((m.nbodies, 6)), workspace=ws),
        "frame_jacobian": lambda ws: sd.frame_jacobian(m, q, frame, workspace=ws),
        "forward_kinematics": lambda ws: sd.forward_kinematics(m, q, workspace=ws),
        "forward_kinematics v a": lambda ws: sd.forward_kinematics(m, q, v, a, workspace=ws),
        "operational_space_compliance": lambda ws: sd.operational_space_compliance(m, q, frame, workspace=ws),
        "operational_space_inertia": lambda ws: sd.operational_space_inertia(m, q, frame, workspace=ws),
        "eoscm_diagonal": lambda ws: eoscm_diagonal(m, q, workspace=ws),
        "rnea_derivatives": lambda ws: sd.rnea_derivatives(m, q, v, a, workspace=ws),
        "aba_derivatives": lambda ws: sd.aba_derivatives(m, q, v, a, workspace=ws),
    }


def _result(x):
    if hasattr(x, "rotations"):
        return (x.rotations, x.positions)
    return x if isinstance(x, tuple) else (x,)


def test_every_function_refuses_a_workspace_of_another_model_or_version():
    m = _tree()
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    calls = _workspace_calls(m, q, v, a)
    larger = sd.models.random_tree(9, 3, floating_base=True)
    same_size = _tree()  # another model of the same sizes
    own = sd.Workspace(m)
    expected = {name: _result(call(None)) for name, call in calls.items()}
    for name, call in calls.items():
        # its own workspace gives the result without one
        assert all(np.array_equal(x, y) for x, y in zip(_result(call(own)), expected[name])), name
        for other in (sd.Workspace(larger), sd.Workspace(same_size), object()):
            with pytest.raises(ValueError, match=rf"workspace: expected a soadyn.Workspace made for model "
                                                 rf"'{m.name}' at its version {m.version}"):
                call(other)
    stale = sd.Workspace(m)
    m.gravity = (0.0, 0.0, -9.8)  # an edit
    for name, call in calls.items():
        with pytest.raises(ValueError, match=rf"got one made for its version {stale.version} \(the model was edited "
                                             r"since: make a new Workspace\(model\)\)"):
            call(stale)
        call(sd.Workspace(m))


def test_constraint_evaluation_refuses_a_workspace_of_another_model():
    m = mechanism("urdf:four_bar")
    q = sd.neutral(m)
    from soadyn.closed.kinematics import evaluate_constraints
    assert np.array_equal(evaluate_constraints(m, q, workspace=sd.Workspace(m)).G, sd.constraint_jacobian(m, q))
    with pytest.raises(ValueError, match="workspace: expected a soadyn.Workspace made for model"):
        evaluate_constraints(m, q, workspace=sd.Workspace(_tree()))
