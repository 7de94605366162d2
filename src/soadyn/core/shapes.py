"""Collision shapes: the geometry of a collision object in its own frame.

A shape is model data (it is what a collision object of :class:`~soadyn.Model` holds), so it
lives in ``core`` beside the visuals; users reach it as ``soadyn.geometry.Sphere`` etc.
Shapes are immutable. Every size is a full length and the conventions are coal's (the
collision library Pinocchio uses) and MuJoCo's where they agree:

======================  =========================================================  ====
shape                   geometry in the shape frame                                kind
======================  =========================================================  ====
``Plane()``             the half-space z ≤ 0 (its surface z = 0, outward normal +z)   0
``Sphere(radius)``      centred at the origin                                          1
``Capsule(r, length)``  the points within r of the segment z ∈ [−length/2, length/2]   2
``Cylinder(r, length)`` x² + y² ≤ r², z ∈ [−length/2, length/2]                       3
``Box(size)``           |x| ≤ size[0]/2, |y| ≤ size[1]/2, |z| ≤ size[2]/2              4
``Ellipsoid(radii)``    (x/a)² + (y/b)² + (z/c)² ≤ 1, radii = (a, b, c)                5
``ConvexMesh(vertices)`` the convex hull of the vertices                               6
``Mesh(filename)``      the convex hull of the file's vertices (scaled), as MuJoCo     6
======================  =========================================================  ====

The compiled narrow phase reads a shape as its ``kind`` code and three numbers
(:attr:`Shape.params`): plane (0, 0, 0); sphere (r, 0, 0); capsule and cylinder (r, length, 0);
box the edge lengths; ellipsoid the semi-axes; a convex mesh (0, 0, 0) and its hull
vertices (:attr:`Shape.vertices`). Hulls are made by ``scipy.spatial.ConvexHull`` (qhull);
mesh files are read by trimesh (extra ``viewer``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

__all__ = ["PLANE", "SPHERE", "CAPSULE", "CYLINDER", "BOX", "ELLIPSOID", "CONVEX", "KIND_NAMES", "Shape", "Plane",
           "Sphere", "Capsule", "Cylinder", "Box", "Ellipsoid", "ConvexMesh", "Mesh"]

#: the kind codes of the compiled narrow phase (the order of :data:`KIND_NAMES`)
PLANE, SPHERE, CAPSULE, CYLINDER, BOX, ELLIPSOID, CONVEX = range(7)
KIND_NAMES = ("plane", "sphere", "capsule", "cylinder", "box", "ellipsoid", "convex")


def _frozen(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


def _length(value, name, shape):
    """A finite, strictly positive length [m] (an argument of ``shape``)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{shape}: {name}: expected a positive number [m], got {value!r}") from None
    if not np.isfinite(x) or x <= 0.0:
        raise ValueError(f"{shape}: {name}: expected a finite positive length [m], got {value!r}")
    return x


def _lengths(value, name, shape):
    """Three finite, strictly positive lengths [m]."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{shape}: {name}: expected 3 positive numbers [m], got {value!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)) or np.any(a <= 0.0):
        raise ValueError(f"{shape}: {name}: expected 3 finite positive lengths [m], got {value!r}")
    return _frozen(a)


class Shape:
    """Base of the collision shapes (module docstring). ``kind``: the narrow phase's code;
    ``params``: its three numbers; ``vertices``: (V, 3) hull vertices of a convex mesh
    (empty otherwise) and ``faces`` (F, 3) its triangles (empty otherwise);
    ``bounding_radius``: the radius of a sphere about the shape frame's origin that contains
    the shape [m] (infinite for a plane)."""

    kind = -1
    vertices = _frozen(np.zeros((0, 3)))  # a convex mesh's own fields shadow them
    faces = _frozen(np.zeros((0, 3)), np.int64)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable: make a new shape")

    __delattr__ = __setattr__

    def __setstate__(self, state):
        # pickling drops the arrays' read-only flags: restore them
        self.__dict__.update({k: _frozen(v, v.dtype) if isinstance(v, np.ndarray) else v for k, v in state.items()})

    @property
    def params(self):
        return _frozen(np.zeros(3))

    @property
    def name(self):
        return KIND_NAMES[self.kind]


@dataclass(frozen=True, eq=False)
class Plane(Shape):
    """The half-space z ≤ 0 of its frame: its surface is the plane z = 0 and its outward
    normal +z (coal's ``Halfspace((0, 0, 1), 0)``, MuJoCo's infinite plane geom)."""

    kind = PLANE

    @property
    def bounding_radius(self):
        return float("inf")

    def __repr__(self):
        return "Plane()"


@dataclass(frozen=True, eq=False)
class Sphere(Shape):
    """A sphere of ``radius`` [m] centred at the frame's origin."""

    radius: float
    kind = SPHERE

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Sphere"))

    @property
    def params(self):
        return _frozen([self.radius, 0.0, 0.0])

    @property
    def bounding_radius(self):
        return self.radius

    def __repr__(self):
        return f"Sphere(radius={self.radius:g})"


