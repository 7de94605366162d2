"""A box against a box: separating axes and face clipping.

The Minkowski difference of two boxes is a polytope whose face normals are the 15
directions of the separating-axis test [Gottschalk96; Ericson05, §4.4.1]: the 3 face
axes of each box and the 9 cross products of their edges. The largest separation along
them is therefore the exact signed distance of penetrating boxes, and a lower bound of the
distance of separated ones (whose distance, for :func:`box_distance`, GJK gives exactly:
:mod:`.convex`).

The contacts follow the winning axis (the scheme of ODE's and MuJoCo's box–box): a face
axis makes its box the reference; the incident box's face most opposed to the reference
normal is clipped against the reference face's four sides (Sutherland–Hodgman) and its
vertices within the margin are the contacts, each at its own distance from the reference
face (at most 8, reduced to 4 by :func:`~.manifold.select4`); an edge axis gives one
contact at the closest points of the two edges. Ties go to the face axes (a face gives a
resting manifold); an edge axis within 8° of the best face axis and at most 5 % deeper
than it is taken as that face (ODE's rule, also MuJoCo's: resting stacks would otherwise
flip between the two readings by rounding).
"""
from __future__ import annotations

import math

from ...core.jit import helper
from .capsule import closest_on_segments
from .convex import convex_distance
from .manifold import select4
from .vector import axpy, column, cross, dot, midpoint, norm, scale, sub

__all__ = ["box_distance", "box_contacts", "separating_axis"]


@helper(forceinline=True)
def _half(S):
    return (0.5 * S.a, 0.5 * S.b, 0.5 * S.c)


@helper(forceinline=True)
def _extent(S):
    """The box's half-diagonal [m]: the scale of its rounding."""
    return 0.5 * math.sqrt(S.a * S.a + S.b * S.b + S.c * S.c)


@helper(forceinline=True)
def _radius(R, half, u):
    """The half-width of a box along the unit u: Σ half_k |axis_k · u|."""
    return half[0] * abs(dot(column(R, 0), u)) + half[1] * abs(dot(column(R, 1), u)) + \
        half[2] * abs(dot(column(R, 2), u))


@helper
def separating_axis(A, B, prefer_faces):
    """The largest separation of the boxes A and B over the 15 axes: (sep, n, code,
    face_sep, face_code), n the unit axis oriented from A towards B; code 0–2: a face of A,
    3–5: a face of B, 6 + 3 i + j: A's edge i × B's edge j. With ``prefer_faces`` an edge
    axis nearly along the best face axis is read as that face (module docstring)."""
    ha, hb = _half(A), _half(B)
    t = sub(B.p, A.p)
    best, code, axis = -math.inf, -1, (0.0, 0.0, 1.0)
    for k in range(6):
        u = column(A.R, k) if k < 3 else column(B.R, k - 3)
        sep = abs(dot(t, u)) - _radius(A.R, ha, u) - _radius(B.R, hb, u)
        if sep > best:
            best, code, axis = sep, k, u
    face_sep, face_code, face_axis = best, code, axis
    for i in range(3):
        for j in range(3):
            u = cross(column(A.R, i), column(B.R, j))
            length = norm(u)
            if length < 1e-6:  # parallel edges: their cross product is rounding; the faces cover it
                continue
            u = scale(u, 1.0 / length)
            sep = abs(dot(t, u)) - _radius(A.R, ha, u) - _radius(B.R, hb, u)
            # an edge must beat the faces by more than rounding: faces give manifolds
            if sep > best + 1e-12 * abs(best) + 1e-15:
                best, code, axis = sep, 6 + 3 * i + j, u
    if prefer_faces and code >= 6 and abs(dot(axis, face_axis)) > 0.99 and best < face_sep + 0.05 * abs(face_sep):
        best, code, axis = face_sep, face_code, face_axis
    n = axis if dot(t, axis) >= 0.0 else scale(axis, -1.0)
    return best, n, code, face_sep, face_code


@helper
def _edges(A, B, n, code):
    """The closest points (x on A, y on B) of the two edges of an edge axis: A's edge i at
    A's corner farthest along n, B's edge j at B's corner farthest along −n."""
    i, j = (code - 6) // 3, (code - 6) % 3
    ha, hb = _half(A), _half(B)
    pa = A.p
    for k in range(3):
        if k != i:
            pa = axpy(pa, ha[k] if dot(column(A.R, k), n) >= 0.0 else -ha[k], column(A.R, k))
    pb = B.p
    for k in range(3):
        if k != j:
            pb = axpy(pb, -hb[k] if dot(column(B.R, k), n) >= 0.0 else hb[k], column(B.R, k))
    da, db = scale(column(A.R, i), 2.0 * ha[i]), scale(column(B.R, j), 2.0 * hb[j])
    pa, pb = axpy(pa, -0.5, da), axpy(pb, -0.5, db)
    s, t = closest_on_segments(pa, da, pb, db)
    return axpy(pa, s, da), axpy(pb, t, db)


