"""Contact manifolds: at most :data:`MAX_POINTS` points of a pair's contact patch.

A face resting on a face touches along a polygon (a box on a plane: 4 corners; a box on a
box: the clipped face, up to 8 vertices; a convex mesh on a plane: every vertex of its
lowest face). Four of its points keep the support polygon that matters for resting; they
are chosen greedily (the choice of Bullet's and MuJoCo's manifold reductions): the
deepest, the farthest from it, the farthest from their line, and the farthest on the
other side of that line.
"""
from __future__ import annotations

from ...core.jit import helper
from .vector import axpy, dot, norm, scale, sub

__all__ = ["MAX_POINTS", "select4"]

#: the most contact points of one pair (MuJoCo's default for a box on a plane or a box)
MAX_POINTS = 4


@helper(forceinline=True)
def _point(C, i):
    return (C[i, 1], C[i, 2], C[i, 3])


@helper
def select4(C, m):
    """Indices (4; −1 where fewer) of at most 4 of the ``m`` candidate rows of ``C``
    (distance, point (3)): the deepest, the farthest from it, the farthest from their line,
    the farthest on the other side of that line (module docstring)."""
    first = 0
    for i in range(1, m):
        if C[i, 0] < C[first, 0]:
            first = i
    if m <= 1:
        return first, -1, -1, -1
    p1 = _point(C, first)
    best, second = 0.0, -1
    for i in range(m):
        e = norm(sub(_point(C, i), p1))
        if e > best:
            best, second = e, i
    if second < 0:
        return first, -1, -1, -1
    line = sub(_point(C, second), p1)
    line = scale(line, 1.0 / norm(line))
    best, third, off = 1e-12 * norm(sub(_point(C, second), p1)), -1, (0.0, 0.0, 0.0)
    for i in range(m):
        r = sub(_point(C, i), p1)
        r = axpy(r, -dot(r, line), line)
        if norm(r) > best:
            best, third, off = norm(r), i, r
    if third < 0:
        return first, second, -1, -1
    best, fourth = 1e-12 * norm(off), -1
    for i in range(m):
        r = sub(_point(C, i), p1)
        r = axpy(r, -dot(r, line), line)
        if -dot(r, off) / norm(off) > best:
            best, fourth = -dot(r, off) / norm(off), i
    return first, second, third, fourth
