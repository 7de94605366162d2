"""The Delassus operator G = J M⁻¹ Jᵀ (3k, 3k) of k contact points on a tree, from the
factored operational-space compliance Ω = ψ*H*D⁻¹Hψ, never forming M⁻¹ nor Υ.

[Jain24] ("Applying the Backward Lyapunov decomposition to the EOSCM"), [Jain23p, eq. 21]:
Λ = ℬ*Ωℬ with Ω = ψ*H*D⁻¹Hψ. A contact is the difference of two points (J_i = J_second −
J_first, :mod:`.points`), each a frame of three columns whose pick-off X (6 × 3) is the
frame pick-off ℬ restricted to the contact axes: the spatial force of a unit force along
each axis of C_i at p_i, −X on the first body and +X on the second. So with
Y_i = Hψ X_i (nv × 3, the two sides of contact i summed)

    G(i, j) = Y_iᵀ D⁻¹ Y_j = Σ_k Y_i(k)ᵀ D⁻¹(k) Y_j(k),

the sum over the bodies k that are ancestors of a body of both contacts (ψ(k, b) is zero
unless k is b or one of its ancestors). Y_i is one tips-to-base gather per side along the
path from its body to the root, three columns wide: z(b) = X, and at every body k on the
path

    Y_i(k) += H(k) z(k),   z(℘(k)) = ψ(℘(k), k) z(k) = φ(℘(k), k) τ̄(k) z(k),
    τ̄(k) z = z − G(k)H(k) z = z − U(k) D⁻¹(k) H(k) z              ([Jain23p, eq. 7])

with U = P H* and D⁻¹ of the ATBI. The gather runs with every spatial quantity in world
axes about one point o (the first contact's point), as [Carpentier18]'s algorithms work in
world axes: there φ(℘(k), k) is the identity (a force about o in world axes is the same
vector on every body), H(k) and U(k) enter as the rows S_o = X_k S (motion transform of
the joint's axes) and U_o = X_k* U (force transform), turned into those axes once per
body on a path, and the pick-off is X = [[p_i − o]× C_i; C_i] whatever the body. A step
of one column over a 1-dof joint costs 13 multiplications (39 in body frames); D⁻¹(k) and
the pairing Y_iᵀ D⁻¹ Y_j are joint-space quantities, the same in any frame. That is
O(k·depth) after the O(N) ATBI, plus the 3 × 3 blocks of every pair of contacts over
their common ancestors: bodies with no contact below them cost nothing beyond the ATBI.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables, packed_ok, packed_part, workspace_views
from ...core.status import BAD_SHAPE, OK
from ..innovations import atbi
from ..kinematics import world_poses
from .points import contacts_shape_ok

#: The scratch of the Delassus kernel for k contacts on a model of nv velocities: per
#: contact i, ``Y[i]`` (nv, 3) = Hψ X_i and ``W[i]`` = D⁻¹ Y_i, blockwise per body (rows
#: of the bodies off contact i's paths are never read); ``So``, ``Uo`` (nv, 6) the joint
#: rows H*(k) and U(k) in world axes about the point o (set for the bodies on a path);
#: ``Z`` (6, 3) the side's z(k) on its way to the root; ``y``, ``w`` (6,) H(k)z and
#: D⁻¹(k)H(k)z of one column at one body. Per body k, ``count[k]`` contacts have k on a
#: path, listed in increasing order in ``active[k, :count[k]]``.
DelassusScratch = namedtuple("DelassusScratch", ["Y", "W", "So", "Uo", "Z", "y", "w", "count", "active"])


@helper(forceinline=True)
def delassus_buffer_sizes(nb, nv, k):
    """Lengths of the float and integer scratch of :func:`delassus_kernel` for k contacts
    on a model of nb bodies and nv velocities."""
    return 2 * k * nv * 3 + 2 * nv * 6 + 18 + 12, nb + nb * k


@helper(forceinline=True)
def delassus_scratch(fbuf, ibuf, nb, nv, k):
    """Named views (:class:`DelassusScratch`) of the float and integer scratch."""
    o = 0
    Y = carve(fbuf, o, (k, nv, 3)); o += k * nv * 3
    W = carve(fbuf, o, (k, nv, 3)); o += k * nv * 3
    So = carve(fbuf, o, (nv, 6)); o += nv * 6
    Uo = carve(fbuf, o, (nv, 6)); o += nv * 6
    Z = carve(fbuf, o, (6, 3)); o += 18
    y = carve(fbuf, o, 6); o += 6
    w = carve(fbuf, o, 6)
    return DelassusScratch(Y, W, So, Uo, Z, y, w, carve(ibuf, 0, nb), carve(ibuf, nb, (nb, k)))


@helper(forceinline=True)
def _rotated_row(R, k, src, r):
    """Both halves of the 6-row ``src[r]`` rotated by R[k] (body axes to world axes)."""
    return (R[k, 0, 0] * src[r, 0] + R[k, 0, 1] * src[r, 1] + R[k, 0, 2] * src[r, 2],
            R[k, 1, 0] * src[r, 0] + R[k, 1, 1] * src[r, 1] + R[k, 1, 2] * src[r, 2],
            R[k, 2, 0] * src[r, 0] + R[k, 2, 1] * src[r, 1] + R[k, 2, 2] * src[r, 2],
            R[k, 0, 0] * src[r, 3] + R[k, 0, 1] * src[r, 4] + R[k, 0, 2] * src[r, 5],
            R[k, 1, 0] * src[r, 3] + R[k, 1, 1] * src[r, 4] + R[k, 1, 2] * src[r, 5],
            R[k, 2, 0] * src[r, 3] + R[k, 2, 1] * src[r, 4] + R[k, 2, 2] * src[r, 5])


@helper(forceinline=True)
def _joint_rows_about(m, w, s, k, o):
    """S_o = X_k S and U_o = X_k* U for body k's dofs: its joint rows [angular; linear] in
    body axes at the body origin turned into world axes about the point ``o`` (3,), with
    d = p_k − o: a motion row [R s_ω; R s_v + d × R s_ω], a force row [R u_n + d × R u_f;
    R u_f]."""
    d0, d1, d2 = w.pw[k, 0] - o[0], w.pw[k, 1] - o[1], w.pw[k, 2] - o[2]
    vi = m.v_index[k]
    So, Uo = s.So, s.Uo
    for r in range(vi, vi + m.joint_nv[k]):
        a0, a1, a2, b0, b1, b2 = _rotated_row(w.Rw, k, w.S, r)
        So[r, 0], So[r, 1], So[r, 2] = a0, a1, a2  # the linear part gains d × ω
        So[r, 3] = b0 + d1 * a2 - d2 * a1
        So[r, 4] = b1 + d2 * a0 - d0 * a2
        So[r, 5] = b2 + d0 * a1 - d1 * a0
        a0, a1, a2, b0, b1, b2 = _rotated_row(w.Rw, k, w.U, r)
        Uo[r, 0] = a0 + d1 * b2 - d2 * b1  # the moment gains d × f
        Uo[r, 1] = a1 + d2 * b0 - d0 * b2
        Uo[r, 2] = a2 + d0 * b1 - d1 * b0
        Uo[r, 3], Uo[r, 4], Uo[r, 5] = b0, b1, b2


@helper(forceinline=True)
def _side_pickoff(cpoint, cframe, i, sign, o, Z):
    """Z (6, 3) ← sign · [[p_i − o]× C_i; C_i]: the spatial forces about o, world axes, of a
    unit force along each axis of contact i's frame at its point."""
    r0, r1, r2 = cpoint[i, 0] - o[0], cpoint[i, 1] - o[1], cpoint[i, 2] - o[2]
    for c in range(3):
        c0, c1, c2 = sign * cframe[i, 0, c], sign * cframe[i, 1, c], sign * cframe[i, 2, c]
        Z[0, c] = r1 * c2 - r2 * c1
        Z[1, c] = r2 * c0 - r0 * c2
        Z[2, c] = r0 * c1 - r1 * c0
        Z[3, c] = c0
        Z[4, c] = c1
        Z[5, c] = c2


