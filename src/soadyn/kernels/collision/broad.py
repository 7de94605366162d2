"""The broad phase: the allowed pairs whose world bounding boxes overlap.

Each object's axis-aligned box in world coordinates (:func:`world_boxes`, grown by the
margin) is sorted by its lower bound along the sweep axis (heapsort, O(n log n)); a sweep
along that axis then compares each box only with the boxes that start before it ends (sort
and sweep [Cohen95; Ericson05, §7.5]), and a pair whose boxes also overlap along the other
two axes and that the tables allow (``pair_index`` ≥ 0) is a candidate. The sweep axis is
the world axis along which the boxes' centres spread most ([Ericson05, §7.5]: a robot
standing upright is thin along x and y, and a sweep across it would compare nearly every
pair); the candidates do not depend on it. Planes have no bounded box:
each is tested apart against the bounding sphere of every object it may touch.
"""
from __future__ import annotations

import math

from ...core.jit import helper
from ...core.shapes import BOX, CAPSULE, CYLINDER, ELLIPSOID, PLANE, SPHERE

__all__ = ["world_boxes", "candidate_pairs"]


@helper
def world_boxes(t, Rw, pw, margin, box):
    """``box`` (n, 6) ← the world bounds (lower (3), upper (3)) of each object, grown by
    ``margin`` / 2 on each side (so that two boxes meet when the objects are within the
    margin); a plane's is left unset. Tight for the primitives (a box: Σ_j h_j |R_kj|; an
    ellipsoid: the norm of row k of R diag(a, b, c); a capsule or cylinder from its axis);
    a convex mesh's is its hull's box in its own frame, turned (``t.hull_box``)."""
    for i in range(t.n):
        k = t.kind[i]
        a, b, c = t.params[i, 0], t.params[i, 1], t.params[i, 2]
        for e in range(3):
            if k == PLANE:
                continue
            if k == SPHERE:
                h = a
            elif k == CAPSULE:
                h = 0.5 * b * abs(Rw[i, e, 2]) + a
            elif k == CYLINDER:
                z = abs(Rw[i, e, 2])
                h = a * math.sqrt(max(1.0 - z * z, 0.0)) + 0.5 * b * z
            elif k == BOX:
                h = 0.5 * (a * abs(Rw[i, e, 0]) + b * abs(Rw[i, e, 1]) + c * abs(Rw[i, e, 2]))
            elif k == ELLIPSOID:
                h = math.sqrt((a * Rw[i, e, 0]) ** 2 + (b * Rw[i, e, 1]) ** 2 + (c * Rw[i, e, 2]) ** 2)
            else:  # a convex mesh: its hull's box in its frame, turned
                hb = t.hull_box
                h = abs(Rw[i, e, 0]) * hb[i, 3] + abs(Rw[i, e, 1]) * hb[i, 4] + abs(Rw[i, e, 2]) * hb[i, 5]
                centre = pw[i, e] + Rw[i, e, 0] * hb[i, 0] + Rw[i, e, 1] * hb[i, 1] + Rw[i, e, 2] * hb[i, 2]
                h += 0.5 * margin
                box[i, e] = centre - h
                box[i, 3 + e] = centre + h
                continue
            h += 0.5 * margin
            box[i, e] = pw[i, e] - h
            box[i, 3 + e] = pw[i, e] + h


@helper(forceinline=True)
def _sift(order, box, start, end, axis):
    """Heapsort's sift-down of ``order[start]`` in the heap order[0:end], keyed by the
    lower bound along ``axis``."""
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and box[order[child + 1], axis] > box[order[child], axis]:
            child += 1
        if box[order[child], axis] > box[order[root], axis]:
            order[root], order[child] = order[child], order[root]
            root = child
        else:
            return


@helper(forceinline=True)
def _sweep_axis(order, m, box):
    """The world axis (0, 1, 2) of the largest variance of the centres of the boxes
    ``order[:m]`` (the first of equals)."""
    s0 = s1 = s2 = q0 = q1 = q2 = 0.0
    for a in range(m):
        i = order[a]
        c0, c1, c2 = box[i, 0] + box[i, 3], box[i, 1] + box[i, 4], box[i, 2] + box[i, 5]  # 2 × centre
        s0 += c0
        s1 += c1
        s2 += c2
        q0 += c0 * c0
        q1 += c1 * c1
        q2 += c2 * c2
    # m² × 4 × variance per axis: m Σc² − (Σc)²
    v0, v1, v2 = m * q0 - s0 * s0, m * q1 - s1 * s1, m * q2 - s2 * s2
    if v0 >= v1 and v0 >= v2:
        return 0
    return 1 if v1 >= v2 else 2


@helper
def candidate_pairs(t, pw, Rw, box, margin, order, flags):
    """``flags`` (P,) ← 1 for the allowed pairs the broad phase keeps, 0 for the others
    (module docstring); ``order`` (n,): scratch. Returns the number of candidates."""
    for p in range(t.npairs):
        flags[p] = 0
    found = 0
    m = 0
    for i in range(t.n):
        if t.kind[i] != PLANE:
            order[m] = i
            m += 1
    axis = _sweep_axis(order, m, box)
    e1, e2 = (axis + 1) % 3, (axis + 2) % 3
    # heapsort of the bounded objects by their lower bound along the axis
    for start in range(m // 2 - 1, -1, -1):
        _sift(order, box, start, m, axis)
    for end in range(m - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        _sift(order, box, 0, end, axis)
    for a in range(m):
        i = order[a]
        for b in range(a + 1, m):
            j = order[b]
            if box[j, axis] > box[i, 3 + axis]:
                break
            if (box[j, e1] > box[i, 3 + e1] or box[i, e1] > box[j, 3 + e1] or box[j, e2] > box[i, 3 + e2]
                    or box[i, e2] > box[j, 3 + e2]):
                continue
            p = t.pair_index[i, j]
            if p >= 0 and flags[p] == 0:
                flags[p] = 1
                found += 1
    # planes: the bounding sphere of each partner against the half-space
    for i in range(t.n):
        if t.kind[i] != PLANE:
            continue
        n0, n1, n2 = Rw[i, 0, 2], Rw[i, 1, 2], Rw[i, 2, 2]
        for j in range(t.n):
            p = t.pair_index[i, j]
            if p < 0 or flags[p]:
                continue
            if t.kind[j] != PLANE:
                height = n0 * (pw[j, 0] - pw[i, 0]) + n1 * (pw[j, 1] - pw[i, 1]) + n2 * (pw[j, 2] - pw[i, 2])
                if height - t.radius[j] > margin:
                    continue
            flags[p] = 1
            found += 1
    return found
