"""3-vectors and rotations as tuples of floats, for the narrow phase.

The pair functions hold points, directions and poses in registers: a vector is a
3-tuple, a rotation a row-major 9-tuple (``R[3 a + b]`` = R_ab, columns the shape's axes
in world coordinates). Every helper is inlined into its caller.
"""
from __future__ import annotations

import math

from ...core.jit import helper

#: a length below which a direction is taken as undefined (the degenerate poses: coincident
#: centres, a point on a segment's axis); lengths in the narrow phase are in metres
TINY = 1e-300


@helper(forceinline=True)
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@helper(forceinline=True)
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@helper(forceinline=True)
def scale(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


@helper(forceinline=True)
def axpy(a, s, b):
    """a + s b."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@helper(forceinline=True)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@helper(forceinline=True)
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@helper(forceinline=True)
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@helper(forceinline=True)
def midpoint(a, b):
    return (0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2]))


@helper(forceinline=True)
def rotate(R, v):
    """R v."""
    return (R[0] * v[0] + R[1] * v[1] + R[2] * v[2], R[3] * v[0] + R[4] * v[1] + R[5] * v[2],
            R[6] * v[0] + R[7] * v[1] + R[8] * v[2])


@helper(forceinline=True)
def unrotate(R, v):
    """Rᵀ v: a world vector in the shape's axes."""
    return (R[0] * v[0] + R[3] * v[1] + R[6] * v[2], R[1] * v[0] + R[4] * v[1] + R[7] * v[2],
            R[2] * v[0] + R[5] * v[1] + R[8] * v[2])


@helper(forceinline=True)
def column(R, k):
    """The shape's axis k in world coordinates."""
    return (R[k], R[3 + k], R[6 + k])


@helper(forceinline=True)
def perpendicular(n):
    """A unit vector orthogonal to the unit ``n``: the tangent t1 of the contact frame
    (:mod:`.frame`: the world axis least aligned with n, made orthogonal to it), the
    fixed choice where a pose leaves a normal undefined."""
    a0, a1, a2 = abs(n[0]), abs(n[1]), abs(n[2])
    if a0 <= a1 and a0 <= a2:
        u = (1.0 - n[0] * n[0], -n[0] * n[1], -n[0] * n[2])
    elif a1 <= a2:
        u = (-n[1] * n[0], 1.0 - n[1] * n[1], -n[1] * n[2])
    else:
        u = (-n[2] * n[0], -n[2] * n[1], 1.0 - n[2] * n[2])
    return scale(u, 1.0 / norm(u))


@helper(forceinline=True)
def unit_or(a, fallback):
    """a / |a|, or the unit ``fallback`` when a vanishes."""
    length = norm(a)
    if length > TINY:
        return scale(a, 1.0 / length)
    return fallback