@helper(forceinline=True)
def _gather_step(m, w, s, i, k):
    """Body k's step of the gather of contact i's side held in ``s.Z`` = z(k), column by
    column: Y_i(k) += H(k)z, W_i(k) += D⁻¹(k)H(k)z, then z ← τ̄(k) z = z − U(k)D⁻¹(k)H(k)z,
    which is ψ(℘(k), k) z in world axes about o (not for a root: nothing above it)."""
    vi = m.v_index[k]
    n = m.joint_nv[k]
    Z, y, g = s.Z, s.y, s.w
    Yi, Wi, So, Uo, Dinv = s.Y[i], s.W[i], s.So, s.Uo, w.Dinv
    root = m.parent[k] < 0
    for c in range(3):
        z0, z1, z2, z3, z4, z5 = Z[0, c], Z[1, c], Z[2, c], Z[3, c], Z[4, c], Z[5, c]
        for r in range(n):
            y[r] = (So[vi + r, 0] * z0 + So[vi + r, 1] * z1 + So[vi + r, 2] * z2 + So[vi + r, 3] * z3
                    + So[vi + r, 4] * z4 + So[vi + r, 5] * z5)
        for r in range(n):
            acc = 0.0
            for r2 in range(n):
                acc += Dinv[k, r, r2] * y[r2]
            g[r] = acc
            Yi[vi + r, c] += y[r]
            Wi[vi + r, c] += acc
        if root:
            continue
        for r in range(n):
            gr = g[r]
            z0 -= Uo[vi + r, 0] * gr
            z1 -= Uo[vi + r, 1] * gr
            z2 -= Uo[vi + r, 2] * gr
            z3 -= Uo[vi + r, 3] * gr
            z4 -= Uo[vi + r, 4] * gr
            z5 -= Uo[vi + r, 5] * gr
        Z[0, c], Z[1, c], Z[2, c], Z[3, c], Z[4, c], Z[5, c] = z0, z1, z2, z3, z4, z5


