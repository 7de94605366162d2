"""The collision objects of a model as two flat arrays, read through named views.

The detection kernels receive a model's collision tables (``collision_tables(model)``
of :mod:`soadyn.core.collisions`: one row per collision object, the allowed pairs) packed
as ``ci`` (integers) and ``cf`` (reals), as the dynamics kernels receive a model as
``mi`` and ``mf`` (:mod:`soadyn.core.layout`), and read them through
:func:`collision_views`. Fields, n objects, P allowed pairs, V hull vertices:

* ``kind`` (n,): the shape's kind code (:mod:`soadyn.core.shapes`); ``params`` (n, 3) its
  three numbers; ``body`` (n,): its body (−1: the world); ``rotation`` (n, 3, 3) and
  ``translation`` (n, 3): the shape frame's pose in the body frame; ``friction`` (n,);
  ``radius`` (n,): the bounding radius about the shape frame's origin (inf for a plane);
  ``vstart``, ``vcount`` (n,): the range of its hull vertices in ``vertices`` (V, 3)
  (shape frame);
* ``pairs`` (P, 2): the allowed pairs (i < j), in the order of
  :func:`~soadyn.collision_distances`; ``pair_index`` (n, n): the row of (i, j) in
  ``pairs`` (either order), −1 for a pair that is not allowed;
* ``maxv``: the largest vertex count of one object (the size of a scratch buffer).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...core.jit import njit
from ...core.layout import carve

__all__ = ["CollisionViews", "collision_views", "pack_collision_tables", "HEADER"]

CollisionViews = namedtuple("CollisionViews", ("n", "npairs", "nverts", "maxv", "kind", "body", "vstart", "vcount",
                                               "pairs", "pair_index", "params", "rotation", "translation",
                                               "friction", "radius", "vertices"))

#: ci's header: n, P, V, maxv
HEADER = 4


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def collision_views(ci, cf):
    """Named views of packed collision tables (:class:`CollisionViews`; borrowed, see
    :func:`soadyn.core.layout.carve`)."""
    n, npairs, nverts, maxv = ci[0], ci[1], ci[2], ci[3]
    o = HEADER
    kind = carve(ci, o, n); o += n
    body = carve(ci, o, n); o += n
    vstart = carve(ci, o, n); o += n
    vcount = carve(ci, o, n); o += n
    pairs = carve(ci, o, (npairs, 2)); o += 2 * npairs
    pair_index = carve(ci, o, (n, n))
    o = 0
    params = carve(cf, o, (n, 3)); o += 3 * n
    rotation = carve(cf, o, (n, 3, 3)); o += 9 * n
    translation = carve(cf, o, (n, 3)); o += 3 * n
    friction = carve(cf, o, n); o += n
    radius = carve(cf, o, n); o += n
    vertices = carve(cf, o, (nverts, 3))
    return CollisionViews(n, npairs, nverts, maxv, kind, body, vstart, vcount, pairs, pair_index, params, rotation,
                          translation, friction, radius, vertices)


def pack_collision_tables(tables):
    """``(ci, cf)`` of collision tables (any object with the fields of
    :class:`soadyn.core.collisions.CollisionTables`: ``kind``, ``params``, ``body``,
    ``rotation``, ``translation``, ``friction``, ``bounding_radius``, ``vertex_start``,
    ``vertex_count``, ``vertices``, ``pairs``)."""
    kind = np.asarray(tables.kind, dtype=np.int64)
    n = len(kind)
    pairs = np.asarray(tables.pairs, dtype=np.int64).reshape(-1, 2)
    vertices = np.asarray(tables.vertices, dtype=float).reshape(-1, 3)
    vcount = np.asarray(tables.vertex_count, dtype=np.int64)
    index = np.full((n, n), -1, dtype=np.int64)
    index[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    index[pairs[:, 1], pairs[:, 0]] = np.arange(len(pairs))
    header = [n, len(pairs), len(vertices), int(vcount.max()) if n else 0]
    ci = np.concatenate([np.array(header, dtype=np.int64), kind, np.asarray(tables.body, dtype=np.int64),
                         np.asarray(tables.vertex_start, dtype=np.int64), vcount, pairs.ravel(), index.ravel()])
    cf = np.concatenate([np.asarray(tables.params, dtype=float).ravel(),
                         np.asarray(tables.rotation, dtype=float).ravel(),
                         np.asarray(tables.translation, dtype=float).ravel(),
                         np.asarray(tables.friction, dtype=float).ravel(),
                         np.asarray(tables.bounding_radius, dtype=float).ravel(), vertices.ravel()])
    return ci, cf
