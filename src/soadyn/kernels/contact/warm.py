"""The warm start of a time step's contact solve from the previous step's contacts.

A step's contacts are detected afresh at each q, and a collision pair's manifold need not
list its points in the same order from one step to the next (a box face on a plane gives
its four corners in the order its clipping meets them, which changes as the box tilts).
Taking the previous impulses by position in the list then hands each point another
corner's impulse: on the 5-box stack such a start took 76 ADMM iterations per step on
average against 1.4 when the order happened to be kept. Each contact here takes the
impulse of the previous step's contact of the same collision pair nearest to it in the
world. The warm start is only a starting point of the solver (its result solves the NCP
to the tolerance from any start), so the matching needs no guarantee beyond being a good
guess: it is greedy, and two points of a pair may take the same previous one. The time
stepper (:func:`~.step.solve_stage`) takes the start only when every contact matched one,
and matches the previous velocities σ (ADMM's dual start) the same way.
"""
from __future__ import annotations

from ...core.jit import helper, kernel

__all__ = ["match_warm_start", "match_warm_start_kernel"]


@helper
def match_warm_start(objects, points, warm_objects, warm_points, warm_lam, lam):
    """lam (3k,) ← for each contact i of ``objects`` (k, 2) (collision-object pairs) at world
    ``points`` (k, 3) [m] the impulse (t1, t2, n) in ``warm_lam`` (3W,) of the contact of
    ``warm_objects`` (W, 2) with the same pair whose ``warm_points`` (W, 3) entry is
    nearest to it; zero when no previous contact has that pair. Hand-given points
    (objects −1) match by position the same way. Returns the number of contacts matched.
    O(k W)."""
    k = objects.shape[0]
    W = warm_objects.shape[0]
    matched = 0
    for i in range(k):
        best = -1
        best_d2 = 0.0
        a, b = objects[i, 0], objects[i, 1]
        for j in range(W):
            if warm_objects[j, 0] != a or warm_objects[j, 1] != b:
                continue
            dx = points[i, 0] - warm_points[j, 0]
            dy = points[i, 1] - warm_points[j, 1]
            dz = points[i, 2] - warm_points[j, 2]
            d2 = dx * dx + dy * dy + dz * dz
            if best < 0 or d2 < best_d2:
                best, best_d2 = j, d2
        for c in range(3):
            lam[3 * i + c] = warm_lam[3 * best + c] if best >= 0 else 0.0
        if best >= 0:
            matched += 1
    return matched


@kernel
def match_warm_start_kernel(objects, points, warm_objects, warm_points, warm_lam, lam):
    """:func:`match_warm_start` from Python (the staged closed-chain step)."""
    return match_warm_start(objects, points, warm_objects, warm_points, warm_lam, lam)
