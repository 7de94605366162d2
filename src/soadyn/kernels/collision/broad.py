"""The broad phase: the allowed pairs whose world bounding boxes overlap.

Each object's axis-aligned box in world coordinates (:func:`world_boxes`, grown by the
margin) is sorted by its lower x bound (heapsort, O(n log n)); a sweep along x then
compares each box only with the boxes that start before it ends (sort and sweep
[Cohen95; Ericson05, §7.5]), and a pair whose boxes also overlap in y and z and
that the tables allow (``pair_index`` ≥ 0) is a candidate. Planes have no bounded box:
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
def _sift(order, box, start, end):
    """Heapsort's sift-down of ``order[start]`` in the heap order[0:end], keyed by the
    lower x bound."""
    root = start
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and box[order[child + 1], 0] > box[order[child], 0]:
            child += 1
        if box[order[child], 0] > box[order[root], 0]:
            order[root], order[child] = order[child], order[root]
            root = child
        else:
            return


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
    # heapsort of the bounded objects by their lower x bound
    for start in range(m // 2 - 1, -1, -1):
        _sift(order, box, start, m)
    for end in range(m - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        _sift(order, box, 0, end)
    for a in range(m):
        i = order[a]
        for b in range(a + 1, m):
            j = order[b]
            if box[j, 0] > box[i, 3]:
                break
            if box[j, 1] > box[i, 4] or box[i, 1] > box[j, 4] or box[j, 2] > box[i, 5] or box[i, 2] > box[j, 5]:
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
