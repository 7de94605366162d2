"""The configuration space: neutral and random configurations, integration on the joint
manifolds and its inverse.

q has size nq and v size nv: vector joints (revolute, prismatic, helical, composite)
add ``v·dt``; a spherical joint's quaternion rotates by exp(ω dt) in the child frame; a
free joint follows the body-frame screw motion exp([ω; v] dt) on SE(3) — the same
convention as Pinocchio (quaternions (x, y, z, w), see ``docs/notation.md``).
"""
from __future__ import annotations

import math

import numpy as np

from .jit import helper, kernel
from . import validation as val
from .batch import Batch
from .call import Arg, CompiledFunction, Outputs
from .joints import FREE, SPHERICAL, quaternion_rotation, unit_quaternion
from .layout import model_tables
from .status import BAD_FIRST, BAD_QUATERNION, BAD_SECOND, BAD_SHAPE, OK, OVERFLOW

__all__ = ["neutral", "random_configuration", "integrate", "difference", "configuration_rate", "normalize"]


def _bodies(model):
    try:
        return model.bodies
    except AttributeError:
        raise val.not_a_model(model) from None


def neutral(model):
    """Neutral configuration (nq,): zero angles and displacements, identity quaternions
    (empty for a model without bodies)."""
    bodies = _bodies(model)
    return np.concatenate([b.joint.neutral() for b in bodies]) if bodies else np.zeros(0)


def random_configuration(model, rng=None):
    """A random configuration (nq,): joints within finite limits, angles in [−π, π] and
    translations in [−1, 1] m otherwise, uniformly random unit quaternions (empty for a
    model without bodies). ``rng`` is a numpy Generator, a seed or None."""
    bodies = _bodies(model)
    try:
        rng = np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise TypeError(f"rng: expected a numpy Generator, a seed (non-negative int) or None, got {rng!r}") from None
    return np.concatenate([b.joint.random(rng) for b in bodies]) if bodies else np.zeros(0)


# =========================================================================== kernels
@helper(forceinline=True)
def _quat_mul(ax, ay, az, aw, bx, by, bz, bw):
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


@helper(forceinline=True)
def _quat_exp(wx, wy, wz):
    """Unit quaternion of the rotation vector w."""
    th = math.sqrt(wx * wx + wy * wy + wz * wz)
    if th < 1e-8:
        s = 0.5 - th * th / 48.0
        return s * wx, s * wy, s * wz, 1.0 - th * th / 8.0
    s = math.sin(0.5 * th) / th
    return s * wx, s * wy, s * wz, math.cos(0.5 * th)


@helper(forceinline=True)
def _quat_log(x, y, z, w):
    """Rotation vector (|w| ≤ π) of a nonzero quaternion (normalised here, at any scale)."""
    x, y, z, w = unit_quaternion(x, y, z, w)
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-8:
        k = 2.0 / w
    else:
        k = 2.0 * math.atan2(s, w) / s
    return k * x, k * y, k * z


@helper(forceinline=True)
def _se3_coefficients(th):
    """a = sin θ/θ-free coefficients of V(ω) = I + b[ω]× + c[ω]×² (SE(3) exp):
    returns (b, c) = ((1 − cos θ)/θ², (θ − sin θ)/θ³)."""
    if th < 1e-4:
        t2 = th * th
        return 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    return (1.0 - math.cos(th)) / (th * th), (th - math.sin(th)) / (th * th * th)


@helper(forceinline=True)
def _apply_V(wx, wy, wz, b, c, ux, uy, uz):
    """(I + b[ω]× + c[ω]×²) u."""
    cx = wy * uz - wz * uy
    cy = wz * ux - wx * uz
    cz = wx * uy - wy * ux
    ccx = wy * cz - wz * cy
    ccy = wz * cx - wx * cz
    ccz = wx * cy - wy * cx
    return ux + b * cx + c * ccx, uy + b * cy + c * ccy, uz + b * cz + c * ccz


@helper(forceinline=True)
def _unit_quaternion(q, o):
    """The quaternion q[o:o+4] normalised (at any scale); all zeros when it is zero."""
    return unit_quaternion(q[o], q[o + 1], q[o + 2], q[o + 3])


@helper(forceinline=True)
def _result_status(out):
    """OK, or OVERFLOW when a result computed from finite arguments is not finite (an
    overflow: the arguments are too large for float64, e.g. v·dt beyond 1e154 rad)."""
    for k in range(out.shape[0]):
        if not math.isfinite(out[k]):
            return OVERFLOW
    return OK


@helper(forceinline=True)
def _configuration_ok(m, q):
    """Status of a configuration: length, finiteness, nonzero quaternions."""
    if q.shape[0] != m.nq:
        return BAD_SHAPE
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return BAD_FIRST
    for i in range(m.nb):
        jt = m.joint_type[i]
        if jt == SPHERICAL or jt == FREE:
            o = m.q_index[i] + (3 if jt == FREE else 0)
            if q[o] == 0.0 and q[o + 1] == 0.0 and q[o + 2] == 0.0 and q[o + 3] == 0.0:
                return BAD_QUATERNION
    return OK


