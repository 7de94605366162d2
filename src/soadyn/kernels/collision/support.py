"""Shapes posed in the world, their support functions and the curvature of their surfaces.

A :class:`Solid` is one collision object as the narrow phase reads it: its kind code and
three numbers (:mod:`soadyn.core.shapes`), its world rotation ``R`` (row-major 9-tuple,
:mod:`.vector`) and position ``p``, and its range of hull vertices in the shared vertex
array (convex meshes).

The support function of a convex set K in direction u, s_K(u) = argmax_{x ∈ K} u·x, and
its value h_K(u) = u·s_K(u), are what GJK and EPA query [GJK88]. Spheres and capsules
enter them as their *cores*, a point and a segment, inflated afterwards by the radius
(:func:`core_radius`): a capsule is its segment ⊕ a ball, so its signed distance to any
convex set is the segment's minus the radius, with the same normal and the witness point
moved by the radius along it. The cores and boxes and convex meshes are polytopes: their
support points carry an integer id (the vertex), which tells GJK and EPA when they
revisit a vertex, and the polish of :mod:`.convex` which feature (vertex, edge, face)
two or three ids span. Ellipsoids and cylinders are curved; :func:`support_hessian` gives
the derivative ∂s/∂u of their support point, the matrix of radii of curvature that
Newton's method needs.
"""
from __future__ import annotations

import math
from collections import namedtuple

from ...core.jit import helper
from ...core.shapes import BOX, CAPSULE, CYLINDER, ELLIPSOID, PLANE, SPHERE
from .vector import add, dot, rotate, unrotate

__all__ = ["Solid", "Hulls", "CLIMB", "START_GRID", "START_CELLS", "start_vertex", "solid", "core_radius", "support", "local_support", "support_hessian", "curved",
           "NO_ID"]

Solid = namedtuple("Solid", ("kind", "a", "b", "c", "R", "p", "vstart", "vcount", "fstart", "fcount", "index"))

#: the hull vertices of every convex mesh (V, 3) in their shape frames, their edge graph (the
#: neighbours of vertex g, a global row of ``vertices``, are the local ids
#: ``adj[adj_start[g]:adj_start[g + 1]]``) and their faces' planes (F, 4): outward unit
#: normal and offset, n·x ≤ offset inside (a mesh's rows ``fstart:fstart + fcount``), and
#: per object the starts of the hill climbing (n, :data:`START_CELLS`), the support vertex of
#: each cell of a cube map of directions (:func:`start_vertex`); ``adj_vertices`` (len(adj), 3): the shape-frame position of each
#: neighbour ``adj[e]`` (:mod:`.layout`), read by the climbing steps
Hulls = namedtuple("Hulls", ("vertices", "adj_start", "adj", "planes", "starts", "adj_vertices"))

#: convex meshes with more vertices are searched by hill climbing, smaller ones vertex by vertex
CLIMB = 16

#: the cube map of the climbs' starts: each face of the cube of directions (the largest
#: component of u, ±x, ±y, ±z) divided in START_GRID × START_GRID cells, each holding the
#: support vertex of its centre direction. A cell spans about 90°/START_GRID: about the
#: angle between the normals of neighbouring faces of a hull of a few hundred vertices, so
#: that a climb from the cell's vertex takes a step or two where one from the six extreme
#: vertices took five (a step reads every neighbour of a vertex, eight on average on the
#: robots' hulls)
START_GRID = 8
START_CELLS = 6 * START_GRID * START_GRID

#: the id of a support point on a curved surface (no vertex)
NO_ID = -1


@helper(forceinline=True)
def solid(t, Rw, pw, i):
    """Object i as a :class:`Solid`, from the tables ``t`` (:func:`~.layout.collision_views`)
    and its world pose (``Rw`` (n, 3, 3), ``pw`` (n, 3))."""
    R = (Rw[i, 0, 0], Rw[i, 0, 1], Rw[i, 0, 2], Rw[i, 1, 0], Rw[i, 1, 1], Rw[i, 1, 2], Rw[i, 2, 0], Rw[i, 2, 1],
         Rw[i, 2, 2])
    return Solid(t.kind[i], t.params[i, 0], t.params[i, 1], t.params[i, 2], R, (pw[i, 0], pw[i, 1], pw[i, 2]),
                 t.vstart[i], t.vcount[i], t.fstart[i], t.fcount[i], i)


@helper(forceinline=True)
def core_radius(S):
    """The radius that inflates the core of a sphere or a capsule into the shape (0 for the
    other kinds)."""
    if S.kind == SPHERE or S.kind == CAPSULE:
        return S.a
    return 0.0


@helper(forceinline=True)
def curved(S):
    """True for the kinds whose support point moves continuously with the direction."""
    return S.kind == ELLIPSOID or S.kind == CYLINDER


