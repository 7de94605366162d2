"""Collision geometry: the shapes of a model's collision objects and the contact points
between them.

The shapes are model data (:mod:`soadyn.core.shapes`, re-exported here); what detection
gives the contact dynamics is a :class:`Contacts` (:mod:`.contacts`);
:func:`collision_placements` gives the objects' world poses at a configuration,
:func:`detect_contacts` their contact points and :func:`collision_distances` the signed
distances of their pairs (:mod:`.detect`).
"""
from ..core.collisions import CollisionObject
from ..core.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Mesh, Plane, Shape, Sphere
from .contacts import Contacts, contact_frames
from .detect import Distances, collision_distances, detect_contacts
from .placements import collision_placements

__all__ = ["CollisionObject", "Shape", "Plane", "Sphere", "Capsule", "Cylinder", "Box", "Ellipsoid", "ConvexMesh", "Mesh",
           "Contacts", "contact_frames", "collision_placements", "detect_contacts", "collision_distances", "Distances"]
