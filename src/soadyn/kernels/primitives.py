"""Compiled 6D primitives shared by the recursions.

The transform between body ``i`` and its parent is kept as the pose ``(R[i], t[i])``
of body i in the parent frame; the SOA operators are then

* φ*(℘(i), i) (parent motion → child):  ω' = Rᵀω,  v' = Rᵀ(v + ω × t)
* φ(℘(i), i)  (child force → parent):    f' = R f,   n' = R n + t × f'

Helpers take whole arrays and row indices (never slices) and are inlined, so the
recursions stay free of temporary arrays. Kernels copy arrays element by element
(:func:`copy_matrix6`), never by slice assignment (``a[i] = b[j]``): that compiles Numba's
shape-mismatch message, string formatting included (~5 s of cold compilation).
"""
from __future__ import annotations

import math


from ..core.jit import helper
from ..core.joints import COMPOSITE, composite_bias


@helper(forceinline=True)
def motion_to_child(R, t, i, src, si, dst, di):
    """dst[di] = φ*(℘(i), i) src[si]."""
    w0, w1, w2 = src[si, 0], src[si, 1], src[si, 2]
    l0 = src[si, 3] + w1 * t[i, 2] - w2 * t[i, 1]
    l1 = src[si, 4] + w2 * t[i, 0] - w0 * t[i, 2]
    l2 = src[si, 5] + w0 * t[i, 1] - w1 * t[i, 0]
    for a in range(3):
        dst[di, a] = R[i, 0, a] * w0 + R[i, 1, a] * w1 + R[i, 2, a] * w2
        dst[di, 3 + a] = R[i, 0, a] * l0 + R[i, 1, a] * l1 + R[i, 2, a] * l2


@helper(forceinline=True)
def parent_acceleration(R, t, i, p, g, gravity, A):
    """A[i] = α⁺(i) = φ*(℘(i), i) α(℘(i)); for a root (p < 0) α(world) = −g when
    ``gravity`` (the fictitious base acceleration that models gravity), else 0."""
    if p >= 0:
        motion_to_child(R, t, i, A, p, A, i)
    elif gravity:
        gravity_to_child(R, t, i, g, A, i)
    else:
        for k in range(6):
            A[i, k] = 0.0


@helper(forceinline=True)
def acceleration_entry(A, p, e, g, gravity):
    """Entry e of α(p): ``A[p, e]`` for a body, and for the world (p < 0) the fictitious
    base acceleration −g when ``gravity`` (as in :func:`parent_acceleration`), else 0."""
    if p >= 0:
        return A[p, e]
    return -g[e - 3] if gravity and e >= 3 else 0.0


@helper(forceinline=True)
def compose_pose(Ra, pa, ia, Rb, pb, ib, Rout, pout, io):
    """(Rout, pout)[io] = (Ra, pa)[ia] ∘ (Rb, pb)[ib] = (Ra Rb, pa + Ra pb).

    Everything is read into scalars before the first store: the output may live in
    the same array as an input, and the compiler would otherwise reload after each
    store."""
    a00, a01, a02 = Ra[ia, 0, 0], Ra[ia, 0, 1], Ra[ia, 0, 2]
    a10, a11, a12 = Ra[ia, 1, 0], Ra[ia, 1, 1], Ra[ia, 1, 2]
    a20, a21, a22 = Ra[ia, 2, 0], Ra[ia, 2, 1], Ra[ia, 2, 2]
    b00, b01, b02 = Rb[ib, 0, 0], Rb[ib, 0, 1], Rb[ib, 0, 2]
    b10, b11, b12 = Rb[ib, 1, 0], Rb[ib, 1, 1], Rb[ib, 1, 2]
    b20, b21, b22 = Rb[ib, 2, 0], Rb[ib, 2, 1], Rb[ib, 2, 2]
    x0, x1, x2 = pb[ib, 0], pb[ib, 1], pb[ib, 2]
    y0, y1, y2 = pa[ia, 0], pa[ia, 1], pa[ia, 2]
    pout[io, 0] = y0 + a00 * x0 + a01 * x1 + a02 * x2
    pout[io, 1] = y1 + a10 * x0 + a11 * x1 + a12 * x2
    pout[io, 2] = y2 + a20 * x0 + a21 * x1 + a22 * x2
    Rout[io, 0, 0] = a00 * b00 + a01 * b10 + a02 * b20
    Rout[io, 0, 1] = a00 * b01 + a01 * b11 + a02 * b21
    Rout[io, 0, 2] = a00 * b02 + a01 * b12 + a02 * b22
    Rout[io, 1, 0] = a10 * b00 + a11 * b10 + a12 * b20
    Rout[io, 1, 1] = a10 * b01 + a11 * b11 + a12 * b21
    Rout[io, 1, 2] = a10 * b02 + a11 * b12 + a12 * b22
    Rout[io, 2, 0] = a20 * b00 + a21 * b10 + a22 * b20
    Rout[io, 2, 1] = a20 * b01 + a21 * b11 + a22 * b21
    Rout[io, 2, 2] = a20 * b02 + a21 * b12 + a22 * b22


