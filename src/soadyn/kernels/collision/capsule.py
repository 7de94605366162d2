"""A capsule against a capsule and a box: closed forms on the capsule's segment.

A capsule is its segment inflated by its radius r: its signed distance to a convex set is
the segment's minus r, with the same normal, the witness point moved by r along it
(:mod:`.support`). The capsule is the first object of both pairs here.

* capsule–capsule: the closest points of two segments [Ericson05, §5.1.9]; intersecting
  segments (distance 0) are separated along their common perpendicular, by r₁ + r₂. Two
  (nearly) parallel capsules rest on a line: their contacts are the end spheres of each
  against the other's segment, at most 2 (MuJoCo's convention).
* capsule–box: a segment that misses the box is nearest it at an end (against the box) or
  at one of the box's 12 edges (segment against segment) — the distance along the
  segment is convex, and an interior minimum against a face would be matched at an end.
  A segment that enters the box is separated along the best of 6 axes [Ericson05, §5.2.1]:
  the Minkowski sum of a box and a segment is a polytope whose face normals are the box's
  3 axes and the cross products of the segment with them, so the separating-axis test over
  these is exact. When the box's side of the contact is a face, the segment's part over
  that face gives the contacts at its two ends, each with its own distance (a capsule
  lying on a box rests on 2 points).
"""
from __future__ import annotations

import math

from ...core.jit import helper
from .vector import TINY, add, axpy, column, cross, dot, norm, perpendicular, rotate, scale, sub, unit_or, unrotate

__all__ = ["closest_on_segments", "capsule_capsule_distance", "capsule_capsule_contacts", "capsule_box_distance",
           "capsule_box_contacts"]

#: axes closer to parallel than this (the sine of their angle) count as parallel
PARALLEL = 1e-6


@helper
def closest_on_segments(p1, d1, p2, d2):
    """(s, t) ∈ [0, 1]²: the parameters of the closest points p1 + s d1 and p2 + t d2 of two
    segments [Ericson05, §5.1.9]; parallel segments give one of the closest pairs."""
    r = sub(p1, p2)
    a, e, f = dot(d1, d1), dot(d2, d2), dot(d2, r)
    if a <= TINY and e <= TINY:
        return 0.0, 0.0
    if a <= TINY:
        return 0.0, min(max(f / e, 0.0), 1.0)
    c = dot(d1, r)
    if e <= TINY:
        return min(max(-c / a, 0.0), 1.0), 0.0
    b = dot(d1, d2)
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 0.0 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0)
    return s, t


@helper(forceinline=True)
def _segment(S):
    """(start, direction) of a capsule's segment (world)."""
    axis = scale(column(S.R, 2), S.b)
    return axpy(S.p, -0.5, axis), axis


@helper(forceinline=True)
def _spheres(p, ra, q, rb, fallback):
    """(d, x, y, n) of spheres about p and q."""
    n = unit_or(sub(q, p), fallback)
    return norm(sub(q, p)) - ra - rb, axpy(p, ra, n), axpy(q, -rb, n), n


@helper
def capsule_capsule_distance(A, B):
    """(d, x, y, n) of the capsules A and B (module docstring)."""
    p1, d1 = _segment(A)
    p2, d2 = _segment(B)
    s, t = closest_on_segments(p1, d1, p2, d2)
    q1, q2 = axpy(p1, s, d1), axpy(p2, t, d2)
    if norm(sub(q2, q1)) > 1e-12 * (A.b + B.b):
        return _spheres(q1, A.a, q2, B.a, (1.0, 0.0, 0.0))
    # segments that meet (to rounding): separated along their common perpendicular, towards
    # B's centre (the closest points' difference is rounding, not a direction)
    m = unit_or(cross(d1, d2), perpendicular(column(A.R, 2)))
    if dot(m, sub(B.p, A.p)) < 0.0:
        m = scale(m, -1.0)
    g = dot(m, sub(q2, q1))
    return g - A.a - B.a, axpy(q1, A.a, m), axpy(axpy(q1, g, m), -B.a, m), m


