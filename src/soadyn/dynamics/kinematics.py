"""Forward kinematics: world poses, body velocities and accelerations, frame placements
and frame motions ([Jain12, eq. 15]; kernels in :mod:`soadyn.kernels.kinematics`)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.call import ABSENT, Arg, CompiledFunction
from ..kernels.kinematics import kinematics_batch, kinematics_kernel, poses_batch, poses_kernel
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

    __slots__ = ("rotations", "positions", "velocities", "accelerations")

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


#: the output of an absent rate: nothing is written to it and forward_kinematics returns
#: None in its place, so one shared empty array serves every call (a NumPy allocation costs
#: ~0.5 µs here; ur5's forward_kinematics went from 8.0 to 6.7 µs)
_NO_MOTIONS = np.empty((0, 6))


def _allocate_kinematics(c, state):
    return (np.empty((c.nb, 3, 3)), np.empty((c.nb, 3)), _NO_MOTIONS if state[1] is ABSENT else np.empty((c.nb, 6)),
            _NO_MOTIONS if state[2] is ABSENT else np.empty((c.nb, 6)))


#: the poses alone, the common call (``forward_kinematics(model, q)``, frame placements)
_POSES = CompiledFunction(poses_kernel, poses_batch, (Arg("q", "nq"),), ("rotations_shape", "positions_shape"))

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
    if v is None and a is None:
        R, p = _POSES.call(model, q, workspace=workspace)
        return KinematicsResult(R, p, None, None)
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
    lead = r.rotations.shape[:-3]  # () or (B,)
    T = np.zeros(lead + (4, 4))
    T[..., 3, 3] = 1.0
    if f.body < 0:
        T[..., :3, :3] = f.rotation
        T[..., :3, 3] = f.translation
    else:
        Rb, pb = r.rotations[..., f.body, :, :], r.positions[..., f.body, :]
        T[..., :3, :3] = Rb @ f.rotation
        T[..., :3, 3] = pb + Rb @ f.translation
    return T


#: reference frames of frame velocities and accelerations (as for Jacobians)
_MOTION_REFERENCES = ("local", "local_world_aligned", "world")


def frame_velocity(model, q, v, frame, reference="local"):
    """Spatial velocity [ω; v] (6,) of a frame, or (B, 6) for batched q (B, nq) and v (B, nv).

    ``reference="local"``: frame axes, velocity of the frame origin;
    ``"local_world_aligned"``: world axes, velocity of the frame origin;
    ``"world"``: world axes, velocity of the body point at the world origin
    (Pinocchio's LOCAL, LOCAL_WORLD_ALIGNED and WORLD). ``v``: None means zero. [rad/s, m/s]
    """
    f = _frame_and_reference(model, frame, reference)
    r = forward_kinematics(model, q, _zero_if_none(model, q, v))
    return _frame_motion(f, r, r.velocities, reference)


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """Spatial acceleration (6,) of a frame (derivative of the spatial velocity, gravity
    not included), or (B, 6) for a batch; ``reference`` as in :func:`frame_velocity`.
    ``v``, ``a``: None means zero. [rad/s², m/s²]"""
    f = _frame_and_reference(model, frame, reference)
    r = forward_kinematics(model, q, _zero_if_none(model, q, v), _zero_if_none(model, q, a))
    return _frame_motion(f, r, r.accelerations, reference)


def _frame_and_reference(model, frame, reference):
    if reference not in _MOTION_REFERENCES:
        raise ValueError(f"reference: expected one of {list(_MOTION_REFERENCES)}, got {reference!r}")
    return model_frame(model, frame)


def _zero_if_none(model, q, rate):
    """``rate``, or zero rates (nv,) / (B, nv) shaped like ``q``'s batch when None."""
    return np.zeros(np.shape(q)[:-1] + (model.nv,)) if rate is None else rate


def _frame_motion(f, r, motions, reference):
    """Body-frame motion vectors ``motions`` (..., nb, 6) of the frame's body, expressed
    at the frame (:func:`frame_velocity`); (..., 6)."""
    lead = motions.shape[:-2]
    if f.body < 0:
        return np.zeros(lead + (6,))
    M = motions[..., f.body, :]
    w = M[..., :3]
    vo = M[..., 3:] + np.cross(w, f.translation)  # velocity of the frame origin, body axes
    if reference == "local":  # Rᵀx for each row x: x R
        return np.concatenate([w @ f.rotation, vo @ f.rotation], axis=-1)
    Rb = r.rotations[..., f.body, :, :]
    ww = np.einsum("...ij,...j->...i", Rb, w)
    vw = np.einsum("...ij,...j->...i", Rb, vo)
    if reference == "local_world_aligned":
        return np.concatenate([ww, vw], axis=-1)
    origin = r.positions[..., f.body, :] + Rb @ f.translation
    return np.concatenate([ww, vw - np.cross(ww, origin)], axis=-1)
