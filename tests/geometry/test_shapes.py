"""Collision shapes and contact frames: hulls by qhull, validation, the (t1, t2, n) frame."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.geometry import (Box, Capsule, Contacts, ConvexMesh, Cylinder, Ellipsoid, Mesh, Plane, Sphere,
                             contact_frames)


def test_convex_mesh_keeps_the_hull_vertices_and_orients_faces_outward():
    rng = np.random.default_rng(3)
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-2, 2) for z in (-0.5, 0.5)], dtype=float)
    inside = rng.uniform(-0.4, 0.4, size=(40, 3))
    mesh = ConvexMesh(np.vstack([inside, corners]))
    assert sorted(map(tuple, mesh.vertices)) == sorted(map(tuple, corners))
    v, f = mesh.vertices, mesh.faces
    normal = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    assert np.all(np.einsum("ij,ij->i", normal, v[f[:, 0]]) > 0)  # the origin is inside: outward faces
    area = 0.5 * np.linalg.norm(normal, axis=1).sum()
    assert area == pytest.approx(2 * (2 * 4 + 2 * 1 + 4 * 1))  # the box's surface, 2 triangles per face
    assert mesh.bounding_radius == pytest.approx(np.sqrt(1 + 4 + 0.25))


@pytest.mark.parametrize("make, message", [
    (lambda: Sphere(0.0), "radius"), (lambda: Sphere(-1.0), "radius"), (lambda: Sphere("a"), "radius"),
    (lambda: Capsule(0.1, np.nan), "length"), (lambda: Cylinder(np.inf, 1.0), "radius"),
    (lambda: Box((1.0, 2.0)), "size"), (lambda: Box((1.0, 0.0, 1.0)), "size"), (lambda: Ellipsoid((1, -1, 1)), "radii"),
    (lambda: ConvexMesh(np.zeros((4, 3))), "coplanar"), (lambda: ConvexMesh(np.eye(3)), "at least 4"),
    (lambda: ConvexMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 3, 0]]), "coplanar"),
    (lambda: ConvexMesh(np.full((5, 3), np.nan)), "finite"), (lambda: Mesh("/no/such/file.stl"), "filename"),
])
def test_bad_shapes_name_the_argument(make, message):
    with pytest.raises((ValueError, TypeError, FileNotFoundError), match=message):
        make()


def test_shapes_are_immutable():
    for shape in (Sphere(1.0), Box((1, 1, 1)), ConvexMesh(np.eye(4, 3) + 0.1 * np.arange(12).reshape(4, 3) ** 2)):
        with pytest.raises(AttributeError):
            shape.vertices = np.zeros((4, 3))
    with pytest.raises(ValueError):
        Box((1, 1, 1)).size[0] = 2.0


def test_params_and_bounding_radii():
    assert Plane().bounding_radius == np.inf
    assert list(Capsule(0.1, 0.6).params) == [0.1, 0.6, 0.0]
    assert Capsule(0.1, 0.6).bounding_radius == pytest.approx(0.4)
    assert Cylinder(0.3, 0.8).bounding_radius == pytest.approx(0.5)
    assert Box((2, 3, 6)).bounding_radius == pytest.approx(3.5)
    assert Ellipsoid((0.1, 0.3, 0.2)).bounding_radius == pytest.approx(0.3)


def test_mesh_file_collides_as_its_scaled_hull(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    path = tmp_path / "box.stl"
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(path)
    mesh = Mesh(path, scale=(2.0, 1.0, 0.5))
    assert np.allclose(np.sort(np.abs(mesh.vertices), axis=0)[-1], [1.0, 1.0, 0.75])
    assert len(mesh.vertices) == 8


def test_contact_frames_are_rotations_with_the_normal_last():
    rng = np.random.default_rng(0)
    n = rng.normal(size=(200, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    n[:6] = [[0, 0, 1], [0, 0, -1], [1, 0, 0], [0, 1, 0], [1, 1, 0] / np.sqrt(2), [1, 1, 1] / np.sqrt(3)]
    R = contact_frames(n)
    assert np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)).max() < 1e-14
    assert np.allclose(np.linalg.det(R), 1.0)
    assert np.array_equal(R[:, :, 2], n)
    assert np.array_equal(R[0], np.eye(3))  # ground contacts: the world's axes


def test_contacts_by_hand_remember_their_model():
    model = sd.models.double_pendulum()
    c = Contacts.from_points(model, [("world", 1)], [[0.0, 0.0, -1.0]], [[0.0, 0.0, 1.0]], friction=0.5)
    assert len(c) == 1 and c.bodies.tolist() == [[-1, 1]] and c.objects.tolist() == [[-1, -1]]
    assert np.array_equal(c.frame[0], np.eye(3)) and c.friction.tolist() == [0.5]
    c.check(model)
    with pytest.raises(ValueError, match="another model"):
        c.check(sd.models.double_pendulum())
    model.gravity = (0.0, 0.0, -1.0)
    with pytest.raises(ValueError, match="edited"):
        c.check(model)
    with pytest.raises(ValueError, match="normals"):
        Contacts.from_points(model, [(0, 1)], [[0, 0, 0]], [[0, 0, 2.0]])
    with pytest.raises(ValueError, match="friction"):
        Contacts.from_points(model, [(0, 1)], [[0, 0, 0]], [[0, 0, 1.0]], friction=-0.1)
    with pytest.raises(ValueError, match="body"):
        Contacts.from_points(model, [("world", "nope")], [[0, 0, 0]], [[0, 0, 1.0]])
    with pytest.raises(ValueError, match="two different bodies"):
        Contacts.from_points(model, [(1, 1)], [[0, 0, 0]], [[0, 0, 1.0]])
