"""Signed distances of every pair of shape kinds (collision_distances), against coal and
against closed forms and optimality conditions.

For pairs of polytopes and the pairs with closed forms (plane, sphere, capsule, box, convex
mesh; sphere–cylinder) coal's answers are exact and ours must equal them: distance, normal
and witness points to 1e-8, separated and penetrating. On curved surfaces (cylinders,
ellipsoids under GJK/EPA) coal converges only to about the square root of its tolerance in
the points (1e-6 at best, and its EPA fails below ~1e-9), so there the truth is the
optimality certificate of collision_scenes.certify — the witness points are support points
of the two shapes along ±n (numpy support functions written from the shapes' definitions),
their difference is d n, and no normal (coal's, or a perturbation of ours) gives a larger
separating gap — to 1e-9 m, with coal's separated distances agreeing to 1e-5.
"""
import itertools

import numpy as np
import pytest

import soadyn as sd
from soadyn.core.shapes import BOX, CYLINDER, KIND_NAMES, PLANE, SPHERE
from soadyn.geometry import Box, Plane, Sphere

from collision_scenes import CURVED, KINDS, build, certify, coal_distance, configuration, random_pose, random_shape

PAIRS = [(a, b) for a, b in itertools.combinations_with_replacement(KINDS, 2) if not a == b == PLANE]
TRIALS = 16


def _poses(s1, s2, rng):
    """TRIALS pose pairs of the two shapes, about half of them penetrating."""
    out = []
    r2 = s2.bounding_radius
    for k in range(TRIALS):
        if s1.kind == PLANE:  # the shape's centre from half its radius below the plane to above it
            pose1 = (np.eye(3), np.zeros(3))
            centre = np.array([*rng.normal(size=2), r2 * (-0.5 + 1.6 * k / TRIALS)])
        else:  # from deep inside to beyond the bounding spheres
            pose1 = random_pose(rng, 0.1)
            direction = rng.normal(size=3)
            centre = pose1[1] + (0.3 + 0.8 * k / TRIALS) * (s1.bounding_radius + r2) * direction / np.linalg.norm(
                direction)
        out.append((pose1, (random_pose(rng, 0.0)[0], centre)))
    return out


@pytest.mark.parametrize("kinds", PAIRS, ids=[f"{KIND_NAMES[a]}-{KIND_NAMES[b]}" for a, b in PAIRS])
def test_signed_distance_of_every_pair_kind_against_coal(kinds):
    coal = pytest.importorskip("coal")
    rng = np.random.default_rng(sum(kinds) * 31 + kinds[0])
    s1, s2 = random_shape(kinds[0], rng), random_shape(kinds[1], rng)
    poses = _poses(s1, s2, rng)
    model, _ = build([s1, s2], poses[0])
    assert [tuple(p) for p in model.collision_pairs()] == [(0, 1)]
    Q = np.stack([configuration([s1, s2], pp) for pp in poses])
    if s1.kind == PLANE:  # the plane stays on the world: its pose is the model's
        Q = np.stack([configuration([s2], [pp[1]]) for pp in poses])
    result = sd.collision_distances(model, Q)  # one batched call
    assert result.distance.shape == (TRIALS, 1) and result.points.shape == (TRIALS, 1, 2, 3)
    curved = kinds[0] in CURVED or kinds[1] in CURVED
    signs = set()
    for k, (pose1, pose2) in enumerate(poses):
        d, (x, y), n = result.distance[k, 0], result.points[k, 0], result.normal[k, 0]
        cd, c1, c2, cn = coal_distance(coal, s1, pose1, s2, pose2, 1e-9 if curved else 1e-12)
        signs.add(bool(cd < 0))
        if curved:
            assert certify(s1, pose1, s2, pose2, d, x, y, n, rng, others=[cn]) < 1e-9, (k, d, cd)
            if cd > 1e-3:  # separated: coal's GJK converges
                assert abs(d - cd) < 1e-5
        else:
            assert abs(d - cd) < 1e-8, (k, d, cd)
            assert np.abs(n - cn).max() < 1e-8, (k, n, cn)
            assert np.abs(x - c1).max() < 1e-8 and np.abs(y - c2).max() < 1e-8, (k, x, c1, y, c2)
            assert np.abs(y - x - d * n).max() < 1e-12
    assert signs == {False, True}  # both separated and penetrating poses were met