@helper
def capsule_capsule_contacts(A, B, margin, M):
    """Contacts of two capsules within ``margin`` into rows of M (distance, midpoint (3),
    normal (3)); returns their count: 1, or up to 2 for parallel axes (module docstring)."""
    p1, d1 = _segment(A)
    p2, d2 = _segment(B)
    d, x, y, n = capsule_capsule_distance(A, B)
    if d > margin:
        return 0
    sine = norm(cross(d1, d2)) / max(norm(d1) * norm(d2), TINY)
    if sine >= PARALLEL:
        return _row(M, 0, d, x, y, n)
    count = 0
    for end in (p1, add(p1, d1)):  # A's end spheres against B's segment
        t = min(max(dot(sub(end, p2), d2) / dot(d2, d2), 0.0), 1.0)
        e, xe, ye, ne = _spheres(end, A.a, axpy(p2, t, d2), B.a, n)
        if e <= margin and count < 2:
            count = _row(M, count, e, xe, ye, ne)
    for end in (p2, add(p2, d2)):  # then B's against A's
        if count >= 2:
            break
        s = min(max(dot(sub(end, p1), d1) / dot(d1, d1), 0.0), 1.0)
        e, xe, ye, ne = _spheres(axpy(p1, s, d1), A.a, end, B.a, n)
        if e <= margin:
            count = _row(M, count, e, xe, ye, ne)
    if count == 0:
        return _row(M, 0, d, x, y, n)
    return count


@helper(forceinline=True)
def _row(M, k, d, x, y, n):
    """Contact row k: (d, midpoint of x and y, n)."""
    M[k, 0] = d
    M[k, 1] = 0.5 * (x[0] + y[0])
    M[k, 2] = 0.5 * (x[1] + y[1])
    M[k, 3] = 0.5 * (x[2] + y[2])
    M[k, 4] = n[0]
    M[k, 5] = n[1]
    M[k, 6] = n[2]
    return k + 1


# --------------------------------------------------------------------------- capsule–box
@helper
def _clip(p, d, half, skip):
    """[t0, t1] ⊂ [0, 1] where p + t d lies in the slabs |w_k| ≤ half_k (k ≠ ``skip``), in
    the box's axes; t0 > t1 when the segment misses them."""
    t0, t1 = 0.0, 1.0
    for k in range(3):
        if k == skip:
            continue
        if abs(d[k]) <= TINY:
            if abs(p[k]) > half[k]:
                return 1.0, 0.0
            continue
        ta, tb = (-half[k] - p[k]) / d[k], (half[k] - p[k]) / d[k]
        if ta > tb:
            ta, tb = tb, ta
        t0, t1 = max(t0, ta), min(t1, tb)
    return t0, t1


@helper
def _segment_box(p, d, half):
    """The signed distance of the segment p + t d (t ∈ [0, 1]) and the box |w| ≤ half, in
    the box's axes: (d, x, y, n, face) with x on the segment, y on the box, n the unit
    normal from the segment into the box, y − x = d n, and ``face`` the box axis k whose
    face carries the contact (−1 for an edge or a corner) (module docstring)."""
    t0, t1 = _clip(p, d, half, -1)
    if t0 <= t1:
        # the segment enters the box: separating axes (box axes, segment × box axes)
        centre = axpy(p, 0.5, d)
        length = norm(d)
        a = scale(d, 1.0 / length) if length > TINY else (0.0, 0.0, 1.0)
        best, axis, best_k = -math.inf, (1.0, 0.0, 0.0), 0
        for k in range(6):
            if k < 3:
                u = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
            else:
                u = cross(a, (1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0))
                if norm(u) <= 1e-9:  # the segment along that box axis: its face axes cover it
                    continue
                u = scale(u, 1.0 / norm(u))
            sep = abs(dot(u, centre)) - (half[0] * abs(u[0]) + half[1] * abs(u[1]) + half[2] * abs(u[2])) \
                - 0.5 * abs(dot(d, u))
            # a face axis keeps a tie (its contact is a face, with two points)
            if sep > best + (1e-12 * abs(sep) if k >= 3 else 0.0):
                best, axis, best_k = sep, u, k
        n = scale(axis, -1.0 if dot(axis, centre) >= 0.0 else 1.0)  # from the segment towards the box
        if best_k < 3:
            face = best_k
            # the segment's deepest point (the middle of its part over the face on a tie)
            along = dot(n, d)
            if abs(along) <= 1e-12 * max(length, TINY):
                c0, c1 = _clip(p, d, half, face)
                x = axpy(p, 0.5 * (c0 + c1) if c0 <= c1 else 0.5, d)
            else:
                x = add(p, d) if along > 0.0 else p
            y = axpy(x, best, n)
            return best, x, _clamp(y, half), n, face
        # an edge of the box along axis k across the segment, at the corner the normal picks
        k = best_k - 3
        e0 = (-half[0] if k == 0 else (-half[0] if n[0] > 0.0 else half[0]),
              -half[1] if k == 1 else (-half[1] if n[1] > 0.0 else half[1]),
              -half[2] if k == 2 else (-half[2] if n[2] > 0.0 else half[2]))
        ed = (2.0 * half[0] if k == 0 else 0.0, 2.0 * half[1] if k == 1 else 0.0, 2.0 * half[2] if k == 2 else 0.0)
        s, t = closest_on_segments(p, d, e0, ed)
        return best, axpy(p, s, d), axpy(e0, t, ed), n, -1
    # the segment misses the box: its ends against the box, the box's edges against it
    best = math.inf
    bx = by = (0.0, 0.0, 0.0)
    for end in (p, add(p, d)):
        q = _clamp(end, half)
        g = norm(sub(q, end))
        if g < best:
            best, bx, by = g, end, q
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        for c in range(4):
            ci = half[i] if c & 1 else -half[i]
            cj = half[j] if c & 2 else -half[j]
            s0 = (-half[0] if k == 0 else (ci if i == 0 else cj), -half[1] if k == 1 else (ci if i == 1 else cj),
                  -half[2] if k == 2 else (ci if i == 2 else cj))
            ed = (2.0 * half[0] if k == 0 else 0.0, 2.0 * half[1] if k == 1 else 0.0,
                  2.0 * half[2] if k == 2 else 0.0)
            s, t = closest_on_segments(p, d, s0, ed)
            x, y = axpy(p, s, d), axpy(s0, t, ed)
            g = norm(sub(y, x))
            if g < best:
                best, bx, by = g, x, y
    n = unit_or(sub(by, bx), (1.0, 0.0, 0.0))
    # the box feature at y: a face when exactly one coordinate is on its bound
    face, bounds = -1, 0
    for k in range(3):
        if abs(by[k]) >= half[k] * (1.0 - 1e-12):
            bounds += 1
            face = k
    return best, bx, by, n, face if bounds == 1 else -1


