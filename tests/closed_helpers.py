"""Shared builders for the closed-chain tests.

``cut_joint_pair(kind, rng)`` builds the same two-body mechanism twice:

* ``tree``: world —revolute— link1 —<joint of type kind>— link2 (a plain tree);
* ``closed``: world —revolute— link1, world —free— link2, and a loop joint of type
  ``kind`` between link1 (at the tree joint's placement) and link2.

Both describe one physical system, so the closed chain's forward dynamics must
reproduce the tree's (ABA) accelerations, and the loop's constraint force on link2 must
be the force the tree joint transmits to link2 (Newton–Euler on the leaf body).
"""
import os

import numpy as np

import soadyn as sd
from soadyn import joints as jt
from soadyn import spatial as sp
from soadyn.models import random_rigid_inertia

URDFPLUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "models", "urdfplus")
if not os.path.isdir(URDFPLUS):
    URDFPLUS = "/work/shared/models/urdfplus"

KINDS = ("weld", "revolute", "prismatic", "spherical", "universal", "cylindrical", "planar")


def urdfplus(name, **kw):
    return sd.load_urdf(os.path.join(URDFPLUS, name), **kw)


def random_rotation(rng):
    return sp.quaternion_to_matrix(sp.quaternion_from_rotation_vector(rng.normal(size=3)))


def unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def _perpendicular(a, rng):
    b = np.cross(a, unit(rng))
    return b / np.linalg.norm(b)


def _inertia(rng):
    mass, com, inertia = random_rigid_inertia(rng)
    return dict(mass=mass, com=com, inertia=inertia)


def cut_joint_pair(kind, rng, gravity=(0.0, 0.0, -9.81)):
    """(tree, closed, joint_names_of_kind_in_tree)."""
    axis = unit(rng)
    axis2 = _perpendicular(axis, rng)
    place1 = (random_rotation(rng), rng.normal(size=3) * 0.3)
    placeK = (random_rotation(rng), rng.normal(size=3) * 0.3)
    in1, in2 = _inertia(rng), _inertia(rng)
    j1axis = unit(rng)

    tree = sd.Model(f"tree_{kind}", gravity=gravity)
    tree.add_body("link1", jt.Revolute(j1axis), None, place1, **in1)
    parent = "link1"
    if kind == "cylindrical":  # prismatic then revolute through a mass-less body
        tree.add_body("slider", jt.Prismatic(axis), parent, placeK)
        joint, parent, place = jt.Revolute(axis), "slider", None
    else:
        joint = {"weld": lambda: jt.Fixed(), "revolute": lambda: jt.Revolute(axis),
                 "prismatic": lambda: jt.Prismatic(axis), "spherical": lambda: jt.Spherical(),
                 "universal": lambda: jt.Universal(axis, axis2), "planar": lambda: jt.Planar(axis)}[kind]()
        place = placeK
    tree.add_body("link2", joint, parent, place, **in2)

    closed = sd.Model(f"closed_{kind}", gravity=gravity)
    closed.add_body("link1", jt.Revolute(j1axis), None, place1, **in1)
    closed.add_body("link2", jt.Free(), None, **in2)
    closed.add_loop("cut", kind, "link1", "link2", axis, predecessor_placement=placeK,
                    axis2=axis2 if kind == "universal" else None)
    return tree, closed


def map_state(tree, closed, q, v):
    """The closed model's state for the tree state (q, v)."""
    kin = sd.forward_kinematics(tree, q, v)
    b2 = tree.body_index("link2")
    qc = np.concatenate([q[:1], kin.positions[b2], sp.matrix_to_quaternion(kin.rotations[b2])])
    vc = np.concatenate([v[:1], kin.velocities[b2]])
    return qc, vc


def leaf_joint_force(tree, q, v, qdd, body):
    """Spatial force [n; f] the joint of leaf ``body`` transmits to it (body frame):
    Newton–Euler, f = M α + V ×* M V with α including the base acceleration −g."""
    kin = sd.forward_kinematics(tree, q, v, qdd, gravity=True)
    M = tree.bodies[body].inertia
    V = kin.velocities[body]
    return M @ kin.accelerations[body] + sp.cross_force(V, M @ V)
