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
from numba import get_thread_id, njit, parallel_chunksize, prange

from .. import _validation as val
from ..joints import FREE, REVOLUTE, SPHERICAL, joint_pose_and_subspace
from ._fastcall import ExactCall
from ._layout import (AXIS, JTYPE, NSUB, NV, PARENT, QIDX, ROTATED, SUBKINDS, VIDX, BATCH_BLOCK,
                      batch_blocks, batch_row, batch_workspaces, model_views, sizes_match,
                      workspace_views)
from ._primitives import (axis_coriolis_term, compose_pose, coriolis_term, motion_to_child,
                          parent_acceleration)

__all__ = ["forward_kinematics", "frame_placement", "body_placements", "frame_velocity",
           "frame_acceleration", "KinematicsResult", "joint_placements", "world_poses",
           "body_velocities", "body_accelerations"]


# --------------------------------------------------------------------------- kernels
@njit(inline="always", cache=True)
def nonfinite(x):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return True
    return False


@njit(cache=True)
def state_status(first, second, third, fext):
    """Status code of the first non-finite state argument, ``OK`` when all are finite.
    ``second``, ``third`` and ``fext`` may be None (absent); ``fext`` is checked row by row
    over its own length (an empty array is legal)."""
    if nonfinite(first):
        return val.BAD_FIRST
    if second is not None and nonfinite(second):
        return val.BAD_SECOND
    if third is not None and nonfinite(third):
        return val.BAD_THIRD
    if fext is not None:
        for i in range(fext.shape[0]):
            if nonfinite(fext[i]):
                return val.BAD_FEXT
    return val.OK


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


@njit(cache=True)
def joint_placements(mi, mf, q, ws, nv):
    """Pose ``(R[i], t[i])`` of each body in its parent and the joint maps ``S``.

    (R, t) = (R_tree R_J(q), p_tree + R_tree p_J(q)): the joint placement followed by
    the joint transform; this defines φ(℘(i), i). Also fills ``Rj, pj`` (the joint
    transform alone). See :func:`place_body`.
    """
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for i in range(nb):
        place_body(mi, i, q, rot_tree, pos_tree, axes, pitch, R, t, Rj, pj, S)


@njit(inline="always", cache=True)
def place_body(mi, i, q, rot_tree, pos_tree, axes, pitch, R, t, Rj, pj, S):
    """Body i's part of :func:`joint_placements`. Revolute joints about a coordinate
    axis and placements without rotation take short paths (no general 3×3 products)."""
    code = mi[i, AXIS]
    vi = mi[i, VIDX]
    if code != 0 and mi[i, JTYPE] == REVOLUTE:
        # rotation by θ about ±e_k: only the (k1, k2) plane turns
        k = abs(code) - 1
        k1 = (k + 1) % 3
        k2 = (k + 2) % 3
        th = q[mi[i, QIDX]]
        c = math.cos(th)
        s = math.sin(th) if code > 0 else -math.sin(th)
        for a in range(3):
            pj[i, a] = 0.0
            for b in range(3):
                Rj[i, a, b] = 0.0
        Rj[i, k, k] = 1.0
        Rj[i, k1, k1] = c
        Rj[i, k2, k2] = c
        Rj[i, k1, k2] = -s
        Rj[i, k2, k1] = s
        for a in range(6):
            S[vi, a] = 0.0
        S[vi, k] = 1.0 if code > 0 else -1.0
        if mi[i, ROTATED]:
            for a in range(3):
                t[i, a] = pos_tree[i, a]
                R[i, a, k] = rot_tree[i, a, k]
                R[i, a, k1] = rot_tree[i, a, k1] * c + rot_tree[i, a, k2] * s
                R[i, a, k2] = rot_tree[i, a, k2] * c - rot_tree[i, a, k1] * s
        else:
            for a in range(3):
                t[i, a] = pos_tree[i, a]
                for b in range(3):
                    R[i, a, b] = Rj[i, a, b]
        return
    joint_pose_and_subspace(i, mi[i, JTYPE], mi[i, NSUB], mi[i, SUBKINDS], axes, pitch,
                            q, mi[i, QIDX], S, vi, Rj, pj)
    if mi[i, ROTATED]:
        compose_pose(rot_tree, pos_tree, i, Rj, pj, i, R, t, i)
    else:
        for a in range(3):
            t[i, a] = pos_tree[i, a] + pj[i, a]
            for b in range(3):
                R[i, a, b] = Rj[i, a, b]


