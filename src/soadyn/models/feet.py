"""Contact spheres at the feet of the built-in legged robots with loops
(:mod:`soadyn.models.loop_robots`), whose published parameters have no collision geometry.

:func:`add_foot_spheres` fixes spheres to the robots' feet so that they can stand on the
ground (``model.add_ground()``) in a contact simulation (:func:`soadyn.step`):

* ``mini_cheetah``: one sphere of radius 0.02 m per leg, centred at the leg's ``<leg>_foot``
  frame (the end of the lower leg, 0.195 m below the knee): the Mini Cheetah's rubber foot.
* ``mit_humanoid``: two spheres of radius 0.015 m per foot on the ankle link, a toe at
  (0.09, 0, −0.04) m and a heel at (−0.05, 0, −0.04) m in the ankle link's frame (the
  ``<side>_foot`` frame is at (0, 0, −0.04)): a line contact per foot, so that two feet
  side by side support the robot.
* ``tello``: two spheres of radius 0.01 m per foot, centred at its ``<side>-toe`` and
  ``<side>-heel`` frames.

The spheres are placed by this library (the sizes are plausible, not published). They
collide with the ground and not with each other (``contype`` 2, ``conaffinity`` 1: the
MuJoCo bitmask rule of :mod:`soadyn.core.collisions` lets them meet objects of contype 1,
as the ground is).
"""
from __future__ import annotations

import numpy as np

__all__ = ["add_foot_spheres", "FOOT_SPHERES"]

#: per robot: (frame, position in the frame [m], radius [m]) of each foot sphere
FOOT_SPHERES = {
    "mini_cheetah": [(f"{leg}_foot", (0.0, 0.0, 0.0), 0.02) for leg in ("FR", "FL", "HR", "HL")],
    "mit_humanoid": [(f"{side}_ankle_link", p, 0.015) for side in ("right", "left")
                     for p in ((0.09, 0.0, -0.04), (-0.05, 0.0, -0.04))],
    "tello": [(f"{side}-{end}", (0.0, 0.0, 0.0), 0.01) for side in ("left", "right") for end in ("toe", "heel")],
}


def add_foot_spheres(model, friction=0.8):
    """Fix the foot spheres of :data:`FOOT_SPHERES` (module docstring) to ``model``, a
    ``mini_cheetah()``, ``mit_humanoid()`` or ``tello()`` (by ``model.name``): an edit
    (the model's version moves on). ``friction``: their Coulomb coefficient μ ≥ 0.
    Returns the names of the collision objects added, ``"<frame>_sphere"`` (``_2`` for a
    frame's second)."""
    from ..core.shapes import Sphere
    try:
        spheres = FOOT_SPHERES[model.name]
    except (AttributeError, KeyError):
        raise ValueError(f"model: expected one of the robots {sorted(FOOT_SPHERES)} (by name), got "
                         f"{getattr(model, 'name', type(model).__name__)!r}") from None
    names = []
    for frame, p, r in spheres:
        name = f"{frame}_sphere" if f"{frame}_sphere" not in names else f"{frame}_sphere_2"
        model.add_collision(frame, Sphere(r), (np.eye(3), np.array(p, dtype=float)), name=name, friction=friction,
                            contype=2, conaffinity=1)
        names.append(name)
    return names