@helper(forceinline=True)
def _sign(x):
    return 1.0 if x >= 0.0 else -1.0


@helper(forceinline=True)
def start_vertex(S, hulls, u):
    """The local id of the climbing start of convex mesh S for the direction u (its axes, any
    length): the vertex stored for u's cell of the cube map (:data:`START_GRID`), the face
    of u's largest component (±x, ±y, ±z: faces 0–5), the cell of the other two components
    divided by it (each in [−1, 1], in G equal parts). For u = 0, the first cell's."""
    a0, a1, a2 = abs(u[0]), abs(u[1]), abs(u[2])
    if a0 >= a1 and a0 >= a2:
        face, m, c1, c2 = (0 if u[0] >= 0.0 else 1), a0, u[1], u[2]
    elif a1 >= a2:
        face, m, c1, c2 = (2 if u[1] >= 0.0 else 3), a1, u[2], u[0]
    else:
        face, m, c1, c2 = (4 if u[2] >= 0.0 else 5), a2, u[0], u[1]
    if not m > 0.0:
        return hulls.starts[S.index, 0]
    G = START_GRID
    i = min(int((c1 / m + 1.0) * (0.5 * G)), G - 1)
    j = min(int((c2 / m + 1.0) * (0.5 * G)), G - 1)
    return hulls.starts[S.index, (face * G + i) * G + j]


@helper
def local_support(S, hulls, u, hint):
    """(s, id): the support point of S's core in the direction u (both in S's axes; u need
    not be unit, and may be zero: a point of the shape then) and its vertex id (:data:`NO_ID`
    on a curved surface). Ties (u orthogonal to a face or an edge) go to the + side. A
    convex mesh of more than :data:`CLIMB` vertices is searched along its hull's edges from
    the vertex ``hint`` (a local id: the previous support point of a sequence of queries,
    GJK's or EPA's) or from the start vertex of u's cell (:func:`start_vertex`), whichever is
    higher (hint −1: the cell's)."""
    k = S.kind
    if k == SPHERE or k == PLANE:
        return (0.0, 0.0, 0.0), 0
    if k == CAPSULE:
        h = 0.5 * S.b
        if u[2] >= 0.0:
            return (0.0, 0.0, h), 0
        return (0.0, 0.0, -h), 1
    if k == BOX:
        hx, hy, hz = 0.5 * S.a, 0.5 * S.b, 0.5 * S.c
        ident = 0
        if u[0] < 0.0:
            hx = -hx
            ident += 1
        if u[1] < 0.0:
            hy = -hy
            ident += 2
        if u[2] < 0.0:
            hz = -hz
            ident += 4
        return (hx, hy, hz), ident
    if k == CYLINDER:
        rho = math.sqrt(u[0] * u[0] + u[1] * u[1])
        z = 0.5 * S.b * _sign(u[2])
        if rho > 0.0:
            s = S.a / rho
            return (u[0] * s, u[1] * s, z), NO_ID
        return (0.0, 0.0, z), NO_ID  # a cap's centre: a point of the supporting face
    if k == ELLIPSOID:
        a2u0, a2u1, a2u2 = S.a * S.a * u[0], S.b * S.b * u[1], S.c * S.c * u[2]
        length = math.sqrt(a2u0 * u[0] + a2u1 * u[1] + a2u2 * u[2])  # |A u|, A = diag(a, b, c)
        if length > 0.0:
            return (a2u0 / length, a2u1 / length, a2u2 / length), NO_ID
        return (S.a, 0.0, 0.0), NO_ID
    # convex mesh: the hull vertex of largest projection
    V = hulls.vertices
    if S.vcount > CLIMB and hulls.adj_start[S.vstart + S.vcount] > hulls.adj_start[S.vstart]:
        # hill climbing on the hull's edge graph from the start of u's cell in the cube map,
        # or the hint when it is higher: a vertex with no neighbour higher along u is the
        # highest (a convex polytope has no other local maximum)
        v = S.vstart + start_vertex(S, hulls, u)
        best = V[v, 0] * u[0] + V[v, 1] * u[1] + V[v, 2] * u[2]
        if hint >= 0:
            w = S.vstart + hint
            x = V[w, 0] * u[0] + V[w, 1] * u[1] + V[w, 2] * u[2]
            if x > best:
                best, v = x, w
        # steepest ascent: each step moves to the highest neighbour (the first of equals), read
        # from the neighbours' own rows (one contiguous run per step: the cost of a climb is
        # the memory it touches)
        W = hulls.adj_vertices
        while True:
            up = -1
            for e in range(hulls.adj_start[v], hulls.adj_start[v + 1]):
                x = W[e, 0] * u[0] + W[e, 1] * u[1] + W[e, 2] * u[2]
                if x > best:
                    best, up = x, e
            if up < 0:
                break
            v = S.vstart + hulls.adj[up]
        return (V[v, 0], V[v, 1], V[v, 2]), v - S.vstart
    best, bi = -math.inf, S.vstart  # every vertex (the first on a tie)
    for v in range(S.vstart, S.vstart + S.vcount):
        x = V[v, 0] * u[0] + V[v, 1] * u[1] + V[v, 2] * u[2]
        if x > best:
            best, bi = x, v
    return (V[bi, 0], V[bi, 1], V[bi, 2]), bi - S.vstart


