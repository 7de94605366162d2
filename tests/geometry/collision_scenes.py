"""Scenes of collision shapes for the detection tests, and the independent checks they use.

:func:`build` puts each shape on a free body of its own (a plane on the world), so that a
configuration q places every shape anywhere; :func:`coal_distance` asks coal (the collision
library Pinocchio uses; a test oracle here, never imported by soadyn) for the same pair;
:func:`support_value` is the support function h_S(u) = max_{x ∈ S} u·x written in numpy
from the shapes' definitions, for the optimality certificate of :func:`certify`.
"""
import numpy as np
from scipy.spatial.transform import Rotation

import soadyn as sd
from conftest import peers
from soadyn.core import joints as jt
from soadyn.core.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, PLANE, SPHERE
from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere

KINDS = (PLANE, SPHERE, CAPSULE, CYLINDER, BOX, ELLIPSOID, CONVEX)
CURVED = (CYLINDER, ELLIPSOID)


def random_shape(kind, rng):
    """A shape of the kind, of sizes 0.1–1 m."""
    if kind == PLANE:
        return Plane()
    if kind == SPHERE:
        return Sphere(rng.uniform(0.2, 0.6))
    if kind == CAPSULE:
        return Capsule(rng.uniform(0.1, 0.4), rng.uniform(0.2, 1.0))
    if kind == CYLINDER:
        return Cylinder(rng.uniform(0.2, 0.5), rng.uniform(0.3, 1.0))
    if kind == BOX:
        return Box(rng.uniform(0.3, 1.0, 3))
    if kind == ELLIPSOID:
        return Ellipsoid(rng.uniform(0.2, 0.6, 3))
    return ConvexMesh(rng.normal(size=(20, 3)) * rng.uniform(0.2, 0.5, 3))


def build(shapes, poses):
    """(model, q): the shapes at the world poses (R, p), each on a free body (a plane on the
    world at its pose); the objects in the order of ``shapes``."""
    model = sd.Model("scene")
    q = []
    for k, (shape, (R, p)) in enumerate(zip(shapes, poses)):
        if shape.kind == PLANE:
            model.add_collision("world", shape, (np.asarray(R, dtype=float), np.asarray(p, dtype=float)),
                                name=f"shape{k}")
            continue
        model.add_body(f"body{k}", jt.Free(), None, mass=1.0, inertia=np.eye(3))
        model.add_collision(f"body{k}", shape, name=f"shape{k}")
        q.extend(np.asarray(p, dtype=float))
        q.extend(Rotation.from_matrix(R).as_quat())  # (x, y, z, w), soadyn's order
    return model, np.array(q)


def configuration(shapes, poses):
    """q of :func:`build`'s model for other poses of its non-plane shapes."""
    q = []
    for shape, (R, p) in zip(shapes, poses):
        if shape.kind != PLANE:
            q.extend(np.asarray(p, dtype=float))
            q.extend(Rotation.from_matrix(R).as_quat())
    return np.array(q)


def random_pose(rng, spread):
    return Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3) * spread


# --------------------------------------------------------------------------- coal
_COAL_SHAPES = {}


def _coal_shape_of(coal, shape):
    """coal's shape for a soadyn shape, made once per shape (a convex mesh's hull is qhull's)."""
    key = id(shape)
    if key not in _COAL_SHAPES:
        _COAL_SHAPES[key] = (shape, peers.coal_geometry(coal, shape))  # the shape kept: its id stays its own
    return _COAL_SHAPES[key][1]


def coal_distance(coal, s1, pose1, s2, pose2, tolerance):
    """coal's (distance, point on s1, point on s2, normal from s1 into s2), GJK and EPA at
    ``tolerance``."""
    request = coal.DistanceRequest()
    request.gjk_tolerance = request.epa_tolerance = tolerance
    request.gjk_max_iterations = request.epa_max_iterations = 1000
    result = coal.DistanceResult()
    d = coal.distance(_coal_shape_of(coal, s1), coal.Transform3s(*pose1), _coal_shape_of(coal, s2),
                      coal.Transform3s(*pose2), request, result)
    return d, np.array(result.getNearestPoint1()), np.array(result.getNearestPoint2()), np.array(result.normal)


# --------------------------------------------------------------------------- certificate
def support_value(shape, pose, u):
    """h_S(u) = max_{x ∈ S} u·x of the shape at the world pose (R, p), unit world u."""
    R, p = pose
    w = R.T @ u
    k = shape.kind
    if k == SPHERE:
        h = shape.radius
    elif k == CAPSULE:
        h = shape.radius + 0.5 * shape.length * abs(w[2])
    elif k == CYLINDER:
        h = shape.radius * np.hypot(w[0], w[1]) + 0.5 * shape.length * abs(w[2])
    elif k == BOX:
        h = 0.5 * np.abs(w) @ shape.size
    elif k == ELLIPSOID:
        h = np.linalg.norm(shape.radii * w)
    elif k == CONVEX:
        h = (shape.vertices @ w).max()
    else:  # a plane, the half-space z ≤ 0: bounded only along its normal
        h = 0.0 if np.hypot(w[0], w[1]) <= 1e-15 and w[2] > 0 else np.inf
    return h + u @ p


def gap(s1, pose1, s2, pose2, n):
    """f(n) = −h_1(n) − h_2(−n): the gap between the two support planes of normal n, a
    lower bound of the signed distance for every unit n, equal to it at the optimum."""
    n = n / np.linalg.norm(n)
    return -support_value(s1, pose1, n) - support_value(s2, pose2, -n)


def certify(s1, pose1, s2, pose2, d, x, y, n, rng, others=()):
    """The largest violation of the optimality conditions of (d, x, y, n): the witness x a
    support point of s1 along n, y of s2 along −n (so both on the surfaces), y − x = d n,
    f(n) = d, and no other normal (``others``, and perturbations of n at scales 1e-2 to
    1e-7) with a larger gap f. For separated shapes the first three make d the distance
    (the planes through x and y of normal n separate the shapes by |y − x|)."""
    errors = [abs(np.linalg.norm(n) - 1.0),
              abs(support_value(s1, pose1, n) - n @ x), abs(support_value(s2, pose2, -n) + n @ y),
              np.abs(y - x - d * n).max(), abs(gap(s1, pose1, s2, pose2, n) - d)]
    for m in list(others) + [n + s * rng.normal(size=3) for s in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7) for _ in
                              range(8)]:
        errors.append(max(0.0, gap(s1, pose1, s2, pose2, np.asarray(m)) - d))
    return max(errors)
