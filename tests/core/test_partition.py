"""Mass-less body partitioning of multi-dof hinges and its reverse ([Jain23p, §2]):
partition_hinges, merge_massless and the state maps, held against the unpartitioned
model's own dynamics (aba, rnea, mass matrix) at corresponding states, and against
kinematics (frames by name)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.core.partition import partitioned_body_names, sub_body_name, sub_hinge_name
from soadyn.models import random_rigid_inertia

from conftest import assert_close, tree_state

SETTINGS = settings(max_examples=15, deadline=None)
#: random trees with every joint type (random_tree draws each kind once for n ≥ 8)
all_kinds = st.tuples(st.integers(8, 12), st.integers(0, 2**31 - 1), st.booleans())
#: the sub-hinge kinds of each multi-dof hinge, inboard first
SUB_KINDS = {"universal": ["revolute"] * 2, "gimbal": ["revolute"] * 3, "spherical": ["revolute"] * 3,
             "planar": ["prismatic", "prismatic", "revolute"], "free": ["revolute"] * 3 + ["prismatic"] * 3}


def nearby(model, q, rng, angle=0.6):
    """A configuration near q (every joint moved by up to ~angle): a reference for the
    charts of spherical and free joints that keeps q away from the chart singularity."""
    return sd.integrate(model, q, rng.uniform(-angle, angle, model.nv) / np.sqrt(3))


@SETTINGS
@given(case=all_kinds, at_q=st.booleans())
def test_partition_preserves_dynamics(case, at_q):
    """aba, rnea and M of the partitioned model equal those of the model at corresponding
    states (M_p = TᵀMT, τ_p = Tᵀτ), with the chart centred at q or at a nearby reference."""
    model, q, v = tree_state(case, with_velocity=True)
    rng = np.random.default_rng(case[1])
    part = sd.partition_hinges(model, q if at_q else nearby(model, q, rng))
    a, tau = rng.normal(size=(2, model.nv))
    s = sd.partitioned_state(model, part, q, v, a, sd.rnea(model, q, v, a))
    assert_close(sd.rnea(part, s.q, s.v, s.a), s.tau, 1e-12, "rnea")
    s = sd.partitioned_state(model, part, q, v, sd.aba(model, q, v, tau), tau)
    M = sd.mass_matrix(model, q, out=np.zeros((model.nv, model.nv)))
    # the two ABAs round differently, each to about cond(M)·ε relative
    assert_close(sd.aba(part, s.q, s.v, s.tau), s.a, max(1e-12, 1e-15 * np.linalg.cond(M)), "aba")
    Tt = np.array([sd.partitioned_state(model, part, q, tau=e).tau for e in np.eye(model.nv)])  # rows: Tᵀ e_i
    Mp = sd.mass_matrix(part, s.q, out=np.zeros((part.nv, part.nv)))
    assert_close(Mp, Tt.T @ M @ Tt, 1e-12, "M_p = Tᵀ M T")
    assert_close(sd.kinetic_energy(part, s.q, s.v), sd.kinetic_energy(model, q, v), 1e-12, "kinetic energy")
    if at_q:  # chart centre: the sub-hinge rates are the hinge's rates and M is unchanged
        assert_close(s.v, v, 1e-14, "v at the chart centre")
        assert_close(Mp, M, 1e-12, "M at the chart centre")


@SETTINGS
@given(case=all_kinds)
def test_names_frames_and_poses_are_kept(case):
    """Sub-bodies B[s] and sub-hinges J[s] as documented; every original body and frame is
    found by name at its original world pose; the mass sits on the original bodies only."""
    model, q = tree_state(case)
    rng = np.random.default_rng(case[1])
    part = sd.partition_hinges(model, nearby(model, q, rng))
    s = sd.partitioned_state(model, part, q)
    assert part.body_names == partitioned_body_names(model)
    for b in model.bodies:
        j = b.joint
        if j.kind in SUB_KINDS:
            subs = [part.joint(sub_hinge_name(j.name, k)) for k in range(j.nv)]
            assert [x.kind for x in subs] == SUB_KINDS[j.kind]
            axes = np.array([x.axis for x in subs])
            assert np.allclose(axes, np.vstack([np.eye(3)] * (j.nv // 3)) if j.kind in ("spherical", "free")
                               else j.axes()[:j.nv], rtol=0.0, atol=1e-15)
            assert subs[-1].body == part.body_index(b.name)
            for k in range(j.nv - 1):
                sub = part.bodies[part.body_index(sub_body_name(b.name, k))]
                assert sub.mass == 0.0 and not np.any(sub.inertia_com) and sub.joint is subs[k]
        else:
            assert part.joint(j.name).kind == j.kind
        pb = part.bodies[part.body_index(b.name)]
        assert pb.mass == b.mass and np.array_equal(pb.inertia_com, b.inertia_com)
    for f in model.frames:
        assert_close(sd.frame_placement(part, s.q, f.name), sd.frame_placement(model, q, f.name), 1e-12, f.name)
    assert sum(b.mass for b in part.bodies) == pytest.approx(sum(b.mass for b in model.bodies), rel=1e-15)


@pytest.mark.parametrize("kind", ["universal", "gimbal", "planar"])
def test_composite_coordinates_are_unchanged(kind):
    """Universal, gimbal and planar hinges are their sub-hinge chains: same q, v, q̈, τ
    numbers, same M, and merge_massless gives the same joint back."""
    model = sd.models.random_tree(6, 3, kinds=(kind, "revolute"))
    rng = np.random.default_rng(0)
    q = sd.random_configuration(model, rng)
    v, a, tau = rng.normal(size=(3, model.nv))
    part = sd.partition_hinges(model, sd.random_configuration(model, rng))  # no reference needed
    s = sd.partitioned_state(model, part, q, v, a, tau)
    for x, y in zip(s, (q, v, a, tau)):
        assert np.array_equal(x, y)
    assert_close(sd.mass_matrix(part, q), sd.mass_matrix(model, q), 1e-13)
    merged = sd.merge_massless(part)
    assert [(b.name, b.joint.kind, b.joint.name) for b in merged.bodies] == \
        [(b.name, b.joint.kind, b.joint.name) for b in model.bodies]
    for b, c in zip(model.bodies, merged.bodies):
        assert np.allclose(b.joint.axes(), c.joint.axes(), atol=1e-15)
        assert np.array_equal(b.joint.lower, c.joint.lower) and np.array_equal(b.joint.upper, c.joint.upper)
    assert_close(sd.aba(merged, q, v, tau), sd.aba(model, q, v, tau), 1e-12)


@SETTINGS
@given(case=all_kinds)
def test_state_maps_round_trip(case):
    """unpartitioned_state inverts partitioned_state (q up to the quaternion sign)."""
    model, q, v = tree_state(case, with_velocity=True)
    rng = np.random.default_rng(case[1])
    part = sd.partition_hinges(model, nearby(model, q, rng))
    a, tau = rng.normal(size=(2, model.nv))
    s = sd.partitioned_state(model, part, q, v, a, tau)
    back = sd.unpartitioned_state(model, part, *s)
    assert_close(sd.difference(model, q, back.q), np.zeros(model.nv), 1e-12, "q")
    for x, y, name in zip(back[1:], (v, a, tau), ("v", "a", "tau")):
        assert_close(x, y, 1e-12, name)


def test_reference_configuration_is_the_chart_centre():
    """At the reference q the spherical and free sub-hinge coordinates are zero and the
    sub-bodies sit at the body's pose."""
    model = sd.models.random_tree(8, 5, kinds=("spherical", "free", "revolute"))
    q = sd.random_configuration(model, 1)
    part = sd.partition_hinges(model, q)
    s = sd.partitioned_state(model, part, q)
    R, p = sd.body_placements(part, s.q)
    for b in model.bodies:
        if b.joint.kind in ("spherical", "free"):
            for k in range(b.joint.nv):
                assert s.q[part.joint(sub_hinge_name(b.joint.name, k)).q_index] == pytest.approx(0.0, abs=1e-12)
            i = part.body_index(b.name)
            for k in range(b.joint.nv - 1):
                j = part.body_index(sub_body_name(b.name, k))
                assert_close(R[j], R[i], 1e-12)
                assert_close(p[j], p[i], 1e-12)


