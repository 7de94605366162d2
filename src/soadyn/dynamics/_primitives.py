"""Compiled 6D primitives shared by the recursions.

The transform between body ``i`` and its parent is kept as the pose ``(R[i], t[i])``
of body i in the parent frame; the SOA operators are then

* φ*(℘(i), i) (parent motion → child):  ω' = Rᵀω,  v' = Rᵀ(v + ω × t)
* φ(℘(i), i)  (child force → parent):    f' = R f,   n' = R n + t × f'

Helpers take whole arrays and row indices (never slices) and are inlined, so the
recursions stay free of temporary arrays.
"""
from __future__ import annotations

import math

from numba import njit

from ..joints import COMPOSITE, composite_bias


@njit(inline="always", cache=True)
def motion_to_child(R, t, i, src, si, dst, di):
    """dst[di] = φ*(℘(i), i) src[si]."""
    w0, w1, w2 = src[si, 0], src[si, 1], src[si, 2]
    l0 = src[si, 3] + w1 * t[i, 2] - w2 * t[i, 1]
    l1 = src[si, 4] + w2 * t[i, 0] - w0 * t[i, 2]
    l2 = src[si, 5] + w0 * t[i, 1] - w1 * t[i, 0]
    for a in range(3):
        dst[di, a] = R[i, 0, a] * w0 + R[i, 1, a] * w1 + R[i, 2, a] * w2
        dst[di, 3 + a] = R[i, 0, a] * l0 + R[i, 1, a] * l1 + R[i, 2, a] * l2


@njit(inline="always", cache=True)
def gravity_to_child(R, t, i, g, dst, di):
    """dst[di] = φ*(world, i) [0; −g]: the base acceleration that models gravity."""
    for a in range(3):
        dst[di, a] = 0.0
        dst[di, 3 + a] = -(R[i, 0, a] * g[0] + R[i, 1, a] * g[1] + R[i, 2, a] * g[2])


@njit(inline="always", cache=True)
def add_force_to_parent(R, t, i, src, si, dst, di):
    """dst[di] += φ(℘(i), i) src[si]."""
    f0 = R[i, 0, 0] * src[si, 3] + R[i, 0, 1] * src[si, 4] + R[i, 0, 2] * src[si, 5]
    f1 = R[i, 1, 0] * src[si, 3] + R[i, 1, 1] * src[si, 4] + R[i, 1, 2] * src[si, 5]
    f2 = R[i, 2, 0] * src[si, 3] + R[i, 2, 1] * src[si, 4] + R[i, 2, 2] * src[si, 5]
    n0 = R[i, 0, 0] * src[si, 0] + R[i, 0, 1] * src[si, 1] + R[i, 0, 2] * src[si, 2]
    n1 = R[i, 1, 0] * src[si, 0] + R[i, 1, 1] * src[si, 1] + R[i, 1, 2] * src[si, 2]
    n2 = R[i, 2, 0] * src[si, 0] + R[i, 2, 1] * src[si, 1] + R[i, 2, 2] * src[si, 2]
    dst[di, 0] += n0 + t[i, 1] * f2 - t[i, 2] * f1
    dst[di, 1] += n1 + t[i, 2] * f0 - t[i, 0] * f2
    dst[di, 2] += n2 + t[i, 0] * f1 - t[i, 1] * f0
    dst[di, 3] += f0
    dst[di, 4] += f1
    dst[di, 5] += f2


