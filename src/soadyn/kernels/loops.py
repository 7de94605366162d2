"""The rows of loop (cut) joint constraints: G_c = Q ℬ*φ*H*, the acceleration bias 𝔘̊ and
the position residuals [Jain24, "Single loop constraint", "Constraint matrix with loop
constraints"].

For a loop joint with predecessor node P and successor node S, the node velocities
V_nd = [V_P; V_S] (each in its own frame, angular first) come from the node Jacobians
J = ℬ*φ*H* (local reference), and the
loop's rows are Q V_nd with the 12-column selection Q of its kind (the table in
:mod:`soadyn.closed.constraint_set`). Their time derivative is

    𝔡̈ = Q (J θ̈ + J̇ θ̇) + Q̇ V_nd,    so   𝔘̊ = −(Q J̇ θ̇ + Q̇ V_nd),

where J̇θ̇ is the node acceleration at θ̈ = 0 (the velocity-product accelerations a(k)
carried by the scatter α = φ*(H*θ̈ + a), [Jain12, eq. 15], without gravity), and Q̇ comes
from the relative pose (R_rel, p_rel) of S in P moving with
Ṙ_rel = R_rel[ω_S]× − [ω_P]× R_rel and ṗ_rel = R_rel v_S − v_P − ω_P × p_rel.
"""
from __future__ import annotations

import math
from collections import namedtuple


from ..core.jit import helper, kernel
from ..core.layout import carve, model_tables, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, OK
from .primitives import joint_column_to_world
from .kinematics import (absent, acceleration_step, body_accelerations, body_velocities, configuration_status, joint_placements, nonfinite,
                         world_pose, world_poses)

#: loop kind codes: the index of the kind in ``soadyn.core.constraints.LOOP_KINDS``
WELD, REVOLUTE, PRISMATIC, SPHERICAL, UNIVERSAL, CYLINDRICAL, PLANAR = range(7)
#: constraint rows (6 − dof) of each kind, by kind code
LOOP_ROWS_BY_KIND = (6, 5, 5, 3, 4, 4, 3)

#: Named views of the packed loops (:func:`loop_tables`): per loop l, the bodies of its
#: predecessor and successor nodes (−1: the world), its kind code and its first row in
#: G_c; the node poses in their bodies (R_pred, p_pred, R_succ, p_succ); the joint axis
#: a, an orthonormal pair b1, b2 ⊥ a, and a universal joint's second axis (axis2, in S).
LoopTables = namedtuple("LoopTables", ["n", "pred_body", "succ_body", "kind", "first_row", "R_pred", "p_pred",
                                       "R_succ", "p_succ", "axis", "b1", "b2", "axis2"])


def loop_int_size(nl):
    return 1 + 4 * nl


def loop_float_size(nl):
    return 36 * nl


# compiled with reference counting (_nrt=True, soadyn.core.jit) for its calls from Python,
# which box the views it returns; in the kernels its views are borrowed (nothing to count)
@kernel(forceinline=True, _nrt=True)
def loop_tables(li, lf):
    """Named views (:class:`LoopTables`) of the packed loops ``li`` (int) and ``lf`` (float)."""
    n = li[0]
    pred_body = carve(li, 1, n)
    succ_body = carve(li, 1 + n, n)
    kind = carve(li, 1 + 2 * n, n)
    first_row = carve(li, 1 + 3 * n, n)
    o = 0
    R_pred = carve(lf, o, (n, 3, 3)); o += 9 * n
    p_pred = carve(lf, o, (n, 3)); o += 3 * n
    R_succ = carve(lf, o, (n, 3, 3)); o += 9 * n
    p_succ = carve(lf, o, (n, 3)); o += 3 * n
    axis = carve(lf, o, (n, 3)); o += 3 * n
    b1 = carve(lf, o, (n, 3)); o += 3 * n
    b2 = carve(lf, o, (n, 3)); o += 3 * n
    axis2 = carve(lf, o, (n, 3))
    return LoopTables(n, pred_body, succ_body, kind, first_row, R_pred, p_pred, R_succ, p_succ, axis, b1, b2,
                      axis2)