@helper
def _clipped_face(A, B, n, code, margin, P):
    """The incident face clipped by the reference face's sides (module docstring). Rows of
    ``P`` (2, 16, 4): (height above the reference face, world point on the incident face);
    returns (vertices kept within ``margin``, the buffer holding them, N, ref_is_a), N the
    reference face's outward normal."""
    ref_is_a = code < 3
    Rf, If = (A, B) if ref_is_a else (B, A)
    a = code if ref_is_a else code - 3
    N = n if ref_is_a else scale(n, -1.0)  # reference outward normal, towards the incident box
    hr, hi = _half(Rf), _half(If)
    # the incident face: the incident axis most opposed to N
    k = 0
    for c in range(1, 3):
        if abs(dot(column(If.R, c), N)) > abs(dot(column(If.R, k), N)):
            k = c
    sk = -1.0 if dot(column(If.R, k), N) > 0.0 else 1.0
    centre = axpy(If.p, sk * hi[k], column(If.R, k))
    u, v = (k + 1) % 3, (k + 2) % 3
    du, dv = scale(column(If.R, u), hi[u]), scale(column(If.R, v), hi[v])
    # the reference face's frame: its centre, its two in-plane axes
    x, y = (a + 1) % 3, (a + 2) % 3
    ex, ey = column(Rf.R, x), column(Rf.R, y)
    top = axpy(Rf.p, hr[a], N)
    m = 0
    for su, sv in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)):
        p = axpy(axpy(centre, su, du), sv, dv)
        P[0, m, 0] = dot(sub(p, top), N)
        P[0, m, 1], P[0, m, 2], P[0, m, 3] = p[0], p[1], p[2]
        m += 1
    src = 0
    for axis, limit in ((ex, hr[x]), (scale(ex, -1.0), hr[x]), (ey, hr[y]), (scale(ey, -1.0), hr[y])):
        m = _clip(P, src, m, axis, dot(axis, top) + limit)
        src = 1 - src
    kept = 0
    for c in range(m):
        if P[src, c, 0] <= margin:
            for e in range(4):
                P[src, kept, e] = P[src, c, e]
            kept += 1
    return kept, src, N, ref_is_a


@helper
def _clip(P, src, m, axis, limit):
    """Sutherland–Hodgman: the polygon in P[src] (m rows) cut by axis·p ≤ limit into
    P[1 − src]; returns its vertex count. Heights are interpolated with the points."""
    dst = 1 - src
    out = 0
    for c in range(m):
        e = (c + 1) % m
        p = (P[src, c, 1], P[src, c, 2], P[src, c, 3])
        q = (P[src, e, 1], P[src, e, 2], P[src, e, 3])
        dp, dq = dot(axis, p) - limit, dot(axis, q) - limit
        if dp <= 0.0 and out < 16:
            for f in range(4):
                P[dst, out, f] = P[src, c, f]
            out += 1
        if ((dp < 0.0 and dq > 0.0) or (dp > 0.0 and dq < 0.0)) and out < 16:
            t = dp / (dp - dq)
            for f in range(4):
                P[dst, out, f] = P[src, c, f] + t * (P[src, e, f] - P[src, c, f])
            out += 1
    return out


@helper
def box_distance(A, B, hulls, fs, js, P):
    """(d, x, y, n) of the boxes A and B: the separating-axis test for penetrating boxes
    (the deepest clipped vertex and its projection on the reference face, or the closest
    points of the two edges), GJK for separated ones."""
    sep, n, code, _, _ = separating_axis(A, B, False)
    # separated beyond rounding: GJK (a face flush on a face, separated by rounding, stays
    # with the clipping, whose witness points are on the faces)
    if sep > 1e-12 * (_extent(A) + _extent(B)):
        return convex_distance(A, B, hulls, fs, js, math.inf)
    if code >= 6:
        x, y = _edges(A, B, n, code)
        return sep, x, y, n
    kept, src, N, ref_is_a = _clipped_face(A, B, n, code, math.inf, P)
    if kept == 0:  # the faces do not overlap by rounding: EPA decides
        return convex_distance(A, B, hulls, fs, js, math.inf)
    deepest = 0
    for c in range(1, kept):
        if P[src, c, 0] < P[src, deepest, 0]:
            deepest = c
    p = (P[src, deepest, 1], P[src, deepest, 2], P[src, deepest, 3])
    q = axpy(p, -sep, N)  # on the reference face
    if ref_is_a:
        return sep, q, p, n
    return sep, p, q, n


@helper
def box_contacts(A, B, margin, M, P):
    """Contacts of the boxes A and B within ``margin`` into rows of M (distance, midpoint
    (3), normal (3)); returns their count (at most 4; module docstring). ``P``: (2, 16, 4)
    clipping scratch."""
    sep, n, code, _, _ = separating_axis(A, B, True)
    if sep > margin:
        return 0
    if code >= 6:
        x, y = _edges(A, B, n, code)
        p = midpoint(x, y)
        M[0, 0] = sep
        M[0, 1], M[0, 2], M[0, 3] = p[0], p[1], p[2]
        M[0, 4], M[0, 5], M[0, 6] = n[0], n[1], n[2]
        return 1
    kept, src, N, _ = _clipped_face(A, B, n, code, margin, P)
    count = 0
    for c in select4(P[src], kept):
        if c >= 0:
            z = P[src, c, 0]
            p = axpy((P[src, c, 1], P[src, c, 2], P[src, c, 3]), -0.5 * z, N)  # midway to the reference face
            M[count, 0] = z
            M[count, 1], M[count, 2], M[count, 3] = p[0], p[1], p[2]
            M[count, 4], M[count, 5], M[count, 6] = n[0], n[1], n[2]
            count += 1
    return count