@helper(forceinline=True)
def _state_ok(m, q, v):
    """Status of (q, v): lengths, finiteness, nonzero quaternions."""
    status = _configuration_ok(m, q)
    if status != OK:
        return status
    if v.shape[0] != m.nv:
        return BAD_SHAPE
    for k in range(v.shape[0]):
        if not math.isfinite(v[k]):
            return BAD_SECOND
    return OK


@kernel
def integrate_kernel(mi, mf, ws, q, v, dt, out):
    """:func:`integrate_into` from Python (:func:`integrate`)."""
    return integrate_into(mi, mf, ws, q, v, dt, out)


@helper
def integrate_into(mi, mf, ws, q, v, dt, out):
    """out = q ⊕ v·dt joint by joint; quaternion joints move on SO(3) / SE(3); returns a
    status code. The body of :func:`integrate_kernel`, which compiled code calls (the
    rollouts and the steps): a kernel is optimized and emitted on its own for its Python
    entry, and a compiled caller would link it in and optimize it again."""
    m = model_tables(mi, mf)
    status = _state_ok(m, q, v)
    if status != OK or out.shape[0] != m.nq:
        return BAD_SHAPE if status == OK else status
    for i in range(m.nb):
        jtype = m.joint_type[i]
        qi = m.q_index[i]
        vi = m.v_index[i]
        if jtype == SPHERICAL or jtype == FREE:
            o = 3 if jtype == FREE else 0
            wx, wy, wz = v[vi] * dt, v[vi + 1] * dt, v[vi + 2] * dt
            x, y, z, w = _unit_quaternion(q, qi + o)
            if jtype == FREE:
                # p' = p + R V(ω dt) (v dt): the body-frame screw motion (SE(3) exp)
                th = math.sqrt(wx * wx + wy * wy + wz * wz)
                b, c = _se3_coefficients(th)
                dx, dy, dz = _apply_V(wx, wy, wz, b, c, v[vi + 3] * dt, v[vi + 4] * dt, v[vi + 5] * dt)
                r = quaternion_rotation(x, y, z, w)
                out[qi] = q[qi] + r[0] * dx + r[1] * dy + r[2] * dz
                out[qi + 1] = q[qi + 1] + r[3] * dx + r[4] * dy + r[5] * dz
                out[qi + 2] = q[qi + 2] + r[6] * dx + r[7] * dy + r[8] * dz
            ex, ey, ez, ew = _quat_exp(wx, wy, wz)
            x, y, z, w = _quat_mul(x, y, z, w, ex, ey, ez, ew)
            out[qi + o], out[qi + o + 1], out[qi + o + 2], out[qi + o + 3] = unit_quaternion(x, y, z, w)
        else:
            for k in range(m.joint_nq[i]):
                out[qi + k] = q[qi + k] + v[vi + k] * dt
    return _result_status(out)


@kernel
def difference_kernel(mi, mf, ws, q0, q1, out):
    """out = the velocity v with q0 ⊕ v = q1 (unit time), the inverse of ``integrate_kernel``."""
    m = model_tables(mi, mf)
    status = _configuration_ok(m, q0)
    if status == OK:
        status = _configuration_ok(m, q1)
        if status == BAD_FIRST:
            status = BAD_SECOND
    if status == OK and out.shape[0] != m.nv:
        status = BAD_SHAPE
    if status != OK:
        return status
    for i in range(m.nb):
        jtype = m.joint_type[i]
        qi = m.q_index[i]
        vi = m.v_index[i]
        if jtype == SPHERICAL or jtype == FREE:
            o = 3 if jtype == FREE else 0
            ax, ay, az, aw = _unit_quaternion(q0, qi + o)
            bx, by, bz, bw = _unit_quaternion(q1, qi + o)
            x, y, z, w = _quat_mul(-ax, -ay, -az, aw, bx, by, bz, bw)
            wx, wy, wz = _quat_log(x, y, z, w)
            out[vi], out[vi + 1], out[vi + 2] = wx, wy, wz
            if jtype == FREE:
                # u = V(ω)⁻¹ R0ᵀ (p1 − p0), V⁻¹ = I − ½[ω]× + e[ω]×², e = (1 − θ/2·cot(θ/2))/θ²
                r = quaternion_rotation(ax, ay, az, aw)
                dx, dy, dz = q1[qi] - q0[qi], q1[qi + 1] - q0[qi + 1], q1[qi + 2] - q0[qi + 2]
                lx = r[0] * dx + r[3] * dy + r[6] * dz
                ly = r[1] * dx + r[4] * dy + r[7] * dz
                lz = r[2] * dx + r[5] * dy + r[8] * dz
                th = math.sqrt(wx * wx + wy * wy + wz * wz)
                if th < 1e-4:
                    e = 1.0 / 12.0 + th * th / 720.0
                else:
                    e = (1.0 - 0.5 * th * math.cos(0.5 * th) / math.sin(0.5 * th)) / (th * th)
                ux, uy, uz = _apply_V(wx, wy, wz, -0.5, e, lx, ly, lz)
                out[vi + 3], out[vi + 4], out[vi + 5] = ux, uy, uz
        else:
            for k in range(m.joint_nq[i]):
                out[vi + k] = q1[qi + k] - q0[qi + k]
    return _result_status(out)


