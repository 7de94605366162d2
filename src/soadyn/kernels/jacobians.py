"""Frame Jacobians: J = ℬ*φ*H* [Jain24, "Recall: Jacobian Matrix"].

The Jacobian of a frame (node) maps θ̇ to the frame's spatial velocity [ω; v]. Its
column for dof c of body k on the frame's path to the root is the joint-map column
H*(k)_c carried from body k to the frame by rigid-body transforms; other columns are
zero.
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import configuration_status, frame_pose_in_body, joint_transform, pose_to_parent


#: ``mode`` codes of :func:`frame_jacobian_kernel` (Pinocchio's reference frames)
LOCAL, LOCAL_WORLD_ALIGNED, WORLD = 0, 1, 2


@kernel
def frame_jacobian_kernel(mi, mf, ws, q, body, fR, fp, mode, J):
    """Columns of the frame Jacobian J = ℬ*φ*H* [Jain24]. ``mode``: LOCAL,
    LOCAL_WORLD_ALIGNED or WORLD.

    ``fR, fp``: pose of the frame in body ``body`` (−1: a frame fixed to the world).
    One walk from the body to the root (the frame's support path, the only nonzero
    columns): the pose X of the frame in each body on the path gives that body's columns
    in the frame's axes (:func:`frame_column`), then moves to the parent
    (:func:`~soadyn.kernels.kinematics.pose_to_parent`); at the root X is the frame's world
    pose, which turns the columns to the other references (:func:`local_to_reference`)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if J.shape[0] != 6 or J.shape[1] != m.nv or body >= m.nb or fR.shape[0] != 3 or fR.shape[1] != 3 \
            or fp.shape[0] != 3 or not 0 <= mode <= WORLD:
        return BAD_SHAPE
    J[:] = 0.0
    if body < 0:
        return OK
    w = workspace_views(ws, m)
    X = w.scratch[0]
    frame_pose_in_body(X, fR, fp)
    k = body
    while k >= 0:
        if m.axis_code[k] == 0:
            joint_transform(m, w, k, q)
        vk = m.v_index[k]
        for col in range(vk, vk + m.joint_nv[k]):
            J[0, col], J[1, col], J[2, col], J[3, col], J[4, col], J[5, col] = frame_column(m, w, k, col, X)
        pose_to_parent(m, w, k, q, X)
        k = m.parent[k]
    if mode != LOCAL:
        k = body
        while k >= 0:
            vk = m.v_index[k]
            for col in range(vk, vk + m.joint_nv[k]):
                J[0, col], J[1, col], J[2, col], J[3, col], J[4, col], J[5, col] = local_to_reference(
                    X, mode, J[0, col], J[1, col], J[2, col], J[3, col], J[4, col], J[5, col])
            k = m.parent[k]
    return OK


@helper(forceinline=True)
def frame_column(m, w, k, col, X):
    """Column ``col`` of the joint map H*(k) of body k carried to a frame whose pose in
    body k is X: [Xᵣᵀ ω; Xᵣᵀ (v + ω × Xₚ)] for the column [ω; v] (the frame's axes, the
    velocity of the frame origin; 6 scalars). A unit-axis joint (``m.axis_code``) has
    the column ±e; others read ``w.S`` (filled by ``joint_transform``)."""
    code = m.axis_code[k]
    if code == 0:
        S = w.S
        w0, w1, w2, l0, l1, l2 = S[col, 0], S[col, 1], S[col, 2], S[col, 3], S[col, 4], S[col, 5]
    else:
        e = abs(code) - 1
        sg = 1.0 if code > 0 else -1.0
        w0 = sg if e == 0 else 0.0
        w1 = sg if e == 1 else 0.0
        w2 = sg if e == 2 else 0.0
        l0 = sg if e == 3 else 0.0
        l1 = sg if e == 4 else 0.0
        l2 = sg if e == 5 else 0.0
    p0, p1, p2 = X[0, 3], X[1, 3], X[2, 3]
    u0 = l0 + w1 * p2 - w2 * p1
    u1 = l1 + w2 * p0 - w0 * p2
    u2 = l2 + w0 * p1 - w1 * p0
    return (X[0, 0] * w0 + X[1, 0] * w1 + X[2, 0] * w2, X[0, 1] * w0 + X[1, 1] * w1 + X[2, 1] * w2,
            X[0, 2] * w0 + X[1, 2] * w1 + X[2, 2] * w2, X[0, 0] * u0 + X[1, 0] * u1 + X[2, 0] * u2,
            X[0, 1] * u0 + X[1, 1] * u1 + X[2, 1] * u2, X[0, 2] * u0 + X[1, 2] * u1 + X[2, 2] * u2)


