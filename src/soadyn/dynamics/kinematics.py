"""Forward kinematics: world poses, body velocities and accelerations, frame placements
and frame motions ([Jain12, eq. 15]; kernels in :mod:`soadyn.kernels.kinematics`)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.call import ABSENT, Arg, CompiledFunction
from ..kernels.kinematics import kinematics_batch, kinematics_kernel
from .frames import model_frame

__all__ = ["forward_kinematics", "frame_placement", "body_placements", "frame_velocity",
           "frame_acceleration", "KinematicsResult"]


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


def _kinematics_outputs(c, state, params):
    # an absent rate gives an empty output (one signature per kernel, see soadyn.core.call)
    return ((c.nb, 3, 3), (c.nb, 3), (c.nb if state[1].size else 0, 6), (c.nb if state[2].size else 0, 6))


def _allocate_kinematics(c, state):
    return (np.empty((c.nb, 3, 3)), np.empty((c.nb, 3)), np.empty((c.nb if state[1] is not ABSENT else 0, 6)),
            np.empty((c.nb if state[2] is not ABSENT else 0, 6)))


_KINEMATICS = CompiledFunction(kinematics_kernel, kinematics_batch,
                               (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True)),
                               _kinematics_outputs, params=(val.GRAVITY,), allocate=_allocate_kinematics)


def forward_kinematics(model, q, v=None, a=None, *, gravity=False, workspace=None):
    """World poses, body velocities and body accelerations ([Jain12, eq. 15]).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v : (nv,) or (B, nv) velocity, optional (None: no velocities are computed, or zero
        velocity when ``a`` is given).
    a : (nv,) or (B, nv) joint accelerations, optional (None: no accelerations).
    gravity : bool
        When True the accelerations include the fictitious base acceleration −g (the
        convention RNEA uses); default False gives the kinematic accelerations.
    workspace : optional :class:`~soadyn.Workspace`.

    Returns
    -------
    KinematicsResult
    """
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    vk = v
    if a is not None and v is None:  # accelerations at zero velocity
        vk = np.zeros(np.shape(a)[:1] + (model.nv,)) if np.ndim(a) == 2 else np.zeros(model.nv)
    R, p, V, A = _KINEMATICS(model, (q, ABSENT if vk is None else vk, ABSENT if a is None else a), (gravity,), None,
                             workspace)
    return KinematicsResult(R, p, None if v is None else V, None if a is None else A)


def body_placements(model, q):
    """World poses of all bodies: ``(rotations (nb,3,3), positions (nb,3))``."""
    r = forward_kinematics(model, q)
    return r.rotations, r.positions


def frame_placement(model, q, frame):
    """4×4 homogeneous world pose of the frame named ``frame`` (or the world frame pose
    of a frame fixed to the world). ``q`` may be batched, giving (B, 4, 4)."""
    f = model_frame(model, frame)
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
    (Pinocchio's LOCAL, LOCAL_WORLD_ALIGNED and WORLD). ``v`` (nv,): None means zero.
    """
    f = model_frame(model, frame)
    r = forward_kinematics(model, q, np.zeros(model.nv) if v is None else v)
    if r.rotations.ndim == 4:
        raise ValueError("q: frame_velocity takes a single state; use forward_kinematics for batches")
    b = max(f.body, 0)
    return _frame_motion(f, r.rotations[b], r.positions[b], r.velocities[b], reference)


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """Spatial acceleration (6,) of a frame (derivative of the spatial velocity, gravity
    not included); ``reference`` as in :func:`frame_velocity`. ``v``, ``a`` (nv,): None
    means zero."""
    f = model_frame(model, frame)
    r = forward_kinematics(model, q, np.zeros(model.nv) if v is None else v, np.zeros(model.nv) if a is None else a)
    if r.rotations.ndim == 4:
        raise ValueError("q: frame_acceleration takes a single state")
    b = max(f.body, 0)
    return _frame_motion(f, r.rotations[b], r.positions[b], r.accelerations[b], reference)
