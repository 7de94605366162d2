"""The mass matrix M(θ) by two methods.

* ``"crba"`` — composite rigid bodies: the tips-to-base gather of the composite
  inertias R(k) = Σ_{j ∈ children(k)} φ(k, j) R(j) φ*(k, j) + M(k) (the solution of
  the forward Lyapunov equation, seed 001 topic 4) and the decomposition of
  M = HφMφ*H* (seed 002 eq. 17) into  M(i, j) = H(i) φ(i, j) R(j) H*(j)  for i ⪯ j.
* ``"jtmj"`` — seed 003's procedure (eq. 14, "Computing System Mass Matrix"):
  J = Ψ_D G column by column with the O(N) algorithm for z = Ψ_A x, Q = M J and
  M = Jᵀ Q, here with body-frame operators. O(N²) columns work; kept as an
  independent second method.
"""
from __future__ import annotations

import numpy as np
from numba import get_thread_id, njit, parallel_chunksize, prange

from .. import _validation as val
from ._fastcall import ExactCall
from ._layout import (AXIS, NV, PARENT, ROTATED, VIDX, BATCH_BLOCK, batch_blocks, batch_workspaces,
                      extra_views, model_extra_views, model_views, sizes_match, workspace_views)
from .kinematics import check_quaternions, joint_placements, nonfinite, world_poses
from ._primitives import (add_rigid_inertia_to_parent, add_rigid_inertia_to_parent_about_axis,
                          force_to_world, joint_column_to_world,
                          motion_to_child, rigid_inertia_matrix,
                          rigid_inertia_times_joint_column)

__all__ = ["mass_matrix"]


@njit(cache=True)
def composite_rigid_inertias(mi, mf, ws, nv):
    """crb[k] (of ``extra_views``) = R(k), the composite rigid-body inertia of the
    subtree at k in 10-parameter form (m, h, I_o; body frame).

    A composite of rigid bodies is a rigid body, so each step of the gather is the
    parallel-axis theorem rather than a general 6×6 congruence. Needs
    ``joint_placements`` first.
    """
    nb = mi.shape[0]
    rigid = model_extra_views(mf, nb)[0]
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    crb = extra_views(ws, nb, nv)[0]
    for i in range(nb):
        for k in range(10):
            crb[i, k] = rigid[i, k]
    for i in range(nb - 1, -1, -1):
        p = mi[i, PARENT]
        if p < 0:
            continue
        code = mi[i, AXIS]
        if 0 < abs(code) <= 3 and not mi[i, ROTATED]:  # R = R_J, a turn about e_k
            add_rigid_inertia_to_parent_about_axis(R, t, i, abs(code) - 1, crb, crb, p)
        else:
            add_rigid_inertia_to_parent(R, t, i, crb, crb, p)