@helper(forceinline=True)
def _clamp(w, half):
    return (min(max(w[0], -half[0]), half[0]), min(max(w[1], -half[1]), half[1]), min(max(w[2], -half[2]), half[2]))


@helper
def _local(A, B):
    """A's segment in B's axes, and B's half-sizes."""
    p, d = _segment(A)
    return unrotate(B.R, sub(p, B.p)), unrotate(B.R, d), (0.5 * B.a, 0.5 * B.b, 0.5 * B.c)


@helper
def capsule_box_distance(A, B):
    """(d, x, y, n) of the capsule A and the box B (module docstring)."""
    p, d, half = _local(A, B)
    g, x, y, n, _ = _segment_box(p, d, half)
    nw = rotate(B.R, n)
    return g - A.a, axpy(add(B.p, rotate(B.R, x)), A.a, nw), add(B.p, rotate(B.R, y)), nw


@helper
def capsule_box_contacts(A, B, margin, M):
    """Contacts of the capsule A and the box B within ``margin`` into rows of M (distance,
    midpoint (3), normal (3)); returns their count (module docstring)."""
    p, d, half = _local(A, B)
    g, x, y, n, face = _segment_box(p, d, half)
    if g - A.a > margin:
        return 0
    nw = rotate(B.R, n)
    if face < 0:
        return _row(M, 0, g - A.a, axpy(add(B.p, rotate(B.R, x)), A.a, nw), add(B.p, rotate(B.R, y)), nw)
    # the segment's part over the face, its two ends
    c0, c1 = _clip(p, d, half, face)
    if c0 > c1:
        c0 = c1 = 0.5 * (c0 + c1)
    count = 0
    for t in (c0, c1):
        if count == 1 and c1 - c0 <= 1e-12:
            break
        e = axpy(p, t, d)
        # n = ±e_face: the face's outward normal is −n, and the gap from e to it along n is
        # e's height above the face
        gap = -n[face] * e[face] - half[face]
        de = gap - A.a
        if de <= margin:
            count = _row(M, count, de, add(B.p, rotate(B.R, axpy(e, A.a, n))), add(B.p, rotate(B.R, axpy(e, gap, n))),
                         nw)
    if count == 0:
        return _row(M, 0, g - A.a, axpy(add(B.p, rotate(B.R, x)), A.a, nw), add(B.p, rotate(B.R, y)), nw)
    return count
