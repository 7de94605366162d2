"""Collision objects on the model: the pair filters (listed by hand on a small tree), the
flat tables, the world poses against frame_placement, versioning, pickling, the spanning
tree, and the errors on bad input."""
import pickle

import numpy as np
import pytest

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.core import spatial as sp
from soadyn.core.collisions import collision_tables
from soadyn.core.shapes import BOX, CAPSULE, CONVEX, PLANE, SPHERE
from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere

TETRA = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _tree():
    """world ─ A ─ B ─ C (with the merged link Cm), A ─ D, world ─ E (free): the objects
    ground 0, post 1 (world); a0 2, a1 3 (A); b0 4; c0 5; d0 6; e0 7; cm0 8 (on Cm)."""
    m = sd.Model("filters")
    A = m.add_body("A", jt.Revolute("z"), None, mass=1.0, inertia=np.eye(3))
    B = m.add_body("B", jt.Revolute("x"), A, (np.eye(3), [0, 0, 1.0]), mass=1.0, inertia=np.eye(3))
    m.add_body("C", jt.Revolute("x"), B, (np.eye(3), [0, 0, 1.0]), mass=1.0, inertia=np.eye(3))
    m.add_body("D", jt.Prismatic("y"), A, (np.eye(3), [0.5, 0, 0]), mass=1.0, inertia=np.eye(3))
    m.add_body("E", jt.Free(), None, mass=1.0, inertia=np.eye(3))
    m.add_frame("Cm", "C", (sp.rpy_to_matrix([0.3, -0.2, 0.1]), [0.1, 0.2, 0.3]))
    m.add_ground()
    m.add_collision("world", Box((0.1, 0.1, 2.0)), (np.eye(3), [2.0, 0, 1.0]), name="post")
    m.add_collision("A", Sphere(0.1))
    m.add_collision("A", Capsule(0.05, 0.5), (np.eye(3), [0, 0, 0.5]))
    m.add_collision("B", Cylinder(0.05, 1.0))
    m.add_collision("C", Ellipsoid((0.1, 0.2, 0.3)))
    m.add_collision("D", Box((0.2, 0.2, 0.2)))
    m.add_collision("E", ConvexMesh(TETRA))
    m.add_collision("Cm", Sphere(0.05))
    return m


