"""Collision geometry: the shapes of a model's collision objects and the contact points
between them.

The shapes are model data (:mod:`soadyn.core.shapes`, re-exported here); what detection
gives the contact dynamics is a :class:`Contacts` (:mod:`.contacts`).
"""
from ..core.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Mesh, Plane, Shape, Sphere
from .contacts import Contacts, contact_frames

__all__ = ["Shape", "Plane", "Sphere", "Capsule", "Cylinder", "Box", "Ellipsoid", "ConvexMesh", "Mesh",
           "Contacts", "contact_frames"]