def test_quaternion_joints_merge_into_a_gimbal():
    """merge_massless(partition_hinges(m)): a spherical joint's revolute x, y, z sub-hinges
    become a gimbal named after the joint; a free joint's become a gimbal and three
    prismatic hinges (no 3-dof translation joint); the dynamics agree through the maps."""
    model = sd.Model("quat")
    for k, (name, joint) in enumerate((("base", jt.Free()), ("arm", jt.Spherical()))):
        mass, com, inertia = random_rigid_inertia(np.random.default_rng(k))
        model.add_body(name, joint, None if k == 0 else "base", (np.eye(3), np.array([0.0, 0.0, 0.2 * k])),
                       mass=mass, com=com, inertia=inertia)
    rng = np.random.default_rng(2)
    q = sd.random_configuration(model, rng)
    part = sd.partition_hinges(model, nearby(model, q, rng))
    merged = sd.merge_massless(part)
    kinds = {b.joint.name: b.joint.kind for b in merged.bodies}
    assert kinds == {"base[0]+base[1]+base[2]": "gimbal", "base[3]": "prismatic", "base[4]": "prismatic",
                     "base[5]": "prismatic", "arm": "gimbal"}
    assert merged.body_names == ["base[2]", "base[3]", "base[4]", "base", "arm"]
    v, tau = rng.normal(size=(2, model.nv))
    s = sd.partitioned_state(model, part, q, v, tau=tau)
    sm = sd.unpartitioned_state(merged, part, *s)  # the partitioned model's state in the merged model
    a_p = sd.aba(part, s.q, s.v, s.tau)
    assert_close(sd.aba(merged, sm.q, sm.v, sm.tau), sd.unpartitioned_state(merged, part, s.q, s.v, a_p).a, 1e-12)
    assert_close(sd.unpartitioned_state(model, part, s.q, s.v, a_p).a, sd.aba(model, q, v, tau), 1e-12)