@dataclass(frozen=True, eq=False)
class Capsule(Shape):
    """The points within ``radius`` [m] of the segment from (0, 0, −length/2) to
    (0, 0, length/2): ``length`` [m] is the full length of the cylindrical part (coal's
    ``Capsule(r, L)``; MuJoCo's capsule half-length is length/2)."""

    radius: float
    length: float
    kind = CAPSULE

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Capsule"))
        object.__setattr__(self, "length", _length(self.length, "length", "Capsule"))

    @property
    def params(self):
        return _frozen([self.radius, self.length, 0.0])

    @property
    def bounding_radius(self):
        return 0.5 * self.length + self.radius

    def __repr__(self):
        return f"Capsule(radius={self.radius:g}, length={self.length:g})"


@dataclass(frozen=True, eq=False)
class Cylinder(Shape):
    """A solid cylinder of ``radius`` [m] about the z axis, z ∈ [−length/2, length/2]
    (coal's ``Cylinder(r, L)``; MuJoCo's cylinder half-length is length/2)."""

    radius: float
    length: float
    kind = CYLINDER

    def __post_init__(self):
        object.__setattr__(self, "radius", _length(self.radius, "radius", "Cylinder"))
        object.__setattr__(self, "length", _length(self.length, "length", "Cylinder"))

    @property
    def params(self):
        return _frozen([self.radius, self.length, 0.0])

    @property
    def bounding_radius(self):
        return float(np.hypot(self.radius, 0.5 * self.length))

    def __repr__(self):
        return f"Cylinder(radius={self.radius:g}, length={self.length:g})"


@dataclass(frozen=True, eq=False)
class Box(Shape):
    """A box centred at the frame's origin with edge lengths ``size`` = (x, y, z) [m] along
    the frame's axes (full lengths, as :class:`~soadyn.core.visuals.Visual` and coal's
    ``Box(x, y, z)``; MuJoCo's box size is the half-lengths)."""

    size: np.ndarray
    kind = BOX

    def __post_init__(self):
        object.__setattr__(self, "size", _lengths(self.size, "size", "Box"))

    @property
    def params(self):
        return self.size

    @property
    def bounding_radius(self):
        return float(0.5 * np.linalg.norm(self.size))

    def __repr__(self):
        return f"Box(size=({', '.join(f'{x:g}' for x in self.size)}))"


@dataclass(frozen=True, eq=False)
class Ellipsoid(Shape):
    """The ellipsoid (x/a)² + (y/b)² + (z/c)² ≤ 1 with semi-axes ``radii`` = (a, b, c) [m]
    (coal's ``Ellipsoid(a, b, c)``, MuJoCo's ellipsoid size)."""

    radii: np.ndarray
    kind = ELLIPSOID

    def __post_init__(self):
        object.__setattr__(self, "radii", _lengths(self.radii, "radii", "Ellipsoid"))

    @property
    def params(self):
        return self.radii

    @property
    def bounding_radius(self):
        return float(self.radii.max())

    def __repr__(self):
        return f"Ellipsoid(radii=({', '.join(f'{x:g}' for x in self.radii)}))"


