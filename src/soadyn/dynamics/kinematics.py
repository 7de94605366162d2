"""Forward kinematics: joint transforms, body poses, velocities and accelerations.

The base-to-tips scatter recursions of seed 002 eq. 15 (``V = φ*H*θ̇``,
``α = φ*(H*θ̈ + a)``) evaluated body by body as in eq. 7:

    V(k) = φ*(℘(k), k) V(℘(k)) + H*(k) θ̇(k)
    α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k)

The passes here are shared by every algorithm (RNEA, ABA, CRBA, Jacobians, energy).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .. import _validation as val
from ..joints import FREE, SPHERICAL, joint_pose_and_subspace
from ._layout import (JTYPE, NSUB, NV, PARENT, QIDX, SUBKINDS, VIDX, batch_chunks,
                      model_views, workspace_views)
from ._primitives import coriolis_term, gravity_to_child, motion_to_child

__all__ = ["forward_kinematics", "frame_placement", "body_placements", "frame_velocity",
           "frame_acceleration", "KinematicsResult"]


# --------------------------------------------------------------------------- kernels
@njit(inline="always", cache=True)
def nonfinite(x):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return True
    return False


@njit(inline="always", cache=True)
def check_quaternions(mi, q):
    """False when a free/spherical joint's quaternion is zero."""
    for i in range(mi.shape[0]):
        jt = mi[i, JTYPE]
        if jt == FREE or jt == SPHERICAL:
            o = mi[i, QIDX] + (3 if jt == FREE else 0)
            if q[o] == 0.0 and q[o + 1] == 0.0 and q[o + 2] == 0.0 and q[o + 3] == 0.0:
                return False
    return True


@njit(inline="always", cache=True)
def joint_placements(mi, mf, q, ws, nv):
    """Pose ``(R[i], t[i])`` of each body in its parent and the joint maps ``S``.

    (R, t) = (R_tree R_J(q), p_tree + R_tree p_J(q)): the joint placement followed by
    the joint transform; this defines φ(℘(i), i).
    """
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for i in range(nb):
        joint_pose_and_subspace(i, mi[i, JTYPE], mi[i, NSUB], mi[i, SUBKINDS], axes, pitch,
                                q, mi[i, QIDX], S, mi[i, VIDX], Rj, pj)
        for a in range(3):
            acc = pos_tree[i, a]
            for k in range(3):
                acc += rot_tree[i, a, k] * pj[i, k]
            t[i, a] = acc
            for b in range(3):
                acc = 0.0
                for k in range(3):
                    acc += rot_tree[i, a, k] * Rj[i, k, b]
                R[i, a, b] = acc


@njit(inline="always", cache=True)
def world_poses(mi, R, t, Rw, pw):
    """World pose of every body: (Rw, pw)[i] = (Rw, pw)[℘(i)] ∘ (R, t)[i]."""
    for i in range(mi.shape[0]):
        p = mi[i, PARENT]
        if p < 0:
            for a in range(3):
                pw[i, a] = t[i, a]
                for b in range(3):
                    Rw[i, a, b] = R[i, a, b]
        else:
            for a in range(3):
                acc = pw[p, a]
                for k in range(3):
                    acc += Rw[p, a, k] * t[i, k]
                pw[i, a] = acc
                for b in range(3):
                    acc = 0.0
                    for k in range(3):
                        acc += Rw[p, a, k] * R[i, k, b]
                    Rw[i, a, b] = acc


@njit(inline="always", cache=True)
def body_velocities(mi, S, v, R, t, V, C):
    """V(k) = φ*V(℘(k)) + H*θ̇(k) and the Coriolis term a(k) into C."""
    for i in range(mi.shape[0]):
        p = mi[i, PARENT]
        vi = mi[i, VIDX]
        nvi = mi[i, NV]
        if p < 0:
            for a in range(6):
                V[i, a] = 0.0
        else:
            motion_to_child(R, t, i, V, p, V, i)
        for c in range(nvi):
            x = v[vi + c]
            for a in range(6):
                V[i, a] += S[vi + c, a] * x
        coriolis_term(mi[i, JTYPE], i, S, vi, nvi, v, V, C)