@helper(forceinline=True)
def _gather_side(m, w, s, i, b, sign, cpoint, cframe, o):
    """Contact i's side on body b (``sign`` −1 first, +1 second) into Y_i, W_i, from b to
    the root. A body reached for contact i the first time joins ``active`` and has its rows
    of Y_i, W_i cleared; reached for the first contact at all, its joint rows are turned
    into world axes about o."""
    _side_pickoff(cpoint, cframe, i, sign, o, s.Z)
    k = b
    while k >= 0:
        c = s.count[k]
        if c == 0 or s.active[k, c - 1] != i:  # contacts come in increasing order
            if c == 0:
                _joint_rows_about(m, w, s, k, o)
            s.active[k, c] = i
            s.count[k] = c + 1
            vi = m.v_index[k]
            for r in range(vi, vi + m.joint_nv[k]):
                for a in range(3):
                    s.Y[i, r, a] = 0.0
                    s.W[i, r, a] = 0.0
        _gather_step(m, w, s, i, k)
        k = m.parent[k]


@helper(forceinline=True)
def _pair_blocks(m, s, G):
    """G(i, j) += Σ_k Y_i(k)ᵀ W_j(k) for i ≤ j over the bodies k on the paths of both
    contacts (each body's dofs summed in registers, then added): the blocks on and above
    the diagonal. The caller mirrors the upper triangle into the lower, so that G is
    exactly symmetric (Y_iᵀ W_j and Y_jᵀ W_i round differently)."""
    Y, W = s.Y, s.W
    for k in range(m.nb):
        nk = s.count[k]
        vi = m.v_index[k]
        ve = vi + m.joint_nv[k]
        for p in range(nk):
            i = s.active[k, p]
            for q in range(p, nk):
                j = s.active[k, q]
                g00 = g01 = g02 = g10 = g11 = g12 = g20 = g21 = g22 = 0.0
                for r in range(vi, ve):
                    y0, y1, y2 = Y[i, r, 0], Y[i, r, 1], Y[i, r, 2]
                    w0, w1, w2 = W[j, r, 0], W[j, r, 1], W[j, r, 2]
                    g00 += y0 * w0
                    g01 += y0 * w1
                    g02 += y0 * w2
                    g10 += y1 * w0
                    g11 += y1 * w1
                    g12 += y1 * w2
                    g20 += y2 * w0
                    g21 += y2 * w1
                    g22 += y2 * w2
                a, b = 3 * i, 3 * j
                G[a, b] += g00
                G[a, b + 1] += g01
                G[a, b + 2] += g02
                G[a + 1, b] += g10
                G[a + 1, b + 1] += g11
                G[a + 1, b + 2] += g12
                G[a + 2, b] += g20
                G[a + 2, b + 1] += g21
                G[a + 2, b + 2] += g22