@njit(cache=True)
def world_poses(mi, R, t, Rw, pw):
    """World pose of every body: (Rw, pw)[i] = (Rw, pw)[℘(i)] ∘ (R, t)[i]."""
    for i in range(mi.shape[0]):
        world_pose(mi, i, R, t, Rw, pw)


@njit(inline="always", cache=True)
def world_pose(mi, i, R, t, Rw, pw):
    """Body i's part of :func:`world_poses` (its parent's world pose must be known)."""
    p = mi[i, PARENT]
    if p < 0:
        for a in range(3):
            pw[i, a] = t[i, a]
            for b in range(3):
                Rw[i, a, b] = R[i, a, b]
    else:
        compose_pose(Rw, pw, p, R, t, i, Rw, pw, i)


@njit(cache=True)
def body_velocities(mi, S, v, R, t, V, C):
    """V(k) = φ*V(℘(k)) + H*θ̇(k) and the Coriolis term a(k) into C."""
    for i in range(mi.shape[0]):
        p = mi[i, PARENT]
        vi = mi[i, VIDX]
        if p < 0:
            for a in range(6):
                V[i, a] = 0.0
        else:
            motion_to_child(R, t, i, V, p, V, i)
        code = mi[i, AXIS]
        if code != 0:
            k = abs(code) - 1
            x = v[vi] if code > 0 else -v[vi]
            V[i, k] += x
            axis_coriolis_term(V, i, k, x, C)
            continue
        nvi = mi[i, NV]
        for c in range(nvi):
            x = v[vi + c]
            for a in range(6):
                V[i, a] += S[vi + c, a] * x
        coriolis_term(mi[i, JTYPE], i, S, vi, nvi, v, V, C)


@njit(cache=True)
def body_accelerations(mi, mf, S, qdd, R, t, C, A, gravity, has_v):
    """α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k) (seed 002 eq. 15) into A.

    The base acceleration α(world) is −g when ``gravity`` (the fictitious acceleration
    that models gravity), else 0; ``qdd`` None means θ̈ = 0; without ``has_v`` the
    Coriolis terms a(k) in C are skipped (zero velocity).
    """
    g = model_views(mf, mi.shape[0])[7]
    for i in range(mi.shape[0]):
        parent_acceleration(R, t, i, mi[i, PARENT], g, gravity, A)
        if qdd is not None:
            vi = mi[i, VIDX]
            code = mi[i, AXIS]
            if code != 0:
                A[i, abs(code) - 1] += qdd[vi] if code > 0 else -qdd[vi]
            else:
                for c in range(mi[i, NV]):
                    x = qdd[vi + c]
                    for k in range(6):
                        A[i, k] += S[vi + c, k] * x
        if has_v:
            for k in range(6):
                A[i, k] += C[i, k]


