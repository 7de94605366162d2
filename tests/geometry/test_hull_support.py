"""The support point of a convex mesh by hill climbing on its hull's edge graph
(:func:`soadyn.kernels.collision.support.local_support`, for hulls of more than ``CLIMB``
vertices) against the brute-force maximum over the hull's vertices: from every start (the
start vertex of the direction's cell in the cube map of starts, or any vertex as a hint), on random directions, on hulls with
coplanar faces (ties) and without; and through the public API, the signed distance of a
plane to the mesh against the lowest vertex in world coordinates."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.core.collisions import collision_tables
from soadyn.core.jit import kernel
from soadyn.geometry import ConvexMesh
from soadyn.kernels.collision.layout import collision_views, pack_collision_tables
from soadyn.kernels.collision.support import CLIMB, Hulls, local_support, solid


@kernel(cache=False)
def _climbed(ci, cf, Rw, pw, obj, directions, hints, values, ids):
    """values[k], ids[k] ← the support value u_k·s and the vertex id of object ``obj``'s
    hull along directions[k] (its shape frame), climbing from the local vertex hints[k]
    (−1: from the start of the direction's cell)."""
    t = collision_views(ci, cf)
    hulls = Hulls(t.vertices, t.adj_start, t.adj, t.planes, t.starts, t.adj_vertices)
    S = solid(t, Rw, pw, obj)
    for k in range(directions.shape[0]):
        u = (directions[k, 0], directions[k, 1], directions[k, 2])
        s, ident = local_support(S, hulls, u, hints[k])
        values[k] = s[0] * u[0] + s[1] * u[1] + s[2] * u[2]
        ids[k] = ident
    return 0


def _ellipsoid_cloud(rng, count):
    """Points on an ellipsoid's surface: a hull with every point a vertex, no coplanar faces."""
    x = rng.normal(size=(count, 3))
    return x / np.linalg.norm(x, axis=1)[:, None] * np.array([0.3, 0.2, 0.1])


def _prism(sides):
    """A prism on a regular polygon of ``sides`` sides: every point a vertex, and two large
    coplanar faces, so that the support along the axis is a tie among a face's vertices."""
    angle = 2.0 * np.pi * np.arange(sides) / sides
    ring = np.column_stack([0.2 * np.cos(angle), 0.2 * np.sin(angle)])
    return np.vstack([np.column_stack([ring, np.full(sides, z)]) for z in (-0.1, 0.1)])


@pytest.mark.parametrize("cloud", ["ellipsoid", "prism"])
def test_hill_climbing_support_equals_the_brute_force_maximum(cloud):
    rng = np.random.default_rng(7)
    points = _ellipsoid_cloud(rng, 400) if cloud == "ellipsoid" else _prism(40)
    model = sd.Model("hull")
    model.add_body("b", jt.Free(), None, mass=1.0, inertia=np.eye(3))
    model.add_collision("b", ConvexMesh(points))
    tables = collision_tables(model)
    vertices = tables.vertices[tables.vertex_start[0]:tables.vertex_start[0] + tables.vertex_count[0]]
    assert len(vertices) > CLIMB  # the climbing branch
    ci, cf = pack_collision_tables(tables)
    Rw, pw = np.eye(3)[None].copy(), np.zeros((1, 3))
    # random directions, the axes (along z: the prism's faces, ties) and tiny ones, from the
    # cells' starts and from random hints
    # the cells' borders (two or three equal largest components)
    borders = np.array([[1.0, 1.0, 0.0], [1.0, -1.0, 1.0], [-1.0, -1.0, -1.0], [0.0, 1.0, -1.0], [1.0, 0.25, -1.0]])
    directions = np.vstack([rng.normal(size=(300, 3)), np.eye(3), -np.eye(3), borders, rng.normal(size=(100, 3)) * 1e-6])
    for hints in (np.full(len(directions), -1), rng.integers(0, len(vertices), len(directions))):
        values, ids = np.empty(len(directions)), np.empty(len(directions), dtype=np.int64)
        _climbed(ci, cf, Rw, pw, 0, directions, hints.astype(np.int64), values, ids)
        brute = (vertices @ directions.T).max(axis=0)
        scale = np.linalg.norm(directions, axis=1) * np.abs(vertices).max()
        assert np.all(np.abs(values - brute) <= 1e-14 * scale)
        # the id names a vertex that attains the maximum
        assert np.all(np.abs(np.einsum("ij,ij->i", vertices[ids], directions) - brute) <= 1e-14 * scale)


def test_plane_distance_of_a_many_vertex_mesh_is_its_lowest_vertex():
    """collision_distances of the ground and a free mesh at random orientations: the height of
    the lowest world vertex (the support in −n, found by climbing from its cell's start)."""
    rng = np.random.default_rng(3)
    points = _ellipsoid_cloud(rng, 300)
    model = sd.Model("hull on ground")
    model.add_body("b", jt.Free(), None, mass=1.0, inertia=np.eye(3))
    model.add_collision("b", ConvexMesh(points))
    model.add_ground()
    vertices = model.collisions[0].shape.vertices
    for _ in range(50):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        position = rng.uniform(-0.2, 0.2, 3)
        q = np.concatenate([position, quat])
        R, p = sd.body_placements(model, q)
        lowest = (vertices @ R[0].T + p[0])[:, 2].min()
        d = sd.collision_distances(model, q)
        assert abs(d.distance[0] - lowest) <= 1e-14