def test_sphere_cylinder_penetration_is_the_closed_form():
    """Sphere against cylinder is a closed form here (the distance in the half-plane (ρ, z)
    to the rectangle the cylinder revolves); for a penetrating sphere the depth is
    min(r − ρ, h − |z|) + r_sphere (coal 3.0.3 reports a deeper one: the certificate shows a
    shorter separating translation exists)."""
    from soadyn.geometry import Cylinder
    rng = np.random.default_rng(4)
    s1, s2 = Sphere(0.3), Cylinder(0.5, 1.2)
    for _ in range(20):
        R, _ = random_pose(rng, 0.0)
        local = rng.uniform([-0.4, -0.4, -0.55], [0.4, 0.4, 0.55])  # the sphere's centre in the cylinder
        pose2 = (R, rng.normal(size=3))
        pose1 = (np.eye(3), pose2[1] + R @ local)
        model, q = build([s1, s2], [pose1, pose2])
        d = sd.collision_distances(model, q)
        rho = np.hypot(local[0], local[1])
        assert d.distance[0] == pytest.approx(-(min(0.5 - rho, 0.6 - abs(local[2])) + 0.3), abs=1e-14)
        assert certify(s1, pose1, s2, pose2, d.distance[0], *d.points[0], d.normal[0], rng) < 1e-12


def test_closed_forms_sphere_sphere_and_sphere_plane():
    rng = np.random.default_rng(2)
    for _ in range(10):
        r1, r2 = rng.uniform(0.1, 1.0, 2)
        c1, c2 = rng.normal(size=(2, 3))
        model, q = build([Sphere(r1), Sphere(r2)], [(np.eye(3), c1), (np.eye(3), c2)])
        d = sd.collision_distances(model, q)
        n = (c2 - c1) / np.linalg.norm(c2 - c1)
        assert d.distance[0] == pytest.approx(np.linalg.norm(c2 - c1) - r1 - r2, abs=1e-14)
        np.testing.assert_allclose(d.normal[0], n, atol=1e-14)
        np.testing.assert_allclose(d.points[0], [c1 + r1 * n, c2 - r2 * n], atol=1e-14)
        # a tilted plane through o with normal m: height of the centre minus the radius
        m = rng.normal(size=3)
        m /= np.linalg.norm(m)
        o = rng.normal(size=3)
        Q = np.linalg.qr(np.column_stack([m, rng.normal(size=(3, 2))]))[0]
        R = np.column_stack([Q[:, 1], Q[:, 2], np.sign(Q[:, 0] @ m) * Q[:, 0]])  # the plane's z axis along m
        if np.linalg.det(R) < 0:
            R[:, 0] *= -1
        model, q = build([Plane(), Sphere(r1)], [(R, o), (np.eye(3), c1)])
        d = sd.collision_distances(model, q)
        assert d.distance[0] == pytest.approx(m @ (c1 - o) - r1, abs=1e-14)
        np.testing.assert_allclose(d.normal[0], m, atol=1e-14)