@njit(cache=True)
def _kinematics(mi, mf, q, v, a, ws, nv, gravity, R_out, p_out, V_out, A_out):
    """World poses into R_out, p_out; with ``v`` body velocities into V_out; with ``a``
    (and ``v``) body accelerations into A_out. ``v``, ``a`` may be None or of length 0
    (absent), and their outputs then None or unused."""
    nb = mi.shape[0]
    if not sizes_match(mi, q, nv, ws) or R_out.shape[0] != nb or p_out.shape[0] != nb:
        return val.BAD_SHAPE
    if nonfinite(q):
        return val.BAD_FIRST
    # (every use of an argument that may be None sits under an `is not None` test, which
    # Numba resolves when it compiles)
    has_v = False
    if v is not None:
        if v.shape[0] > 0:
            if V_out is None:
                return val.BAD_SHAPE
            if v.shape[0] != nv or V_out.shape[0] != nb:
                return val.BAD_SHAPE
            if nonfinite(v):
                return val.BAD_SECOND
            has_v = True
    has_a = False
    if a is not None:
        if has_v and a.shape[0] > 0:
            if A_out is None:
                return val.BAD_SHAPE
            if a.shape[0] != nv or A_out.shape[0] != nb:
                return val.BAD_SHAPE
            if nonfinite(a):
                return val.BAD_THIRD
            has_a = True
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    world_poses(mi, R, t, Rw, pw)
    for i in range(nb):
        for k in range(3):
            p_out[i, k] = pw[i, k]
            for j in range(3):
                R_out[i, k, j] = Rw[i, k, j]
    if v is not None and has_v:
        body_velocities(mi, S, v, R, t, V, C)
        for i in range(nb):
            for k in range(6):
                V_out[i, k] = V[i, k]
        if a is not None and has_a:
            body_accelerations(mi, mf, S, a, R, t, C, A, gravity, True)
            for i in range(nb):
                for k in range(6):
                    A_out[i, k] = A[i, k]
    return val.OK


@njit(parallel=True, cache=True)
def _kinematics_batch(mi, mf, Q, Vq, Aq, wss, nv, gravity, R_out, p_out, V_out, A_out, status):
    B = Q.shape[0]
    for blk in prange(batch_blocks(B)):
        ws = wss[get_thread_id()]
        for b in range(blk * BATCH_BLOCK, min(B, (blk + 1) * BATCH_BLOCK)):
            status[b] = _kinematics(mi, mf, Q[b], batch_row(Vq, b), batch_row(Aq, b), ws, nv, gravity,
                                    R_out[b], p_out[b], batch_row(V_out, b), batch_row(A_out, b))


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


_KINEMATICS = ExactCall(_kinematics)
_kinematics_fast = _KINEMATICS.fast
_empty = np.empty


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
    workspace : optional :class:`Workspace`.

    Returns
    -------
    KinematicsResult
    """
    c = model._compiled or model.compiled
    nb = c.nb
    try:
        R_out = _empty((nb, 3, 3))
        p_out = _empty((nb, 3))
        V_out = None if v is None else _empty((nb, 6))
        A_out = None if a is None else _empty((nb, 6))
        if not _kinematics_fast(c.mi, c.mf, q, v, a, c.tls.buffer if workspace is None else
                                workspace.buffer, c.nv, gravity, R_out, p_out, V_out, A_out):
            return KinematicsResult(R_out, p_out, V_out, A_out)
    except (TypeError, AttributeError):
        pass
    return _forward_kinematics_general(model, q, v, a, gravity, workspace)


def _forward_kinematics_general(model, q, v, a, gravity, workspace):
    """Validated path: conversions, clear errors (also for what the fast call rejected), batches."""
    c = model.compiled
    q = val.vector(q, c.nq, "q")
    batch = q.shape[0] if q.ndim == 2 else None
    if a is not None and v is None:
        raise ValueError("a: accelerations need the velocity v as well")
    v = None if v is None else val.vector(v, c.nv, "v")
    a = None if a is None else val.vector(a, c.nv, "a")
    val.same_batch(q, ("v", v), ("a", a))
    gravity = bool(gravity)
    lead = () if batch is None else (batch,)
    R_out = np.empty(lead + (c.nb, 3, 3))
    p_out = np.empty(lead + (c.nb, 3))
    V_out = np.empty(lead + (c.nb, 6)) if v is not None else None
    A_out = np.empty(lead + (c.nb, 6)) if a is not None else None
    val.workspace_buffer(model, workspace)
    ws = workspace if workspace is not None else model.workspace()
    if batch is None:
        st = _KINEMATICS(c.mi, c.mf, q, v, a, ws.buffer, c.nv, gravity, R_out, p_out, V_out, A_out)
        if st:
            val.raise_status(st, ("q", "v", "a"))
    else:
        status = np.zeros(batch, dtype=np.int64)
        with parallel_chunksize(1):
            _kinematics_batch(c.mi, c.mf, q, v, a, batch_workspaces(ws), c.nv, gravity, R_out, p_out,
                              V_out, A_out, status)
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