@kernel
def configuration_rate_kernel(mi, mf, ws, q, v, out):
    """out = q̇ for velocity v: q̇ = v for vector joints, ½ q ⊗ (ω, 0) for quaternions, ṗ = R v
    for the position of a free joint."""
    m = model_tables(mi, mf)
    status = _state_ok(m, q, v)
    if status != OK or out.shape[0] != m.nq:
        return BAD_SHAPE if status == OK else status
    for i in range(m.nb):
        jtype = m.joint_type[i]
        qi = m.q_index[i]
        vi = m.v_index[i]
        if jtype == SPHERICAL or jtype == FREE:
            o = 3 if jtype == FREE else 0
            x, y, z, w = q[qi + o], q[qi + o + 1], q[qi + o + 2], q[qi + o + 3]
            dx, dy, dz, dw = _quat_mul(x, y, z, w, v[vi], v[vi + 1], v[vi + 2], 0.0)
            out[qi + o], out[qi + o + 1], out[qi + o + 2], out[qi + o + 3] = 0.5 * dx, 0.5 * dy, 0.5 * dz, 0.5 * dw
            if jtype == FREE:
                r = quaternion_rotation(x, y, z, w)
                for a in range(3):
                    out[qi + a] = r[3 * a] * v[vi + 3] + r[3 * a + 1] * v[vi + 4] + r[3 * a + 2] * v[vi + 5]
        else:
            for k in range(m.joint_nq[i]):
                out[qi + k] = v[vi + k]
    return _result_status(out)


@kernel
def normalize_kernel(mi, mf, ws, q, out):
    """out = q with unit quaternions."""
    m = model_tables(mi, mf)
    if q.shape[0] != m.nq or out.shape[0] != m.nq:
        return BAD_SHAPE
    for k in range(m.nq):
        if not math.isfinite(q[k]):
            return BAD_FIRST
        out[k] = q[k]
    for i in range(m.nb):
        jtype = m.joint_type[i]
        if jtype == SPHERICAL or jtype == FREE:
            o = m.q_index[i] + (3 if jtype == FREE else 0)
            x, y, z, w = _unit_quaternion(q, o)
            if x == 0.0 and y == 0.0 and z == 0.0 and w == 0.0:
                return BAD_QUATERNION
            out[o], out[o + 1], out[o + 2], out[o + 3] = x, y, z, w
    return OK


# =========================================================================== public functions
def _time_step(dt):
    return val.finite_scalar(dt, "dt")


_INTEGRATE = CompiledFunction(integrate_kernel, Batch.loop(), (Arg("q", "nq"), Arg("v", "nv")),
                              Outputs.shaped("q_shape"), params=(_time_step,), names=("q", "v", "dt"))
_DIFFERENCE = CompiledFunction(difference_kernel, Batch.loop(), (Arg("q0", "nq"), Arg("q1", "nq")),
                               Outputs.shaped("v_shape"))
_RATE = CompiledFunction(configuration_rate_kernel, Batch.loop(), (Arg("q", "nq"), Arg("v", "nv")),
                         Outputs.shaped("q_shape"))
_NORMALIZE = CompiledFunction(normalize_kernel, Batch.loop(), (Arg("q", "nq"),), Outputs.shaped("q_shape"))


def integrate(model, q, v, dt=1.0, *, out=None):
    """Configuration reached from ``q`` moving with constant velocity ``v`` for ``dt`` [s].

    Vector joints add ``v·dt``; spherical joints rotate by exp(ω dt) in the child frame;
    free joints follow the body-frame screw motion exp([ω; v] dt) (SE(3)), the same
    convention as Pinocchio. Quaternions are renormalised (a nonzero quaternion of any
    scale is a rotation; a zero one raises ValueError naming its joint).

    Parameters: q (nq,) or (B, nq); v (nv,) or (B, nv), required (not None); dt a finite
    real number [s] (not a string). Returns (nq,) or (B, nq). Raises OverflowError when
    v·dt is too large for the result to be finite (it would be inf or NaN).
    """
    if type(dt) is not float or not math.isfinite(dt):  # the fast path takes any float, NaN too
        dt = _time_step(dt)
    return _INTEGRATE(model, (q, v), (dt,), out)


def difference(model, q0, q1, *, out=None):
    """Velocity ``v`` (nv,) such that ``integrate(model, q0, v, 1) == q1`` (the log map on
    SO(3) / SE(3) for quaternion joints). q0, q1: (nq,) or (B, nq)."""
    return _DIFFERENCE(model, (q0, q1), (), out)


def configuration_rate(model, q, v, *, out=None):
    """Time derivative q̇ (nq,) of the configuration ``q`` moving with velocity ``v`` (nv,),
    required (not None)."""
    return _RATE(model, (q, v), (), out)


def normalize(model, q, *, out=None):
    """A copy of ``q`` (nq,) with unit quaternions."""
    return _NORMALIZE(model, (q,), (), out)
