"""Properties of detection that hold for every pair (hypothesis): swapping the two objects
flips the normal and keeps the distance, depth and points; a rigid motion of both moves the
contacts and witness points with them and turns the normal; degenerate poses (coincident
centres, faces on faces, edges on edges, a centre on a face or inside, axes that cross)
give finite values, unit normals and witness points that agree with the distance."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import soadyn as sd
from soadyn.core.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, PLANE, SPHERE
from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere

from collision_scenes import build, gap, random_pose, random_shape

SOLIDS = (SPHERE, CAPSULE, CYLINDER, BOX, ELLIPSOID, CONVEX)
KIND_PAIRS = [(PLANE, k) for k in SOLIDS] + list(itertools.combinations_with_replacement(SOLIDS, 2))
#: the 24 rotations that map the axes onto the axes: degenerate poses galore
AXIS_ROTATIONS = [R for R in (np.array(p) * np.array(s)[:, None] for p in itertools.permutations(np.eye(3))
                              for s in itertools.product((1, -1), repeat=3)) if np.linalg.det(R) > 0]


def _results(shapes, poses, margin):
    model, q = build(shapes, poses)
    return sd.collision_distances(model, q), sd.detect_contacts(model, q, margin=margin)


def _pose_of(rng_seed, kind, spread):
    rng = np.random.default_rng(rng_seed)
    if kind == PLANE:
        return (Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * 0.1)
    return random_pose(rng, spread)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(KIND_PAIRS), st.integers(0, 2 ** 32 - 1), st.floats(0.0, 0.1))
def test_swapping_the_objects_flips_the_normal_and_keeps_depth_and_points(kinds, seed, margin):
    rng = np.random.default_rng(seed)
    shapes = [random_shape(k, rng) for k in kinds]
    poses = [_pose_of(seed, kinds[0], 0.1), _pose_of(seed + 1, kinds[1], 0.5)]
    d, c = _results(shapes, poses, margin)
    ds, cs = _results(shapes[::-1], poses[::-1], margin)
    assert ds.distance[0] == pytest.approx(d.distance[0], abs=1e-9)
    np.testing.assert_allclose(ds.normal[0], -d.normal[0], atol=1e-8)
    np.testing.assert_allclose(ds.points[0], d.points[0][::-1], atol=1e-8)
    assert len(cs) == len(c)
    order, order_s = np.lexsort(np.round(c.point, 7).T), np.lexsort(np.round(cs.point, 7).T)
    np.testing.assert_allclose(cs.point[order_s], c.point[order], atol=1e-8)
    np.testing.assert_allclose(cs.depth[order_s], c.depth[order], atol=1e-9)
    np.testing.assert_allclose(cs.normal[order_s], -c.normal[order], atol=1e-8)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(KIND_PAIRS), st.integers(0, 2 ** 32 - 1))
def test_a_rigid_motion_of_both_moves_the_contact_with_them(kinds, seed):
    rng = np.random.default_rng(seed)
    shapes = [random_shape(k, rng) for k in kinds]
    poses = [_pose_of(seed, kinds[0], 0.1), _pose_of(seed + 1, kinds[1], 0.5)]
    T, t = Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3)
    moved = [(T @ R, T @ p + t) for R, p in poses]
    d, c = _results(shapes, poses, 0.05)
    dm, cm = _results(shapes, moved, 0.05)
    assert dm.distance[0] == pytest.approx(d.distance[0], abs=1e-9)
    np.testing.assert_allclose(dm.normal[0], T @ d.normal[0], atol=1e-8)
    np.testing.assert_allclose(dm.points[0], d.points[0] @ T.T + t, atol=1e-8)
    assert len(cm) == len(c)
    np.testing.assert_allclose(cm.depth, c.depth, atol=1e-9)
    np.testing.assert_allclose(cm.point, c.point @ T.T + t, atol=1e-8)
    np.testing.assert_allclose(cm.normal, c.normal @ T.T, atol=1e-8)


def _degenerate_shape(kind, size):
    if kind == PLANE:
        return Plane()
    if kind == SPHERE:
        return Sphere(size)
    if kind == CAPSULE:
        return Capsule(size, 2 * size)
    if kind == CYLINDER:
        return Cylinder(size, 2 * size)
    if kind == BOX:
        return Box((2 * size, 2 * size, 2 * size))
    if kind == ELLIPSOID:
        return Ellipsoid((size, size, 2 * size))
    return ConvexMesh(np.array([[x, y, z] for x in (-size, size) for y in (-size, size) for z in (-size, size)]))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(KIND_PAIRS), st.sampled_from((0.1, 0.2)), st.sampled_from((0.1, 0.2)),
       st.sampled_from(range(24)), st.sampled_from(range(24)),
       st.tuples(*[st.integers(-4, 4)] * 3), st.tuples(*[st.integers(-4, 4)] * 3))
def test_degenerate_poses_give_finite_consistent_results(kinds, size1, size2, r1, r2, grid1, grid2):
    """Axis-aligned shapes on a 5 cm grid: centres that coincide, faces flush on faces, edges
    on edges, corners on faces, a centre on a face or inside another shape, axes that cross
    or run along each other."""
    shapes = [_degenerate_shape(kinds[0], size1), _degenerate_shape(kinds[1], size2)]
    poses = [(AXIS_ROTATIONS[r1], 0.05 * np.array(grid1, dtype=float)),
             (AXIS_ROTATIONS[r2], 0.05 * np.array(grid2, dtype=float))]
    d, c = _results(shapes, poses, 0.01)
    for a in (d.distance, d.points, d.normal, c.point, c.normal, c.depth, c.frame):
        assert np.all(np.isfinite(a))
    dist, (x, y), n = d.distance[0], d.points[0], d.normal[0]
    assert abs(np.linalg.norm(n) - 1.0) < 1e-12
    assert np.abs(y - x - dist * n).max() < 1e-9
    assert abs(gap(shapes[0], poses[0], shapes[1], poses[1], n) - dist) < 1e-9  # a separating-axis value
    if len(c):
        np.testing.assert_allclose(np.linalg.norm(c.normal, axis=1), 1.0, atol=1e-12)
        assert np.all(c.depth >= -0.01 - 1e-12)
