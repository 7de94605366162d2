"""Visual geometry of a model: what a viewer draws, not what the dynamics uses.

A :class:`Visual` is a shape fixed to a model frame (a URDF ``<link><visual>``: the link
is a frame of the model, whether a body or a link merged into its parent through a fixed
joint). Its world pose at a configuration q is the frame's pose composed with the
visual's ``placement``: ``frame_placement(model, q, frame) @ placement``. Editing or
adding visuals never changes the dynamics, so they live in ``model.visuals`` outside
the versioned model data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Visual", "VISUAL_KINDS"]

#: shapes and the meaning of ``size`` [m]: box (x, y, z) edge lengths; cylinder
#: (radius, length) along the z axis, centred; sphere (radius,); mesh (sx, sy, sz) scale
VISUAL_KINDS = {"box": 3, "cylinder": 2, "sphere": 1, "mesh": 3}


@dataclass(frozen=True, eq=False)
class Visual:
    """A shape fixed to the model frame ``frame``.

    Parameters
    ----------
    name : str, unique among the model's visuals (URDF: ``"<link>_<i>"``, the i-th
        ``<visual>`` of the link, as Pinocchio names its geometry objects).
    frame : name of the model frame the shape is fixed to.
    kind : one of ``VISUAL_KINDS`` (box, cylinder, sphere, mesh).
    size : the numbers ``VISUAL_KINDS`` gives for ``kind`` [m] (mesh: a scale factor per axis).
    placement : (4, 4) pose of the shape in the frame (default identity).
    filename : mesh file (an absolute path once resolved; None when the file was not found).
    uri : the mesh reference as written in the file (``package://...``), for messages.
    rgba : (4,) colour in [0, 1], or None (the mesh's own colours, or the viewer's default).
    """

    name: str
    frame: str
    kind: str
    size: tuple
    placement: np.ndarray = None
    filename: str | None = None
    uri: str | None = None
    rgba: tuple | None = None

    def __post_init__(self):
        if self.kind not in VISUAL_KINDS:
            raise ValueError(f"visual {self.name!r}: kind: expected one of {sorted(VISUAL_KINDS)}, got {self.kind!r}")
        size = tuple(float(x) for x in np.atleast_1d(np.asarray(self.size, dtype=float)))
        n = VISUAL_KINDS[self.kind]
        if len(size) != n or not all(np.isfinite(size)) or (self.kind != "mesh" and min(size) < 0):
            raise ValueError(f"visual {self.name!r}: size: expected {n} finite non-negative numbers for a "
                             f"{self.kind}, got {self.size!r}")
        T = np.eye(4) if self.placement is None else np.array(self.placement, dtype=float)
        if T.shape != (4, 4) or not np.all(np.isfinite(T)):
            raise ValueError(f"visual {self.name!r}: placement: expected a finite (4, 4) homogeneous matrix, "
                             f"got shape {T.shape}")
        T.flags.writeable = False
        rgba = None if self.rgba is None else tuple(float(x) for x in self.rgba)
        if rgba is not None and (len(rgba) != 4 or not all(0.0 <= x <= 1.0 for x in rgba)):
            raise ValueError(f"visual {self.name!r}: rgba: expected 4 numbers in [0, 1], got {self.rgba!r}")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "placement", T)
        object.__setattr__(self, "rgba", rgba)