@helper(forceinline=True)
def gravity_to_child(R, t, i, g, dst, di):
    """dst[di] = φ*(world, i) [0; −g]: the base acceleration that models gravity."""
    for a in range(3):
        dst[di, a] = 0.0
        dst[di, 3 + a] = -(R[i, 0, a] * g[0] + R[i, 1, a] * g[1] + R[i, 2, a] * g[2])


@helper(forceinline=True)
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


@helper(forceinline=True)
def rotate_symmetric(r00, r01, r02, r10, r11, r12, r20, r21, r22, a00, a01, a02, a11, a12, a22):
    """Upper triangle of R A Rᵀ for a symmetric 3×3 A (given by its upper triangle):
    W = A Rᵀ, then R W (45 multiplications)."""
    w00 = a00 * r00 + a01 * r01 + a02 * r02
    w01 = a00 * r10 + a01 * r11 + a02 * r12
    w02 = a00 * r20 + a01 * r21 + a02 * r22
    w10 = a01 * r00 + a11 * r01 + a12 * r02
    w11 = a01 * r10 + a11 * r11 + a12 * r12
    w12 = a01 * r20 + a11 * r21 + a12 * r22
    w20 = a02 * r00 + a12 * r01 + a22 * r02
    w21 = a02 * r10 + a12 * r11 + a22 * r12
    w22 = a02 * r20 + a12 * r21 + a22 * r22
    return (r00 * w00 + r01 * w10 + r02 * w20, r00 * w01 + r01 * w11 + r02 * w21,
            r00 * w02 + r01 * w12 + r02 * w22, r10 * w01 + r11 * w11 + r12 * w21,
            r10 * w02 + r11 * w12 + r12 * w22, r20 * w02 + r21 * w12 + r22 * w22)


@helper(forceinline=True)
def add_inertia_to_parent(R, t, i, src, dst, di, tmp):
    """dst[di] += φ(℘(i), i) src φ*(℘(i), i) for a symmetric 6×6 ``src``.

    src = [[A, B], [Bᵀ, C]] is first rotated to the parent axes (A' = R A Rᵀ, ...),
    then shifted by t (see :func:`_add_shifted_inertia`). Only the upper triangles of
    the symmetric blocks are read (src must be symmetric); everything stays in
    scalars (~190 multiplications, no temporaries). ``tmp`` is unused and kept for the
    signature.
    """
    r00, r01, r02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
    r10, r11, r12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
    r20, r21, r22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
    c00, c01, c02, c11, c12, c22 = rotate_symmetric(
        r00, r01, r02, r10, r11, r12, r20, r21, r22,
        src[3, 3], src[3, 4], src[3, 5], src[4, 4], src[4, 5], src[5, 5])
    # B' = R B Rᵀ: X = B Rᵀ, then R X
    x00 = src[0, 3] * r00 + src[0, 4] * r01 + src[0, 5] * r02
    x01 = src[0, 3] * r10 + src[0, 4] * r11 + src[0, 5] * r12
    x02 = src[0, 3] * r20 + src[0, 4] * r21 + src[0, 5] * r22
    x10 = src[1, 3] * r00 + src[1, 4] * r01 + src[1, 5] * r02
    x11 = src[1, 3] * r10 + src[1, 4] * r11 + src[1, 5] * r12
    x12 = src[1, 3] * r20 + src[1, 4] * r21 + src[1, 5] * r22
    x20 = src[2, 3] * r00 + src[2, 4] * r01 + src[2, 5] * r02
    x21 = src[2, 3] * r10 + src[2, 4] * r11 + src[2, 5] * r12
    x22 = src[2, 3] * r20 + src[2, 4] * r21 + src[2, 5] * r22
    b00 = r00 * x00 + r01 * x10 + r02 * x20
    b01 = r00 * x01 + r01 * x11 + r02 * x21
    b02 = r00 * x02 + r01 * x12 + r02 * x22
    b10 = r10 * x00 + r11 * x10 + r12 * x20
    b11 = r10 * x01 + r11 * x11 + r12 * x21
    b12 = r10 * x02 + r11 * x12 + r12 * x22
    b20 = r20 * x00 + r21 * x10 + r22 * x20
    b21 = r20 * x01 + r21 * x11 + r22 * x21
    b22 = r20 * x02 + r21 * x12 + r22 * x22
    e00, e01, e02, e11, e12, e22 = rotate_symmetric(
        r00, r01, r02, r10, r11, r12, r20, r21, r22,
        src[0, 0], src[0, 1], src[0, 2], src[1, 1], src[1, 2], src[2, 2])
    _add_shifted_inertia(dst, di, 0, 1, 2, t[i, 0], t[i, 1], t[i, 2],
                         e00, e01, e02, e11, e12, e22, b00, b01, b02, b10, b11, b12, b20, b21, b22,
                         c00, c01, c02, c11, c12, c22)


