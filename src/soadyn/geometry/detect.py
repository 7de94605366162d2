"""Contact detection and collision distances over a model's collision objects.

:func:`detect_contacts` gives the contact points of the model's collision objects at a
configuration, :func:`collision_distances` the signed distance, witness points and normal
of every allowed pair. Both run one compiled kernel (:mod:`soadyn.kernels.collision`)
over the model's collision tables (:func:`soadyn.core.collisions.collision_tables`) and
the bodies' world poses (the compiled forward kinematics, [Jain12, eq. 15]): broad phase
by sort and sweep of the world bounding boxes, narrow phase by one function per pair of
shape kinds (:mod:`soadyn.kernels.collision.narrow`).

Conventions (:mod:`soadyn.geometry.contacts`): the normal points from the first object of
a pair into the second (the pair's order in ``model.collision_pairs()``, i < j); a depth
> 0 is a penetration; a contact point lies midway between the two surfaces; a distance
< 0 is a penetration depth, the points being the two surfaces' witness points
(points[1] − points[0] = distance · normal).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numpy import empty, float64, int64, ndarray

from ..core import validation as val
from ..core.collisions import collision_tables
from ..core.compile import derived, snapshot
from ..core.status import raise_status
from ..dynamics.kinematics import body_placements
from ..kernels.collision.detect import collision_distances_kernel, detect_kernel, scratch_sizes
from ..kernels.collision.layout import pack_collision_tables
from .contacts import made_contacts, model_identity

__all__ = ["detect_contacts", "collision_distances", "Distances"]

#: the contacts a call's output arrays hold at first (at most 4 per allowed pair); a call that
#: finds more runs again with arrays of the count found (the kernel counts every contact,
#: :mod:`soadyn.kernels.collision.detect`): nothing is dropped
CAPACITY = 128


class _Detection:
    """The packed tables of one model version, their scratch sizes and the first capacity."""

    __slots__ = ("ci", "cf", "floats", "ints", "npairs", "capacity")

    def __init__(self, model):
        tables = collision_tables(model)
        self.ci, self.cf = pack_collision_tables(tables)
        n, self.npairs = len(tables.kind), len(tables.pairs)
        self.floats, self.ints = (int(x) for x in scratch_sizes.py_func(n, self.npairs, int(self.ci[3]), model.nbodies))
        self.capacity = max(1, min(4 * self.npairs, CAPACITY))


class _Scratch:
    """A thread's scratch of the detection kernels for one model version (the integers
    zero-filled: the kernels leave them so)."""

    __slots__ = ("fs", "js")

    def __init__(self, detection):
        self.fs = np.zeros(detection.floats)
        self.js = np.zeros(detection.ints, dtype=np.int64)


class _Call:
    """Everything one thread's :func:`detect_contacts` passes the kernel for one model
    version, gathered once (a call then finds it in one lookup): the model's and the
    collision tables, this thread's workspace and scratch, the first capacity K with the
    shapes of the output arrays of that capacity, and the Contacts' model version and weak
    reference (to the model the snapshot stands for, :func:`~.contacts.model_identity`)."""

    __slots__ = ("mi", "mf", "ws", "ci", "cf", "fs", "js", "nq", "capacity", "shapes", "version", "_identity", "model")

    def __init__(self, d, detection, scratch):
        c = d.compiled
        self.mi, self.mf, self.ws = c.mi, c.mf, d.buffer()
        self.ci, self.cf, self.fs, self.js = detection.ci, detection.cf, scratch.fs, scratch.js
        self.nq, self.capacity, self.version, self.model = c.nq, detection.capacity, d.version, d.model
        self.shapes = _shapes(detection.capacity)
        self._identity = weakref.ref(model_identity(d.model))

    def identity(self):
        """The weak reference the Contacts keep (made again if the model it named is gone)."""
        ref = self._identity
        if ref() is None:
            ref = weakref.ref(model_identity(self.model))
        return ref


def _shapes(K):
    """The shapes of the kernel's output arrays of capacity K (:func:`detect_kernel`): two
    fields each (vectors, scalars, pairs), the frames."""
    return (2 * K, 3), (2 * K,), (K, 3, 3), (2 * K, 2)


def _margin(margin):
    m = val.finite_scalar(margin, "margin")
    if m < 0.0:
        raise ValueError(f"margin: expected a distance ≥ 0 [m], got {margin!r}")
    return m


def _prepared(model):
    """(store, detection tables, this thread's scratch) of the model's current version,
    built on first use; this thread's workspace too (the detection kernel's)."""
    d = derived(model)
    detection = d.memo("collision_detection", _Detection)
    scratch = d.per_thread("collision_scratch", lambda snapshot: _Scratch(detection))
    d.buffer()
    return d, detection, scratch


def _call(model):
    """This thread's :class:`_Call` of the model's current version (built on first use)."""
    d, detection, scratch = _prepared(model)
    return d.per_thread("collision_call", lambda snapshot: _Call(d, detection, scratch))


def _detect_one(call, q, margin):
    """The Contacts of one configuration (a float64 vector of length nq; the kernel checks
    its values)."""
    K, (vs, ss, fs, ps) = call.capacity, call.shapes
    while True:
        # two fields per array (detect_kernel): each field of the k contacts is one slice
        vectors, scalars, frames, pairs = empty(vs), empty(ss), empty(fs), empty(ps, int64)
        k = detect_kernel(call.mi, call.mf, call.ws, q, call.ci, call.cf, margin, call.fs, call.js, vectors, scalars,
                          frames, pairs)
        if k < 0:
            raise_status(-k, ("q",))
        if k <= K:
            break
        K = k  # more contacts than the arrays hold: again with arrays of the count found
        vs, ss, fs, ps = _shapes(K)
    # read-only, as a Contacts' arrays are (the slices inherit it; setflags costs half of
    # setting the flags attribute)
    vectors.setflags(write=False)
    scalars.setflags(write=False)
    frames.setflags(write=False)
    pairs.setflags(write=False)
    return made_contacts(pairs[:k], pairs[K:K + k], vectors[:k], vectors[K:K + k], scalars[:k], scalars[K:K + k],
                         frames[:k], call.version, call.identity())


def detect_contacts(model, q, margin=0.0):
    """The contact points between the model's collision objects at configuration ``q``.

    Parameters
    ----------
    model : Model with collision objects (``model.add_collision``, ``model.add_ground``,
        or read from URDF / MJCF).
    q : (nq,) configuration, or (B, nq) for a batch.
    margin : distance [m] ≥ 0: contacts are reported for surfaces closer than this (a gap
        g ≤ margin gives a contact of depth −g ≤ 0), as MuJoCo's geom margin.

    Returns
    -------
    Contacts (:class:`soadyn.Contacts`), or for a batch a list of B of them (each state has
    its own number of contacts). Per contact: ``objects`` (the pair, in the order of
    ``model.collision_pairs()``), ``bodies``, ``point`` midway between the surfaces,
    ``normal`` from the first object into the second, ``depth`` (> 0 penetrating),
    ``friction`` and ``frame`` (columns t1, t2, n), world coordinates.

    A pair of objects gives one contact, or several where one point is not enough to rest:
    a box, cylinder or convex mesh on a plane or a box on a box up to 4, a capsule on a
    plane or a box 2, two parallel capsules 2 (:mod:`soadyn.kernels.collision.narrow`).
    The friction coefficient of a contact is the larger of its two objects' coefficients
    (MuJoCo's rule: the rougher surface governs, and a model read from MJCF gets the
    coefficients MuJoCo gives its contacts).
    """
    m = margin if margin == 0.0 and type(margin) is float else _margin(margin)
    # the common call (a current model whose call tables this thread has built, q a float64
    # vector): one lookup; else _call builds what is missing. Either way the call works on
    # one model state: the tables of one version
    try:
        call = model._derived.threads.objects["collision_call"]
    except (AttributeError, KeyError):
        call = _call(snapshot(model))
    if not (type(q) is ndarray and q.dtype == float64 and q.ndim == 1 and q.flags.c_contiguous
            and q.shape[0] == call.nq):
        q = val.vector(q, call.model.nq, "q")
        if q.ndim == 2:
            return [_detect_one(call, row, m) for row in q]
    return _detect_one(call, q, m)


@dataclass(frozen=True, eq=False)
class Distances:
    """The signed distances of a model's allowed collision pairs (:func:`collision_distances`).

    Attributes
    ----------
    objects : (P, 2) the pairs (i, j), i < j, of ``model.collisions``, in the order of
        ``model.collision_pairs()`` (the same for every state of a batch).
    distance : (P,) the signed distance [m]: the gap between the two surfaces, < 0 the
        depth of their penetration (the shortest translation of the second object along
        ``normal`` that separates them).
    points : (P, 2, 3) the witness points on the first and on the second object [m,
        world]; points[:, 1] − points[:, 0] = distance · normal.
    normal : (P, 3) the unit normal from the first object into the second (world).

    The arrays are read-only; ``distance``, ``points`` and ``normal`` have a leading batch
    dimension B when ``q`` was batched.
    """

    objects: np.ndarray
    distance: np.ndarray
    points: np.ndarray
    normal: np.ndarray

    def __len__(self):
        return self.objects.shape[0]

    def __repr__(self):
        batch = "" if self.distance.ndim == 1 else f", batch of {self.distance.shape[0]}"
        return f"<soadyn.Distances: {len(self)} pairs{batch}>"


def collision_distances(model, q):
    """Signed distance, witness points and normal of every allowed pair of the model's
    collision objects at configuration ``q`` (:class:`Distances`; ``q`` (nq,) or (B, nq)).

    Exact for the pairs with closed forms (plane against every shape, sphere against
    sphere, capsule, cylinder and box, capsule against capsule and box, penetrating
    boxes); GJK and EPA on polytopes end on the exact answer; on curved surfaces
    (ellipsoids, cylinders) a Newton polish of the optimality conditions gives it to
    rounding (:mod:`soadyn.kernels.collision.convex`). Two planes that are not parallel
    overlap without bound: their distance is −inf.
    """
    model = snapshot(model)  # one model state for the whole call
    _, detection, scratch = _prepared(model)
    R, p = body_placements(model, q)
    P = detection.npairs
    pairs = collision_tables(model).pairs
    single = R.ndim == 3
    if single:
        R, p = R[None], p[None]
    B = R.shape[0]
    distance = np.empty((B, P))
    points = np.empty((B, P, 2, 3))
    normal = np.empty((B, P, 3))
    for k in range(B):
        status = collision_distances_kernel(detection.ci, detection.cf, R[k], p[k], scratch.fs, scratch.js,
                                            distance[k], points[k], normal[k])
        if status != 0:
            raise RuntimeError(f"collision_distances: the collision tables of model {model.name!r} do not fit its "
                               "bodies (the model changed during the call?)")
    if single:
        distance, points, normal = distance[0], points[0], normal[0]
    for a in (distance, points, normal):
        a.flags.writeable = False
    objects = pairs.copy()
    objects.flags.writeable = False
    return Distances(objects, distance, points, normal)
