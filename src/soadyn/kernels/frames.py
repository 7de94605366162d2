"""A frame's world pose and its spatial velocity or acceleration, from the body it is fixed to.

A frame f fixed to body k at the pose (R_f, p_f) in k (the pick-off of [Jain24]; body −1:
the world) has the world pose (R_k R_f, p_k + R_k p_f), and the motion [ω; v] of body k
(body axes, body origin) gives the frame's by a rigid-body transform:

    ω_f = ω,   v_f = v + ω × p_f    (the velocity of the frame origin, body axes)

expressed in the frame's axes (``LOCAL``: R_fᵀ), in world axes (``LOCAL_WORLD_ALIGNED``:
R_k), or in world axes at the world origin (``WORLD``: the body's motion carried to the
world origin, which does not depend on the frame) — Pinocchio's three reference frames. The same for accelerations (the derivative of
the spatial velocity, so no ω × v term, and gravity not included).

A frame is given to the kernels by its body (−1: the world) and its pose there (``fR``,
``fp``). Its pose and velocity need only the bodies on its support path: one walk from
the body to the root (:func:`~soadyn.kernels.kinematics.pose_to_parent`) gives the
frame's pose in each of them and at the root its world pose, and the velocity is the
sum of the Jacobian's columns times θ̇ on the way (:mod:`soadyn.kernels.jacobians`).
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK
from .jacobians import LOCAL, WORLD, frame_column, local_to_reference
from .kinematics import (body_accelerations, body_velocities, configuration_status, frame_pose_in_body,
                         joint_placements, joint_transform, nonfinite, pose_to_parent, rates_shape_ok, world_poses)
from .primitives import motion_to_world


@helper(forceinline=True)
def _frame_ok(m, body, fR, fp):
    return body < m.nb and fR.shape[0] == 3 and fR.shape[1] == 3 and fp.shape[0] == 3


@kernel
def frame_placement_kernel(mi, mf, ws, q, body, fR, fp, T):
    """The 4×4 world pose of the frame at pose (fR, fp) in body ``body`` into ``T``: the
    walk from the body to the root (module docstring), bodies off the path untouched."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if T.shape[0] != 4 or T.shape[1] != 4 or not _frame_ok(m, body, fR, fp):
        return BAD_SHAPE
    frame_pose_in_body(T, fR, fp)
    if body >= 0:
        w = workspace_views(ws, m)
        k = body
        while k >= 0:
            if m.axis_code[k] == 0:
                joint_transform(m, w, k, q)
            pose_to_parent(m, w, k, q, T)
            k = m.parent[k]
    for c in range(3):
        T[3, c] = 0.0
    T[3, 3] = 1.0
    return OK


@kernel
def frame_velocity_kernel(mi, mf, ws, q, v, body, fR, fp, reference, out):
    """The spatial velocity of the frame at pose (fR, fp) in body ``body`` into ``out``
    (6,), in the reference frame LOCAL, LOCAL_WORLD_ALIGNED or WORLD (module docstring):
    J θ̇ summed column by column on the walk to the root. ``v`` may be empty (zero)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if out.shape[0] != 6 or not _frame_ok(m, body, fR, fp) or not rates_shape_ok(m, v) \
            or not LOCAL <= reference <= WORLD:
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    o0 = o1 = o2 = o3 = o4 = o5 = 0.0
    if body >= 0 and v.shape[0] > 0:
        w = workspace_views(ws, m)
        X = w.scratch[0]
        frame_pose_in_body(X, fR, fp)
        k = body
        while k >= 0:
            if m.axis_code[k] == 0:
                joint_transform(m, w, k, q)
            vk = m.v_index[k]
            for col in range(vk, vk + m.joint_nv[k]):
                x = v[col]
                c0, c1, c2, c3, c4, c5 = frame_column(m, w, k, col, X)
                o0 += c0 * x
                o1 += c1 * x
                o2 += c2 * x
                o3 += c3 * x
                o4 += c4 * x
                o5 += c5 * x
            pose_to_parent(m, w, k, q, X)
            k = m.parent[k]
        if reference != LOCAL:
            o0, o1, o2, o3, o4, o5 = local_to_reference(X, reference, o0, o1, o2, o3, o4, o5)
    out[0], out[1], out[2], out[3], out[4], out[5] = o0, o1, o2, o3, o4, o5
    return OK


@kernel
def frame_acceleration_kernel(mi, mf, ws, q, v, a, body, fR, fp, reference, out):
    """The spatial acceleration (the derivative of the spatial velocity, gravity not
    included) of the frame at pose (fR, fp) in body ``body`` into ``out`` (6,), in the
    reference frame LOCAL, LOCAL_WORLD_ALIGNED or WORLD (module docstring), from the
    body accelerations of [Jain12, eq. 15]. ``v``, ``a`` may be empty (zero)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if (out.shape[0] != 6 or not _frame_ok(m, body, fR, fp) or not rates_shape_ok(m, v)
            or not rates_shape_ok(m, a) or not LOCAL <= reference <= WORLD):
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    if nonfinite(a):
        return BAD_THIRD
    k = body
    for e in range(6):
        out[e] = 0.0
    if k < 0:  # a frame on the world does not move
        return OK
    w = workspace_views(ws, m)
    has_v = v.shape[0] > 0
    joint_placements(mi, mf, ws, q)
    if has_v:
        body_velocities(mi, mf, ws, v)
    body_accelerations(mi, mf, ws, a, False, has_v)
    M = w.alpha[k]
    o0, o1, o2 = M[0], M[1], M[2]
    if reference == WORLD:  # the body point at the world origin: independent of the frame
        world_poses(mi, mf, ws)
        out[0], out[1], out[2], out[3], out[4], out[5] = motion_to_world(w.Rw, w.pw, k, o0, o1, o2, M[3], M[4], M[5])
        return OK
    # the acceleration of the frame origin, body axes
    u0 = M[3] + o1 * fp[2] - o2 * fp[1]
    u1 = M[4] + o2 * fp[0] - o0 * fp[2]
    u2 = M[5] + o0 * fp[1] - o1 * fp[0]
    if reference == LOCAL:  # fRᵀ
        for c in range(3):
            out[c] = fR[0, c] * o0 + fR[1, c] * o1 + fR[2, c] * o2
            out[3 + c] = fR[0, c] * u0 + fR[1, c] * u1 + fR[2, c] * u2
        return OK
    world_poses(mi, mf, ws)  # LOCAL_WORLD_ALIGNED: R_k
    R = w.Rw[k]
    for r in range(3):
        out[r] = R[r, 0] * o0 + R[r, 1] * o1 + R[r, 2] * o2
        out[3 + r] = R[r, 0] * u0 + R[r, 1] * u1 + R[r, 2] * u2
    return OK
