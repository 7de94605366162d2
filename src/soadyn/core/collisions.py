"""Collision objects: shapes fixed to model frames, and the tables the narrow phase reads.

A :class:`CollisionObject` is a :mod:`~soadyn.core.shapes` shape fixed to a frame of the
model (or to the world) at a constant pose. Collision objects are model data: they are
added with :meth:`Model.add_collision <soadyn.Model.add_collision>` (and
:meth:`~soadyn.Model.add_ground`), every addition and every
:meth:`~soadyn.Model.disable_collision` is an edit that bumps the model's version.

:func:`collision_tables` packs them into flat arrays (:class:`CollisionTables`), built once
per model version in the model's derived store (:mod:`soadyn.core.compile`). Every pose
there is the pose of the shape in its **body's** frame (the world frame for the world's
objects, body −1): the frame's placement on its body composed with the object's placement
on the frame, so that one world pose per body gives every shape's world pose.

Which pairs may collide
-----------------------
The pairs (i, j), i < j, that survive every filter, in lexicographic order
(:attr:`CollisionTables.pairs`, ``model.collision_pairs()``):

* never two objects on the same body (two objects of the world never collide either);
* never a parent and its child, two bodies joined by a joint (Pinocchio's default without
  an SRDF, MuJoCo's parent filter). As in MuJoCo, the world is exempt: a body hinged to the
  world still touches the world's objects (the ground). The two bodies of a loop (cut)
  joint are not filtered (MuJoCo does not filter bodies joined by an equality either):
  :meth:`~soadyn.Model.disable_collision` them;
* MuJoCo's bitmasks: (i, j) is kept only when
  ``(contype[i] & conaffinity[j]) | (contype[j] & conaffinity[i])`` is nonzero (both 1 by
  default, so that every object may touch every other);
* the pairs disabled by :meth:`~soadyn.Model.disable_collision` (MJCF ``<contact><exclude>``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .compile import derived
from .shapes import Shape

__all__ = ["CollisionObject", "CollisionTables", "collision_tables", "allowed_pairs", "selected_objects"]


def _frozen(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class CollisionObject:
    """A collision shape fixed to a model frame.

    Attributes
    ----------
    name : str, unique among the model's collision objects (URDF: ``"<link>_<i>"``, the
        i-th ``<collision>`` of the link, as Pinocchio names its geometry objects; MJCF: the
        geom's name).
    frame : the name of the model frame it is fixed to (``"world"`` for the world).
    body : the index of the frame's body (−1: the world).
    shape : a :class:`~soadyn.core.shapes.Shape` (``soadyn.geometry.Sphere``, ...).
    placement : (4, 4) the pose of the shape frame in ``frame`` [m].
    body_placement : (4, 4) the pose of the shape frame in its body's frame (the world
        frame for body −1): the frame's placement composed with ``placement`` [m].
    friction : the Coulomb coefficient μ ≥ 0 of the object's surface (how the two of a
        contact combine is the detection's: :func:`soadyn.detect_contacts`).
    contype, conaffinity : MuJoCo's collision bitmasks (non-negative ints, default 1):
        two objects may collide when ``(contype_i & conaffinity_j) | (contype_j &
        conaffinity_i)`` is nonzero.

    Arrays are read-only; make a new object (``model.add_collision``) to change one.
    """

    name: str
    frame: str
    body: int
    shape: Shape
    placement: np.ndarray
    body_placement: np.ndarray
    friction: float = 1.0
    contype: int = 1
    conaffinity: int = 1

    def __post_init__(self):
        for key in ("placement", "body_placement"):
            object.__setattr__(self, key, _frozen(getattr(self, key)))

    def __setstate__(self, state):
        # pickling drops the arrays' read-only flags: restore them
        for key in ("placement", "body_placement"):
            state[key] = _frozen(state[key])
        self.__dict__.update(state)

    def __repr__(self):
        where = "the world" if self.body < 0 else f"frame {self.frame!r}"
        return f"<CollisionObject {self.name!r}: {self.shape!r} on {where}, friction {self.friction:g}>"


class CollisionTables(NamedTuple):
    """The collision objects of one model version as flat arrays (n objects), for the
    narrow and broad phases (:func:`collision_tables`). All arrays are C-contiguous and
    writeable (Numba compiles separate versions of a kernel for read-only arrays), int64
    or float64; never write them: the model's threads share them.

    ``kind`` (n,): the shapes' kind codes (:mod:`soadyn.core.shapes`); ``params`` (n, 3):
    their three numbers (:attr:`Shape.params <soadyn.core.shapes.Shape.params>`);
    ``body`` (n,): the bodies (−1: the world); ``rotation`` (n, 3, 3), ``translation``
    (n, 3): the shape frames' poses in their bodies' frames (world frame for body −1) [m];
    ``friction`` (n,); ``bounding_radius`` (n,) [m] (inf for a plane); ``vertex_start``,
    ``vertex_count`` (n,): each object's hull vertices ``vertices[start:start + count]``
    (V, 3) in its shape frame [m], in the order of ``Shape.vertices`` (count 0 but for
    convex meshes); ``face_start``, ``face_count`` (n,): its outward triangles
    ``faces[start:start + count]`` (F, 3), indices into its own vertices; ``pairs`` (P, 2):
    the pairs (i, j), i < j, allowed after every filter, sorted (module docstring).
    """

    kind: np.ndarray
    params: np.ndarray
    body: np.ndarray
    rotation: np.ndarray
    translation: np.ndarray
    friction: np.ndarray
    bounding_radius: np.ndarray
    vertex_start: np.ndarray
    vertex_count: np.ndarray
    vertices: np.ndarray
    face_start: np.ndarray
    face_count: np.ndarray
    faces: np.ndarray
    pairs: np.ndarray


def collision_tables(model):
    """The :class:`CollisionTables` of ``model``'s collision objects, built once per model
    version (in the model's derived store, :mod:`soadyn.core.compile`): after an edit the
    next call builds new tables."""
    return derived(model).memo("collision_tables", lambda: _build_tables(model))


def _build_tables(model):
    objects = model.collisions
    n = len(objects)
    kind = np.array([o.shape.kind for o in objects], dtype=np.int64)
    params = np.array([o.shape.params for o in objects], dtype=np.float64).reshape(n, 3)
    body = np.array([o.body for o in objects], dtype=np.int64)
    poses = np.array([o.body_placement for o in objects], dtype=np.float64).reshape(n, 4, 4)
    vertex_count = np.array([len(o.shape.vertices) for o in objects], dtype=np.int64)
    face_count = np.array([len(o.shape.faces) for o in objects], dtype=np.int64)
    return CollisionTables(
        kind=kind, params=params, body=body,
        rotation=np.ascontiguousarray(poses[:, :3, :3]), translation=np.ascontiguousarray(poses[:, :3, 3]),
        friction=np.array([o.friction for o in objects], dtype=np.float64),
        bounding_radius=np.array([o.shape.bounding_radius for o in objects], dtype=np.float64),
        vertex_start=np.concatenate([[0], np.cumsum(vertex_count)[:-1]]).astype(np.int64) if n else vertex_count,
        vertex_count=vertex_count,
        vertices=np.ascontiguousarray(np.concatenate([np.zeros((0, 3))] + [o.shape.vertices for o in objects]),
                                      dtype=np.float64),
        face_start=np.concatenate([[0], np.cumsum(face_count)[:-1]]).astype(np.int64) if n else face_count,
        face_count=face_count,
        faces=np.ascontiguousarray(np.concatenate([np.zeros((0, 3), dtype=np.int64)] +
                                                  [o.shape.faces for o in objects]), dtype=np.int64),
        pairs=allowed_pairs(model))


def allowed_pairs(model):
    """(P, 2) int64: the pairs (i, j), i < j, of ``model.collisions`` that may collide,
    sorted (the filters of the module docstring)."""
    objects = model.collisions
    n = len(objects)
    i, j = np.triu_indices(n, 1)
    body = np.array([o.body for o in objects], dtype=np.int64)
    parent = np.array([-1] + [b.parent for b in model.bodies], dtype=np.int64)[body + 1]  # −1: the world's
    contype = np.array([o.contype for o in objects], dtype=np.int64)
    conaffinity = np.array([o.conaffinity for o in objects], dtype=np.int64)
    bi, bj = body[i], body[j]
    keep = bi != bj
    # parent–child: both real bodies (the world is exempt, as in MuJoCo)
    keep &= ~((bi >= 0) & (bj >= 0) & ((parent[i] == bj) | (parent[j] == bi)))
    keep &= ((contype[i] & conaffinity[j]) | (contype[j] & conaffinity[i])) != 0
    excluded = _excluded_pairs(model)
    if len(excluded):
        a, b = excluded[:, 0], excluded[:, 1]
        keep[a * n - a * (a + 1) // 2 + (b - a - 1)] = False  # (a, b)'s place in triu_indices' order
    return np.ascontiguousarray(np.stack([i[keep], j[keep]], axis=1), dtype=np.int64).reshape(-1, 2)


def selected_objects(model, selector):
    """The indices of the collision objects a :meth:`~soadyn.Model.disable_collision`
    selector picks: ``("object", name)``, ``("body", index)`` (every object on the body,
    −1: the world) or ``("frame", name)`` (every object fixed to that frame)."""
    what, key = selector
    field = {"object": "name", "body": "body", "frame": "frame"}[what]
    return [k for k, o in enumerate(model.collisions) if getattr(o, field) == key]


def _excluded_pairs(model):
    """(E, 2) the pairs (i < j) that :meth:`~soadyn.Model.disable_collision` disabled."""
    out = set()
    for a, b in model._collision_exclusions:
        for i in selected_objects(model, a):
            for j in selected_objects(model, b):
                if i != j:
                    out.add((min(i, j), max(i, j)))
    return np.array(sorted(out), dtype=np.int64).reshape(-1, 2)
