"""A plane against every shape: closed forms.

The plane is the half-space z ≤ 0 of its frame (:mod:`soadyn.core.shapes`), normal
n = its frame's z axis, and always the first object of its pair (its kind code is the
smallest), so the normal points from the plane into the other shape. The signed distance
of a convex shape S is that of its lowest point, the support point in −n:
d = n·(s_S(−n) − p₀) [m], exact for every kind.

Contact manifolds, for shapes that rest on a plane on more than one point (the points at
most ``margin`` above the plane, each with its own distance, at the midpoint between the
two surfaces; the normal is n for all):

* sphere and ellipsoid: the lowest point;
* capsule: its two end spheres (MuJoCo's convention);
* cylinder: the lowest rim point, the lowest point of the other rim, and two more points
  of the lower rim, ±120° from the first, at the distance of their midpoint (so that a
  cylinder standing on its cap rests on a triangle; MuJoCo's convention);
* box: the corners on the plane's side of the box's centre, at most 4, in corner order
  (MuJoCo's convention: a box lying on a face gives its 4 lower corners);
* convex mesh: 4 of the vertices within the margin (:func:`~.manifold.select4`).
"""
from __future__ import annotations

import math

from ...core.jit import helper
from ...core.shapes import BOX, CAPSULE, CONVEX, CYLINDER, PLANE
from .manifold import MAX_POINTS, select4
from .support import CLIMB, core_radius, support
from .vector import add, axpy, column, cross, dot, norm, rotate, scale, sub, unrotate

__all__ = ["plane_distance", "plane_contacts"]


@helper
def plane_distance(P, S, hulls):
    """(d, x, y, n) of the plane P and the shape S: the signed distance [m], the witness
    points on the plane and on S (y − x = d n), the plane's normal n. Another plane: its
    distance when the two face each other (normals opposite), −∞ otherwise (two half-spaces
    that are not parallel overlap without bound)."""
    n = column(P.R, 2)
    if S.kind == PLANE:
        m = column(S.R, 2)
        d = dot(n, sub(S.p, P.p))
        if dot(n, m) > -1.0 + 1e-12:
            d = -math.inf
            return d, P.p, S.p, n
        return d, axpy(S.p, -d, n), S.p, n
    s, _ = support(S, hulls, scale(n, -1.0), -1)
    y = axpy(s, -core_radius(S), n)
    d = dot(n, sub(y, P.p))
    return d, axpy(y, -d, n), y, n


@helper(forceinline=True)
def _write(M, k, d, point, n):
    """Contact row k of the manifold buffer ``M`` (rows: distance, midpoint (3)) for a
    point of the shape's surface at distance d from the plane."""
    M[k, 0] = d
    M[k, 1] = point[0] - 0.5 * d * n[0]
    M[k, 2] = point[1] - 0.5 * d * n[1]
    M[k, 3] = point[2] - 0.5 * d * n[2]
    return k + 1


@helper
def plane_contacts(P, S, hulls, margin, M, C, Q):
    """The contact points of the plane P and the shape S within ``margin`` [m] (module
    docstring) into rows of ``M`` (MAX_POINTS, 4): (signed distance, midpoint); ``C``, ``Q``:
    scratch for a convex mesh (:func:`_convex`), at least its vertex count long.
    Returns (count, n)."""
    n = column(P.R, 2)
    h0 = dot(n, sub(S.p, P.p))  # height of S's centre
    k = S.kind
    if k == PLANE:
        return 0, n
    if k == CAPSULE:
        axis = scale(column(S.R, 2), 0.5 * S.b)
        count = 0
        for end in (add(S.p, axis), sub(S.p, axis)):
            d = dot(n, sub(end, P.p)) - S.a
            if d <= margin:
                count = _write(M, count, d, axpy(end, -S.a, n), n)
        return count, n
    if k == BOX:
        count = 0
        for c in range(8):
            v = (0.5 * S.a if c & 1 else -0.5 * S.a, 0.5 * S.b if c & 2 else -0.5 * S.b,
                 0.5 * S.c if c & 4 else -0.5 * S.c)
            corner = rotate(S.R, v)
            lift = dot(n, corner)
            if lift > 0.0 or h0 + lift > margin:
                continue
            count = _write(M, count, h0 + lift, add(S.p, corner), n)
            if count == MAX_POINTS:
                break
        return count, n
    if k == CYLINDER:
        return _cylinder(P, S, margin, M, n, h0)
    if k == CONVEX:
        return _convex(P, S, hulls, margin, M, n, C, Q)
    d, x, y, _ = plane_distance(P, S, hulls)
    if d <= margin:
        return _write(M, 0, d, y, n), n
    return 0, n


