"""Frame Jacobians J = ℬ*φ*H* [Jain24] (kernel in :mod:`soadyn.kernels.jacobians`)."""
from __future__ import annotations

from ..core.batch import Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..kernels.jacobians import frame_jacobian_batch, frame_jacobian_kernel

__all__ = ["frame_jacobian", "REFERENCES"]

#: reference frames of a Jacobian (Pinocchio's names)
REFERENCES = {"local": 0, "local_world_aligned": 1, "world": 2}

_JACOBIAN = CompiledFunction(frame_jacobian_kernel, Batch.twin(frame_jacobian_batch), (Arg("q", "nq"),),
                             Outputs.shaped("jacobian_shape"),
                             params=(None, None, None, None))  # frame body, rotation, translation, reference


def frame_jacobian(model, q, frame, reference="local", *, out=None, workspace=None):
    """Jacobian (6, nv) of a frame: ``J @ v`` is the frame's spatial velocity [ω; v].

    Parameters
    ----------
    model : Model
    q : (nq,) configuration (or (B, nq): then (B, 6, nv)).
    frame : frame name (every body and URDF link is a frame) or index.
    reference : ``"local"`` (frame axes, velocity of the frame origin),
        ``"local_world_aligned"`` (world axes, frame origin) or ``"world"`` (world axes,
        velocity of the body point coinciding with the world origin) — Pinocchio's
        LOCAL, LOCAL_WORLD_ALIGNED and WORLD.
    out : optional (6, nv) output; workspace : optional :class:`~soadyn.Workspace`.
    """
    # snapshot_and_frame(model, frame) inlined (a Python call less: the Jacobian's plain call
    # is a speed target): the frame and the tables of one model state
    try:
        model = model._derived.model
    except AttributeError:  # no current derived data (or not a model): built, or the error that says so
        model = snapshot(model)
    f = model._frame_by_name.get(frame) if type(frame) is str else None
    if f is None:
        f = model.frame(frame)
    try:
        mode = REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference: expected one of {list(REFERENCES)}, got {reference!r}") from None
    # (positional: keyword arguments cost the generated call more)
    return _JACOBIAN.call(model, q, f.body, f.kernel_rotation, f.kernel_translation, mode, out, workspace)