@helper(forceinline=True)
def add_inertia_to_parent_about_axis(R, t, i, k, src, dst, di):
    """:func:`add_inertia_to_parent` when R is a rotation about the coordinate axis e_k
    (a revolute joint about e_k with an unrotated placement: R = R_J).

    The work is done in the cyclically permuted coordinates (k, k + 1, k + 2), where R
    turns only the last two: ~50 multiplications for the rotation instead of ~140.
    """
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    c = R[i, k1, k1]
    s = R[i, k2, k1]
    cc, ss, cs = c * c, s * s, c * s
    # rotated blocks in local coordinates (0 = e_k): A' and C' symmetric, B' general
    e00 = src[k, k]
    e01 = c * src[k, k1] - s * src[k, k2]
    e02 = s * src[k, k1] + c * src[k, k2]
    p11, p12, p22 = src[k1, k1], src[k1, k2], src[k2, k2]
    e11 = cc * p11 - 2.0 * cs * p12 + ss * p22
    e22 = ss * p11 + 2.0 * cs * p12 + cc * p22
    e12 = cs * (p11 - p22) + (cc - ss) * p12
    c00 = src[3 + k, 3 + k]
    c01 = c * src[3 + k, 3 + k1] - s * src[3 + k, 3 + k2]
    c02 = s * src[3 + k, 3 + k1] + c * src[3 + k, 3 + k2]
    p11, p12, p22 = src[3 + k1, 3 + k1], src[3 + k1, 3 + k2], src[3 + k2, 3 + k2]
    c11 = cc * p11 - 2.0 * cs * p12 + ss * p22
    c22 = ss * p11 + 2.0 * cs * p12 + cc * p22
    c12 = cs * (p11 - p22) + (cc - ss) * p12
    # B' = R B Rᵀ: rows (k1, k2) turn, then columns (k1, k2)
    y00, y01, y02 = src[k, 3 + k], src[k, 3 + k1], src[k, 3 + k2]
    y10 = c * src[k1, 3 + k] - s * src[k2, 3 + k]
    y11 = c * src[k1, 3 + k1] - s * src[k2, 3 + k1]
    y12 = c * src[k1, 3 + k2] - s * src[k2, 3 + k2]
    y20 = s * src[k1, 3 + k] + c * src[k2, 3 + k]
    y21 = s * src[k1, 3 + k1] + c * src[k2, 3 + k1]
    y22 = s * src[k1, 3 + k2] + c * src[k2, 3 + k2]
    _add_shifted_inertia(dst, di, k, k1, k2, t[i, k], t[i, k1], t[i, k2],
                         e00, e01, e02, e11, e12, e22,
                         y00, c * y01 - s * y02, s * y01 + c * y02,
                         y10, c * y11 - s * y12, s * y11 + c * y12,
                         y20, c * y21 - s * y22, s * y21 + c * y22,
                         c00, c01, c02, c11, c12, c22)


@helper(forceinline=True)
def _add_shifted_inertia(dst, di, l0, l1, l2, t0, t1, t2, e00, e01, e02, e11, e12, e22,
                         b00, b01, b02, b10, b11, b12, b20, b21, b22, c00, c01, c02, c11, c12, c22):
    """dst[di] += [[A'', B''], [B''ᵀ, C']] for blocks A', B', C' already in the parent's
    axes (A', C' by their upper triangles) and the offset t:

        B'' = B' + T C',   A'' = A' + T B'ᵀ − B'' T,   T = [t]×.

    Values are in the coordinates (l0, l1, l2), a cyclic relabelling of (0, 1, 2) (a
    rotation, under which the cross products keep their form); dst is symmetric and
    its entries are addressed through the labels.
    """
    # A'' = A' + K − B'' T with K = T B'ᵀ (K[a, b] = (t × B'[b, :])[a]) and B'' = B' + T C'
    # ((B'' T)[a, b] = (B''[a, :] × t)[b]); A'' is symmetric, so only its upper triangle
    k00 = t1 * b02 - t2 * b01
    k01 = t1 * b12 - t2 * b11
    k02 = t1 * b22 - t2 * b21
    k11 = t2 * b10 - t0 * b12
    k12 = t2 * b20 - t0 * b22
    k22 = t0 * b21 - t1 * b20
    # T C' columns: (T C')[:, b] = t × C'[:, b]
    b00 += t1 * c02 - t2 * c01
    b10 += t2 * c00 - t0 * c02
    b20 += t0 * c01 - t1 * c00
    b01 += t1 * c12 - t2 * c11
    b11 += t2 * c01 - t0 * c12
    b21 += t0 * c11 - t1 * c01
    b02 += t1 * c22 - t2 * c12
    b12 += t2 * c02 - t0 * c22
    b22 += t0 * c12 - t1 * c02
    e00 += k00 - (b01 * t2 - b02 * t1)
    e01 += k01 - (b02 * t0 - b00 * t2)
    e02 += k02 - (b00 * t1 - b01 * t0)
    e11 += k11 - (b12 * t0 - b10 * t2)
    e12 += k12 - (b10 * t1 - b11 * t0)
    e22 += k22 - (b20 * t1 - b21 * t0)
    d = dst[di]
    m0, m1, m2 = 3 + l0, 3 + l1, 3 + l2
    _add_symmetric_block(d, l0, l1, l2, l0, l1, l2, e00, e01, e02, e11, e12, e22)
    _add_symmetric_block(d, m0, m1, m2, m0, m1, m2, c00, c01, c02, c11, c12, c22)
    _add_symmetric_block(d, l0, l1, l2, m0, m1, m2, b00, b01, b02, b11, b12, b22)
    # the rest of B'' (its lower triangle) and the mirror images
    d[l1, m0] += b10
    d[l2, m0] += b20
    d[l2, m1] += b21
    for r in (l0, l1, l2):
        for c in (m0, m1, m2):
            d[c, r] = d[r, c]