def _hull(points, where):
    """(vertices, faces) of the convex hull of ``points`` (qhull, through scipy): the hull's
    vertices (V, 3) and its triangles (F, 3) as indices into them, outward-oriented."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        pts = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: expected an array of 3-D points [m], got {type(points).__name__}") from None
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValueError(f"{where}: expected an array of shape (V, 3) [m], got shape {pts.shape}")
    if not np.all(np.isfinite(pts)):
        raise ValueError(f"{where}: expected finite coordinates, got {int(np.sum(~np.isfinite(pts)))} non-finite")
    if len(pts) < 4:
        raise ValueError(f"{where}: a convex mesh needs at least 4 non-coplanar vertices, got {len(pts)}")
    try:
        hull = ConvexHull(pts)
    except QhullError:
        raise ValueError(f"{where}: the {len(pts)} vertices are coplanar or collinear (no 3-D convex hull); a "
                         "convex mesh needs at least 4 non-coplanar vertices") from None
    index = np.full(len(pts), -1)
    index[hull.vertices] = np.arange(len(hull.vertices))
    faces = index[hull.simplices]
    # qhull's simplices are not consistently oriented: orient each with its outward normal
    v = pts[hull.vertices]
    normals = np.cross(v[faces[:, 1]] - v[faces[:, 0]], v[faces[:, 2]] - v[faces[:, 0]])
    flip = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0
    faces[flip] = faces[flip][:, ::-1]
    return _frozen(v), _frozen(faces, np.int64)


class ConvexMesh(Shape):
    """The convex hull of ``vertices`` (V, 3) [m, in the shape frame]; at least 4 of them not
    coplanar. ``vertices`` holds the hull's vertices only (points inside are dropped) and
    ``faces`` (F, 3) its outward-oriented triangles, as indices into ``vertices``."""

    kind = CONVEX

    def __init__(self, vertices):
        v, f = _hull(vertices, type(self).__name__ + ": vertices")
        object.__setattr__(self, "vertices", v)  # frozen, as every shape
        object.__setattr__(self, "faces", f)

    @property
    def bounding_radius(self):
        return float(np.linalg.norm(self.vertices, axis=1).max())

    def __repr__(self):
        return f"ConvexMesh({len(self.vertices)} vertices)"


class Mesh(ConvexMesh):
    """A mesh file (.stl, .obj, .dae, ... read by trimesh, extra ``viewer``) that collides as
    the convex hull of its vertices scaled by ``scale`` (3,) per axis, as MuJoCo collides
    meshes. ``filename`` and ``scale`` are kept for drawing the mesh itself.

    Raises ``FileNotFoundError`` for a missing file, ``ImportError`` without trimesh, and
    ``ValueError`` for a file with fewer than 4 non-coplanar vertices.
    """

    def __init__(self, filename, scale=(1.0, 1.0, 1.0)):
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"Mesh: filename: expected a path, got {filename!r}")
        filename = os.fspath(filename)
        try:
            s = np.array(scale, dtype=float) * np.ones(3)
        except (TypeError, ValueError):
            raise TypeError(f"Mesh: scale: expected 3 numbers, got {scale!r}") from None
        if s.shape != (3,) or not np.all(np.isfinite(s)) or np.any(s == 0.0):
            raise ValueError(f"Mesh: scale: expected 3 finite non-zero numbers, got {scale!r}")
        if not os.path.isfile(filename):
            raise FileNotFoundError(f"Mesh: filename: no such file {filename!r}")
        try:
            import trimesh
        except ImportError:
            raise ImportError("Mesh: reading mesh files needs trimesh: pip install 'soadyn[viewer]'") from None
        try:
            loaded = trimesh.load(filename, force="mesh")
        except Exception as e:  # trimesh raises many kinds for unreadable files
            raise ValueError(f"Mesh: filename: trimesh could not read {filename!r}: {e}") from None
        object.__setattr__(self, "filename", filename)
        object.__setattr__(self, "scale", _frozen(s))
        super().__init__(np.asarray(loaded.vertices, dtype=float) * s)

    def __repr__(self):
        return f"Mesh({self.filename!r}, scale=({', '.join(f'{x:g}' for x in self.scale)}), " \
               f"{len(self.vertices)} hull vertices)"
