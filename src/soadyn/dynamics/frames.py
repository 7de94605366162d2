"""Sets of frames resolved once per model version: the bodies they are fixed to and their
poses there, as the kernels read them."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core import spatial as sp
from ..core import validation as val
from ..core.compile import derived, snapshot
from ..core.model import Frame

__all__ = ["FrameSet", "frame_set", "model_frame", "snapshot_and_frame"]

_NO_FRAMES = {}

FrameSet = namedtuple("FrameSet", ["names", "body", "rotation", "translation", "pickoff"])
FrameSet.__doc__ = """Frames resolved for the kernels: ``names`` (m,), ``body`` (m,) the body
each is fixed to (−1: the world), ``rotation`` (m, 3, 3) and ``translation`` (m, 3) its pose
in that body, ``pickoff`` (m, 6, 6) the force transform φ(body, frame) (the pick-off
operator ℬ of [Jain24]; zero for frames on the world). Shared by every call: never edit."""


def model_frame(model, frame):
    """``model.frame(frame)``, or the TypeError for a ``model`` that is not a Model. (A
    name is looked up in the model's table first: ``model.frame`` costs as much again as a
    frame placement's kernel.)"""
    if type(frame) is str:
        f = getattr(model, "_frame_by_name", _NO_FRAMES).get(frame)
        if f is not None:
            return f
    try:
        lookup = model.frame
    except AttributeError:
        raise val.not_a_model(model) from None
    return lookup(frame)


def snapshot_and_frame(model, frame):
    """``(snapshot, f)``: the snapshot of ``model``'s version that a frame function's call
    works on (:func:`soadyn.core.compile.snapshot`, inlined) and its :class:`Frame` ``frame``
    (a name is looked up in the snapshot's table first; ``model.frame`` takes a call more),
    or the TypeError for a ``model`` that is not a Model."""
    try:
        model = model._derived.model
    except AttributeError:  # no current derived data (or not a model): built, or the error that says so
        model = snapshot(model)
    f = model._frame_by_name.get(frame) if type(frame) is str else None
    return model, (model.frame(frame) if f is None else f)


def _key(frames):
    if isinstance(frames, (str, int, np.integer, Frame)):
        frames = (frames,)
    try:
        key = tuple(f.index if isinstance(f, Frame) else f for f in frames)
    except TypeError:
        raise TypeError(f"frames: expected a frame name or index or a sequence of them, got {frames!r}") from None
    if any(isinstance(f, (bool, np.bool_)) for f in key):  # (True == 1: it would find frame 1's memo)
        raise TypeError(f"frames: expected a frame name or index or a sequence of them, got {frames!r}")
    return key


def frame_set(model, frames):
    """The :class:`FrameSet` of ``frames`` (a frame name, index or :class:`Frame`, or a
    sequence of them; repeats allowed), memoized per model version."""
    key = _key(frames)

    def build(model):  # (the snapshot of the version, see soadyn.core.compile)
        if not key:
            raise ValueError("frames: expected at least one frame")
        fs = [model.frame(f) for f in key]
        pickoff = np.zeros((len(fs), 6, 6))
        for k, f in enumerate(fs):
            if f.body >= 0:
                pickoff[k] = sp.force_transform(f.rotation, f.translation)
        out = FrameSet([f.name for f in fs], np.array([f.body for f in fs], dtype=np.int64),
                       np.array([f.rotation for f in fs], dtype=float).reshape(-1, 3, 3),
                       np.array([f.translation for f in fs], dtype=float).reshape(-1, 3), pickoff)
        # writeable although shared by every call: the kernels only read them, and Numba's
        # dispatcher types a read-only array on its slow path (and compiles a separate
        # read-only version of each kernel). Nothing outside the package sees them.
        return out

    return derived(model).memo(("frames", key), build)
