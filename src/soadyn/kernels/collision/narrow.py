"""The narrow phase's pair table: which function handles which pair of kinds.

The two objects of a pair are ordered by kind code (plane 0, sphere 1, capsule 2,
cylinder 3, box 4, ellipsoid 5, convex 6; the smaller first), so each family function
sees its own kind first (the driver, :mod:`.detect`, swaps them back and flips the normal):

============  =======================================================  ==============
first         second                                                   function
============  =======================================================  ==============
plane         every kind                                               :mod:`.plane`
sphere        sphere, capsule, cylinder, box                           :mod:`.sphere`
capsule       capsule, box                                             :mod:`.capsule`
box           box                                                      :mod:`.box`
any           the rest (ellipsoid, convex mesh, cylinder but against   :mod:`.convex`
              a sphere, capsule–cylinder, …)
============  =======================================================  ==============

Each pair gives its signed distance with witness points and normal
(:func:`pair_distance`) and its contact points within a margin (:func:`pair_contacts`):
several for the pairs that rest on more than one point (plane against capsule, cylinder,
box and convex mesh; box–box; capsule–capsule when parallel; capsule on a box face), the
witness points' midpoint otherwise.
"""
from __future__ import annotations

import math

from ...core.jit import helper
from ...core.shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from .box import box_contacts, box_distance
from .capsule import capsule_box_contacts, capsule_box_distance, capsule_capsule_contacts, capsule_capsule_distance
from .convex import convex_distance
from .plane import plane_contacts, plane_distance
from .sphere import sphere_distance

__all__ = ["pair_distance", "pair_contacts"]


@helper
def pair_distance(A, B, hulls, fs, js, P):
    """(d, x, y, n) of the ordered pair A, B (A.kind ≤ B.kind): the signed distance [m]
    (< 0: penetration), the witness points on A and B (world, y − x = d n) and the unit
    normal from A into B. ``fs``, ``js``: the scratch of :func:`~.convex.convex_distance`;
    ``P``: the box clipping buffer (2, 16, 4)."""
    ka, kb = A.kind, B.kind
    if ka == PLANE:
        return plane_distance(A, B, hulls)
    if ka == SPHERE and (kb == SPHERE or kb == CAPSULE or kb == CYLINDER or kb == BOX):
        return sphere_distance(A, B)
    if ka == CAPSULE and kb == CAPSULE:
        return capsule_capsule_distance(A, B)
    if ka == CAPSULE and kb == BOX:
        return capsule_box_distance(A, B)
    if ka == BOX and kb == BOX:
        return box_distance(A, B, hulls, fs, js, P)
    return convex_distance(A, B, hulls, fs, js, math.inf)


@helper
def pair_contacts(A, B, hulls, margin, fs, js, P, C, Q, M):
    """The contact points of the ordered pair A, B within ``margin`` [m] into rows of ``M``
    (4, 7): (signed distance, point midway between the surfaces (3), unit normal from A into
    B (3)); returns their count (0–4). ``C``, ``Q``: scratch for a convex mesh on a plane
    (:func:`~.plane.plane_contacts`)."""
    ka, kb = A.kind, B.kind
    if ka == PLANE:
        count, n = plane_contacts(A, B, hulls, margin, M, C, Q)
        for k in range(count):
            M[k, 4], M[k, 5], M[k, 6] = n[0], n[1], n[2]
        return count
    if ka == CAPSULE and kb == CAPSULE:
        return capsule_capsule_contacts(A, B, margin, M)
    if ka == CAPSULE and kb == BOX:
        return capsule_box_contacts(A, B, margin, M)
    if ka == BOX and kb == BOX:
        return box_contacts(A, B, margin, M, P)
    if ka != SPHERE or not (kb == SPHERE or kb == CAPSULE or kb == CYLINDER or kb == BOX):
        # GJK and EPA: GJK stops as soon as the shapes are farther apart than the margin
        d, x, y, n = convex_distance(A, B, hulls, fs, js, margin)
    else:
        d, x, y, n = sphere_distance(A, B)
    if d > margin:
        return 0
    M[0, 0] = d
    M[0, 1], M[0, 2], M[0, 3] = 0.5 * (x[0] + y[0]), 0.5 * (x[1] + y[1]), 0.5 * (x[2] + y[2])
    M[0, 4], M[0, 5], M[0, 6] = n[0], n[1], n[2]
    return 1
