"""A frame's world pose and its spatial velocity or acceleration, from the body it is fixed to.

A frame f fixed to body k at the pose (R_f, p_f) in k (the pick-off of [Jain24]; body −1:
the world) has the world pose (R_k R_f, p_k + R_k p_f), and the motion [ω; v] of body k
(body axes, body origin) gives the frame's by a rigid-body transform:

    ω_f = ω,   v_f = v + ω × p_f    (the velocity of the frame origin, body axes)

expressed in the frame's axes (``LOCAL``: R_fᵀ), in world axes (``LOCAL_WORLD_ALIGNED``:
R_k), or in world axes at the world origin (``WORLD``: v_f − ω_w × o_f, o_f the frame
origin) — Pinocchio's three reference frames. The same for accelerations (the derivative of
the spatial velocity, so no ω × v term, and gravity not included).

The frames' tables are (nf,) bodies and (nf, 3, 4) poses [R_f | p_f], one row per frame of
the model.
"""
from __future__ import annotations

from numba import njit

from ..core.layout import model_tables, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK
from .kinematics import (body_accelerations, body_velocities, configuration_status, joint_placements, nonfinite,
                         rates_shape_ok, world_poses)

#: ``reference`` codes of :func:`frame_motion_kernel` (Pinocchio's LOCAL,
#: LOCAL_WORLD_ALIGNED, WORLD); + MOTION_ACCELERATION for accelerations
LOCAL, LOCAL_WORLD_ALIGNED, WORLD = 0, 1, 2
MOTION_ACCELERATION = 3


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _tables_ok(m, frame, bodies, poses):
    nf = bodies.shape[0]
    return (0 <= frame < nf and poses.shape[0] == nf and poses.shape[1] == 3 and poses.shape[2] == 4
            and bodies[frame] < m.nb)


@njit(cache=True)
def frame_placement_kernel(mi, mf, ws, q, frame, bodies, poses, T):
    """The 4×4 world pose of frame ``frame`` into ``T`` (module docstring)."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if T.shape[0] != 4 or T.shape[1] != 4 or not _tables_ok(m, frame, bodies, poses):
        return BAD_SHAPE
    P = poses[frame]
    k = bodies[frame]
    for c in range(3):
        T[3, c] = 0.0
    T[3, 3] = 1.0
    if k < 0:  # fixed to the world
        for r in range(3):
            for c in range(4):
                T[r, c] = P[r, c]
        return OK
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    R, p = w.Rw[k], w.pw[k]
    for r in range(3):
        for c in range(3):
            T[r, c] = R[r, 0] * P[0, c] + R[r, 1] * P[1, c] + R[r, 2] * P[2, c]
        T[r, 3] = p[r] + R[r, 0] * P[0, 3] + R[r, 1] * P[1, 3] + R[r, 2] * P[2, 3]
    return OK


@njit(cache=True)
def frame_motion_kernel(mi, mf, ws, q, v, a, frame, bodies, poses, reference, out):
    """The spatial velocity (``reference`` < MOTION_ACCELERATION) or acceleration
    (``reference`` − MOTION_ACCELERATION) of frame ``frame`` into ``out`` (6,), in the
    reference frame LOCAL, LOCAL_WORLD_ALIGNED or WORLD (module docstring). ``v``, ``a``
    may be empty (zero)."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if (out.shape[0] != 6 or not _tables_ok(m, frame, bodies, poses) or not rates_shape_ok(m, v)
            or not rates_shape_ok(m, a) or not 0 <= reference < 2 * MOTION_ACCELERATION):
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    if nonfinite(a):
        return BAD_THIRD
    k = bodies[frame]
    for e in range(6):
        out[e] = 0.0
    if k < 0:  # a frame on the world does not move
        return OK
    w = workspace_views(ws, m)
    has_v = v.shape[0] > 0
    joint_placements(mi, mf, ws, q)
    if has_v:
        body_velocities(mi, mf, ws, v)
    if reference >= MOTION_ACCELERATION:
        body_accelerations(mi, mf, ws, a, False, has_v)
        M = w.alpha[k]
        reference -= MOTION_ACCELERATION
    elif has_v:
        M = w.V[k]
    else:
        return OK
    P = poses[frame]
    # ω and the velocity of the frame origin, body axes
    o0, o1, o2 = M[0], M[1], M[2]
    u0 = M[3] + o1 * P[2, 3] - o2 * P[1, 3]
    u1 = M[4] + o2 * P[0, 3] - o0 * P[2, 3]
    u2 = M[5] + o0 * P[1, 3] - o1 * P[0, 3]
    if reference == LOCAL:  # R_fᵀ
        for c in range(3):
            out[c] = P[0, c] * o0 + P[1, c] * o1 + P[2, c] * o2
            out[3 + c] = P[0, c] * u0 + P[1, c] * u1 + P[2, c] * u2
        return OK
    world_poses(mi, mf, ws)
    R, p = w.Rw[k], w.pw[k]
    for r in range(3):
        out[r] = R[r, 0] * o0 + R[r, 1] * o1 + R[r, 2] * o2
        out[3 + r] = R[r, 0] * u0 + R[r, 1] * u1 + R[r, 2] * u2
    if reference == WORLD:  # the body point at the world origin: v − ω × o_f
        f0 = p[0] + R[0, 0] * P[0, 3] + R[0, 1] * P[1, 3] + R[0, 2] * P[2, 3]
        f1 = p[1] + R[1, 0] * P[0, 3] + R[1, 1] * P[1, 3] + R[1, 2] * P[2, 3]
        f2 = p[2] + R[2, 0] * P[0, 3] + R[2, 1] * P[1, 3] + R[2, 2] * P[2, 3]
        w0, w1, w2 = out[0], out[1], out[2]
        out[3] -= w1 * f2 - w2 * f1
        out[4] -= w2 * f0 - w0 * f2
        out[5] -= w0 * f1 - w1 * f0
    return OK
