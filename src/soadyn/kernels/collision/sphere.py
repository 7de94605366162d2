"""A sphere against a sphere, a capsule, a cylinder and a box: closed forms.

A sphere is its centre c inflated by its radius, so each pair reduces to the signed
distance of a point to the other shape, sd(c), with the nearest surface point q and the
surface's outward normal m there (:func:`point_sphere`, :func:`point_capsule`,
:func:`point_cylinder`, :func:`point_box`; sd < 0 inside: q is then the nearest point of
the surface, at −sd from c). The sphere of radius r is the pair's first object (its kind
code is the smaller), so d = sd − r, n = −m, x = c − r m, y = q.

Degenerate poses keep a defined normal: a centre on a capsule's axis or a cylinder's
axis takes a fixed perpendicular (:func:`~.vector.perpendicular` of the axis),
coincident centres of two spheres the world's +z axis, a centre inside a box the normal of
the nearest face (the first such face on a tie: a centre on a face or an edge takes that
face).
"""
from __future__ import annotations

import math

from ...core.jit import helper
from ...core.shapes import BOX, CAPSULE, CYLINDER, SPHERE
from .vector import add, axpy, column, norm, perpendicular, rotate, scale, sub, unit_or, unrotate

__all__ = ["point_sphere", "point_capsule", "point_cylinder", "point_box", "sphere_distance", "point_distance"]


@helper
def point_sphere(c, S):
    """(sd, q, m) of the point c and the sphere S."""
    m = unit_or(sub(c, S.p), (0.0, 0.0, 1.0))
    return norm(sub(c, S.p)) - S.a, axpy(S.p, S.a, m), m


@helper
def point_capsule(c, S):
    """(sd, q, m) of the point c and the capsule S: the sphere about the nearest point of
    its segment."""
    axis = column(S.R, 2)
    h = 0.5 * S.b
    t = min(max(axis[0] * (c[0] - S.p[0]) + axis[1] * (c[1] - S.p[1]) + axis[2] * (c[2] - S.p[2]), -h), h)
    core = axpy(S.p, t, axis)
    m = unit_or(sub(c, core), perpendicular(axis))
    return norm(sub(c, core)) - S.a, axpy(core, S.a, m), m


@helper
def point_cylinder(c, S):
    """(sd, q, m) of the point c and the cylinder S: the distance in the half-plane of
    radius ρ and height z from the rectangle [0, r] × [−h, h] it revolves."""
    w = unrotate(S.R, sub(c, S.p))
    r, h = S.a, 0.5 * S.b
    rho = math.sqrt(w[0] * w[0] + w[1] * w[1])
    if rho > 0.0:
        e = (w[0] / rho, w[1] / rho, 0.0)
    else:
        e = (1.0, 0.0, 0.0)
    if rho <= r and abs(w[2]) <= h:  # inside or on the surface: the nearer of side and cap
        side, cap = r - rho, h - abs(w[2])
        if side < cap:
            q = (r * e[0], r * e[1], w[2])
            m = e
            sd = -side
        else:
            z = h if w[2] >= 0.0 else -h
            q = (w[0], w[1], z)
            m = (0.0, 0.0, 1.0 if w[2] >= 0.0 else -1.0)
            sd = -cap
    else:
        qr = min(rho, r)
        qz = min(max(w[2], -h), h)
        q = (qr * e[0], qr * e[1], qz)
        dr, dz = rho - qr, w[2] - qz
        sd = math.sqrt(dr * dr + dz * dz)
        m = ((dr * e[0]) / sd, (dr * e[1]) / sd, dz / sd)
    return sd, add(S.p, rotate(S.R, q)), rotate(S.R, m)


@helper
def point_box(c, S):
    """(sd, q, m) of the point c and the box S: outside, the clamped point; inside or on
    the surface, the nearest face."""
    w = unrotate(S.R, sub(c, S.p))
    half = (0.5 * S.a, 0.5 * S.b, 0.5 * S.c)
    q0 = min(max(w[0], -half[0]), half[0])
    q1 = min(max(w[1], -half[1]), half[1])
    q2 = min(max(w[2], -half[2]), half[2])
    gap = (w[0] - q0, w[1] - q1, w[2] - q2)
    sd = norm(gap)
    if sd > 0.0:
        m = scale(gap, 1.0 / sd)
        return sd, add(S.p, rotate(S.R, (q0, q1, q2))), rotate(S.R, m)
    # inside or on the surface: the face of least depth
    best, axis = math.inf, 0
    for k in range(3):
        depth = half[k] - abs(w[k])
        if depth < best:
            best, axis = depth, k
    sign = 1.0 if w[axis] >= 0.0 else -1.0
    q = (sign * half[0] if axis == 0 else w[0], sign * half[1] if axis == 1 else w[1],
         sign * half[2] if axis == 2 else w[2])
    m = (sign if axis == 0 else 0.0, sign if axis == 1 else 0.0, sign if axis == 2 else 0.0)
    return -best, add(S.p, rotate(S.R, q)), rotate(S.R, m)


@helper
def point_distance(c, S):
    """(sd, q, m) of the point c and S (a sphere, capsule, cylinder or box)."""
    if S.kind == SPHERE:
        return point_sphere(c, S)
    if S.kind == CAPSULE:
        return point_capsule(c, S)
    if S.kind == CYLINDER:
        return point_cylinder(c, S)
    return point_box(c, S)


@helper
def sphere_distance(A, B):
    """(d, x, y, n) of the sphere A and the shape B (a sphere, capsule, cylinder or box):
    the signed distance [m], the witness points on A and B (y − x = d n), the unit normal
    from A into B."""
    sd, q, m = point_distance(A.p, B)
    n = scale(m, -1.0)
    return sd - A.a, axpy(A.p, A.a, n), q, n


# the kinds sphere_distance takes (read by the dispatch of .narrow)
SPHERE_PARTNERS = (SPHERE, CAPSULE, CYLINDER, BOX)