@helper(forceinline=True)
def _add_symmetric_block(d, r0, r1, r2, c0, c1, c2, x00, x01, x02, x11, x12, x22):
    """d[(r_a, c_b)] += x_ab for a ≤ b (the upper triangle of a 3×3 block); for a
    diagonal block (r = c) also mirror it."""
    d[r0, c0] += x00
    d[r0, c1] += x01
    d[r0, c2] += x02
    d[r1, c1] += x11
    d[r1, c2] += x12
    d[r2, c2] += x22
    if r0 == c0:
        d[r1, c0] = d[r0, c1]
        d[r2, c0] = d[r0, c2]
        d[r2, c1] = d[r1, c2]


@helper(forceinline=True)
def inertia_times_motion(I, i, src, si, dst, di):
    """dst[di] = I[i] src[si] (6×6 times 6)."""
    for a in range(6):
        acc = 0.0
        for b in range(6):
            acc += I[i, a, b] * src[si, b]
        dst[di, a] = acc


@helper(forceinline=True)
def cross_motion6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """[a_ω; a_v] × [b_ω; b_v] = [a_ω × b_ω; a_ω × b_v + a_v × b_ω] (6 scalars)."""
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0,
            a1 * b5 - a2 * b4 + a4 * b2 - a5 * b1,
            a2 * b3 - a0 * b5 + a5 * b0 - a3 * b2,
            a0 * b4 - a1 * b3 + a3 * b1 - a4 * b0)


@helper(forceinline=True)
def cross_force6(a0, a1, a2, a3, a4, a5, n0, n1, n2, f0, f1, f2):
    """[a_ω; a_v] ×* [n; f] = [a_ω × n + a_v × f; a_ω × f] (6 scalars)."""
    return (a1 * n2 - a2 * n1 + a4 * f2 - a5 * f1,
            a2 * n0 - a0 * n2 + a5 * f0 - a3 * f2,
            a0 * n1 - a1 * n0 + a3 * f1 - a4 * f0,
            a1 * f2 - a2 * f1, a2 * f0 - a0 * f2, a0 * f1 - a1 * f0)


@helper(forceinline=True)
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