@njit(cache=True)
def composite_inertias(mi, mf, ws, nv):
    """P[k] = R(k), the composite rigid-body inertia of the subtree at k (body frame,
    6×6); ``crb`` keeps the same in 10-parameter form (see
    :func:`composite_rigid_inertias`)."""
    nb = mi.shape[0]
    composite_rigid_inertias(mi, mf, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    crb = extra_views(ws, nb, nv)[0]
    for i in range(nb):
        rigid_inertia_matrix(crb, i, P, i)


@njit(cache=True)
def mass_matrix_kernel(mi, mf, q, ws, nv, M):
    """M(j, i) = H(j) φ(j, i) R(i) H*(i) for every ancestor j of i (both triangles);
    returns a status code (``BAD_SHAPE`` for wrong sizes).

    The pairing of a joint-map column with a force does not depend on the frame, so
    both are taken to world axes at the world origin once (Y: the columns of H*,
    R(i)H*(i) as 6 scalars) and each entry is a 6-term dot product.
    """
    if not sizes_match(mi, q, nv, ws) or M.shape[0] != nv or M.shape[1] != nv:
        return val.BAD_SHAPE
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    world_poses(mi, R, t, Rw, pw)
    composite_rigid_inertias(mi, mf, ws, nv)
    crb = extra_views(ws, nb, nv)[0]
    M[:, :] = 0.0  # entries of dofs on different branches stay zero
    for i in range(nb):
        vi = mi[i, VIDX]
        for c in range(vi, vi + mi[i, NV]):
            Y[c, 0], Y[c, 1], Y[c, 2], Y[c, 3], Y[c, 4], Y[c, 5] = joint_column_to_world(mi, i, S, c, Rw, pw)
    for i in range(nb):
        vi = mi[i, VIDX]
        for c in range(mi[i, NV]):
            col = vi + c
            # f = R(i) H*(i) column c, in world axes at the world origin
            f0, f1, f2, f3, f4, f5 = rigid_inertia_times_joint_column(mi, i, crb, S, col)
            f0, f1, f2, f3, f4, f5 = force_to_world(Rw, pw, i, f0, f1, f2, f3, f4, f5)
            for c2 in range(c + 1):  # the joint's own block, upper triangle
                x = (Y[vi + c2, 0] * f0 + Y[vi + c2, 1] * f1 + Y[vi + c2, 2] * f2
                     + Y[vi + c2, 3] * f3 + Y[vi + c2, 4] * f4 + Y[vi + c2, 5] * f5)
                M[vi + c2, col] = x
                M[col, vi + c2] = x
            j = mi[i, PARENT]
            while j >= 0:
                vj = mi[j, VIDX]
                for d in range(vj, vj + mi[j, NV]):
                    x = (Y[d, 0] * f0 + Y[d, 1] * f1 + Y[d, 2] * f2
                         + Y[d, 3] * f3 + Y[d, 4] * f4 + Y[d, 5] * f5)
                    M[d, col] = x
                    M[col, d] = x
                j = mi[j, PARENT]
    return val.OK


@njit(cache=True)
def mass_matrix_jtmj_kernel(mi, mf, q, ws, nv, M, J):
    """Seed 003: J(:, c) = Ψ_D G(:, c) (z_i = φ*(℘(i), i) z_℘(i) + x_i), Q = M J, M = Jᵀ Q.

    ``J`` is an (nb, 6, nv) buffer for the body Jacobians.
    """
    if not sizes_match(mi, q, nv, ws) or M.shape[0] != nv or M.shape[1] != nv:
        return val.BAD_SHAPE
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    inertia = model_views(mf, nb)[0]
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    J[:] = 0.0
    for c in range(nv):
        # column c of Ψ_D G: scatter the joint-map column through the tree
        for i in range(nb):
            p = mi[i, PARENT]
            if p >= 0:
                motion_to_child(R, t, i, V, p, V, i)
            else:
                for a in range(6):
                    V[i, a] = 0.0
            vi = mi[i, VIDX]
            if vi <= c < vi + mi[i, NV]:
                for a in range(6):
                    V[i, a] += S[c, a]
            for a in range(6):
                J[i, a, c] = V[i, a]
    M[:] = 0.0
    for i in range(nb):
        for c in range(nv):
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += inertia[i, a, b] * J[i, b, c]
                F[i, a] = acc
            for r in range(c + 1):
                acc = 0.0
                for a in range(6):
                    acc += J[i, a, r] * F[i, a]
                M[r, c] += acc
    for c in range(nv):
        for r in range(c):
            M[c, r] = M[r, c]
    return val.OK


@njit(parallel=True, cache=True)
def _mass_matrix_batch(mi, mf, Q, wss, nv, M, status):
    B = Q.shape[0]
    for blk in prange(batch_blocks(B)):
        ws = wss[get_thread_id()]
        for b in range(blk * BATCH_BLOCK, min(B, (blk + 1) * BATCH_BLOCK)):
            status[b] = mass_matrix_kernel(mi, mf, Q[b], ws, nv, M[b])


_CRBA = ExactCall(mass_matrix_kernel)
_crba_fast = _CRBA.fast
_empty = np.empty


def mass_matrix(model, q, method="crba", *, out=None, workspace=None):
    """Joint-space mass matrix M(q) (nv, nv) [kg, kg m, kg m² blocks].

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    method : ``"crba"`` (composite rigid bodies, default) or ``"jtmj"`` (seed 003's
        M = Gᵀ Ψ_Dᵀ M Ψ_D G, a slower independent check).
    out : optional (nv, nv) / (B, nv, nv) output array; workspace : optional
        :class:`Workspace` (the fastest way to call it repeatedly).

    Returns (nv, nv) or (B, nv, nv), symmetric positive definite.
    """
    c = model._compiled or model.compiled
    if method == "crba":
        try:
            M = _empty((c.nv, c.nv)) if out is None else out
            if not _crba_fast(c.mi, c.mf, q, c.tls.buffer if workspace is None else workspace.buffer,
                              c.nv, M):
                return M
        except (TypeError, AttributeError):
            pass
    return _mass_matrix_general(model, q, method, out, workspace)


def _mass_matrix_general(model, q, method, out, workspace):
    """Validated path: conversions, clear errors (also for what the fast call rejected),
    batches, the ``jtmj`` method."""
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    if method not in ("crba", "jtmj"):
        raise ValueError(f"method: expected 'crba' or 'jtmj', got {method!r}")
    val.workspace_buffer(model, workspace)
    ws = workspace if workspace is not None else model.workspace()
    if q.ndim == 2:
        B = q.shape[0]
        M = val.output(out, (B, c.nv, c.nv))
        if method == "jtmj":
            for b in range(B):
                _mass_matrix_general(model, q[b], "jtmj", M[b], ws)
            return M
        status = np.zeros(B, dtype=np.int64)
        with parallel_chunksize(1):
            _mass_matrix_batch(c.mi, c.mf, q, batch_workspaces(ws), c.nv, M, status)
        val.check_batch_status(status, ("q",))
        return M
    M = val.output(out, (c.nv, c.nv))
    if method == "crba":
        st = _CRBA(c.mi, c.mf, q, ws.buffer, c.nv, M)
    else:
        st = mass_matrix_jtmj_kernel(c.mi, c.mf, q, ws.buffer, c.nv, M, np.empty((c.nb, 6, c.nv)))
    if st:
        val.raise_status(st, ("q",))
    return M
