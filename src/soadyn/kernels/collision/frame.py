"""The contact frame: an orthonormal basis (t1, t2, n) with the contact normal last.

Contact vectors (impulses λ, contact velocities σ, rows of the Delassus operator) are
expressed in this frame, three numbers per contact, normal last as Pinocchio's Coulomb
cones. The tangents are a fixed function of the normal alone, so that the same normal
always gives the same frame (a warm start from the previous step stays meaningful):
t1 is the world axis least aligned with n (the first of them on a tie), made orthogonal
to n and normalized; t2 = n × t1. A normal along +z gives the identity frame.
"""
from __future__ import annotations

import math

from ...core.jit import helper


@helper(forceinline=True)
def contact_frame(n0, n1, n2, R, k):
    """R[k] = [t1 t2 n] (columns) for the unit normal (n0, n1, n2) (module docstring)."""
    a0, a1, a2 = abs(n0), abs(n1), abs(n2)
    if a0 <= a1 and a0 <= a2:  # e = x: t1 ∝ e − (e·n) n
        u0, u1, u2 = 1.0 - n0 * n0, -n0 * n1, -n0 * n2
    elif a1 <= a2:  # e = y
        u0, u1, u2 = -n1 * n0, 1.0 - n1 * n1, -n1 * n2
    else:  # e = z
        u0, u1, u2 = -n2 * n0, -n2 * n1, 1.0 - n2 * n2
    s = 1.0 / math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)  # ≥ sqrt(2/3): e is at most 54.7° from ⊥ n
    u0, u1, u2 = u0 * s, u1 * s, u2 * s
    R[k, 0, 0], R[k, 1, 0], R[k, 2, 0] = u0, u1, u2
    R[k, 0, 1], R[k, 1, 1], R[k, 2, 1] = n1 * u2 - n2 * u1, n2 * u0 - n0 * u2, n0 * u1 - n1 * u0
    R[k, 0, 2], R[k, 1, 2], R[k, 2, 2] = n0, n1, n2