@helper(forceinline=True)
def local_to_reference(X, mode, w0, w1, w2, l0, l1, l2):
    """A motion [ω; v] of a frame in its own axes (LOCAL) in world axes
    (LOCAL_WORLD_ALIGNED: [Xᵣ ω; Xᵣ v]), or in world axes at the world origin (WORLD:
    [Xᵣ ω; Xᵣ v + Xₚ × Xᵣ ω]); X: the frame's world pose. 6 scalars."""
    a0 = X[0, 0] * w0 + X[0, 1] * w1 + X[0, 2] * w2
    a1 = X[1, 0] * w0 + X[1, 1] * w1 + X[1, 2] * w2
    a2 = X[2, 0] * w0 + X[2, 1] * w1 + X[2, 2] * w2
    b0 = X[0, 0] * l0 + X[0, 1] * l1 + X[0, 2] * l2
    b1 = X[1, 0] * l0 + X[1, 1] * l1 + X[1, 2] * l2
    b2 = X[2, 0] * l0 + X[2, 1] * l1 + X[2, 2] * l2
    if mode == WORLD:
        p0, p1, p2 = X[0, 3], X[1, 3], X[2, 3]
        b0 += p1 * a2 - p2 * a1
        b1 += p2 * a0 - p0 * a2
        b2 += p0 * a1 - p1 * a0
    return a0, a1, a2, b0, b1, b2


@helper(forceinline=True)
def jacobian_columns(m, w, body, fR, fp, mode, J):
    """The nonzero columns of the Jacobian of the frame at pose (fR, fp) in ``body`` into
    ``J`` (whose other columns are left as they are), from the joint maps ``w.S`` and the
    world poses ``w.Rw, w.pw`` of the bodies on the path to the root."""
    Rw, pw, S = w.Rw, w.pw, w.S
    # world pose of the frame
    Rf = w.scratch[0]
    of = w.scratch[1, 0]
    for a in range(3):
        acc = pw[body, a]
        for k in range(3):
            acc += Rw[body, a, k] * fp[k]
        of[a] = acc
        for b in range(3):
            acc = 0.0
            for k in range(3):
                acc += Rw[body, a, k] * fR[k, b]
            Rf[a, b] = acc
    k = body
    while k >= 0:
        vk = m.v_index[k]
        for c in range(m.joint_nv[k]):
            col = vk + c
            # the column in world axes, as the velocity of the body point at the frame origin
            w0 = Rw[k, 0, 0] * S[col, 0] + Rw[k, 0, 1] * S[col, 1] + Rw[k, 0, 2] * S[col, 2]
            w1 = Rw[k, 1, 0] * S[col, 0] + Rw[k, 1, 1] * S[col, 1] + Rw[k, 1, 2] * S[col, 2]
            w2 = Rw[k, 2, 0] * S[col, 0] + Rw[k, 2, 1] * S[col, 1] + Rw[k, 2, 2] * S[col, 2]
            l0 = Rw[k, 0, 0] * S[col, 3] + Rw[k, 0, 1] * S[col, 4] + Rw[k, 0, 2] * S[col, 5]
            l1 = Rw[k, 1, 0] * S[col, 3] + Rw[k, 1, 1] * S[col, 4] + Rw[k, 1, 2] * S[col, 5]
            l2 = Rw[k, 2, 0] * S[col, 3] + Rw[k, 2, 1] * S[col, 4] + Rw[k, 2, 2] * S[col, 5]
            # shift from body k's origin to the reference point (frame origin or world origin)
            if mode == 2:
                d0, d1, d2 = -pw[k, 0], -pw[k, 1], -pw[k, 2]
            else:
                d0, d1, d2 = of[0] - pw[k, 0], of[1] - pw[k, 1], of[2] - pw[k, 2]
            l0 += w1 * d2 - w2 * d1
            l1 += w2 * d0 - w0 * d2
            l2 += w0 * d1 - w1 * d0
            if mode == 0:
                for a in range(3):
                    J[a, col] = Rf[0, a] * w0 + Rf[1, a] * w1 + Rf[2, a] * w2
                    J[3 + a, col] = Rf[0, a] * l0 + Rf[1, a] * l1 + Rf[2, a] * l2
            else:
                J[0, col], J[1, col], J[2, col] = w0, w1, w2
                J[3, col], J[4, col], J[5, col] = l0, l1, l2
        k = m.parent[k]


@kernel(nogil=True)
def frame_jacobian_batch(mi, mf, ws, Q, body, fR, fp, mode, J, status, start, stop):
    """:func:`frame_jacobian_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = frame_jacobian_kernel(mi, mf, ws, Q[b], body, fR, fp, mode, J[b])
