"""Constraint kinematics: G_c, the velocity right-hand side 𝔘, the acceleration bias 𝔘̊
and the position residuals 𝔡 (seed 001, "Holonomic Bilateral Constraints" and
"Constraint matrix with loop constraints": G_c = Q J = Q B* φ* H*).

For a loop joint with predecessor node P and successor node S, the node velocities
V_nd = [V_P; V_S] (each in its own frame, angular first) come from the node Jacobians
J = B*φ*H* (``frame_jacobian_kernel``, local reference), and the loop's rows are
Q V_nd with the 12-column selection Q of :mod:`soadyn.closed.constraints`. Their time
derivative is

    𝔡̈ = Q (J θ̈ + J̇ θ̇) + Q̇ V_nd,    so   𝔘̊ = −(Q J̇ θ̇ + Q̇ V_nd),

where J̇θ̇ is the node acceleration at θ̈ = 0 (the velocity-product accelerations a(k)
carried by the scatter recursion α = φ*(H*θ̈ + a), seed 002 eq. 15, without gravity),
and Q̇ comes from the relative pose (R_rel, p_rel) of S in P moving with
Ṙ_rel = R_rel[ω_S]× − [ω_P]× R_rel and ṗ_rel = R_rel v_S − v_P − ω_P × p_rel.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import _validation as val
from ..dynamics.jacobians import frame_jacobian_kernel
from ..dynamics.kinematics import _kinematics
from .constraints import (CYLINDRICAL, PLANAR, PRISMATIC, REVOLUTE, UNIVERSAL, WELD,
                          constraint_set)

__all__ = ["ConstraintState", "evaluate_constraints", "evaluate_constraint_set", "constraint_jacobian",
           "constraint_residual", "constraint_acceleration_bias"]


# --------------------------------------------------------------------------- kernel
@njit(inline="always", cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(inline="always", cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(inline="always", cache=True)
def _matvec(R, x, out, transpose):
    for a in range(3):
        acc = 0.0
        for k in range(3):
            acc += (R[k, a] if transpose else R[a, k]) * x[k]
        out[a] = acc


@njit(cache=True)
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


@njit(cache=True)
def _node(b, lf, o, Rb, pb, Vb, Ab, has_v, Rn, on, Vn, An):
    """World pose (Rn, on) and local velocity/velocity-product acceleration of a node
    fixed to body ``b`` at the pose stored at ``lf[o:o+12]`` (R row-major, p)."""
    if b < 0:
        for a in range(3):
            on[a] = lf[o + 9 + a]
            for c in range(3):
                Rn[a, c] = lf[o + 3 * a + c]
        for a in range(6):
            Vn[a] = 0.0
            An[a] = 0.0
        return
    for a in range(3):
        acc = pb[b, a]
        for k in range(3):
            acc += Rb[b, a, k] * lf[o + 9 + k]
        on[a] = acc
        for c in range(3):
            acc = 0.0
            for k in range(3):
                acc += Rb[b, a, k] * lf[o + 3 * k + c]
            Rn[a, c] = acc
    if not has_v:
        for a in range(6):
            Vn[a] = 0.0
            An[a] = 0.0
        return
    _node_motion(Vb, b, lf, o, Vn)
    _node_motion(Ab, b, lf, o, An)


@njit(cache=True)
def _node_motion(src, b, lf, o, dst):
    """dst = body-``b`` motion vector src[b] expressed at the node (its axes and origin)."""
    w0, w1, w2 = src[b, 0], src[b, 1], src[b, 2]
    p0, p1, p2 = lf[o + 9], lf[o + 10], lf[o + 11]
    l0 = src[b, 3] + w1 * p2 - w2 * p1
    l1 = src[b, 4] + w2 * p0 - w0 * p2
    l2 = src[b, 5] + w0 * p1 - w1 * p0
    for a in range(3):  # Rᵀ x, with R stored row-major at lf[o:o+9]
        dst[a] = lf[o + a] * w0 + lf[o + 3 + a] * w1 + lf[o + 6 + a] * w2
        dst[3 + a] = lf[o + a] * l0 + lf[o + 3 + a] * l1 + lf[o + 6 + a] * l2


@njit(cache=True)
def _emit(r, cP, cS, extra, res, JP, JS, AP, AS, nv, G, ubias, resid, sel):
    """One constraint row: G row = cP·J_P + cS·J_S, 𝔘̊ = −(cP·A_P + cS·A_S + extra)."""
    acc = extra
    for a in range(6):
        sel[r, a] = cP[a]
        sel[r, 6 + a] = cS[a]
        acc += cP[a] * AP[a] + cS[a] * AS[a]
    ubias[r] = -acc
    resid[r] = res
    for k in range(nv):
        s = 0.0
        for a in range(6):
            s += cP[a] * JP[a, k] + cS[a] * JS[a, k]
        G[r, k] = s


@njit(cache=True)
def _emit_rotation(r, n, extra, res, Rrel, cP, cS, tmp, J, AP, AS, nv, G, ubias, resid, sel):
    """A rotation row n·ω_rel = n·(R_rel ω_S − ω_P): Q = [−n, 0 | R_relᵀ n, 0]."""
    _matvec(Rrel, n, tmp, True)
    for a in range(3):
        cP[a] = -n[a]
        cP[3 + a] = 0.0
        cS[a] = tmp[a]
        cS[3 + a] = 0.0
    _emit(r, cP, cS, extra, res, J[0], J[1], AP, AS, nv, G, ubias, resid, sel)


@njit(cache=True)
def loop_constraints_kernel(mi, mf, q, v, ws, nv, loop_i, loop_f, Rb, pb, Vb, Ab, a0, J,
                            G, ubias, resid, sel):
    """Rows of all loop joints: G (m_loop, nv), 𝔘̊, residuals and node selections Q.

    ``v`` of length 0: positions only (𝔘̊ is then the value at v = 0).
    """
    st = _kinematics(mi, mf, q, v, a0, ws, nv, False, Rb, pb, Vb, Ab)
    if st != val.OK:
        return st
    has_v = v.shape[0] > 0
    RP = np.empty((3, 3))
    RS = np.empty((3, 3))
    Rrel = np.empty((3, 3))
    oP = np.empty(3)
    oS = np.empty(3)
    VP = np.empty(6)
    VS = np.empty(6)
    AP = np.empty(6)
    AS = np.empty(6)
    prel = np.empty(3)
    d = np.empty(3)
    cP = np.empty(6)
    cS = np.empty(6)
    RwS = np.empty(3)  # R_rel ω_S
    RvS = np.empty(3)  # R_rel v_S
    dRwS = np.empty(3)  # Ṙ_rel ω_S
    dRvS = np.empty(3)  # Ṙ_rel v_S
    dprel = np.empty(3)
    t1 = np.empty(3)
    t2 = np.empty(3)
    t3 = np.empty(3)
    rv = np.empty(3)
    dirs = np.empty((3, 3))
    for l in range(loop_i.shape[0]):
        bP, bS, kind, row = loop_i[l, 0], loop_i[l, 1], loop_i[l, 2], loop_i[l, 3]
        lf = loop_f[l]
        _node(bP, lf, 0, Rb, pb, Vb, Ab, has_v, RP, oP, VP, AP)
        _node(bS, lf, 12, Rb, pb, Vb, Ab, has_v, RS, oS, VS, AS)
        frame_jacobian_kernel(mi, mf, q, ws, nv, bP, lf[0:9].reshape((3, 3)), lf[9:12], 0, J[0])
        frame_jacobian_kernel(mi, mf, q, ws, nv, bS, lf[12:21].reshape((3, 3)), lf[21:24], 0, J[1])
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
        ax = lf[24:27]
        b1 = lf[27:30]
        b2 = lf[30:33]
        c2 = lf[33:36]
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
            _emit_rotation(row, dirs[i], _dot(dirs[i], dRwS), rv[i], Rrel, cP, cS, t1, J, AP, AS, nv,
                           G, ubias, resid, sel)
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
            _emit_rotation(row, t2, extra, _dot(ax, t1), Rrel, cP, cS, t3, J, AP, AS, nv, G, ubias, resid, sel)
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
            _emit(row, cP, cS, _dot(T, t2), _dot(T, prel), J[0], J[1], AP, AS, nv, G, ubias, resid, sel)
            row += 1
    return val.OK


# --------------------------------------------------------------------------- evaluation
class ConstraintState:
    """The constraints of a model evaluated at (q, v, t).

    Attributes
    ----------
    G : (m, nv) G_c, the rows of every constraint (redundant rows allowed).
    velocity_rhs : (m,) 𝔘, the velocity constraint reads G v = 𝔘.
    acceleration_bias : (m,) 𝔘̊ = 𝔘̇ − Ġ_c v, the acceleration constraint reads G q̈ = 𝔘̊
        (None when not requested).
    residual : (m,) position residuals 𝔡(q, t) (zero on non-holonomic rows).
    node_selection : (m_loop, 12) the loop rows' selection Q acting on
        [V_P; V_S] (local node frames, angular first), see ``ConstraintSet.node_frames``:
        the loop rows of G are Q_P J_P + Q_S J_S.
    constraints : the :class:`~soadyn.closed.constraints.ConstraintSet`.
    """

    def __init__(self, constraints, G, velocity_rhs, acceleration_bias, residual, node_selection, t):
        self.constraints = constraints
        self.G = G
        self.velocity_rhs = velocity_rhs
        self.acceleration_bias = acceleration_bias
        self.residual = residual
        self.node_selection = node_selection
        self.t = t

    def velocity_residual(self, v):
        """G v − 𝔘 (m,)."""
        return self.G @ v - self.velocity_rhs

    def loop_selection(self):
        """Q (m_loop, 12 n_loops): block-diagonal, each loop's rows acting on its own two
        nodes, so that the loop rows of G are Q J with J the stacked local node Jacobians
        and the node forces are f_nd = Q*λ (seed 001, "Single loop constraint")."""
        cs = self.constraints
        Q = np.zeros((cs.m_loop, 12 * len(cs.node_frames) // 2))
        cols = 12 * cs.loop_of_row[:, None] + np.arange(12)
        Q[np.arange(cs.m_loop)[:, None], cols] = self.node_selection
        return Q


class _LoopBuffers:
    """Body poses, velocities, velocity-product accelerations and two node Jacobians."""

    def __init__(self, model):
        c = model.compiled
        self.Rb = np.empty((c.nb, 3, 3))
        self.pb = np.empty((c.nb, 3))
        self.Vb = np.empty((c.nb, 6))
        self.Ab = np.empty((c.nb, 6))
        self.a0 = np.zeros(c.nv)
        self.J = np.empty((2, 6, c.nv))


_NO_V = np.zeros(0)


def evaluate_constraints(model, q, v=None, t=0.0, *, bias=True, workspace=None):
    """Evaluate all constraints of ``model`` at (q, v, t); returns a :class:`ConstraintState`.

    ``v`` is needed for the acceleration bias (default zero velocity); ``bias=False``
    skips it (positions and G only).
    """
    cs = constraint_set(model)
    c = cs.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    vv = None if v is None else val.vector(v, c.nv, "v", batch_ok=False)
    return evaluate_constraint_set(cs, q, vv, float(t), bias, workspace)


def evaluate_constraint_set(cs, q, v, t, bias, workspace=None):
    """:func:`evaluate_constraints` for a :class:`~soadyn.closed.constraints.ConstraintSet`
    (all of a model's constraints or a subset, e.g. one cluster's), without input checks:
    q (nq,), v (nv,) or None (zero velocity), t float."""
    model, c = cs.model, cs.compiled
    vv = _NO_V if v is None else v
    m = cs.m
    G = np.zeros((m, c.nv))
    U = np.zeros(m)
    ub = np.zeros(m)  # the loop kernel fills it in any case
    res = np.zeros(m)
    sel = np.zeros((cs.m_loop, 12))
    if cs.m_loop:
        bufs = getattr(cs.buffers, "loops", None)  # per thread, like the model's workspace
        if bufs is None:
            bufs = cs.buffers.loops = _LoopBuffers(model)
        ws = workspace if workspace is not None else model.workspace()
        st = loop_constraints_kernel(c.mi, c.mf, q, vv, ws.buffer, c.nv, cs.loop_int, cs.loop_float,
                                     bufs.Rb, bufs.pb, bufs.Vb, bufs.Ab, bufs.a0, bufs.J,
                                     G, ub, res, sel)
        if st:
            val.raise_status(st, ("q", "v"))
    if cs.m_coupling:
        r = slice(cs.m_loop, cs.m_loop + cs.m_coupling)
        G[r] = cs.coupling_v
        res[r] = cs.coupling_q @ q - cs.coupling_offset
    if cs.user_blocks:
        vz = vv if vv.size else np.zeros(c.nv)
        for blk in cs.user_blocks:
            uc = blk.source
            if uc.joints is None and uc.nv != c.nv:
                raise ValueError(f"constraint {uc.name!r} was added when the model had {uc.nv} velocity "
                                 f"coordinates; it now has {c.nv}: add constraints after the bodies")
            Gu, Uu, bu, du = uc.evaluate(q, vz, t, bias)
            G[blk.rows], U[blk.rows], res[blk.rows] = Gu, Uu, du
            if bias:
                ub[blk.rows] = bu
    return ConstraintState(cs, G, U, ub if bias else None, res, sel, t)


def constraint_jacobian(model, q, t=0.0):
    """G_c (m, nv): the constraint rows of every loop joint, coupling and user constraint
    (seed 001: G_c = Q B* φ* H* for loop constraints), in that order; redundant rows are
    kept (a planar loop closed by a spatial joint gives zero or dependent rows).

    ``soadyn.closed.constraint_set(model).blocks`` names the rows of each constraint.
    """
    return evaluate_constraints(model, q, None, t, bias=False).G


def constraint_residual(model, q, t=0.0):
    """Position residuals 𝔡(q, t) (m,) [m, rad]; zero on non-holonomic rows."""
    return evaluate_constraints(model, q, None, t, bias=False).residual


def constraint_acceleration_bias(model, q, v, t=0.0):
    """𝔘̊ (m,) with 𝔡̈ = G_c q̈ − 𝔘̊ (seed 001: 𝔘̊ ≜ 𝔘̇ − Ġ_c θ̇)."""
    return evaluate_constraints(model, q, v, t).acceleration_bias
