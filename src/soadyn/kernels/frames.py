"""A frame's world pose and its spatial velocity or acceleration, from the body it is fixed to.

A frame f fixed to body k at the pose (R_f, p_f) in k (the pick-off of [Jain24]; body −1:
the world) has the world pose (R_k R_f, p_k + R_k p_f), and the motion [ω; v] of body k
(body axes, body origin) gives the frame's by a rigid-body transform:

    ω_f = ω,   v_f = v + ω × p_f    (the velocity of the frame origin, body axes)

expressed in the frame's axes (``LOCAL``: R_fᵀ), in world axes (``LOCAL_WORLD_ALIGNED``:
R_k), or in world axes at the world origin (``WORLD``: the body's motion carried to the
world origin, which does not depend on the frame) — Pinocchio's three reference frames. The same for accelerations (the derivative of
the spatial velocity, so no ω × v term, and gravity not included).

The frames' tables are those of :class:`soadyn.dynamics.frames.FrameSet` for every frame of
the model (row = frame index): ``bodies`` (nf,), ``rotations`` (nf, 3, 3) and
``translations`` (nf, 3).
"""
from __future__ import annotations

from numba import njit

from ..core.layout import model_tables, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK
from .kinematics import (body_accelerations, body_velocities, configuration_status, joint_placements, nonfinite,
                         rates_shape_ok, world_poses)
from .primitives import compose_pose, motion_to_world

#: ``reference`` codes of :func:`frame_motion_kernel` (Pinocchio's LOCAL,
#: LOCAL_WORLD_ALIGNED, WORLD); + MOTION_ACCELERATION for accelerations
LOCAL, LOCAL_WORLD_ALIGNED, WORLD = 0, 1, 2
MOTION_ACCELERATION = 3


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _tables_ok(m, frame, bodies, rotations, translations):
    nf = bodies.shape[0]
    return (0 <= frame < nf and rotations.shape[0] == nf and translations.shape[0] == nf
            and bodies[frame] < m.nb)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _frame_world_pose(w, k, frame, rotations, translations):
    """The world pose of the frame into ``w.scratch[0][:3, :3]`` and ``w.scratch[1][0, :3]``
    (needs the world poses)."""
    compose_pose(w.Rw, w.pw, k, rotations, translations, frame, w.scratch, w.scratch[1], 0)
    return w.scratch[0], w.scratch[1][0]


@njit(cache=True)
def frame_placement_kernel(mi, mf, ws, q, frame, bodies, rotations, translations, T):
    """The 4×4 world pose of frame ``frame`` into ``T`` (module docstring)."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if T.shape[0] != 4 or T.shape[1] != 4 or not _tables_ok(m, frame, bodies, rotations, translations):
        return BAD_SHAPE
    k = bodies[frame]
    if k < 0:  # fixed to the world
        R, p = rotations[frame], translations[frame]
    else:
        w = workspace_views(ws, m)
        joint_placements(mi, mf, ws, q)
        world_poses(mi, mf, ws)
        R, p = _frame_world_pose(w, k, frame, rotations, translations)
    for r in range(3):
        for c in range(3):
            T[r, c] = R[r, c]
        T[r, 3] = p[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0
    return OK


@njit(cache=True)
def frame_motion_kernel(mi, mf, ws, q, v, a, frame, bodies, rotations, translations, reference, out):
    """The spatial velocity (``reference`` < MOTION_ACCELERATION) or acceleration
    (``reference`` − MOTION_ACCELERATION) of frame ``frame`` into ``out`` (6,), in the
    reference frame LOCAL, LOCAL_WORLD_ALIGNED or WORLD (module docstring). ``v``, ``a``
    may be empty (zero)."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if (out.shape[0] != 6 or not _tables_ok(m, frame, bodies, rotations, translations) or not rates_shape_ok(m, v)
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
    Rf, pf = rotations[frame], translations[frame]
    o0, o1, o2 = M[0], M[1], M[2]
    if reference == WORLD:  # the body point at the world origin: independent of the frame
        world_poses(mi, mf, ws)
        out[0], out[1], out[2], out[3], out[4], out[5] = motion_to_world(w.Rw, w.pw, k, o0, o1, o2, M[3], M[4], M[5])
        return OK
    # the velocity of the frame origin, body axes
    u0 = M[3] + o1 * pf[2] - o2 * pf[1]
    u1 = M[4] + o2 * pf[0] - o0 * pf[2]
    u2 = M[5] + o0 * pf[1] - o1 * pf[0]
    if reference == LOCAL:  # R_fᵀ
        for c in range(3):
            out[c] = Rf[0, c] * o0 + Rf[1, c] * o1 + Rf[2, c] * o2
            out[3 + c] = Rf[0, c] * u0 + Rf[1, c] * u1 + Rf[2, c] * u2
        return OK
    world_poses(mi, mf, ws)  # LOCAL_WORLD_ALIGNED: R_k
    R = w.Rw[k]
    for r in range(3):
        out[r] = R[r, 0] * o0 + R[r, 1] * o1 + R[r, 2] * o2
        out[3 + r] = R[r, 0] * u0 + R[r, 1] * u1 + R[r, 2] * u2
    return OK
