"""Frame Jacobians: J = ℬ*φ*H* [Jain24, "Recall: Jacobian Matrix"].

The Jacobian of a frame (node) maps θ̇ to the frame's spatial velocity [ω; v]. Its
column for dof c of body k on the frame's path to the root is the joint-map column
H*(k)_c carried from body k to the frame by rigid-body transforms; other columns are
zero.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..core.layout import model_tables, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import configuration_status, place_body, world_pose


@njit(cache=True)
def frame_jacobian_kernel(mi, mf, ws, q, body, fR, fp, mode, J):
    """Columns of the frame Jacobian J = ℬ*φ*H* [Jain24]. ``mode``: 0 local,
    1 local-world-aligned, 2 world.

    ``fR, fp``: pose of the frame in body ``body`` (−1: a frame fixed to the world).
    Only the bodies on the frame's path to the root get their joint placements and
    world poses (R, t, S, Rw, pw of the workspace) updated."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    nb, nv = m.nb, m.nv
    if J.shape[0] != 6 or J.shape[1] != nv or body >= nb or fR.shape[0] != 3 or fR.shape[1] != 3 \
            or fp.shape[0] != 3:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    J[:] = 0.0
    if body < 0:
        return OK
    # only the bodies on the path to the root matter: place them, root first
    path = np.empty(nb, dtype=np.int64)
    n = 0
    k = body
    while k >= 0:
        path[n] = k
        n += 1
        k = m.parent[k]
    for idx in range(n - 1, -1, -1):
        k = path[idx]
        place_body(m, w, k, q)
        world_pose(m, w, k)
    jacobian_columns(m, w, body, fR, fp, mode, J)
    return OK


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@njit(nogil=True, cache=True)
def frame_jacobian_batch(mi, mf, ws, Q, body, fR, fp, mode, J, status, start, stop):
    """:func:`frame_jacobian_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = frame_jacobian_kernel(mi, mf, ws, Q[b], body, fR, fp, mode, J[b])