@helper(forceinline=True)
def support(S, hulls, u, hint):
    """(s, id): :func:`local_support` in world coordinates (u and s world vectors)."""
    s, ident = local_support(S, hulls, unrotate(S.R, u), hint)
    return add(S.p, rotate(S.R, s)), ident


@helper
def support_hessian(S, u):
    """∂s/∂u at the unit world direction u, a symmetric world 3×3 matrix (row-major
    9-tuple) with u in its null space: the Hessian of h_S. Its eigenvalues on the plane
    orthogonal to u are the principal radii of curvature of S's surface at s(u). Zero for
    the polytopes (their support is piecewise constant); for a cylinder, the rim's
    curvature (zero when u is along or across the axis, where the support is a face or a
    side line); for an ellipsoid with A = diag(a, b, c): A²/|Au| − A²u uᵀA²/|Au|³."""
    w = unrotate(S.R, u)
    H = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if S.kind == ELLIPSOID:
        d = (S.a * S.a, S.b * S.b, S.c * S.c)
        g = (d[0] * w[0], d[1] * w[1], d[2] * w[2])  # A² u
        n2 = g[0] * w[0] + g[1] * w[1] + g[2] * w[2]
        if n2 <= 0.0:
            return H
        inv = 1.0 / math.sqrt(n2)
        inv3 = inv / n2
        H = (d[0] * inv - g[0] * g[0] * inv3, -g[0] * g[1] * inv3, -g[0] * g[2] * inv3,
             -g[1] * g[0] * inv3, d[1] * inv - g[1] * g[1] * inv3, -g[1] * g[2] * inv3,
             -g[2] * g[0] * inv3, -g[2] * g[1] * inv3, d[2] * inv - g[2] * g[2] * inv3)
    elif S.kind == CYLINDER:
        rho2 = w[0] * w[0] + w[1] * w[1]
        if rho2 <= 0.0:
            return H
        rho = math.sqrt(rho2)
        s = S.a / rho
        # s_xy = r w_xy / |w_xy|: (r / ρ) (I₂ − w_xy w_xyᵀ / ρ²) on the xy block
        H = (s * (1.0 - w[0] * w[0] / rho2), -s * w[0] * w[1] / rho2, 0.0,
             -s * w[0] * w[1] / rho2, s * (1.0 - w[1] * w[1] / rho2), 0.0, 0.0, 0.0, 0.0)
    else:
        return H
    return _rotate_symmetric(S.R, H)


@helper(forceinline=True)
def _rotate_symmetric(R, H):
    """R H Rᵀ (row-major 9-tuples)."""
    # M = R H, then M Rᵀ
    m = (R[0] * H[0] + R[1] * H[3] + R[2] * H[6], R[0] * H[1] + R[1] * H[4] + R[2] * H[7],
         R[0] * H[2] + R[1] * H[5] + R[2] * H[8],
         R[3] * H[0] + R[4] * H[3] + R[5] * H[6], R[3] * H[1] + R[4] * H[4] + R[5] * H[7],
         R[3] * H[2] + R[4] * H[5] + R[5] * H[8],
         R[6] * H[0] + R[7] * H[3] + R[8] * H[6], R[6] * H[1] + R[7] * H[4] + R[8] * H[7],
         R[6] * H[2] + R[7] * H[5] + R[8] * H[8])
    return (m[0] * R[0] + m[1] * R[1] + m[2] * R[2], m[0] * R[3] + m[1] * R[4] + m[2] * R[5],
            m[0] * R[6] + m[1] * R[7] + m[2] * R[8],
            m[3] * R[0] + m[4] * R[1] + m[5] * R[2], m[3] * R[3] + m[4] * R[4] + m[5] * R[5],
            m[3] * R[6] + m[4] * R[7] + m[5] * R[8],
            m[6] * R[0] + m[7] * R[1] + m[8] * R[2], m[6] * R[3] + m[7] * R[4] + m[8] * R[5],
            m[6] * R[6] + m[7] * R[7] + m[8] * R[8])


@helper(forceinline=True)
def support_value(S, hulls, u):
    """h_S(u) = u·s_S(u) for the core (world u)."""
    s, _ = support(S, hulls, u, -1)
    return dot(u, s)