def test_box_resting_on_a_plane_touches_at_its_four_lower_corners():
    size, depth = np.array([0.4, 0.6, 0.2]), 1e-3
    yaw = 0.3
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1.0]])
    centre = np.array([0.1, -0.2, 0.1 - depth])
    model, q = build([Plane(), Box(size)], [(np.eye(3), np.zeros(3)), (R, centre)])
    c = sd.detect_contacts(model, q)
    corners = centre + np.array([R @ (np.array([sx, sy, -1.0]) * size / 2) for sx in (-1, 1) for sy in (-1, 1)])
    assert len(c) == 4
    np.testing.assert_allclose(c.depth, depth, atol=1e-15)
    np.testing.assert_allclose(c.normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    got = sorted(map(tuple, np.round(c.point, 12)))
    assert got == sorted(map(tuple, np.round(corners + [0, 0, depth / 2], 12)))  # midway between the surfaces
    np.testing.assert_array_equal(c.objects, np.tile([0, 1], (4, 1)))
    np.testing.assert_array_equal(c.bodies, np.tile([-1, 0], (4, 1)))
    np.testing.assert_allclose(c.frame[:, :, 2], c.normal)
    # lifted by more than the depth: no contact, unless the margin reaches it
    q[2] += 2 * depth
    assert len(sd.detect_contacts(model, q)) == 0
    near = sd.detect_contacts(model, q, margin=2 * depth)
    assert len(near) == 4 and np.allclose(near.depth, -depth)


def test_cylinder_on_a_plane_rests_on_a_triangle_and_lying_on_two_points():
    from soadyn.geometry import Capsule, Cylinder
    depth = 1e-3
    model, q = build([Plane(), Cylinder(0.1, 0.4)], [(np.eye(3), np.zeros(3)), (np.eye(3), [0, 0, 0.2 - depth])])
    c = sd.detect_contacts(model, q)
    assert len(c) == 3 and np.allclose(c.depth, depth)
    # the three rim points 120° apart: their centroid is the cap's centre
    np.testing.assert_allclose(c.point.mean(axis=0), [0, 0, -depth / 2], atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(c.point[:, :2], axis=1), 0.1, atol=1e-15)
    lying = np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]])  # the capsule axis (column z) along x
    model, q = build([Plane(), Capsule(0.1, 0.8)], [(np.eye(3), np.zeros(3)), (lying, [0, 0, 0.1 - depth])])
    c = sd.detect_contacts(model, q)
    assert len(c) == 2 and np.allclose(c.depth, depth)
    np.testing.assert_allclose(sorted(c.point[:, 0]), [-0.4, 0.4], atol=1e-15)


def test_boxes_stacked_face_on_face_give_the_four_corners_of_the_smaller():
    rng = np.random.default_rng(3)
    for _ in range(5):
        yaw = rng.uniform(0, np.pi)
        R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1.0]])
        depth = rng.uniform(1e-4, 1e-2)
        top = np.array([0.2, 0.3, 0.1])
        offset = np.append(rng.uniform(-0.1, 0.1, 2), 0.1 + 0.05 - depth)
        model, q = build([Box((1.0, 1.0, 0.2)), Box(top)], [(np.eye(3), np.zeros(3)), (R, offset)])
        c = sd.detect_contacts(model, q)
        assert len(c) == 4
        np.testing.assert_allclose(c.depth, depth, atol=1e-14)
        np.testing.assert_allclose(c.normal, np.tile([0, 0, 1.0], (4, 1)), atol=1e-14)
        corners = offset + np.array([R @ (np.array([sx, sy, -1.0]) * top / 2) for sx in (-1, 1) for sy in (-1, 1)])
        assert sorted(map(tuple, np.round(c.point, 10))) == \
            sorted(map(tuple, np.round(corners + [0, 0, depth / 2], 10)))


@pytest.mark.parametrize("kinds", [(SPHERE, BOX), (BOX, BOX), (CYLINDER, BOX)], ids=["sphere-box", "box-box",
                                                                                     "cylinder-box"])
def test_margin_reports_near_pairs_with_negative_depth(kinds):
    rng = np.random.default_rng(9)
    s1, s2 = random_shape(kinds[0], rng), random_shape(kinds[1], rng)
    pose1, pose2 = random_pose(rng, 0.0), random_pose(rng, 0.0)
    model, q = build([s1, s2], [pose1, pose2])
    # move the second shape away along the first's x axis until they are 5 cm apart
    gap = sd.collision_distances(model, q).distance[0]
    n = sd.collision_distances(model, q).normal[0]
    q[7:10] += (0.05 - gap) * n
    d = sd.collision_distances(model, q).distance[0]
    assert d == pytest.approx(0.05, abs=1e-9)
    assert len(sd.detect_contacts(model, q, margin=0.04)) == 0
    near = sd.detect_contacts(model, q, margin=0.06)
    assert len(near) >= 1
    if kinds == (BOX, BOX):  # a box pair's contacts measure the separating-axis gap, a lower bound
        assert -0.05 - 1e-12 <= near.depth.max() < 0.0
    else:
        assert near.depth.max() == pytest.approx(-0.05, abs=1e-9)


