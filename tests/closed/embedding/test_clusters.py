"""Automatic clustering, the cluster connectivity tree and bad input ([Chignoli23, §IV],
[Jain12, §5])."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn.closed.embedding.clusters import cluster_tree, declare_cluster, independent_state
from soadyn.closed.embedding import spanning_state
from soadyn.core.constraints import ConstraintError
from soadyn.closed.embedding import cluster_mass_matrix
from soadyn.graph import AggregationError, contract, model_digraph
from soadyn.core.constraints import Coupling

from conftest import URDFPLUS, mechanism, random_state, urdfplus

# degrees of freedom of [Chignoli23]'s robots (§IX: 18, 24, 24 and 38 DoF) and the cluster counts
DOF = {"mini_cheetah": (18, 13), "mit_humanoid": (24, 17), "tello": (24, 15), "jvrc1_humanoid": (38, 33)}


@pytest.mark.parametrize("name", sorted(DOF))
def test_robot_degrees_of_freedom(name):
    tree = cluster_tree(mechanism(name))
    assert (tree.nyv, len(tree)) == DOF[name]


def _body_sets(model):
    return sorted(tuple(sorted(model.body_name(i) for i in c.bodies)) for c in cluster_tree(model))


def _independent_keys(tree):
    m = tree.model
    return [(m.body_name(c.joint.cols[col][0]), c.joint.cols[col][1]) for c in tree for col in c.joint.independent_v]


@pytest.mark.parametrize("name", ["mini_cheetah", "mit_humanoid", "jvrc1_humanoid"])
def test_urdfplus_files_load_to_the_same_clusters_and_dynamics(name):
    """The URDF+ file and the model written in code give the same clusters and the same
    cluster mass matrix (matched by body names)."""
    code, urdf = mechanism(name), urdfplus(name)
    assert _body_sets(code) == _body_sets(urdf)
    tc, tu = cluster_tree(code), cluster_tree(urdf)
    kc, ku = _independent_keys(tc), _independent_keys(tu)
    perm = [ku.index(k) for k in kc]
    rng = np.random.default_rng(0)
    y, _ = random_state(code, rng)
    yu = np.zeros(tu.nyq)
    free = code.bodies[0].joint.kind == "free"
    nf = 7 if free else 0
    yu[:nf] = y[:nf]
    for a, k in enumerate(kc[6 if free else 0:]):
        yu[nf + ku.index(k) - (6 if free else 0)] = y[nf + a]
    Hc, Hu = cluster_mass_matrix(code, y), cluster_mass_matrix(urdf, yu)
    assert np.allclose(Hc, Hu[np.ix_(perm, perm)], atol=1e-12)


def test_mit_humanoid_clusters_and_output_bodies():
    """The knee–ankle belt transmission is one 4-body cluster hanging from the thigh
    ([Chignoli23, Fig. 1a], 8a); every output body is the nearest supporting body outside its
    cluster (§IV-B)."""
    model = mechanism("mit_humanoid")
    tree = cluster_tree(model)
    (knee,) = [c for c in tree if "right_knee_link" in {model.body_name(i) for i in c.bodies}]
    assert {model.body_name(i) for i in knee.bodies} == {"right_knee_link", "right_knee_rotor",
                                                         "right_ankle_rotor", "right_ankle_link"}
    assert knee.kind == "revolute pair with rotors"
    assert {model.body_name(o) for o in knee.output_bodies} == {"right_hip_ry_link"}
    assert knee.independent_joints == ["right_hipy_to_knee_link", "right_knee_to_ankle"]
    for c in tree:
        for i, o in zip(c.bodies, c.output_bodies):
            outside = [a for a in model.ancestors(i) if a not in c.bodies]
            assert o == (outside[0] if outside else -1)
        assert c.parent < c.index  # regular numbering of the cluster tree
    text = tree.summary()
    assert "right_ankle_rotor" in text and "revolute pair with rotors" in text


@pytest.mark.parametrize("name", ["mit_humanoid", "tello", "urdf:six_bar"])
def test_contracting_every_cluster_leaves_a_tree(name):
    """[Jain12, Lemma 5]: each cluster satisfies the aggregation condition, so contracting
    them one after the other keeps a tree."""
    model = mechanism(name)
    T = model_digraph(model)
    for c in cluster_tree(model):
        T = contract(T, set(c.bodies), label=("C", c.index))
        assert T.is_tree()


def test_independent_and_spanning_state_round_trip():
    model = mechanism("tello")
    rng = np.random.default_rng(4)
    y, yd = random_state(model, rng, scale=0.3)
    q, v = spanning_state(model, y, yd)
    y2, yd2 = independent_state(model, q, v)
    assert np.allclose(y2, y) and np.allclose(yd2, yd)


def _rotor_pair():
    m = sd.Model("pair")
    m.add_body("link", jt.Revolute("z"), None, mass=1.0, com=(0.3, 0, 0), inertia=np.diag([0.01, 0.02, 0.02]))
    m.add_body("link2", jt.Revolute("z"), "link", (np.eye(3), np.array([0.6, 0, 0])), mass=1.0, com=(0.3, 0, 0),
               inertia=np.diag([0.01, 0.02, 0.02]))
    rj = jt.Revolute("z")
    rj.independent = False
    m.add_body("rotor", rj, None, mass=0.1, inertia=np.diag([1e-4, 1e-4, 2e-4]))
    return m


def test_declared_cluster():
    m = _rotor_pair()
    declare_cluster(m, ["link", "link2"], name="arm")
    tree = cluster_tree(m)
    (arm,) = [c for c in tree if c.name == "arm"]
    assert set(arm.bodies) == {0, 1} and arm.kind == "rigid group"
    y, yd = random_state(m, np.random.default_rng(0))
    q, v = spanning_state(m, y, yd)
    assert np.allclose(cluster_mass_matrix(m, y), sd.mass_matrix(m.spanning_tree(), q, out=np.zeros((3, 3))))


def test_declared_cluster_violating_the_aggregation_condition():
    m = _rotor_pair()
    with pytest.raises(AggregationError, match=r"declared cluster \['link2', 'rotor'\] violates the aggregation "
                                               r"condition .* parent nodes"):
        declare_cluster(m, ["link2", "rotor"])


def test_unknown_links():
    m = _rotor_pair()
    with pytest.raises(ValueError, match="unknown body 'elbow'"):
        declare_cluster(m, ["link", "elbow"])
    m.couplings.append(Coupling("gear", "link", "no_such_rotor", 6.0))
    with pytest.raises(ValueError, match="coupling 'gear': unknown successor link 'no_such_rotor'"):
        cluster_tree(m)
    xml = open(f"{URDFPLUS}/revolute_rotor_chain.urdf").read()
    xml = xml.replace('<successor link="rotor-2"/>', '<successor link="rotor-9"/>')
    with pytest.raises(sd.URDFError, match="unknown link 'rotor-9'"):
        sd.load_urdf(xml)


def test_loop_that_cannot_be_assembled():
    """A four-bar whose coupler is too long to close: no configuration satisfies φ(q) = 0;
    the error names the cluster's loop and its smallest residual."""
    with pytest.raises(ConstraintError, match=r"no configuration where the constraints \['loop'\] hold was found.*"
                                              r"smallest residual max \|φ\| = .* on loop 'loop'"):
        cluster_tree(sd.models.four_bar_linkage(coupler=3.0))


def test_wrong_number_of_dependent_coordinates():
    m = sd.models.four_bar_linkage()
    m.joint("rocker_joint").independent = True  # only the coupler dependent, but the loop removes two freedoms
    with pytest.raises(ConstraintError, match="remove 2 degrees of freedom but 1 coordinates are marked dependent"):
        cluster_tree(m)


def test_singular_choice_of_dependent_coordinates():
    """Rotor as the only independent coordinate of a belt pair leaves K_d singular."""
    m = sd.models.belt_chain(2)
    declare_cluster(m, ["link-A-0", "rotor-A-0", "rotor-B-0", "link-B-0"], independent=["rotor-joint-A-0", "joint-A-0"])
    with pytest.raises(ConstraintError, match="cannot be solved from the constraints"):
        cluster_tree(m)
