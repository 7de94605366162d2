"""Generated tree models: serial chains, branched trees and random trees."""
from __future__ import annotations

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core.model import Model

__all__ = ["serial_chain", "branched_tree", "random_tree", "random_rigid_inertia"]


def _rod_inertia(mass, length, radius):
    """Inertia of a solid cylinder of ``length`` along z about its centre [kg m²]."""
    ixx = mass * (3 * radius**2 + length**2) / 12.0
    return np.diag([ixx, ixx, mass * radius**2 / 2.0])


def serial_chain(n, *, axes="zyx", link_length=0.3, mass=1.0, radius=0.03, floating_base=False,
                 gravity=(0.0, 0.0, -9.81)):
    """An ``n``-link serial chain of uniform rods along z, hinge k about ``axes[k % len(axes)]``.

    Each link is a rod of ``mass`` [kg], ``link_length`` [m] and ``radius`` [m]; the next hinge
    sits at its far end. With ``floating_base`` the first link is a free body.
    """
    if int(n) < 1:
        raise ValueError(f"n: expected a positive number of links, got {n!r}")
    m = Model(f"chain{n}", gravity=gravity)
    I = _rod_inertia(mass, link_length, radius)
    for k in range(int(n)):
        joint = jt.Free() if (floating_base and k == 0) else jt.Revolute(axes[k % len(axes)])
        placement = (np.eye(3), np.array([0.0, 0.0, link_length if k > 0 else 0.0]))
        m.add_body(f"link{k}", joint, None if k == 0 else k - 1, placement, mass=mass,
                   com=(0.0, 0.0, link_length / 2), inertia=I, joint_name=f"joint{k}")
    m.add_frame("tip", n - 1, (np.eye(3), np.array([0.0, 0.0, link_length])))
    return m


def branched_tree(depth=3, branching=2, *, link_length=0.3, mass=1.0, radius=0.03, floating_base=False,
                  gravity=(0.0, 0.0, -9.81)):
    """A balanced tree: a root link and ``branching`` children per link, ``depth`` levels.

    Children of a link are spread around its tip (revolute about x, y alternately); leaves
    carry frames ``"tip<k>"``.
    """
    if depth < 1 or branching < 1:
        raise ValueError(f"depth and branching must be positive, got {depth!r}, {branching!r}")
    m = Model(f"tree{depth}x{branching}", gravity=gravity)
    I = _rod_inertia(mass, link_length, radius)
    root_joint = jt.Free() if floating_base else jt.Revolute("z")
    m.add_body("link0", root_joint, None, mass=mass, com=(0, 0, link_length / 2), inertia=I, joint_name="joint0")
    level = [0]
    for d in range(1, depth):
        nxt = []
        for parent in level:
            for c in range(branching):
                ang = 2 * np.pi * c / branching
                R = sp.rotation_z(ang) @ sp.rotation_x(0.4 if branching > 1 else 0.0)
                idx = m.nbodies
                m.add_body(f"link{idx}", jt.Revolute("xy"[d % 2]), parent,
                           (R, np.array([0.0, 0.0, link_length])), mass=mass,
                           com=(0, 0, link_length / 2), inertia=I, joint_name=f"joint{idx}")
                nxt.append(idx)
        level = nxt
    for k, leaf in enumerate(level):
        m.add_frame(f"tip{k}", leaf, (np.eye(3), np.array([0.0, 0.0, link_length])))
    return m


def random_rigid_inertia(rng, mass_range=(0.2, 3.0), size=0.3):
    """(mass, com, I_c) of a random physically consistent rigid body."""
    mass = rng.uniform(*mass_range)
    Rr = sp.exp3(rng.normal(size=3))
    second_moment = np.diag(rng.uniform(0.05, 1.0, 3)) * mass * size**2
    Ic = Rr @ (np.trace(second_moment) * np.eye(3) - second_moment) @ Rr.T
    return mass, rng.normal(size=3) * size / 2, Ic


_ALL_KINDS = ("revolute", "prismatic", "helical", "spherical", "free", "universal", "gimbal", "planar")


def _random_joint(kind, rng):
    axis = rng.normal(size=3)
    if kind == "revolute":
        return jt.Revolute(axis)
    if kind == "prismatic":
        return jt.Prismatic(axis)
    if kind == "helical":
        return jt.Helical(axis, pitch=rng.uniform(-0.2, 0.2))
    if kind == "spherical":
        return jt.Spherical()
    if kind == "free":
        return jt.Free()
    if kind == "universal":
        return jt.Universal(axis, rng.normal(size=3))
    if kind == "gimbal":
        return jt.Gimbal(tuple(rng.normal(size=(3, 3))))
    if kind == "planar":
        return jt.Planar(axis)
    if kind == "fixed":
        return jt.Fixed()
    raise ValueError(f"kind: unknown joint kind {kind!r}")


def random_tree(n, rng=None, *, kinds=_ALL_KINDS, floating_base=False, gravity=(0.0, 0.0, -9.81)):
    """A random tree of ``n`` bodies: random parents, placements, inertias and joint types
    drawn from ``kinds`` (every kind appears once before any repeats when n allows).
    ``rng``: numpy Generator or seed. Used to test the algorithms on arbitrary topologies."""
    rng = np.random.default_rng(rng)
    m = Model(f"random{n}", gravity=gravity)
    order = list(kinds) * (n // max(len(kinds), 1) + 1)
    picks = list(rng.permutation(order[:max(n, len(kinds))]))[:n]
    for k in range(n):
        kind = "free" if (floating_base and k == 0) else picks[k]
        parent = None if k == 0 else int(rng.integers(-1 if not floating_base else 0, k))
        parent = None if parent is not None and parent < 0 else parent
        mass, com, Ic = random_rigid_inertia(rng)
        placement = (sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        m.add_body(f"b{k}", _random_joint(kind, rng), parent, placement, mass=mass, com=com, inertia=Ic)
        m.add_frame(f"f{k}", k, (sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.2))
    return m