@njit(inline="always", cache=True)
def add_inertia_to_parent(R, t, i, src, dst, di, tmp):
    """dst[di] += φ(℘(i), i) src φ*(℘(i), i) for a symmetric 6×6 ``src``.

    With src = [[A, B], [Bᵀ, C]] rotated to the parent axes (A' = R A Rᵀ, ...) and
    T = [t]×, the shifted blocks are A' + T B'ᵀ − B' T − T C' T, B' + T C', C'.
    ``tmp`` is a (≥3, 6, 6) scratch array.
    """
    # tmp[0] = blkdiag(R) src blkdiag(Rᵀ), in two steps through tmp[1]
    for a in range(6):
        for b in range(6):
            ra = (a // 3) * 3
            acc = 0.0
            for k in range(3):
                acc += R[i, a % 3, k] * src[ra + k, b]
            tmp[1, a, b] = acc
    for a in range(6):
        for b in range(6):
            rb = (b // 3) * 3
            acc = 0.0
            for k in range(3):
                acc += tmp[1, a, rb + k] * R[i, b % 3, k]
            tmp[0, a, b] = acc
    t0, t1, t2 = t[i, 0], t[i, 1], t[i, 2]
    # tmp[2][:3,:3] = T C', tmp[2][:3,3:] = T B'ᵀ  (rows of T applied to C' and B'ᵀ)
    for b in range(3):
        c0, c1, c2 = tmp[0, 3, 3 + b], tmp[0, 4, 3 + b], tmp[0, 5, 3 + b]
        tmp[2, 0, b] = t1 * c2 - t2 * c1
        tmp[2, 1, b] = t2 * c0 - t0 * c2
        tmp[2, 2, b] = t0 * c1 - t1 * c0
        e0, e1, e2 = tmp[0, 3, b], tmp[0, 4, b], tmp[0, 5, b]
        tmp[2, 0, 3 + b] = t1 * e2 - t2 * e1
        tmp[2, 1, 3 + b] = t2 * e0 - t0 * e2
        tmp[2, 2, 3 + b] = t0 * e1 - t1 * e0
    for a in range(3):
        # (B' + T C') row a
        for b in range(3):
            val = tmp[0, a, 3 + b] + tmp[2, a, b]
            dst[di, a, 3 + b] += val
            dst[di, 3 + b, a] += val
            dst[di, 3 + a, 3 + b] += tmp[0, 3 + a, 3 + b]
        # A'' = A' + T B'ᵀ − (B' + T C') T: (X T)[a, b] = −(X row a) × ... computed as
        # (X T)[a, b] = Σ_k X[a, k] T[k, b], with T[k, b] = −ε_kbm t_m.
        x0 = tmp[0, a, 3] + tmp[2, a, 0]
        x1 = tmp[0, a, 4] + tmp[2, a, 1]
        x2 = tmp[0, a, 5] + tmp[2, a, 2]
        xt0 = x1 * t2 - x2 * t1
        xt1 = x2 * t0 - x0 * t2
        xt2 = x0 * t1 - x1 * t0
        dst[di, a, 0] += tmp[0, a, 0] + tmp[2, a, 3] - xt0
        dst[di, a, 1] += tmp[0, a, 1] + tmp[2, a, 4] - xt1
        dst[di, a, 2] += tmp[0, a, 2] + tmp[2, a, 5] - xt2


@njit(inline="always", cache=True)
def inertia_times_motion(I, i, src, si, dst, di):
    """dst[di] = I[i] src[si] (6×6 times 6)."""
    for a in range(6):
        acc = 0.0
        for b in range(6):
            acc += I[i, a, b] * src[si, b]
        dst[di, a] = acc


@njit(inline="always", cache=True)
def add_cross_force(V, vi, h, hi, dst, di):
    """dst[di] += V[vi] ×* h[hi] (force cross product)."""
    w0, w1, w2, v0, v1, v2 = V[vi, 0], V[vi, 1], V[vi, 2], V[vi, 3], V[vi, 4], V[vi, 5]
    n0, n1, n2, f0, f1, f2 = h[hi, 0], h[hi, 1], h[hi, 2], h[hi, 3], h[hi, 4], h[hi, 5]
    dst[di, 0] += w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    dst[di, 1] += w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    dst[di, 2] += w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    dst[di, 3] += w1 * f2 - w2 * f1
    dst[di, 4] += w2 * f0 - w0 * f2
    dst[di, 5] += w0 * f1 - w1 * f0


@njit(inline="always", cache=True)
def coriolis_term(mi_row, i, S, vi, nv, v, V, C):
    """C[i] = a(k) = V(k) × (H* θ̇)(k) + Ḣ*θ̇ (Coriolis acceleration, seed 002 eq. 11).

    ``V[i]`` must already hold the body velocity.
    """
    j0 = j1 = j2 = j3 = j4 = j5 = 0.0
    for c in range(nv):
        x = v[vi + c]
        j0 += S[vi + c, 0] * x
        j1 += S[vi + c, 1] * x
        j2 += S[vi + c, 2] * x
        j3 += S[vi + c, 3] * x
        j4 += S[vi + c, 4] * x
        j5 += S[vi + c, 5] * x
    w0, w1, w2, l0, l1, l2 = V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5]
    C[i, 0] = w1 * j2 - w2 * j1
    C[i, 1] = w2 * j0 - w0 * j2
    C[i, 2] = w0 * j1 - w1 * j0
    C[i, 3] = w1 * j5 - w2 * j4 + l1 * j2 - l2 * j1
    C[i, 4] = w2 * j3 - w0 * j5 + l2 * j0 - l0 * j2
    C[i, 5] = w0 * j4 - w1 * j3 + l0 * j1 - l1 * j0
    if mi_row == COMPOSITE:
        for a in range(6):
            C[i, a] += composite_bias(S, vi, nv, v, a)


@njit(inline="always", cache=True)
def spd_inverse(D, Dinv, i, n, tmp):
    """Dinv[i][:n,:n] = D⁻¹ for a symmetric positive-definite n×n ``D`` (n ≤ 6).

    Cholesky factorisation in ``tmp[3]``; returns False when D is not positive definite
    (a singular articulated inertia: the mass matrix is not positive definite).
    """
    if n == 1:
        d = D[0, 0]
        if not d > 0.0:
            return False
        Dinv[i, 0, 0] = 1.0 / d
        return True
    L = tmp[3]
    for a in range(n):
        for b in range(a + 1):
            s = D[a, b]
            for k in range(b):
                s -= L[a, k] * L[b, k]
            if a == b:
                if not s > 0.0:
                    return False
                L[a, a] = math.sqrt(s)
            else:
                L[a, b] = s / L[b, b]
    # invert L in place (lower triangular), then D⁻¹ = L⁻ᵀ L⁻¹
    for a in range(n):
        L[a, a] = 1.0 / L[a, a]
        for b in range(a):
            s = 0.0
            for k in range(b, a):
                s -= L[a, k] * L[k, b]
            L[a, b] = s * L[a, a]
        for b in range(a + 1, n):
            L[a, b] = 0.0
    for a in range(n):
        for b in range(a + 1):
            s = 0.0
            for k in range(a, n):
                s += L[k, a] * L[k, b]
            Dinv[i, a, b] = s
            Dinv[i, b, a] = s
    return True
