"""Forward kinematics: world poses, body velocities and accelerations, frame placements
and frame motions ([Jain12, eq. 15]; kernels in :mod:`soadyn.kernels.kinematics`)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..kernels.frames import frame_acceleration_kernel, frame_placement_kernel, frame_velocity_kernel
from ..kernels.kinematics import kinematics_kernel, poses_batch, poses_kernel
from .frames import snapshot_and_frame

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
    # an absent rate gives an empty output (one signature per kernel, see soadyn.core.validation.ABSENT)
    return ((c.nb, 3, 3), (c.nb, 3), (c.nb if state[1].size else 0, 6), (c.nb if state[2].size else 0, 6))


#: the output of an absent rate: nothing is written to it and forward_kinematics returns
#: None in its place, so one shared empty array serves every call (a NumPy allocation per
#: call was a measurable part of ur5's forward_kinematics: benchmarks/results/design_notes.md)
_NO_MOTIONS = np.empty((0, 6))


def _allocate_kinematics(c, state):
    return (np.empty((c.nb, 3, 3)), np.empty((c.nb, 3)), _NO_MOTIONS if state[1] is ABSENT else np.empty((c.nb, 6)),
            _NO_MOTIONS if state[2] is ABSENT else np.empty((c.nb, 6)))


#: the poses alone, the common call (``forward_kinematics(model, q)``, frame placements)
_POSES = CompiledFunction(poses_kernel, Batch.twin(poses_batch), (Arg("q", "nq"),),
                          Outputs.shaped("rotations_shape", "positions_shape"))

_KINEMATICS = CompiledFunction(kinematics_kernel, Batch.stacked(),
                               (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True)),
                               Outputs.computed(_kinematics_outputs, allocate=_allocate_kinematics),
                               params=(val.GRAVITY,))


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
        R, p = _POSES.call(model, q, None, workspace)  # (out, workspace): positional is cheaper
        return KinematicsResult(R, p, None, None)
    vk = v
    if a is not None and v is None:  # accelerations at zero velocity
        model = snapshot(model)  # (its nv: the call's)
        vk = np.zeros(np.shape(a)[:1] + (model.nv,)) if np.ndim(a) == 2 else np.zeros(model.nv)
    R, p, V, A = _KINEMATICS(model, (q, ABSENT if vk is None else vk, ABSENT if a is None else a), (gravity,), None,
                             workspace)
    return KinematicsResult(R, p, None if v is None else V, None if a is None else A)


def body_placements(model, q):
    """World poses of all bodies: ``(rotations (nb,3,3), positions (nb,3))``."""
    r = forward_kinematics(model, q)
    return r.rotations, r.positions


#: reference frames of frame velocities and accelerations (as for Jacobians), in the
#: order of the kernels' codes (soadyn.kernels.jacobians: LOCAL, LOCAL_WORLD_ALIGNED, WORLD)
_MOTION_REFERENCES = ("local", "local_world_aligned", "world")
_REFERENCE_CODES = {name: code for code, name in enumerate(_MOTION_REFERENCES)}

# the parameters (the frame's body, its rotation and translation there, the reference
# code) come checked: the frame is one of the model's
_FRAME_PLACEMENT = CompiledFunction(frame_placement_kernel, Batch.loop(), (Arg("q", "nq"),),
                                    Outputs.shaped("pose_shape"), params=(None,) * 3)
_FRAME_VELOCITY = CompiledFunction(frame_velocity_kernel, Batch.loop(), (Arg("q", "nq"), Arg("v", "nv", optional=True)),
                                   Outputs.shaped("motion_shape"), params=(None,) * 4)
_FRAME_ACCELERATION = CompiledFunction(frame_acceleration_kernel, Batch.loop(),
                                       (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True)),
                                       Outputs.shaped("motion_shape"), params=(None,) * 4)


def frame_placement(model, q, frame):
    """4×4 homogeneous world pose of the frame named ``frame`` (or the world frame pose
    of a frame fixed to the world) [m]. ``q`` may be batched, giving (B, 4, 4)."""
    model, f = snapshot_and_frame(model, frame)  # the frame and the tables of one model state
    return _FRAME_PLACEMENT.call(model, q, f.body, f.kernel_rotation, f.kernel_translation)


def frame_velocity(model, q, v, frame, reference="local"):
    """Spatial velocity [ω; v] (6,) of a frame, or (B, 6) for batched q (B, nq) and v (B, nv).

    ``reference="local"``: frame axes, velocity of the frame origin;
    ``"local_world_aligned"``: world axes, velocity of the frame origin;
    ``"world"``: world axes, velocity of the body point at the world origin
    (Pinocchio's LOCAL, LOCAL_WORLD_ALIGNED and WORLD). ``v``: None means zero. [rad/s, m/s]
    """
    model, f = snapshot_and_frame(model, frame)  # the frame and the tables of one model state
    code = _REFERENCE_CODES.get(reference) if type(reference) is str else None
    return _FRAME_VELOCITY.call(model, q, v, f.body, f.kernel_rotation, f.kernel_translation,
                                _reference_code(reference) if code is None else code)


def frame_acceleration(model, q, v, a, frame, reference="local"):
    """Spatial acceleration (6,) of a frame (derivative of the spatial velocity, gravity
    not included), or (B, 6) for a batch; ``reference`` as in :func:`frame_velocity`.
    ``v``, ``a``: None means zero. [rad/s², m/s²]"""
    model, f = snapshot_and_frame(model, frame)  # the frame and the tables of one model state
    code = _REFERENCE_CODES.get(reference) if type(reference) is str else None
    return _FRAME_ACCELERATION.call(model, q, v, a, f.body, f.kernel_rotation, f.kernel_translation,
                                    _reference_code(reference) if code is None else code)


def _reference_code(reference):
    """The kernels' code of ``reference``, or the error naming the argument."""
    code = _REFERENCE_CODES.get(reference) if type(reference) is str else None
    if code is None:
        raise ValueError(f"reference: expected one of {list(_MOTION_REFERENCES)}, got {reference!r}")
    return code