@helper
def _cylinder(P, S, margin, M, n, h0):
    """The cylinder's points (module docstring)."""
    axis = column(S.R, 2)
    along = dot(n, axis)
    if along > 0.0:  # the axis pointing towards the plane
        axis = scale(axis, -1.0)
        along = -along
    radial = sub(scale(axis, along), n)  # −n without its component along the axis
    length = norm(radial)
    if length > 1e-12:
        radial = scale(radial, S.a / length)
    else:  # the caps parallel to the plane: any rim point, the cylinder's x axis
        radial = scale(column(S.R, 0), S.a)
    down = dot(radial, n)
    half = scale(axis, 0.5 * S.b)
    d1 = h0 + 0.5 * S.b * along + down
    if d1 > margin:
        return 0, n
    count = _write(M, 0, d1, add(add(S.p, radial), half), n)
    d2 = h0 - 0.5 * S.b * along + down
    if d2 <= margin:
        count = _write(M, count, d2, add(sub(S.p, half), radial), n)
    d3 = h0 + 0.5 * S.b * along - 0.5 * down
    if d3 <= margin:
        side = cross(radial, axis)
        side = scale(side, S.a * 0.8660254037844386 / norm(side))
        base = axpy(add(S.p, half), -0.5, radial)
        count = _write(M, count, d3, add(base, side), n)
        count = _write(M, count, d3, sub(base, side), n)
    return count, n


@helper
def _convex(P, S, hulls, margin, M, n, C, Q):
    """A convex mesh's points (module docstring): the vertices within the margin are the
    candidates (rows of ``C``) of :func:`~.manifold.select4`. They are found from the lowest
    vertex by a search along the hull's edges that enters only vertices within the margin:
    every such vertex is reached (on a convex polytope, each vertex below a plane has an
    edge path down to the lowest vertex that stays below it, the simplex method's path).
    A vertex's height above the plane is h₀ + n_S·v from its shape-frame position v, with
    n_S = Rᵀn the normal in the shape's axes and h₀ the height of its origin: three
    multiplications a vertex, where the world position costs twelve (taken only for the
    candidates). ``Q`` (2, at least the vertex count): the search's queue and its marks
    (zero, and left zero)."""
    V = hulls.vertices
    nl = unrotate(S.R, n)
    h0 = dot(n, sub(S.p, P.p))
    m = 0
    if S.vcount <= CLIMB or hulls.adj_start[S.vstart + S.vcount] == hulls.adj_start[S.vstart]:
        for v in range(S.vstart, S.vstart + S.vcount):
            d = h0 + nl[0] * V[v, 0] + nl[1] * V[v, 1] + nl[2] * V[v, 2]
            if d <= margin:
                p = _world(S, hulls, v)
                C[m, 0] = d
                C[m, 1], C[m, 2], C[m, 3] = p[0], p[1], p[2]
                m += 1
    else:
        _, low = support(S, hulls, scale(n, -1.0), -1)
        g = S.vstart + low
        if h0 + nl[0] * V[g, 0] + nl[1] * V[g, 1] + nl[2] * V[g, 2] > margin:
            return 0, n
        queue, mark = Q[0], Q[1]
        queue[0] = low
        mark[low] = 1
        tail = 1
        head = 0
        while head < tail:
            v = queue[head]
            head += 1
            g = S.vstart + v
            p = _world(S, hulls, g)
            C[m, 0] = h0 + nl[0] * V[g, 0] + nl[1] * V[g, 1] + nl[2] * V[g, 2]
            C[m, 1], C[m, 2], C[m, 3] = p[0], p[1], p[2]
            m += 1
            W = hulls.adj_vertices  # the neighbours' rows, one contiguous run (:mod:`.layout`)
            for e in range(hulls.adj_start[g], hulls.adj_start[g + 1]):
                w = hulls.adj[e]
                if mark[w] == 0 and h0 + nl[0] * W[e, 0] + nl[1] * W[e, 1] + nl[2] * W[e, 2] <= margin:
                    mark[w] = 1
                    queue[tail] = w
                    tail += 1
        for i in range(tail):
            mark[queue[i]] = 0
    if m == 0:
        return 0, n
    count = 0
    for i in select4(C, m):
        if i >= 0:
            count = _write(M, count, C[i, 0], (C[i, 1], C[i, 2], C[i, 3]), n)
    return count, n


@helper(forceinline=True)
def _world(S, hulls, v):
    V = hulls.vertices
    return add(S.p, rotate(S.R, (V[v, 0], V[v, 1], V[v, 2])))