#: every pair of _tree() but those on one body (0–1, 2–3, 5–8) and parent–child ones
#: (A–B: 2–4, 3–4; B–C: 4–5, 4–8; A–D: 2–6, 3–6); the world's objects touch A and E
TREE_PAIRS = [(0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (0, 8),
              (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (1, 7), (1, 8),
              (2, 5), (2, 7), (2, 8), (3, 5), (3, 7), (3, 8),
              (4, 6), (4, 7), (5, 6), (5, 7), (6, 7), (6, 8), (7, 8)]


def test_default_filters_drop_same_body_and_parent_child_pairs_but_not_the_world():
    m = _tree()
    assert [o.name for o in m.collisions] == ["ground", "post", "A_0", "A_1", "B_0", "C_0", "D_0", "E_0", "Cm_0"]
    assert [o.body for o in m.collisions] == [-1, -1, 0, 0, 1, 2, 3, 4, 2]
    pairs = m.collision_pairs()
    assert pairs.dtype == np.int64 and pairs.shape == (len(TREE_PAIRS), 2)
    assert [tuple(p) for p in pairs] == TREE_PAIRS
    assert np.array_equal(collision_tables(m).pairs, pairs)


def test_bitmasks_filter_as_mujoco_contype_conaffinity():
    """(contype_i & conaffinity_j) | (contype_j & conaffinity_i): an object of contype 2 and
    conaffinity 0 touches only objects whose conaffinity has bit 2."""
    m = _tree()
    m.add_collision("E", Sphere(0.3), name="picky", contype=2, conaffinity=0)  # 9
    m.add_collision("D", Sphere(0.3), name="welcoming", conaffinity=3)  # 10
    pairs = {tuple(p) for p in m.collision_pairs()}
    assert {p for p in pairs if 9 in p} == {(9, 10)}
    # 10 (on D, contype 1, conaffinity 3) touches what D_0 touches, and picky
    assert {p for p in pairs if 10 in p} == {(min(i, 10), 10) for i, j in TREE_PAIRS if j == 6} | \
        {(i, 10) for i in (7, 8)} | {(9, 10)}


def test_disable_collision_by_object_body_frame_and_world():
    m = _tree()
    m.disable_collision("A_0", "ground")  # two objects: (0, 2)
    m.disable_collision("D", "world")  # a body and the world: (0, 6), (1, 6)
    m.disable_collision("Cm", "A_1")  # a merged link's objects only: (3, 8), not (3, 5)
    m.disable_collision("E", "C")  # a body includes its merged links: (5, 7), (7, 8)
    removed = {(0, 2), (0, 6), (1, 6), (3, 8), (5, 7), (7, 8)}
    assert [tuple(p) for p in m.collision_pairs()] == [p for p in TREE_PAIRS if p not in removed]
    m.add_collision("D", Sphere(0.2), name="late")  # 9: on D, so kept off the world's objects
    assert {p for p in map(tuple, m.collision_pairs()) if 9 in p} == \
        {(i, 9) for i in (4, 5, 7, 8)}  # B, C, E, Cm; not A (parent), D (same body), the world


def test_tables_pack_every_object_in_its_body_frame():
    m = _tree()
    t = collision_tables(m)
    n = len(m.collisions)
    for name, a in t._asdict().items():
        assert a.flags.c_contiguous and a.flags.writeable, name
        assert a.dtype in (np.float64, np.int64), name
    assert t.kind.tolist() == [PLANE, BOX, SPHERE, CAPSULE, 3, 5, BOX, CONVEX, SPHERE]
    np.testing.assert_array_equal(t.params[3], [0.05, 0.5, 0.0])
    np.testing.assert_array_equal(t.params[1], [0.1, 0.1, 2.0])
    assert t.bounding_radius[0] == np.inf and t.bounding_radius[2] == pytest.approx(0.1)
    assert t.vertex_count.tolist() == [0] * 7 + [4, 0] and t.face_count.tolist() == [0] * 7 + [4, 0]
    start, count = t.vertex_start[7], t.vertex_count[7]
    np.testing.assert_array_equal(t.vertices[start:start + count], m.collisions[7].shape.vertices)
    np.testing.assert_array_equal(t.faces[t.face_start[7]:t.face_start[7] + t.face_count[7]],
                                  m.collisions[7].shape.faces)
    assert t.rotation.shape == (n, 3, 3) and t.translation.shape == (n, 3)
    # Cm_0: the merged link's pose on C, composed with the identity placement
    f = m.frame("Cm")
    np.testing.assert_allclose(t.rotation[8], f.rotation, atol=1e-15)
    np.testing.assert_allclose(t.translation[8], f.translation, atol=1e-15)
    np.testing.assert_array_equal(t.translation[0], [0, 0, 0])
    np.testing.assert_array_equal(t.friction, np.ones(n))
    assert collision_tables(m) is t  # built once per version


def test_world_poses_are_frame_placements_composed_with_the_object_placements():
    m = _tree()
    Rp = sp.rpy_to_matrix([0.4, 0.5, -0.6])
    m.add_collision("Cm", Box((0.1, 0.2, 0.3)), (Rp, [0.3, -0.1, 0.2]), name="offset")
    rng = np.random.default_rng(4)
    qs = np.stack([sd.random_configuration(m, rng) for _ in range(4)])
    batch = sd.collision_placements(m, qs)
    assert batch.shape == (4, len(m.collisions), 4, 4)
    for q, T in zip(qs, batch):
        single = sd.geometry.collision_placements(m, q)
        np.testing.assert_array_equal(single, T)
        for o, To in zip(m.collisions, single):
            F = np.eye(4) if o.frame == "world" else sd.frame_placement(m, q, o.frame)
            np.testing.assert_allclose(To, F @ o.placement, atol=1e-13)
    np.testing.assert_array_equal(batch[:, 0], np.broadcast_to(np.eye(4), (4, 4, 4)))  # the ground


def test_ground_height_and_names():
    m = _tree()
    k = m.add_ground(height=-0.25, friction=0.7)
    g = m.collisions[k]
    assert (g.name, g.frame, g.body, g.friction) == ("ground_2", "world", -1, 0.7)
    assert isinstance(g.shape, Plane)
    np.testing.assert_array_equal(g.placement[:3, 3], [0, 0, -0.25])
    np.testing.assert_array_equal(g.body_placement, g.placement)


def test_world_means_the_world_even_when_a_frame_shares_its_name():
    m = _tree()
    m.add_frame("world", "B", (np.eye(3), [0, 0, 5.0]))
    k = m.add_collision("world", Sphere(0.1))
    assert (m.collisions[k].frame, m.collisions[k].body) == ("world", -1)
    q = sd.random_configuration(m, np.random.default_rng(2))
    np.testing.assert_array_equal(sd.collision_placements(m, q)[k], np.eye(4))  # B's frame "world" moves; it does not


def test_every_edit_bumps_the_version_and_rebuilds_the_tables():
    m = _tree()
    t = collision_tables(m)
    for edit in (lambda: m.add_collision("B", Sphere(0.1)), lambda: m.add_ground(1.0),
                 lambda: m.disable_collision("A", "E")):
        version = m.version
        edit()
        assert m.version > version
        t2 = collision_tables(m)
        assert t2 is not t
        t = t2
    assert len(t.kind) == len(m.collisions) == 11
    assert (2, 7) not in {tuple(p) for p in t.pairs}


def test_collisions_are_a_read_only_tuple_of_frozen_objects():
    m = _tree()
    assert isinstance(m.collisions, tuple)
    with pytest.raises(AttributeError):
        m.collisions = ()
    o = m.collisions[2]
    with pytest.raises(AttributeError):
        o.friction = 0.0
    assert not o.placement.flags.writeable and not o.body_placement.flags.writeable
    pairs = m.collision_pairs()
    pairs[0] = (5, 5)  # a copy: the model's tables are untouched
    assert tuple(m.collision_pairs()[0]) == TREE_PAIRS[0]


def test_pickling_keeps_objects_exclusions_and_read_only_arrays():
    m = _tree()
    m.disable_collision("A_0", "E")
    copy = pickle.loads(pickle.dumps(m))
    assert [o.name for o in copy.collisions] == [o.name for o in m.collisions]
    np.testing.assert_array_equal(copy.collision_pairs(), m.collision_pairs())
    o = copy.collisions[7]
    assert not o.placement.flags.writeable and not o.shape.vertices.flags.writeable
    assert not copy.collisions[1].shape.size.flags.writeable
    q = sd.random_configuration(m, np.random.default_rng(0))
    np.testing.assert_array_equal(sd.collision_placements(copy, q), sd.collision_placements(m, q))


def test_the_spanning_tree_keeps_the_collision_objects():
    m = sd.models.four_bar_linkage()
    m.add_ground(-1.0)
    m.add_collision("coupler", Capsule(0.02, 0.5))
    m.add_collision("rocker", Sphere(0.05))
    tree = m.spanning_tree()
    assert tree is not m and tree.collisions == m.collisions
    np.testing.assert_array_equal(tree.collision_pairs(), m.collision_pairs())
    q = np.random.default_rng(1).normal(size=m.nq)
    np.testing.assert_array_equal(sd.collision_placements(tree, q), sd.collision_placements(m, q))


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m.add_collision("nowhere", Sphere(1.0)), ValueError, "frame: unknown frame 'nowhere'"),
    (lambda m: m.add_collision("A", "sphere"), TypeError, "shape: expected a soadyn.geometry shape"),
    (lambda m: m.add_collision("A", Sphere(1.0), np.full((4, 4), np.nan)), ValueError, "placement: expected finite"),
    (lambda m: m.add_collision("A", Sphere(1.0), (2 * np.eye(3), np.zeros(3))), ValueError,
     "placement: the rotation is not orthonormal"),
    (lambda m: m.add_collision("A", Sphere(1.0), np.eye(3)), ValueError, "placement: expected"),
    (lambda m: m.add_collision("A", Sphere(1.0), friction=-0.1), ValueError, "friction"),
    (lambda m: m.add_collision("A", Sphere(1.0), friction=np.nan), ValueError, "friction"),
    (lambda m: m.add_collision("A", Sphere(1.0), friction="rough"), TypeError, "friction"),
    (lambda m: m.add_collision("A", Sphere(1.0), name="ground"), ValueError, "name: .*'ground' already exists"),
    (lambda m: m.add_collision("A", Sphere(1.0), name=""), ValueError, "name"),
    (lambda m: m.add_collision("A", Sphere(1.0), contype=-1), ValueError, "contype"),
    (lambda m: m.add_collision("A", Sphere(1.0), conaffinity=1.5), ValueError, "conaffinity"),
    (lambda m: m.add_ground(np.inf), ValueError, "height"),
    (lambda m: m.add_ground(friction=-1.0), ValueError, "friction"),
    (lambda m: m.disable_collision("A", "nobody"), ValueError, "b: no collision object, body or frame named"),
    (lambda m: m.disable_collision(0, "A"), TypeError, "a: expected the name"),
    (lambda m: m.disable_collision("A_0", "A_0"), ValueError, "a, b: expected two different"),
])
def test_bad_input_names_the_argument_and_changes_nothing(call, error, message):
    m = _tree()
    version, pairs = m.version, m.collision_pairs()
    with pytest.raises(error, match=message):
        call(m)
    assert m.version == version and len(m.collisions) == 9
    np.testing.assert_array_equal(m.collision_pairs(), pairs)