def _massless_chain(axes_kinds, placements=None, extra_frame=False, names=None):
    """world → mass-less bodies on 1-dof hinges → a body with mass (the last hinge)."""
    m = sd.Model("chain")
    mass, com, inertia = random_rigid_inertia(np.random.default_rng(1))
    parent = None
    n = len(axes_kinds)
    for k, (kind, axis) in enumerate(axes_kinds):
        joint = jt.Revolute(axis) if kind == "R" else jt.Prismatic(axis)
        body = f"link{k}" if k < n - 1 else "tip"
        placement = None if placements is None else placements[k]
        inert = dict(mass=mass, com=com, inertia=inertia) if k == n - 1 else {}
        m.add_body(body, joint, parent, placement, joint_name=None if names is None else names[k], **inert)
        parent = body
    if extra_frame:
        m.add_frame("marker", "link0", (np.eye(3), np.array([0.1, 0.0, 0.0])))
    return m


def test_merge_names_and_dynamics_of_a_hand_built_chain():
    """Two revolutes through a mass-less body become a universal joint named "hip_x+hip_y"
    with the same dynamics (same coordinates)."""
    m = _massless_chain([("R", (1.0, 0.0, 0.0)), ("R", (0.0, 1.0, 0.0))], names=["hip_x", "hip_y"])
    merged = sd.merge_massless(m)
    assert merged.body_names == ["tip"]
    assert merged.joints[0].kind == "universal" and merged.joints[0].name == "hip_x+hip_y"
    rng = np.random.default_rng(3)
    q, v, tau = rng.normal(size=(3, 2))
    assert_close(sd.aba(merged, q, v, tau), sd.aba(m, q, v, tau), 1e-13)
    s = sd.unpartitioned_state(merged, m, q, v, tau=tau)
    assert np.array_equal(s.q, q) and np.array_equal(s.v, v)