@kernel
def loop_row_count(li, lf):
    """m_loop: the number of rows of all packed loops (each loop's rows follow the previous
    loop's)."""
    L = loop_tables(li, lf)
    if L.n == 0:
        return 0
    return L.first_row[L.n - 1] + LOOP_ROWS_BY_KIND[L.kind[L.n - 1]]


@helper(forceinline=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@helper(forceinline=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@helper(forceinline=True)
def _matvec(R, x, out, transpose):
    for a in range(3):
        acc = 0.0
        for k in range(3):
            acc += (R[k, a] if transpose else R[a, k]) * x[k]
        out[a] = acc


@helper
def rotation_vector(R, out):
    """out = log(R)^∨, the rotation vector of a rotation matrix (angle in [0, π])."""
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    c = min(1.0, max(-1.0, c))
    th = math.acos(c)
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    if th < 1e-6:
        k = 0.5 + th * th / 12.0
    elif th < math.pi - 1e-4:
        k = th / (2.0 * math.sin(th))
    else:
        # near π the antisymmetric part vanishes: the axis comes from R + I = 2 n nᵀ
        i = 0
        if R[1, 1] > R[i, i]:
            i = 1
        if R[2, 2] > R[i, i]:
            i = 2
        ni = math.sqrt(max(0.0, 0.5 * (R[i, i] + 1.0)))
        for a in range(3):
            out[a] = ni if a == i else 0.25 * (R[i, a] + R[a, i]) / ni
        w = (w0, w1, w2)
        s = 1.0 if out[0] * w[0] + out[1] * w[1] + out[2] * w[2] >= 0.0 else -1.0
        for a in range(3):
            out[a] *= s * th
        return
    out[0], out[1], out[2] = k * w0, k * w1, k * w2


@helper(forceinline=True)
def _node(w, b, Rl, pl, has_v, Rn, on, Vn, An):
    """World pose (Rn, on), velocity Vn and velocity-product acceleration An (local) of
    a node fixed to body ``b`` at the pose (Rl, pl) there (b < 0: the world)."""
    if b < 0:
        for a in range(3):
            on[a] = pl[a]
            for c in range(3):
                Rn[a, c] = Rl[a, c]
        for a in range(6):
            Vn[a] = 0.0
            An[a] = 0.0
        return
    for a in range(3):
        acc = w.pw[b, a]
        for k in range(3):
            acc += w.Rw[b, a, k] * pl[k]
        on[a] = acc
        for c in range(3):
            acc = 0.0
            for k in range(3):
                acc += w.Rw[b, a, k] * Rl[k, c]
            Rn[a, c] = acc
    if not has_v:
        for a in range(6):
            Vn[a] = 0.0
            An[a] = 0.0
        return
    _node_motion(w.V, b, Rl, pl, Vn)
    _node_motion(w.alpha, b, Rl, pl, An)


@helper(forceinline=True)
def _node_motion(src, b, Rl, pl, dst):
    """dst = body-``b`` motion vector src[b] expressed at the node (its axes and origin)."""
    w0, w1, w2 = src[b, 0], src[b, 1], src[b, 2]
    p0, p1, p2 = pl[0], pl[1], pl[2]
    l0 = src[b, 3] + w1 * p2 - w2 * p1
    l1 = src[b, 4] + w2 * p0 - w0 * p2
    l2 = src[b, 5] + w0 * p1 - w1 * p0
    for a in range(3):  # Rᵀ x
        dst[a] = Rl[0, a] * w0 + Rl[1, a] * w1 + Rl[2, a] * w2
        dst[3 + a] = Rl[0, a] * l0 + Rl[1, a] * l1 + Rl[2, a] * l2


@helper(forceinline=True)
def _emit(r, cP, cS, extra, res, AP, AS, ubias, resid, sel):
    """One constraint row's node selection Q = [cP | cS], 𝔘̊ = −(cP·A_P + cS·A_S + extra)
    and residual (its row of G_c follows from the selection, :func:`_node_rows`)."""
    acc = extra
    for a in range(6):
        sel[r, a] = cP[a]
        sel[r, 6 + a] = cS[a]
        acc += cP[a] * AP[a] + cS[a] * AS[a]
    ubias[r] = -acc
    resid[r] = res


@helper(forceinline=True)
def node_force_to_world(Rn, on, c, out):
    """out = the node force c = [n; f] (node axes, about the node origin) in world axes
    about the world origin, [Rn n + on × Rn f; Rn f], for the node's world pose (Rn, on)."""
    for a in range(3):
        out[3 + a] = Rn[a, 0] * c[3] + Rn[a, 1] * c[4] + Rn[a, 2] * c[5]
        out[a] = Rn[a, 0] * c[0] + Rn[a, 1] * c[1] + Rn[a, 2] * c[2]
    out[0] += on[1] * out[5] - on[2] * out[4]
    out[1] += on[2] * out[3] - on[0] * out[5]
    out[2] += on[0] * out[4] - on[1] * out[3]


@helper(forceinline=True)
def next_on_paths(parent, a, b):
    """The next body of a walk from two bodies a, b (−1: none) to the root, joint paths
    visited once (parent-first numbering: the larger index is the deeper one): returns
    (k, on_a, merged) — body k, whether it is on a's path (else on b's), and whether
    the two paths meet at k (from there on the walk from a carries the sum)."""
    if a == b:
        return a, True, True
    if a > b:
        return a, True, False
    return b, False, False


@helper(forceinline=True)
def _node_rows(m, w, bP, bS, FP, FS, nr, G, r0, scale):
    """G[r0 + j, cols(k)] += (H(k) φ(k, P) fP_j + H(k) φ(k, S) fS_j)ᵀ on the joints of
    the nodes' paths up to where they meet, fP_j = FP[j], fS_j = FS[j] (nr, 6) the node
    forces in world axes about the world origin: each entry is the force times the
    joint-map column in world axes at the world origin (frame-independent; c·J_node =
    (J_node* c)* with J_node* = H φ(·, node)). With a nonempty ``scale`` (m,), also
    scale[r0 + j] += the sum of the magnitudes of the products that make up the row's
    entries (:func:`loop_rows`).

    The walk stops at the nodes' common ancestor: a loop row measures the relative
    motion of its two nodes, which a motion common to both leaves unchanged, so
    fP_j + fS_j = 0 and the columns of the joints the two paths share are zero (to
    rounding; walking on would cost O(depth) per loop on a long chain)."""
    a, b = bP, bS
    while a >= 0 or b >= 0:
        k, on_a, merged = next_on_paths(m.parent, a, b)
        if merged:
            return
        F = FP if on_a else FS
        code = m.axis_code[k]
        for col in range(m.v_index[k], m.v_index[k] + m.joint_nv[k]):
            s0, s1, s2, s3, s4, s5 = joint_column_to_world(code, k, w.S, col, w.Rw, w.pw)
            for j in range(nr):
                p0, p1, p2 = s0 * F[j, 0], s1 * F[j, 1], s2 * F[j, 2]
                p3, p4, p5 = s3 * F[j, 3], s4 * F[j, 4], s5 * F[j, 5]
                G[r0 + j, col] += p0 + p1 + p2 + p3 + p4 + p5
                if scale.shape[0] > 0:
                    scale[r0 + j] += abs(p0) + abs(p1) + abs(p2) + abs(p3) + abs(p4) + abs(p5)
        if on_a:
            a = m.parent[a]
        else:
            b = m.parent[b]


@helper(forceinline=True)
def _emit_rotation(r, n, extra, res, Rrel, cP, cS, tmp, AP, AS, ubias, resid, sel):
    """A rotation row n·ω_rel = n·(R_rel ω_S − ω_P): Q = [−n, 0 | R_relᵀ n, 0]."""
    _matvec(Rrel, n, tmp, True)
    for a in range(3):
        cP[a] = -n[a]
        cP[3 + a] = 0.0
        cS[a] = tmp[a]
        cS[3 + a] = 0.0
    _emit(r, cP, cS, extra, res, AP, AS, ubias, resid, sel)


@kernel
def loop_constraints_kernel(mi, mf, ws, q, v, li, lf, G, ubias, resid, sel, scale):
    """Rows of all loop joints: G (m_loop, nv), 𝔘̊, residuals, node selections Q and the
    rows' scales (the rows come from walks of the node forces, :func:`_node_rows`; the
    scales: :func:`loop_rows`).

    An empty ``v``: positions only (𝔘̊ is then its value at v = 0).
    """
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    nv = m.nv
    if G.shape[1] != nv or G.shape[0] < sel.shape[0] or scale.shape[0] < sel.shape[0]:
        return BAD_SHAPE
    has_v = v.shape[0] > 0
    if has_v:
        if v.shape[0] != nv:
            return BAD_SHAPE
        if nonfinite(v):
            return BAD_SECOND
    loop_kinematics(mi, mf, ws, q, v)
    loop_rows_pass(mi, mf, ws, li, lf, has_v, G, ubias, resid, sel, scale)
    return OK


@helper
def loop_kinematics(mi, mf, ws, q, v):
    """What the loop rows read: body poses (parent and world), and with a nonempty ``v``
    the body velocities and the velocity-product accelerations J̇θ̇ (``w.alpha`` at θ̈ = 0,
    no gravity)."""
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    if v.shape[0] > 0:
        loop_rates(mi, mf, ws, v)


@helper(forceinline=True)
def loop_rates(mi, mf, ws, v):
    """The rates part of :func:`loop_kinematics` (body velocities and J̇θ̇), for a tree
    whose poses at q it left in the workspace before."""
    body_velocities(mi, mf, ws, v)
    body_accelerations(mi, mf, ws, absent(ws), False, True)


@kernel(forceinline=True)
def loop_extent(li, lf):
    """1 + the largest body that carries a loop node (0 without loops): with parent-first
    numbering, the bodies below it hold every node's path to the root."""
    L = loop_tables(li, lf)
    top = -1
    for l in range(L.n):
        top = max(top, L.pred_body[l], L.succ_body[l])
    return top + 1


@helper
def loop_kinematics_upto(mi, mf, ws, q, v, extent):
    """:func:`loop_kinematics` with the world poses and J̇θ̇ of the bodies below ``extent``
    only (:func:`loop_extent`: all the loop rows read; the placements and velocities of
    every body, which the ABA reads too)."""
    joint_placements(mi, mf, ws, q)
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(extent):
        world_pose(m, w, i, w.Rw, w.pw)
    if v.shape[0] > 0:
        body_velocities(mi, mf, ws, v)
        for i in range(extent):  # α(k) = φ*(℘(k), k)α(℘(k)) + a(k) at θ̈ = 0, no gravity
            acceleration_step(m, w, i, absent(ws), False, True)


@helper
def loop_rows_pass(mi, mf, ws, li, lf, has_v, G, ubias, resid, sel, scale):
    """The rows of every loop joint into G, 𝔘̊ (``ubias``), the residuals, the node
    selections and (a nonempty ``scale``) the rows' scales, from the state
    :func:`loop_kinematics` left in the workspace."""
    for l in range(loop_tables(li, lf).n):
        loop_rows(mi, mf, ws, li, lf, l, has_v, G, ubias, resid, sel, scale, True)


@helper
def loop_rows(mi, mf, ws, li, lf, l, has_v, G, ubias, resid, sel, scale, with_G):
    """The rows of loop joint ``l`` (at its ``first_row``), as :func:`loop_rows_pass`.
    Without ``with_G`` its rows of G_c are left as they are (a second call at the same q
    for the bias 𝔘̊ at the rates: G_c does not depend on them, and its walk over the
    nodes' paths is half of the call).

    With ``with_G`` and a nonempty ``scale`` (m,), scale[r] is the size of row r before
    its terms cancel: the sum of |joint-column entry × node-force entry| over the products
    whose sums are the row's entries. A row that constrains nothing (a spherical loop at
    the centre of a spherical joint: the terms cancel exactly) comes out as rounding, a
    few machine epsilons of its scale, whatever the scale is; rank decisions compare a row
    with its scale (:func:`~soadyn.kernels.direct.independent_rows`,
    :class:`~soadyn.closed.cut_joint.RowSpace`), not with the other rows, which may all be
    such rounding."""
    m = model_tables(mi, mf)
    L = loop_tables(li, lf)
    w = workspace_views(ws, m)
    # the small arrays of the loop rows, carved from the workspace's scratch (22 separate
    # allocations were a measurable part of the call): 111 entries after the two 6×6 blocks that
    # jacobian_columns uses
    buf = w.scratch  # carve reads it as its 216 flat entries
    o = 72
    RP = carve(buf, o, (3, 3)); o += 9
    RS = carve(buf, o, (3, 3)); o += 9
    Rrel = carve(buf, o, (3, 3)); o += 9
    dirs = carve(buf, o, (3, 3)); o += 9
    VP = carve(buf, o, 6); o += 6
    VS = carve(buf, o, 6); o += 6
    AP = carve(buf, o, 6); o += 6
    AS = carve(buf, o, 6); o += 6
    cP = carve(buf, o, 6); o += 6
    cS = carve(buf, o, 6); o += 6
    oP = carve(buf, o, 3); o += 3
    oS = carve(buf, o, 3); o += 3
    prel = carve(buf, o, 3); o += 3
    d = carve(buf, o, 3); o += 3
    RwS = carve(buf, o, 3); o += 3  # R_rel ω_S
    RvS = carve(buf, o, 3); o += 3  # R_rel v_S
    dRwS = carve(buf, o, 3); o += 3  # Ṙ_rel ω_S
    dRvS = carve(buf, o, 3); o += 3  # Ṙ_rel v_S
    dprel = carve(buf, o, 3); o += 3
    t1 = carve(buf, o, 3); o += 3
    t2 = carve(buf, o, 3); o += 3
    t3 = carve(buf, o, 3); o += 3
    rv = carve(buf, o, 3)
    bP, bS, kind, row = L.pred_body[l], L.succ_body[l], L.kind[l], L.first_row[l]
    _node(w, bP, L.R_pred[l], L.p_pred[l], has_v, RP, oP, VP, AP)
    _node(w, bS, L.R_succ[l], L.p_succ[l], has_v, RS, oS, VS, AS)
    for a in range(3):
        d[a] = oS[a] - oP[a]
        for c in range(3):
            acc = 0.0
            for k in range(3):
                acc += RP[k, a] * RS[k, c]
            Rrel[a, c] = acc
    _matvec(RP, d, prel, True)
    wP = VP[0:3]
    vP = VP[3:6]
    wS = VS[0:3]
    vS = VS[3:6]
    ax = L.axis[l]
    b1 = L.b1[l]
    b2 = L.b2[l]
    c2 = L.axis2[l]
    _matvec(Rrel, wS, RwS, False)
    _matvec(Rrel, vS, RvS, False)
    _cross(wP, RwS, t1)
    for a in range(3):
        dRwS[a] = -t1[a]
    _cross(wS, vS, t2)
    _matvec(Rrel, t2, t3, False)
    _cross(wP, RvS, t1)
    for a in range(3):
        dRvS[a] = t3[a] - t1[a]
    _cross(wP, prel, t1)
    for a in range(3):
        dprel[a] = RvS[a] - vP[a] - t1[a]
    # ---- rotation rows
    nrot = 0
    if kind == WELD or kind == PRISMATIC:
        rotation_vector(Rrel, rv)
        for i in range(3):
            for a in range(3):
                dirs[i, a] = 1.0 if a == i else 0.0
        nrot = 3
    elif kind == REVOLUTE or kind == CYLINDRICAL or kind == PLANAR:
        _matvec(Rrel, ax, t1, False)
        _cross(ax, t1, t2)  # a × R_rel a: the tilt of the successor's axis
        for a in range(3):
            dirs[0, a] = b1[a]
            dirs[1, a] = b2[a]
        rv[0] = _dot(b1, t2)
        rv[1] = _dot(b2, t2)
        nrot = 2
    for i in range(nrot):
        _emit_rotation(row, dirs[i], _dot(dirs[i], dRwS), rv[i], Rrel, cP, cS, t1, AP, AS, ubias, resid,
                       sel)
        row += 1
    if kind == UNIVERSAL:
        _matvec(Rrel, c2, t1, False)  # successor's axis in P
        _cross(t1, ax, t2)  # n = (R_rel c) × a
        _cross(wS, c2, t3)
        _matvec(Rrel, t3, rv, False)
        _cross(wP, t1, t3)
        for a in range(3):
            rv[a] -= t3[a]  # Ṙ_rel c
        _cross(rv, ax, t3)  # ṅ
        extra = _dot(t2, dRwS)
        for a in range(3):
            extra += t3[a] * (RwS[a] - wP[a])
        _emit_rotation(row, t2, extra, _dot(ax, t1), Rrel, cP, cS, t3, AP, AS, ubias, resid, sel)
        row += 1
    # ---- translation rows
    if kind == PRISMATIC or kind == CYLINDRICAL:
        ntr = 2
        for a in range(3):
            dirs[0, a] = b1[a]
            dirs[1, a] = b2[a]
    elif kind == PLANAR:
        ntr = 1
        for a in range(3):
            dirs[0, a] = ax[a]
    else:
        ntr = 3
        for i in range(3):
            for a in range(3):
                dirs[i, a] = 1.0 if a == i else 0.0
    _cross(dprel, wP, t2)
    for a in range(3):
        t2[a] += dRvS[a]  # Ṙ_rel v_S + ṗ_rel × ω_P
    for i in range(ntr):
        T = dirs[i]
        _cross(T, prel, t1)
        _matvec(Rrel, T, t3, True)
        for a in range(3):
            cP[a] = t1[a]
            cP[3 + a] = -T[a]
            cS[a] = 0.0
            cS[3 + a] = t3[a]
        _emit(row, cP, cS, _dot(T, t2), _dot(T, prel), AP, AS, ubias, resid, sel)
        row += 1
    # the loop's rows of G_c from their node selections: the node forces in world axes
    # times the world joint columns on each node's path up to the common ancestor
    if not with_G:
        return
    r0 = L.first_row[l]
    FP, FS = w.scratch[0], w.scratch[1]
    for r in range(r0, row):
        for k in range(G.shape[1]):
            G[r, k] = 0.0
        if scale.shape[0] > 0:
            scale[r] = 0.0
        node_force_to_world(RP, oP, sel[r, 0:6], FP[r - r0])
        node_force_to_world(RS, oS, sel[r, 6:12], FS[r - r0])
    _node_rows(m, w, bP, bS, FP, FS, row - r0, G, r0, scale)


@kernel
def add_node_forces(sel, loop_of_row, lam, node_body, node_R, node_p, f):
    """f[body] += φ(body, node) Q*λ for both nodes of every loop row: the node forces
    f_nd = Q*λ of the loop multipliers carried to the nodes' bodies [Jain24, "Single loop
    constraint"] (nodes on the world drop out)."""
    for r in range(sel.shape[0]):
        for side in range(2):
            node = 2 * loop_of_row[r] + side
            b = node_body[node]
            if b < 0:
                continue
            x = lam[r]
            n0, n1, n2 = sel[r, 6 * side] * x, sel[r, 6 * side + 1] * x, sel[r, 6 * side + 2] * x
            g0, g1, g2 = sel[r, 6 * side + 3] * x, sel[r, 6 * side + 4] * x, sel[r, 6 * side + 5] * x
            R = node_R[node]
            l0 = R[0, 0] * g0 + R[0, 1] * g1 + R[0, 2] * g2
            l1 = R[1, 0] * g0 + R[1, 1] * g1 + R[1, 2] * g2
            l2 = R[2, 0] * g0 + R[2, 1] * g1 + R[2, 2] * g2
            p0, p1, p2 = node_p[node, 0], node_p[node, 1], node_p[node, 2]
            f[b, 0] += R[0, 0] * n0 + R[0, 1] * n1 + R[0, 2] * n2 + p1 * l2 - p2 * l1
            f[b, 1] += R[1, 0] * n0 + R[1, 1] * n1 + R[1, 2] * n2 + p2 * l0 - p0 * l2
            f[b, 2] += R[2, 0] * n0 + R[2, 1] * n1 + R[2, 2] * n2 + p0 * l1 - p1 * l0
            f[b, 3] += l0
            f[b, 4] += l1
            f[b, 5] += l2