@helper
def delassus_after_atbi(mi, mf, ws, cbody, cpoint, cframe, fbuf, ibuf, G):
    """G (3k, 3k) from the ATBI and the world poses already in the workspace ``ws``
    (:func:`~..innovations.atbi` and :func:`~..kinematics.world_poses` at the contacts' q;
    a time step has computed both before: its contacts' detection needs the poses): the
    gathers of the 2k sides, the pair blocks. ``mi``, ``mf`` the model's tables, ``fbuf``,
    ``ibuf`` float and int64 scratch of the sizes :func:`delassus_buffer_sizes` (nb, nv, k)
    gives, the contacts and G as :func:`delassus_kernel`'s. Returns a status."""
    m = model_tables(mi, mf)
    nb, nv = m.nb, m.nv
    k = cbody.shape[0]
    nf, ni = delassus_buffer_sizes(nb, nv, k)
    if (not contacts_shape_ok(m, cbody, cpoint, cframe) or G.shape[0] != 3 * k or G.shape[1] != 3 * k
            or fbuf.shape[0] < nf or ibuf.shape[0] < ni):
        return BAD_SHAPE
    G[:] = 0.0
    if k == 0:
        return OK
    w = workspace_views(ws, m)
    s = delassus_scratch(fbuf, ibuf, nb, nv, k)
    s.count[:] = 0
    o = cpoint[0]  # the reference point: near the contacts, so that moments about it stay small
    for i in range(k):  # side 0: the first body (−X), side 1: the second (+X)
        for side in range(2):
            b = cbody[i, side]
            if b >= 0:
                _gather_side(m, w, s, i, b, 2.0 * side - 1.0, cpoint, cframe, o)
    _pair_blocks(m, s, G)
    for r in range(3 * k):  # the lower triangle from the upper
        for c in range(r):
            G[r, c] = G[c, r]
    return OK


#: The parts of a thread's packed Delassus tables (:func:`~soadyn.core.layout.pack_parts`,
#: the integer parts first): the model's tables ``mi``, ``mf``, the kernel's integer and
#: float scratch ``ibuf``, ``fbuf`` (:func:`delassus_buffer_sizes`) and the thread's
#: workspace ``ws``. One array for all of them: ``sd.delassus`` is a call from Python of
#: a few microseconds, and each array argument costs the dispatcher.
DELASSUS_PARTS = ("mi", "ibuf", "mf", "ws", "fbuf")
DelassusTables = namedtuple("DelassusTables", DELASSUS_PARTS)


@helper(forceinline=True)
def delassus_tables(T):
    """Named views (:class:`DelassusTables`) of packed Delassus tables (checked by
    :func:`~soadyn.core.layout.packed_ok` first)."""
    n = len(DELASSUS_PARTS)
    return DelassusTables(packed_part(T, n, 0).view(np.int64), packed_part(T, n, 1).view(np.int64),
                          packed_part(T, n, 2), packed_part(T, n, 3), packed_part(T, n, 4))


@kernel(nogil=True)
def delassus_kernel(T, q, cbody, cpoint, cframe, G):
    """G (3k, 3k) at q for the contacts (``cbody`` (k, 2), ``cpoint`` (k, 3), ``cframe``
    (k, 3, 3): :mod:`.points`), rows and columns of contact i at 3i..3i+2 in its frame
    (t1, t2, n); ``T`` the packed tables of :data:`DELASSUS_PARTS` for k contacts. The
    ATBI and the world poses, then :func:`delassus_after_atbi`. Returns a status
    (``BAD_SHAPE`` for tables of another layout or too small for k)."""
    if not packed_ok(T, len(DELASSUS_PARTS)):
        return BAD_SHAPE
    t = delassus_tables(T)
    st = atbi(t.mi, t.mf, t.ws, q)
    if st != OK:
        return st
    world_poses(t.mi, t.mf, t.ws)
    return delassus_after_atbi(t.mi, t.mf, t.ws, cbody, cpoint, cframe, t.fbuf, t.ibuf, G)