@pytest.mark.parametrize("case", ["three prismatic", "planar axes not Planar's", "frame on the mass-less body",
                                  "placement between the hinges", "helical"])
def test_merge_leaves_chains_that_match_no_joint(case):
    """What merge_massless leaves alone, as its docstring says."""
    x, y, z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    d = np.sqrt(0.5)
    build = {
        "three prismatic": lambda: _massless_chain([("P", x), ("P", y), ("P", z)]),
        "planar axes not Planar's": lambda: _massless_chain([("P", (d, d, 0.0)), ("P", (-d, d, 0.0)), ("R", z)]),
        "frame on the mass-less body": lambda: _massless_chain([("R", x), ("R", y)], extra_frame=True),
        "placement between the hinges": lambda: _massless_chain(
            [("R", x), ("R", y)], placements=[None, (np.eye(3), np.array([0.0, 0.0, 0.1]))]),
        "helical": lambda: _helical_chain(),
    }[case]
    m = build()
    merged = sd.merge_massless(m)
    assert [(b.name, b.joint.kind) for b in merged.bodies] == [(b.name, b.joint.kind) for b in m.bodies]


def _helical_chain():
    m = sd.Model("helical")
    m.add_body("nut", jt.Helical("z", pitch=0.01), None)
    m.add_body("tip", jt.Revolute("x"), "nut", mass=1.0, inertia=np.eye(3) * 0.01)
    return m


def test_planar_chain_merges_when_its_axes_are_planars():
    """prismatic, prismatic, revolute with Planar(normal)'s in-plane axes → Planar."""
    p = jt.Planar((0.3, -0.2, 0.9))
    axes = p.axes()
    m = _massless_chain([("P", axes[0]), ("P", axes[1]), ("R", axes[2])], names=["pl[0]", "pl[1]", "pl[2]"])
    merged = sd.merge_massless(m)
    assert [(b.name, b.joint.kind, b.joint.name) for b in merged.bodies] == [("tip", "planar", "pl")]


def test_partitioned_closed_chain_keeps_its_loops():
    """The RSSR linkage (a spherical joint and a spherical loop joint): the loop frames keep
    their poses, so the loop residuals agree at corresponding states."""
    model = sd.models.rssr_linkage()
    q, _ = sd.close_loops(model, np.array([0.3, 0.0, 0.0, 0.0, 1.0, 0.2]))
    part = sd.partition_hinges(model, q)
    assert [lp.name for lp in part.loops] == ["loop"]
    assert not part.joint("coupler[1]").independent
    s = sd.partitioned_state(model, part, q)
    assert_close(sd.constraint_residual(part, s.q), sd.constraint_residual(model, q), 1e-12)
    q2 = sd.integrate(model, q, np.full(model.nv, 0.1))
    s2 = sd.partitioned_state(model, part, q2)
    assert_close(sd.constraint_residual(part, s2.q), sd.constraint_residual(model, q2), 1e-12)


def test_errors_name_the_problem():
    model = sd.models.random_tree(8, 1)
    with pytest.raises(ValueError, match="spanning_tree"):
        sd.partition_hinges(sd.models.geared_chain(3))
    with pytest.raises(ValueError, match=r"q: expected shape"):
        sd.partition_hinges(model, np.zeros(3))
    other = sd.models.random_tree(8, 2)
    with pytest.raises(ValueError, match="not partition_hinges"):
        sd.partitioned_state(model, other, sd.neutral(model))
    clash = sd.Model("clash")
    clash.add_body("b", jt.Universal(), None, mass=1.0, inertia=np.eye(3))
    clash.add_frame("b[0]", "b")
    with pytest.raises(ValueError, match=r"\['b\[0\]'\] .* already used"):
        sd.partition_hinges(clash)
    sph = sd.Model("sph")
    sph.add_body("b", jt.Spherical(), None, mass=1.0, inertia=np.eye(3))
    part = sd.partition_hinges(sph)
    singular = sd.spatial.matrix_to_quaternion(sd.spatial.rotation_y(np.pi / 2))
    with pytest.raises(ValueError, match="singularity"):
        sd.partitioned_state(sph, part, singular)
