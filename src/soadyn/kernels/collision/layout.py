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
  (shape frame); ``hull_box`` (n, 6): the centre and half-sizes of a convex mesh's box in
  its shape frame (the broad phase's bounds); ``adj_start`` (V + 1,), ``adj``: the hull's
  edge graph, the neighbours of vertex g being the local ids ``adj[adj_start[g]:adj_start[g + 1]]``
  (:class:`~.support.Hulls`), and ``adj_vertices`` (len(adj), 3): the shape-frame position of
  each neighbour ``adj[e]`` beside its id (a copy of its row of ``vertices``: a climbing step
  reads one contiguous run of the vertex's neighbours instead of one scattered vertex row
  per neighbour); ``fstart``, ``fcount`` (n,): the range of its faces' planes
  in ``planes`` (F, 4) (outward unit normal, offset; shape frame); ``starts`` (n, 6 G²),
  G = :data:`~.support.START_GRID`: the starts of a hull's hill climbing, the local id of its
  support vertex along the centre direction of each cell of a cube map of directions (cube
  face ±x, ±y, ±z of the largest component, then a G × G grid of the other two components
  over it, :func:`~.support.start_vertex`);
* ``pairs`` (P, 2): the allowed pairs (i < j), in the order of
  :func:`~soadyn.collision_distances`; ``pair_index`` (n, n): the row of (i, j) in
  ``pairs`` (either order), −1 for a pair that is not allowed;
* ``maxv``: the largest vertex count of one object (the size of a scratch buffer).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...core.jit import helper
from ...core.layout import carve
from .support import START_CELLS, START_GRID

__all__ = ["CollisionViews", "collision_views", "pack_collision_tables", "HEADER"]

CollisionViews = namedtuple("CollisionViews", ("n", "npairs", "nverts", "maxv", "kind", "body", "vstart", "vcount",
                                               "fstart", "fcount", "starts", "pairs", "pair_index", "adj_start",
                                               "adj", "params",
                                               "rotation", "translation", "friction", "radius", "hull_box", "vertices",
                                               "planes", "adj_vertices"))

#: ci's header: n, P, V, maxv, the length of adj, F
HEADER = 6


@helper(forceinline=True)
def collision_views(ci, cf):
    """Named views of packed collision tables (:class:`CollisionViews`; borrowed, see
    :func:`soadyn.core.layout.carve`)."""
    n, npairs, nverts, maxv, nadj, nfaces = ci[0], ci[1], ci[2], ci[3], ci[4], ci[5]
    o = HEADER
    kind = carve(ci, o, n); o += n
    body = carve(ci, o, n); o += n
    vstart = carve(ci, o, n); o += n
    vcount = carve(ci, o, n); o += n
    fstart = carve(ci, o, n); o += n
    fcount = carve(ci, o, n); o += n
    starts = carve(ci, o, (n, START_CELLS)); o += START_CELLS * n
    pairs = carve(ci, o, (npairs, 2)); o += 2 * npairs
    pair_index = carve(ci, o, (n, n)); o += n * n
    adj_start = carve(ci, o, nverts + 1); o += nverts + 1
    adj = carve(ci, o, nadj)
    o = 0
    params = carve(cf, o, (n, 3)); o += 3 * n
    rotation = carve(cf, o, (n, 3, 3)); o += 9 * n
    translation = carve(cf, o, (n, 3)); o += 3 * n
    friction = carve(cf, o, n); o += n
    radius = carve(cf, o, n); o += n
    hull_box = carve(cf, o, (n, 6)); o += 6 * n
    vertices = carve(cf, o, (nverts, 3)); o += 3 * nverts
    planes = carve(cf, o, (nfaces, 4)); o += 4 * nfaces
    adj_vertices = carve(cf, o, (nadj, 3))
    return CollisionViews(n, npairs, nverts, maxv, kind, body, vstart, vcount, fstart, fcount, starts, pairs,
                          pair_index, adj_start, adj, params, rotation, translation, friction, radius, hull_box,
                          vertices, planes, adj_vertices)


def pack_collision_tables(tables):
    """``(ci, cf)`` of collision tables (any object with the fields of
    :class:`soadyn.core.collisions.CollisionTables`: ``kind``, ``params``, ``body``,
    ``rotation``, ``translation``, ``friction``, ``bounding_radius``, ``vertex_start``,
    ``vertex_count``, ``vertices``, ``face_start``, ``face_count``, ``faces``, ``pairs``)."""
    kind = np.asarray(tables.kind, dtype=np.int64)
    n = len(kind)
    pairs = np.asarray(tables.pairs, dtype=np.int64).reshape(-1, 2)
    vertices = np.asarray(tables.vertices, dtype=float).reshape(-1, 3)
    vstart = np.asarray(tables.vertex_start, dtype=np.int64)
    vcount = np.asarray(tables.vertex_count, dtype=np.int64)
    index = np.full((n, n), -1, dtype=np.int64)
    index[pairs[:, 0], pairs[:, 1]] = np.arange(len(pairs))
    index[pairs[:, 1], pairs[:, 0]] = np.arange(len(pairs))
    adj_start, adj = _edge_graph(tables, len(vertices))
    hull_box = np.zeros((n, 6))
    starts = np.zeros((n, START_CELLS), dtype=np.int64)
    cells = _cell_directions()
    for i in range(n):
        if vcount[i]:
            v = vertices[vstart[i]:vstart[i] + vcount[i]]
            hull_box[i, :3] = 0.5 * (v.min(axis=0) + v.max(axis=0))
            hull_box[i, 3:] = 0.5 * (v.max(axis=0) - v.min(axis=0))
            starts[i] = np.argmax(cells @ v.T, axis=1)  # the first of equal maxima
    faces = np.asarray(tables.faces, dtype=np.int64).reshape(-1, 3)
    fstart = np.asarray(tables.face_start, dtype=np.int64)
    fcount = np.asarray(tables.face_count, dtype=np.int64)
    planes = np.zeros((len(faces), 4))
    for i in range(n):
        if fcount[i]:
            v = vertices[vstart[i]:vstart[i] + vcount[i]]
            f = faces[fstart[i]:fstart[i] + fcount[i]]
            normal = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
            normal /= np.linalg.norm(normal, axis=1)[:, None]
            planes[fstart[i]:fstart[i] + fcount[i], :3] = normal
            planes[fstart[i]:fstart[i] + fcount[i], 3] = np.einsum("ij,ij->i", normal, v[f[:, 0]])
    adj_vertices = np.zeros((len(adj), 3))
    for i in range(n):  # the neighbours' rows: adj holds local ids, each vertex's run those of its object
        for g in range(vstart[i], vstart[i] + vcount[i]):
            run = slice(adj_start[g], adj_start[g + 1])
            adj_vertices[run] = vertices[vstart[i] + adj[run]]
    header = [n, len(pairs), len(vertices), int(vcount.max()) if n else 0, len(adj), len(faces)]
    ci = np.concatenate([np.array(header, dtype=np.int64), kind, np.asarray(tables.body, dtype=np.int64), vstart,
                         vcount, fstart, fcount, starts.ravel(), pairs.ravel(), index.ravel(), adj_start, adj])
    cf = np.concatenate([np.asarray(tables.params, dtype=float).ravel(),
                         np.asarray(tables.rotation, dtype=float).ravel(),
                         np.asarray(tables.translation, dtype=float).ravel(),
                         np.asarray(tables.friction, dtype=float).ravel(),
                         np.asarray(tables.bounding_radius, dtype=float).ravel(), hull_box.ravel(), vertices.ravel(),
                         planes.ravel(), adj_vertices.ravel()])
    return ci, cf


def _cell_directions():
    """(6 G², 3) the centre directions of the cells of the starts' cube map, in the order
    :func:`~.support.start_vertex` indexes them: cube face (axis a = face // 2, sign + for
    an even face), then the cell's row i and column j over the components a + 1 and a + 2
    (mod 3), at −1 + (2 i + 1) / G and −1 + (2 j + 1) / G."""
    G = START_GRID
    centres = -1.0 + (2.0 * np.arange(G) + 1.0) / G
    out = np.empty((6, G, G, 3))
    for face in range(6):
        a = face // 2
        out[face, :, :, a] = 1.0 if face % 2 == 0 else -1.0
        out[face, :, :, (a + 1) % 3] = centres[:, None]
        out[face, :, :, (a + 2) % 3] = centres[None, :]
    return out.reshape(-1, 3)


def _edge_graph(tables, nverts):
    """(adj_start (V + 1,), adj): each hull vertex's neighbours along the edges of its
    triangles (local ids, sorted), from the tables' faces."""
    neighbours = [set() for _ in range(nverts)]
    faces = np.asarray(tables.faces, dtype=np.int64).reshape(-1, 3)
    for i in range(len(tables.kind)):
        start, count = int(tables.vertex_start[i]), int(tables.vertex_count[i])
        f0, fc = int(tables.face_start[i]), int(tables.face_count[i])
        if not count:
            continue
        for a, b, c in faces[f0:f0 + fc]:
            for u, w in ((a, b), (b, c), (c, a)):
                neighbours[start + u].add(int(w))
                neighbours[start + w].add(int(u))
    adj_start = np.zeros(nverts + 1, dtype=np.int64)
    adj_start[1:] = np.cumsum([len(s) for s in neighbours])
    adj = np.array([w for s in neighbours for w in sorted(s)], dtype=np.int64)
    return adj_start, adj