@njit(cache=True)
def _kinematics(mi, mf, q, v, a, ws, nv, gravity, R_out, p_out, V_out, A_out):
    nb = mi.shape[0]
    if nonfinite(q):
        return val.BAD_FIRST
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    world_poses(mi, R, t, Rw, pw)
    R_out[:] = Rw
    p_out[:] = pw
    if v.shape[0] == 0:
        return val.OK
    if nonfinite(v):
        return val.BAD_SECOND
    body_velocities(mi, S, v, R, t, V, C)
    V_out[:] = V
    if a.shape[0] == 0:
        return val.OK
    if nonfinite(a):
        return val.BAD_THIRD
    g = model_views(mf, nb)[7]
    for i in range(nb):
        p = mi[i, PARENT]
        if p < 0:
            if gravity:
                gravity_to_child(R, t, i, g, A, i)
            else:
                for k in range(6):
                    A[i, k] = 0.0
        else:
            motion_to_child(R, t, i, A, p, A, i)
        vi = mi[i, VIDX]
        for c in range(mi[i, NV]):
            x = a[vi + c]
            for k in range(6):
                A[i, k] += S[vi + c, k] * x
        for k in range(6):
            A[i, k] += C[i, k]
    A_out[:] = A
    return val.OK


@njit(parallel=True, cache=True)
def _kinematics_batch(mi, mf, Q, Vq, Aq, wss, nv, gravity, R_out, p_out, V_out, A_out, status):
    B = Q.shape[0]
    nch = wss.shape[0]
    for c in prange(nch):
        for b in range(c * B // nch, (c + 1) * B // nch):
            status[b] = _kinematics(mi, mf, Q[b], Vq[b], Aq[b], wss[c], nv, gravity,
                                    R_out[b], p_out[b], V_out[b], A_out[b])


# --------------------------------------------------------------------------- public API
class KinematicsResult:
    """Output of :func:`forward_kinematics`.

    Attributes (leading batch dimension B when the input was batched):
        rotations (nb, 3, 3): body frame axes in world coordinates.
        positions (nb, 3): body frame origins in world coordinates [m].
        velocities (nb, 6): body spatial velocities [ω; v] in the body frame
            (v is the velocity of the body-frame origin) [rad/s, m/s]; None without v.
        accelerations (nb, 6): body spatial accelerations in the body frame
            (time derivative of the spatial velocity, not the classical acceleration
            of the origin); include −g when ``gravity=True``; None without a.
    """

    def __init__(self, rotations, positions, velocities, accelerations):
        self.rotations = rotations
        self.positions = positions
        self.velocities = velocities
        self.accelerations = accelerations

    def placement(self, body):
        """4×4 world pose of body index ``body`` (unbatched results only)."""
        T = np.eye(4)
        T[:3, :3] = self.rotations[body]
        T[:3, 3] = self.positions[body]
        return T


def forward_kinematics(model, q, v=None, a=None, *, gravity=False, workspace=None):
    """World poses, body velocities and body accelerations (seed 002 eq. 15).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v : (nv,) or (B, nv) velocity, optional.
    a : (nv,) or (B, nv) joint accelerations, optional (needs ``v``).
    gravity : bool
        When True the accelerations include the fictitious base acceleration −g
        (the convention RNEA uses); default False gives the kinematic accelerations.

    Returns
    -------
    KinematicsResult
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    batch = q.shape[0] if q.ndim == 2 else None
    if a is not None and v is None:
        raise ValueError("a: accelerations need the velocity v as well")
    v = None if v is None else val.vector(v, c.nv, "v")
    a = None if a is None else val.vector(a, c.nv, "a")
    val.same_batch(q, ("v", v), ("a", a))
    lead = () if batch is None else (batch,)
    R_out = np.empty(lead + (c.nb, 3, 3))
    p_out = np.empty(lead + (c.nb, 3))
    V_out = np.empty(lead + (c.nb, 6)) if v is not None else None
    A_out = np.empty(lead + (c.nb, 6)) if a is not None else None
    empty_state = np.zeros(lead + (0,))
    empty_out = np.zeros(lead + (c.nb, 6))
    args = (v if v is not None else empty_state, a if a is not None else empty_state)
    outs = (V_out if V_out is not None else empty_out, A_out if A_out is not None else empty_out)
    ws = workspace if workspace is not None else model.workspace()
    if batch is None:
        st = _kinematics(c.mi, c.mf, q, args[0], args[1], ws.buffer, c.nv, gravity,
                         R_out, p_out, outs[0], outs[1])
        if st:
            val.raise_status(st, ("q", "v", "a"))
    else:
        status = np.zeros(batch, dtype=np.int64)
        _kinematics_batch(c.mi, c.mf, q, args[0], args[1], ws.batch_buffers(batch_chunks(batch)),
                          c.nv, gravity, R_out, p_out, outs[0], outs[1], status)
        val.check_batch_status(status, ("q", "v", "a"))
    return KinematicsResult(R_out, p_out, V_out, A_out)


def body_placements(model, q):
    """World poses of all bodies: ``(rotations (nb,3,3), positions (nb,3))``."""
    r = forward_kinematics(model, q)
    return r.rotations, r.positions


def frame_placement(model, q, frame):
    """4×4 homogeneous world pose of the frame named ``frame`` (or the world frame pose
    of a frame fixed to the world). ``q`` may be batched, giving (B, 4, 4)."""
    f = model.frame(frame)
    r = forward_kinematics(model, q)
    if r.rotations.ndim == 4:
        return np.stack([_frame_pose(f, R, p) for R, p in zip(r.rotations, r.positions)])
    return _frame_pose(f, r.rotations, r.positions)


def _frame_pose(f, Rs, ps):
    T = np.eye(4)
    if f.body < 0:
        T[:3, :3] = f.rotation
        T[:3, 3] = f.translation
    else:
        T[:3, :3] = Rs[f.body] @ f.rotation
        T[:3, 3] = ps[f.body] + Rs[f.body] @ f.translation
    return T


def _frame_motion(f, Rb, pb_, M, reference):
    """Express a body-frame motion vector of the frame's body at the frame."""
    if f.body < 0:
        return np.zeros(6)
    w = M[:3]
    vo = M[3:] + np.cross(w, f.translation)  # velocity of the frame origin, body axes
    if reference == "local":
        Rt = f.rotation.T
        return np.concatenate([Rt @ w, Rt @ vo])
    ww = Rb @ w
    if reference == "local_world_aligned":
        return np.concatenate([ww, Rb @ vo])
    if reference == "world":
        origin = pb_ + Rb @ f.translation
        return np.concatenate([ww, Rb @ vo - np.cross(ww, origin)])
    raise ValueError(f"reference: expected 'local', 'world' or 'local_world_aligned', got {reference!r}")


def frame_velocity(model, q, v, frame, reference="local"):
    """Spatial velocity [ω; v] (6,) of a frame.

    ``reference="local"``: frame axes, velocity of the frame origin;
    ``"local_world_aligned"``: world axes, velocity of the frame origin;
    ``"world"``: world axes, velocity of the body point at the world origin
    (Pinocchio's LOCAL, LOCAL_WORLD_ALIGNED and WORLD).
    """
    f = model.frame(frame)
    r = forward_kinematics(model, q, v)
    if r.rotations.ndim == 4:
        raise ValueError("q: frame_velocity takes a single state; use forward_kinematics for batches")
    b = max(f.body, 0)
    return _frame_motion(f, r.rotations[b], r.positions[b], r.velocities[b], reference)


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """Spatial acceleration (6,) of a frame (derivative of the spatial velocity, gravity
    not included); ``reference`` as in :func:`frame_velocity`."""
    f = model.frame(frame)
    r = forward_kinematics(model, q, v, a)
    if r.rotations.ndim == 4:
        raise ValueError("q: frame_acceleration takes a single state")
    b = max(f.body, 0)
    return _frame_motion(f, r.rotations[b], r.positions[b], r.accelerations[b], reference)