@helper(forceinline=True)
def coriolis_term(joint_type, i, S, vi, nv, v, V, C):
    """C[i] = a(k) = V(k) × (H* θ̇)(k) + Ḣ*θ̇ (Coriolis acceleration, [Jain12, eq. 11]).

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
    if joint_type == COMPOSITE:
        for a in range(6):
            C[i, a] += composite_bias(S, vi, nv, v, a)


@helper(forceinline=True)
def inverse_times_rows(Dinv, i, X, vi, n, out):
    """out[vi:vi + n] = D⁻¹(i) X[vi:vi + n] for n rows of 6-vectors (``Dinv`` (nb, 6, 6), the
    inverses of :func:`spd_inverse`): G*(i) = D⁻¹(i)Uᵀ(i) of the ABA's recursions, and the
    like for other row blocks."""
    for r in range(n):
        for a in range(6):
            acc = 0.0
            for r2 in range(n):
                acc += Dinv[i, r, r2] * X[vi + r2, a]
            out[vi + r, a] = acc


@helper(forceinline=True)
def spd_inverse(D, Dinv, i, n):
    """Dinv[i][:n,:n] = D⁻¹ for a symmetric positive-definite n×n ``D`` (n ≤ 6): D copied
    there and inverted in place (:func:`spd_inverse_in_place`); returns False when D is not
    positive definite (a singular articulated inertia: the mass matrix is not positive
    definite)."""
    if n == 1:
        d = D[0, 0]
        if not d > 0.0:
            return False
        Dinv[i, 0, 0] = 1.0 / d
        return True
    X = Dinv[i]
    for a in range(n):
        for b in range(n):
            X[a, b] = D[a, b]
    return spd_inverse_in_place(X, n)


@helper(forceinline=True)
def spd_inverse_in_place(A, n):
    """A[:n, :n] ← A⁻¹ for a symmetric positive-definite A (both triangles given), in A's
    own storage (no scratch) — the Cholesky factor L
    (A = LLᵀ) over the lower triangle, then L⁻¹ there, then A⁻¹ = L⁻ᵀL⁻¹, row a of its
    lower triangle written into column a of the upper one (entries L⁻¹ no longer needs:
    row a reads L⁻¹ in rows ≥ a only, its diagonal last), and mirrored. Returns False when
    A is not positive definite."""
    for a in range(n):  # L, row by row (each entry reads A's own entry before replacing it)
        for b in range(a + 1):
            s = A[a, b]
            for k in range(b):
                s -= A[a, k] * A[b, k]
            if a == b:
                if not s > 0.0:
                    return False
                A[a, a] = math.sqrt(s)
            else:
                A[a, b] = s / A[b, b]
    for a in range(n):  # L⁻¹, row by row: row a reads L in its own row (columns ≥ b) only
        A[a, a] = 1.0 / A[a, a]
        for b in range(a):
            s = 0.0
            for k in range(b, a):
                s -= A[a, k] * A[k, b]
            A[a, b] = s * A[a, a]
    for a in range(n):  # (L⁻ᵀL⁻¹)[a, b] = Σ_{k ≥ a} L⁻¹[k, a] L⁻¹[k, b], b ≤ a
        for b in range(a + 1):
            s = 0.0
            for k in range(a, n):
                s += A[k, a] * A[k, b]
            A[b, a] = s  # the upper triangle (b < a), the diagonal last (b = a)
    for a in range(n):
        for b in range(a):
            A[a, b] = A[b, a]
    return True


@helper(forceinline=True)
def axis_coriolis_term(V, i, k, x, C):
    """C[i] = V(i) × (x e_k): the Coriolis term a(k) of a joint whose map is the unit
    column e_k (k = 0..5, angular-first) moving at rate x ([Jain12, eq. 11]; Ḣ* = 0)."""
    if k < 3:  # [ω; v] × [x e_k; 0] = [ω × x e_k; v × x e_k]
        k1 = (k + 1) % 3
        k2 = (k + 2) % 3
        C[i, k] = 0.0
        C[i, k1] = V[i, k2] * x
        C[i, k2] = -V[i, k1] * x
        C[i, 3 + k] = 0.0
        C[i, 3 + k1] = V[i, 3 + k2] * x
        C[i, 3 + k2] = -V[i, 3 + k1] * x
    else:  # [ω; v] × [0; x e_j] = [0; ω × x e_j]
        j = k - 3
        j1 = (j + 1) % 3
        j2 = (j + 2) % 3
        C[i, 0] = 0.0
        C[i, 1] = 0.0
        C[i, 2] = 0.0
        C[i, 3 + j] = 0.0
        C[i, 3 + j1] = V[i, j2] * x
        C[i, 3 + j2] = -V[i, j1] * x


@helper(forceinline=True)
def rigid_inertia_matrix(src, i, P, di):
    """P[di] = the 6×6 spatial inertia [[I_o, [h]×], [[h]×ᵀ, m 1]] of the 10 parameters
    src[i] (see ``ModelTables.rigid``)."""
    m, h0, h1, h2 = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
    d = P[di]
    d[0, 0], d[0, 1], d[0, 2] = src[i, 4], src[i, 5], src[i, 6]
    d[1, 0], d[1, 1], d[1, 2] = src[i, 5], src[i, 7], src[i, 8]
    d[2, 0], d[2, 1], d[2, 2] = src[i, 6], src[i, 8], src[i, 9]
    d[0, 3], d[0, 4], d[0, 5] = 0.0, -h2, h1
    d[1, 3], d[1, 4], d[1, 5] = h2, 0.0, -h0
    d[2, 3], d[2, 4], d[2, 5] = -h1, h0, 0.0
    d[3, 0], d[3, 1], d[3, 2] = 0.0, h2, -h1
    d[4, 0], d[4, 1], d[4, 2] = -h2, 0.0, h0
    d[5, 0], d[5, 1], d[5, 2] = h1, -h0, 0.0
    d[3, 3], d[3, 4], d[3, 5] = m, 0.0, 0.0
    d[4, 3], d[4, 4], d[4, 5] = 0.0, m, 0.0
    d[5, 3], d[5, 4], d[5, 5] = 0.0, 0.0, m


@helper(forceinline=True)
def add_rigid_inertia_to_parent(R, t, i, src, dst, di):
    """dst[di] += φ(℘(i), i) src[i] φ*(℘(i), i) for rigid-body inertias in 10-parameter
    form (see ``ModelTables.rigid``): with g = R h,

        m' = m,   h' = g + m t,
        I' = R I Rᵀ − (t gᵀ + g tᵀ) + 2 (g·t) 1 − m (t tᵀ − (t·t) 1)

    (the parallel-axis theorem; ~70 multiplications instead of ~190 for a general
    symmetric 6×6 matrix)."""
    r00, r01, r02 = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
    r10, r11, r12 = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
    r20, r21, r22 = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
    t0, t1, t2 = t[i, 0], t[i, 1], t[i, 2]
    m, h0, h1, h2 = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
    a00, a01, a02, a11, a12, a22 = src[i, 4], src[i, 5], src[i, 6], src[i, 7], src[i, 8], src[i, 9]
    g0 = r00 * h0 + r01 * h1 + r02 * h2
    g1 = r10 * h0 + r11 * h1 + r12 * h2
    g2 = r20 * h0 + r21 * h1 + r22 * h2
    i00, i01, i02, i11, i12, i22 = rotate_symmetric(r00, r01, r02, r10, r11, r12, r20, r21, r22,
                                                    a00, a01, a02, a11, a12, a22)
    _add_shifted_rigid_inertia(dst, di, 0, 1, 2, t0, t1, t2, m, g0, g1, g2, i00, i01, i02, i11, i12, i22)


@helper(forceinline=True)
def add_rigid_inertia_to_parent_about_axis(R, t, i, k, src, dst, di):
    """:func:`add_rigid_inertia_to_parent` when R is a rotation about the coordinate
    axis e_k (worked in the cyclically permuted coordinates (k, k + 1, k + 2), see
    :func:`add_inertia_to_parent_about_axis`)."""
    k1 = (k + 1) % 3
    k2 = (k + 2) % 3
    c = R[i, k1, k1]
    s = R[i, k2, k1]
    m = src[i, 0]
    h0, h1, h2 = src[i, 1 + k], src[i, 1 + k1], src[i, 1 + k2]
    p00, p01, p02 = src[i, sym_param(k, k)], src[i, sym_param(k, k1)], src[i, sym_param(k, k2)]
    p11, p12, p22 = src[i, sym_param(k1, k1)], src[i, sym_param(k1, k2)], src[i, sym_param(k2, k2)]
    cc, ss, cs = c * c, s * s, c * s
    _add_shifted_rigid_inertia(
        dst, di, k, k1, k2, t[i, k], t[i, k1], t[i, k2], m, h0, c * h1 - s * h2, s * h1 + c * h2,
        p00, c * p01 - s * p02, s * p01 + c * p02,
        cc * p11 - 2.0 * cs * p12 + ss * p22, cs * (p11 - p22) + (cc - ss) * p12,
        ss * p11 + 2.0 * cs * p12 + cc * p22)


@helper(forceinline=True)
def sym_param(a, b):
    """Index of entry (a, b) of I_o in the 10-parameter form (m, h (3), I00, I01, I02,
    I11, I12, I22)."""
    if a > b:
        a, b = b, a
    return 4 + a * (5 - a) // 2 + b


@helper(forceinline=True)
def _add_shifted_rigid_inertia(dst, di, l0, l1, l2, t0, t1, t2, m, g0, g1, g2,
                               i00, i01, i02, i11, i12, i22):
    """dst[di] += the rigid inertia (m, g, I) already rotated to the parent's axes and
    moved by t: h' = g + m t, I' = I − (t gᵀ + g tᵀ) + 2 (g·t) 1 − m (t tᵀ − (t·t) 1).
    Values are in the coordinates (l0, l1, l2), a cyclic relabelling of (0, 1, 2)."""
    d2 = 2.0 * (g0 * t0 + g1 * t1 + g2 * t2) + m * (t0 * t0 + t1 * t1 + t2 * t2)
    dst[di, 0] += m
    dst[di, 1 + l0] += g0 + m * t0
    dst[di, 1 + l1] += g1 + m * t1
    dst[di, 1 + l2] += g2 + m * t2
    dst[di, sym_param(l0, l0)] += i00 - 2.0 * t0 * g0 - m * t0 * t0 + d2
    dst[di, sym_param(l0, l1)] += i01 - (t0 * g1 + g0 * t1) - m * t0 * t1
    dst[di, sym_param(l0, l2)] += i02 - (t0 * g2 + g0 * t2) - m * t0 * t2
    dst[di, sym_param(l1, l1)] += i11 - 2.0 * t1 * g1 - m * t1 * t1 + d2
    dst[di, sym_param(l1, l2)] += i12 - (t1 * g2 + g1 * t2) - m * t1 * t2
    dst[di, sym_param(l2, l2)] += i22 - 2.0 * t2 * g2 - m * t2 * t2 + d2


@helper(forceinline=True)
def rigid_inertia_times(src, i, w0, w1, w2, l0, l1, l2):
    """The momentum [I_o ω + h × v; m v − h × ω] (6 scalars) of the rigid-body inertia
    src[i] (10-parameter form, see ``ModelTables.rigid``) moving with [ω; v]."""
    m, h0, h1, h2 = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
    a00, a01, a02, a11, a12, a22 = src[i, 4], src[i, 5], src[i, 6], src[i, 7], src[i, 8], src[i, 9]
    return (a00 * w0 + a01 * w1 + a02 * w2 + h1 * l2 - h2 * l1,
            a01 * w0 + a11 * w1 + a12 * w2 + h2 * l0 - h0 * l2,
            a02 * w0 + a12 * w1 + a22 * w2 + h0 * l1 - h1 * l0,
            m * l0 - h1 * w2 + h2 * w1,
            m * l1 - h2 * w0 + h0 * w2,
            m * l2 - h0 * w1 + h1 * w0)


@helper(forceinline=True)
def inertia_rate(Y, Yd, i, w0, w1, w2, l0, l1, l2):
    """Yd[i] = Ẏ = V ×* Y − Y V× for the world inertia Y[i] (m, h, I_o) moving with
    V = [ω; v]: ṁ = 0, ḣ = ω × h + m v, İ_o = [ω]×I_o − I_o[ω]× + 2(h·v)1 − (v hᵀ + h vᵀ)
    (the rigid body's points move with ẋ = v + ω × x)."""
    m, h0, h1, h2 = Y[i, 0], Y[i, 1], Y[i, 2], Y[i, 3]
    i00, i01, i02, i11, i12, i22 = Y[i, 4], Y[i, 5], Y[i, 6], Y[i, 7], Y[i, 8], Y[i, 9]
    # W = [ω]× I_o (columns ω × I[:, b]); [ω]×I_o − I_o[ω]× = W + Wᵀ
    x00 = w1 * i02 - w2 * i01
    x10 = w2 * i00 - w0 * i02
    x20 = w0 * i01 - w1 * i00
    x01 = w1 * i12 - w2 * i11
    x11 = w2 * i01 - w0 * i12
    x21 = w0 * i11 - w1 * i01
    x02 = w1 * i22 - w2 * i12
    x12 = w2 * i02 - w0 * i22
    x22 = w0 * i12 - w1 * i02
    hv = 2.0 * (h0 * l0 + h1 * l1 + h2 * l2)
    Yd[i, 0] = 0.0
    Yd[i, 1] = w1 * h2 - w2 * h1 + m * l0
    Yd[i, 2] = w2 * h0 - w0 * h2 + m * l1
    Yd[i, 3] = w0 * h1 - w1 * h0 + m * l2
    Yd[i, 4] = 2.0 * x00 + hv - 2.0 * l0 * h0
    Yd[i, 5] = x01 + x10 - (l0 * h1 + h0 * l1)
    Yd[i, 6] = x02 + x20 - (l0 * h2 + h0 * l2)
    Yd[i, 7] = 2.0 * x11 + hv - 2.0 * l1 * h1
    Yd[i, 8] = x12 + x21 - (l1 * h2 + h1 * l2)
    Yd[i, 9] = 2.0 * x22 + hv - 2.0 * l2 * h2


@helper(forceinline=True)
def rigid_inertia_times_joint_column(code, i, src, S, col):
    """src[i] H*(i)[:, col] (6 scalars) for a rigid inertia in 10-parameter form; for a
    unit-column joint (``code`` = its ``axis_code`` ≠ 0) the entries are read, not
    multiplied."""
    if code == 0:
        return rigid_inertia_times(src, i, S[col, 0], S[col, 1], S[col, 2], S[col, 3], S[col, 4], S[col, 5])
    k = abs(code) - 1
    sg = 1.0 if code > 0 else -1.0
    m, h0, h1, h2 = src[i, 0], src[i, 1], src[i, 2], src[i, 3]
    if k < 3:  # [I e_k; −h × e_k] = [I[:, k]; e_k × h]
        n0, n1, n2 = src[i, sym_param(0, k)], src[i, sym_param(1, k)], src[i, sym_param(2, k)]
        f0 = 0.0 if k == 0 else (h2 if k == 1 else -h1)
        f1 = -h2 if k == 0 else (0.0 if k == 1 else h0)
        f2 = h1 if k == 0 else (-h0 if k == 1 else 0.0)
        return sg * n0, sg * n1, sg * n2, sg * f0, sg * f1, sg * f2
    k -= 3  # [h × e_k; m e_k]
    n0 = 0.0 if k == 0 else (-h2 if k == 1 else h1)
    n1 = h2 if k == 0 else (0.0 if k == 1 else -h0)
    n2 = -h1 if k == 0 else (h0 if k == 1 else 0.0)
    return (sg * n0, sg * n1, sg * n2, sg * m if k == 0 else 0.0, sg * m if k == 1 else 0.0,
            sg * m if k == 2 else 0.0)


@helper(forceinline=True)
def joint_column_to_world(code, i, S, col, Rw, pw):
    """Joint-map column ``col`` of body i in world axes at the world origin (6 scalars,
    see :func:`motion_to_world`); a unit-column joint (``code`` = its ``axis_code`` ≠ 0)
    reads a column of Rw."""
    if code != 0:
        k = abs(code) - 1
        sg = 1.0 if code > 0 else -1.0
        if k < 3:  # [±Rw e_k; pw × ±Rw e_k]
            a0, a1, a2 = sg * Rw[i, 0, k], sg * Rw[i, 1, k], sg * Rw[i, 2, k]
            p0, p1, p2 = pw[i, 0], pw[i, 1], pw[i, 2]
            return a0, a1, a2, p1 * a2 - p2 * a1, p2 * a0 - p0 * a2, p0 * a1 - p1 * a0
        k -= 3
        return 0.0, 0.0, 0.0, sg * Rw[i, 0, k], sg * Rw[i, 1, k], sg * Rw[i, 2, k]
    return motion_to_world(Rw, pw, i, S[col, 0], S[col, 1], S[col, 2], S[col, 3], S[col, 4], S[col, 5])


@helper(forceinline=True)
def motion_to_world(Rw, pw, i, w0, w1, w2, l0, l1, l2):
    """A motion vector [ω; v] of body i (body axes, body origin) in world axes at the
    world origin: [Rw ω; Rw v + pw × Rw ω] (Rw, pw: the body's world pose)."""
    a0 = Rw[i, 0, 0] * w0 + Rw[i, 0, 1] * w1 + Rw[i, 0, 2] * w2
    a1 = Rw[i, 1, 0] * w0 + Rw[i, 1, 1] * w1 + Rw[i, 1, 2] * w2
    a2 = Rw[i, 2, 0] * w0 + Rw[i, 2, 1] * w1 + Rw[i, 2, 2] * w2
    p0, p1, p2 = pw[i, 0], pw[i, 1], pw[i, 2]
    b0 = Rw[i, 0, 0] * l0 + Rw[i, 0, 1] * l1 + Rw[i, 0, 2] * l2 + p1 * a2 - p2 * a1
    b1 = Rw[i, 1, 0] * l0 + Rw[i, 1, 1] * l1 + Rw[i, 1, 2] * l2 + p2 * a0 - p0 * a2
    b2 = Rw[i, 2, 0] * l0 + Rw[i, 2, 1] * l1 + Rw[i, 2, 2] * l2 + p0 * a1 - p1 * a0
    return a0, a1, a2, b0, b1, b2


@helper(forceinline=True)
def force_to_world(Rw, pw, i, n0, n1, n2, f0, f1, f2):
    """A force [n; f] on body i (body axes, about the body origin) in world axes about
    the world origin: [Rw n + pw × Rw f; Rw f] (the motion map with the roles of the
    two halves exchanged)."""
    g0, g1, g2, m0, m1, m2 = motion_to_world(Rw, pw, i, f0, f1, f2, n0, n1, n2)
    return m0, m1, m2, g0, g1, g2


@helper(forceinline=True)
def rigid_times_motion(rigid, i, src, si, dst, di):
    """dst[di] = M(i) src[si]: the momentum of body i's rigid inertia (10-parameter form,
    ``ModelTables.rigid``) moving with the motion src[si]."""
    (dst[di, 0], dst[di, 1], dst[di, 2], dst[di, 3], dst[di, 4], dst[di, 5]) = rigid_inertia_times(
        rigid, i, src[si, 0], src[si, 1], src[si, 2], src[si, 3], src[si, 4], src[si, 5])


@helper(forceinline=True)
def add_bias_force(rigid, i, V, vi, dst, di):
    """dst[di] += b(i) = V ×* M(i) V, the velocity-dependent force of body i moving with
    V[vi] ([Jain12], b(k) in eq. 14), in scalars."""
    w0, w1, w2, l0, l1, l2 = V[vi, 0], V[vi, 1], V[vi, 2], V[vi, 3], V[vi, 4], V[vi, 5]
    n0, n1, n2, f0, f1, f2 = rigid_inertia_times(rigid, i, w0, w1, w2, l0, l1, l2)
    dst[di, 0] += w1 * n2 - w2 * n1 + l1 * f2 - l2 * f1
    dst[di, 1] += w2 * n0 - w0 * n2 + l2 * f0 - l0 * f2
    dst[di, 2] += w0 * n1 - w1 * n0 + l0 * f1 - l1 * f0
    dst[di, 3] += w1 * f2 - w2 * f1
    dst[di, 4] += w2 * f0 - w0 * f2
    dst[di, 5] += w0 * f1 - w1 * f0


@helper(forceinline=True)
def copy_matrix6(src, si, dst, di):
    """dst[di] = src[si] for stacks of 6 × 6 matrices, element by element: Numba's slice
    assignment would compile its shape-mismatch message (string formatting, ~5 s of
    cold compilation per kernel that uses it)."""
    for a in range(6):
        for b in range(6):
            dst[di, a, b] = src[si, a, b]


@helper(forceinline=True)
def copy_lower_to_upper(M):
    """M[r, c] = M[c, r] for r < c: a square matrix made symmetric from its lower triangle.
    Row by row of the source: contiguous loads, strided stores, faster than column by
    column of the source (``benchmarks/results/design_notes.md``)."""
    for c in range(M.shape[0]):
        for r in range(c):
            M[r, c] = M[c, r]


@helper(forceinline=True)
def copy_upper_to_lower(M):
    """M[c, r] = M[r, c] for r < c: a square matrix made symmetric from its upper triangle
    (row by row of the source, as :func:`copy_lower_to_upper`)."""
    for r in range(M.shape[0]):
        for c in range(r + 1, M.shape[0]):
            M[c, r] = M[r, c]


@helper(forceinline=True)
def articulated_to_parent(m, w, i, p):
    """P(℘(i)) += φ(℘(i), i) P⁺(i) φ*(℘(i), i) and z(℘(i)) += φ(℘(i), i) z⁺(i): body i's
    articulated inertia and force handed to its parent ([Jain23p, eq. 7]; the last step of
    each body in the ABA's gather, block or partitioned). ``m``, ``w``: the model's and the
    workspace's named views; a joint turning about a coordinate axis of an unrotated frame
    (``axis_code``) takes the cheaper congruence about that axis."""
    code = m.axis_code[i]
    if 0 < abs(code) <= 3 and not m.rotated[i]:  # R = R_J, a turn about e_k
        add_inertia_to_parent_about_axis(w.R, w.t, i, abs(code) - 1, w.P[i], w.P, p)
    else:
        add_inertia_to_parent(w.R, w.t, i, w.P[i], w.P, p, w.scratch)
    add_force_to_parent(w.R, w.t, i, w.z, i, w.z, p)


@helper(forceinline=True)
def init_articulated(m, w, i, fext, has_v):
    """P(i) = M(i) and z(i) = b(i) − f_ext(i), b(i) = V(i) ×* M(i)V(i) (zero without
    ``has_v``): body i before its children's contributions, the start of the ABA's gather
    ([Jain23p, eq. 7]). An empty ``fext`` ((0, 6)) means no external forces."""
    for a in range(6):
        for b in range(6):
            w.P[i, a, b] = m.inertia[i, a, b]
        w.z[i, a] = 0.0
    if has_v:
        add_bias_force(m.rigid, i, w.V, i, w.z, i)
    if fext.shape[0] > 0:
        for a in range(6):
            w.z[i, a] -= fext[i, a]
