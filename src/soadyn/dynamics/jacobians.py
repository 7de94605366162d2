"""Frame Jacobians: J = B*φ*H* (seed 001, "Recall: Jacobian Matrix").

The Jacobian of a frame (node) maps θ̇ to the frame's spatial velocity [ω; v]. Its
column for dof c of body k on the frame's path to the root is the joint-map column
H*(k)_c carried from body k to the frame by rigid-body transforms; other columns
are zero.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _validation as val
from ._fastcall import ExactCall
from ._layout import NV, PARENT, VIDX, model_views, sizes_match, workspace_views
from .kinematics import check_quaternions, nonfinite, place_body, world_pose

__all__ = ["frame_jacobian", "REFERENCES"]

#: reference frames of a Jacobian (Pinocchio's names)
REFERENCES = {"local": 0, "local_world_aligned": 1, "world": 2}


@njit(cache=True)
def frame_jacobian_kernel(mi, mf, q, ws, nv, body, fR, fp, mode, J):
    """Columns of the frame Jacobian. ``mode``: 0 local, 1 local-world-aligned, 2 world.

    ``fR, fp``: pose of the frame in body ``body`` (−1: a frame fixed to the world).
    Only the bodies on the frame's path to the root get their joint placements and
    world poses (R, t, S, Rw, pw of the workspace) updated."""
    if not sizes_match(mi, q, nv, ws) or J.shape[0] != 6 or J.shape[1] != nv \
            or body >= mi.shape[0] or fR.shape[0] != 3 or fR.shape[1] != 3 or fp.shape[0] != 3:
        return val.BAD_SHAPE
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    J[:] = 0.0
    if body < 0:
        return val.OK
    # only the bodies on the path to the root matter: place them, root first
    path = np.empty(nb, dtype=np.int64)
    n = 0
    k = body
    while k >= 0:
        path[n] = k
        n += 1
        k = mi[k, PARENT]
    for idx in range(n - 1, -1, -1):
        k = path[idx]
        place_body(mi, k, q, rot_tree, pos_tree, axes, pitch, R, t, Rj, pj, S)
        world_pose(mi, k, R, t, Rw, pw)
    # world pose of the frame
    Rf = scratch[0]
    of = scratch[1, 0]
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
        vk = mi[k, VIDX]
        for c in range(mi[k, NV]):
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
        k = mi[k, PARENT]
    return val.OK


_JACOBIAN = ExactCall(frame_jacobian_kernel)
_jacobian_fast = _JACOBIAN.fast
_empty = np.empty


def frame_jacobian(model, q, frame, reference="local", *, out=None, workspace=None):
    """Jacobian (6, nv) of a frame: ``J @ v`` is the frame's spatial velocity [ω; v].

    Parameters
    ----------
    model : Model
    q : (nq,) configuration.
    frame : frame name (every body and URDF link is a frame) or index.
    reference : ``"local"`` (frame axes, velocity of the frame origin),
        ``"local_world_aligned"`` (world axes, frame origin) or ``"world"`` (world axes,
        velocity of the body point coinciding with the world origin) — Pinocchio's
        LOCAL, LOCAL_WORLD_ALIGNED and WORLD.
    out : optional (6, nv) output; workspace : optional :class:`Workspace`.
    """
    c = model._compiled or model.compiled
    f = model._frame_by_name.get(frame) if type(frame) is str else None
    if f is None:
        f = model.frame(frame)
    try:
        mode = REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference: expected one of {list(REFERENCES)}, got {reference!r}") from None
    try:
        J = _empty((6, c.nv)) if out is None else out
        if not _jacobian_fast(c.mi, c.mf, q, c.tls.buffer if workspace is None else workspace.buffer,
                              c.nv, f.body, f.rotation, f.translation, mode, J):
            return J
    except (TypeError, AttributeError):
        pass
    # validated path: conversions and clear errors
    q = val.vector(q, c.nq, "q", batch_ok=False)
    J = val.output(out, (6, c.nv))
    st = _JACOBIAN(c.mi, c.mf, q, val.workspace_buffer(model, workspace), c.nv, f.body,
                   f.rotation, f.translation, mode, J)
    if st:
        val.raise_status(st, ("q",))
    return J
