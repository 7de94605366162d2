"""World poses of a model's collision objects at a configuration."""
from __future__ import annotations

import numpy as np

from ..core.collisions import collision_tables
from ..core.compile import snapshot
from ..dynamics.kinematics import body_placements

__all__ = ["collision_placements"]


def collision_placements(model, q):
    """World poses of ``model.collisions`` at ``q``: (n_objects, 4, 4) homogeneous
    matrices [m], the pose of each object's shape frame in the world,
    ``frame_placement(model, q, obj.frame) @ obj.placement`` — the bodies' world poses of
    the compiled forward kinematics ([Jain12, eq. 15], :func:`soadyn.body_placements`)
    composed with the objects' poses in their bodies' frames
    (:func:`~soadyn.core.collisions.collision_tables`); the world's objects (body −1) keep
    their own pose. ``q``: (nq,), or (B, nq) for a batch, giving (B, n_objects, 4, 4).
    """
    model = snapshot(model)  # the tables and the poses of one model state
    tables = collision_tables(model)
    R_body, p_body = body_placements(model, q)  # validates q: (..., nb, 3, 3), (..., nb, 3)
    lead = R_body.shape[:-3]
    # the world's pose first, so that body b's is at index b + 1 (body −1 → 0)
    R_all = np.concatenate([np.broadcast_to(np.eye(3), lead + (1, 3, 3)), R_body], axis=-3)
    p_all = np.concatenate([np.zeros(lead + (1, 3)), p_body], axis=-2)
    R = R_all[..., tables.body + 1, :, :]
    p = p_all[..., tables.body + 1, :]
    out = np.zeros(lead + (len(tables.body), 4, 4))
    out[..., :3, :3] = R @ tables.rotation
    out[..., :3, 3] = np.einsum("...ij,...j->...i", R, tables.translation) + p
    out[..., 3, 3] = 1.0
    return out