def test_penetration_of_convex_meshes_is_the_nearest_facet_of_their_minkowski_difference():
    # EPA's answer for two polytopes is exact: the facet of D = A − B nearest the origin,
    # whose distance is the depth and whose outward normal is n (moving B by depth·n moves D
    # by −depth·n, taking that facet's plane through the origin). The truth is that facet of
    # the hull of every difference a − b of the two shapes' world vertices (scipy's qhull,
    # not soadyn's hull), so a face walk that lost the nearest face (the nearest-face search
    # EPA carries from step to step) ends on a farther facet and fails here. Deep poses,
    # where the polytope grows through many steps, and shallow ones.
    from scipy.spatial import ConvexHull

    from soadyn.geometry import ConvexMesh

    rng = np.random.default_rng(40)
    checked = 0
    for trial in range(40):
        s1 = ConvexMesh(rng.normal(size=(40, 3)) * rng.uniform(0.2, 0.5, 3))
        s2 = ConvexMesh(rng.normal(size=(40, 3)) * rng.uniform(0.2, 0.5, 3))
        pose1, pose2 = random_pose(rng, 0.0), random_pose(rng, 0.05 + 0.3 * (trial % 4))
        model, q = build([s1, s2], [pose1, pose2])
        result = sd.collision_distances(model, q)
        a = s1.vertices @ pose1[0].T + pose1[1]
        b = s2.vertices @ pose2[0].T + pose2[1]
        hull = ConvexHull((a[:, None, :] - b[None, :, :]).reshape(-1, 3))
        offsets = -hull.equations[:, 3]  # the facets' distances from the origin (> 0: inside)
        if offsets.min() <= 1e-6:
            continue  # separated or touching: GJK's case
        nearest = np.argmin(offsets)
        assert abs(result.distance[0] + offsets[nearest]) < 1e-10, (trial, result.distance[0], offsets[nearest])
        # (facets of qhull's that are coplanar within rounding share the normal)
        assert np.abs(result.normal[0] - hull.equations[nearest, :3]).max() < 1e-9, trial
        checked += 1
    assert checked >= 20


def test_sphere_against_elongated_ellipsoids_is_the_secular_equations_nearest_point():
    # A sphere (centre c, radius r) and an ellipsoid of radii a: the nearest surface point
    # of the ellipsoid to c (local frame) is x_i = a_i² c_i / (a_i² + t), t the largest root
    # of Σ (a_i c_i / (a_i² + t))² = 1 (the Lagrange condition of the nearest point), found
    # by bracketing on (−min a_i², ∞), where the sum falls from +∞ to 0; signed distance
    # ±|c − x| − r (− for c inside). Axis ratios up to 100, centres from deep inside to
    # outside: GJK stops early here (GJK_TOLERANCE_ROUNDED) and the polish must still end
    # on this point.
    from scipy.optimize import brentq

    from soadyn.geometry import Ellipsoid

    rng = np.random.default_rng(4040)
    signs = set()
    for trial in range(60):
        radii = rng.uniform(0.01, 1.0, 3)
        radius = rng.uniform(0.05, 0.5)
        pose1 = random_pose(rng, 0.3)
        local = rng.normal(size=3)
        local *= rng.uniform(0.2, 1.6) / np.sqrt(np.sum((local / radii) ** 2))  # inside for scale < 1
        centre = pose1[0] @ local + pose1[1]
        model, q = build([Ellipsoid(radii), Sphere(radius)], [pose1, (np.eye(3), centre)])
        result = sd.collision_distances(model, q)
        lo = -np.min(radii ** 2)
        t = brentq(lambda t: np.sum((radii * local / (radii ** 2 + t)) ** 2) - 1.0,
                   lo + 1e-15 * (1.0 + abs(lo)), 1e3, xtol=1e-300, rtol=1e-15, maxiter=500)
        x = radii ** 2 * local / (radii ** 2 + t)
        inside = np.sum((local / radii) ** 2) < 1.0
        truth = (-1.0 if inside else 1.0) * np.linalg.norm(local - x) - radius
        signs.add(bool(truth < 0))
        assert abs(result.distance[0] - truth) < 1e-10, (trial, result.distance[0], truth)
        # n from the ellipsoid into the sphere: the outward normal at x, ∝ x / a²
        normal = pose1[0] @ (x / radii ** 2)
        assert np.abs(result.normal[0] - normal / np.linalg.norm(normal)).max() < 1e-8, trial
    assert signs == {False, True}
