"""Contact points: what collision detection gives the contact dynamics.

A :class:`Contacts` holds k contact points of one model at one configuration, as arrays
over the points. Each point is between two collision objects, the *first* and the
*second* (``objects[i]``, on the bodies ``bodies[i]``, −1 for the world), with

* ``point`` (3,): its world position [m], midway between the two surfaces;
* ``normal`` (3,): the unit world normal pointing from the first object into the second;
* ``depth``: the penetration depth [m] along the normal (> 0 penetrating, ≤ 0 a gap);
* ``friction``: the Coulomb coefficient μ of the pair;
* ``frame`` (3, 3): the contact frame, columns (t1, t2, n), normal last
  (:mod:`soadyn.kernels.collision.frame`).

Contact vectors are in that frame: the contact velocity σ = (σ_t1, σ_t2, σ_n) is the
velocity of the second object's material point relative to the first's, at the point
(σ_n > 0: separating), and an impulse λ = (λ_t1, λ_t2, λ_n) acts on the second object
(−λ on the first), λ_n ≥ 0 pushing them apart.

A Contacts remembers the model and model version it was made for: the functions that use
it (the Delassus operator, time stepping) refuse it for another model or after an edit. A
snapshot of a model (:func:`soadyn.core.compile.snapshot`, the state a call works on)
counts as that model at the snapshot's version: Contacts detected on a model are valid for
its snapshot of the same version, and Contacts detected on a snapshot for the model as long
as it is not edited.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..core.compile import snapshot
from ..kernels.collision.frame import contact_frame

__all__ = ["Contacts", "contact_frames", "model_identity"]


def model_identity(model):
    """The model that ``model`` stands for: the model a snapshot was taken of (while it
    lives), else ``model`` itself; Contacts compare models by it."""
    origin = model.__dict__.get("_origin")
    if origin is not None:
        source = origin()
        if source is not None:
            return source
    return model


def _frozen(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


def contact_frames(normals):
    """The contact frames (k, 3, 3), columns (t1, t2, n), of k unit normals (k, 3)
    (:mod:`soadyn.kernels.collision.frame`)."""
    n = np.asarray(normals, dtype=float).reshape(-1, 3)
    R = np.empty((len(n), 3, 3))
    for k in range(len(n)):
        contact_frame.py_func(n[k, 0], n[k, 1], n[k, 2], R, k)
    return R


@dataclass(frozen=True, eq=False)
class Contacts:
    """k contact points of one model at one configuration (module docstring).

    Attributes: ``objects`` (k, 2) collision-object indices into ``model.collisions`` (−1
    for a point given by hand), ``bodies`` (k, 2) body indices (−1: the world), ``point``
    (k, 3) [m], ``normal`` (k, 3), ``depth`` (k,) [m], ``friction`` (k,), ``frame``
    (k, 3, 3), all in world coordinates; ``model_version``: the version of the model they
    were made for. Arrays are read-only.
    """

    objects: np.ndarray
    bodies: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    depth: np.ndarray
    friction: np.ndarray
    frame: np.ndarray
    model_version: int
    _model: weakref.ref

    def __len__(self):
        return len(self.depth)

    def __getattr__(self, name):
        # (called only for a name the instance's dictionary lacks: a field of the contacts
        # of :func:`flat_contacts` not used yet, made now from their flat arrays and kept,
        # or ``_kernel``; two threads making one at once make equal arrays)
        if name == "_kernel":
            value = self.__dict__["_kernel"] = kernel_arrays(self)
            return value
        flat = self.__dict__.get("_flat")
        field = _FLAT_FIELDS.get(name)
        if flat is None or field is None:
            raise AttributeError(f"'Contacts' object has no attribute {name!r}")
        value = self.__dict__[name] = field(*flat)
        return value

    def __repr__(self):
        model = self._model()
        name = "a deleted model" if model is None else repr(model.name)
        return f"<soadyn.Contacts: {len(self)} points of {name} (version {self.model_version})>"

    @classmethod
    def from_points(cls, model, bodies, points, normals, *, depth=0.0, friction=1.0):
        """Contacts given by hand (no collision objects): k points between the bodies
        ``bodies`` (k, 2) (names or indices, "world" or −1 for the world), at world
        ``points`` (k, 3) [m], with unit world ``normals`` (k, 3) from the first body into the
        second, ``depth`` (k,) or a number [m], ``friction`` (k,) or a number ≥ 0.
        ``objects`` is −1 for every point."""
        model = snapshot(model)  # (a model the compiled algorithms can run on: raises otherwise)
        try:
            pairs = [(model.body_index(a), model.body_index(b)) for a, b in bodies]
        except (TypeError, ValueError) as e:
            if isinstance(e, ValueError) and "body" in str(e):
                raise
            raise ValueError(f"bodies: expected a sequence of k pairs of bodies, got {bodies!r}") from None
        k = len(pairs)
        if any(a == b for a, b in pairs):
            raise ValueError("bodies: a contact is between two different bodies, got the pairs "
                             f"{[p for p in pairs if p[0] == p[1]]}")
        point = _checked(points, (k, 3), "points", "[m]")
        normal = _checked(normals, (k, 3), "normals", "")
        length = np.linalg.norm(normal, axis=1)
        if k and np.abs(length - 1.0).max() > 1e-9:
            bad = int(np.argmax(np.abs(length - 1.0)))
            raise ValueError(f"normals: expected unit vectors, got length {length[bad]:.6g} at point {bad}")
        depth = _checked(np.broadcast_to(np.asarray(depth, dtype=float), (k,)) if np.ndim(depth) == 0 else depth,
                         (k,), "depth", "[m]")
        mu = _checked(np.broadcast_to(np.asarray(friction, dtype=float), (k,)) if np.ndim(friction) == 0
                      else friction, (k,), "friction", "")
        if np.any(mu < 0):
            raise ValueError(f"friction: expected coefficients ≥ 0, got {mu[mu < 0][0]:g}")
        return cls(_frozen(np.full((k, 2), -1), np.int64), _frozen(np.array(pairs, dtype=np.int64).reshape(k, 2), np.int64),
                   _frozen(point), _frozen(normal), _frozen(depth), _frozen(mu), _frozen(contact_frames(normal)),
                   model.version, weakref.ref(model_identity(model)))

    def check(self, model, argname="contacts"):
        """Raise ``ValueError`` naming ``argname`` unless these contacts were made for
        ``model`` (or the model a snapshot ``model`` was taken of) at its version."""
        if not isinstance(self, Contacts):
            raise TypeError(f"{argname}: expected soadyn.Contacts, got {type(self).__name__}")
        mine = self._model()
        if mine is not model_identity(model):
            raise ValueError(f"{argname}: these contacts were made for another model "
                             f"({'deleted' if mine is None else repr(mine.name)}), not {model.name!r}")
        if self.model_version != model.version:
            raise ValueError(f"{argname}: these contacts were made for version {self.model_version} of model "
                             f"{model.name!r}, which has been edited since (version {model.version}); detect them "
                             "again")


def kernel_arrays(contacts):
    """``(bodies (k, 2), point (k, 3), frame (k, 3, 3))`` of ``contacts`` as writeable
    C-contiguous copies, which a kernel fast path passes in place of the read-only public
    arrays: Numba's dispatcher types a read-only array through a slow fallback
    (benchmarks/results/design_notes.md). No kernel writes them. A Contacts keeps them as
    ``_kernel``, made on first use (the arrays they copy are read-only: the copies stay
    equal to them)."""
    return (np.array(contacts.bodies, dtype=np.int64, order="C"), np.array(contacts.point, dtype=float, order="C"),
            np.array(contacts.frame, dtype=float, order="C"))


_new = object.__new__


def made_contacts(objects, bodies, point, normal, depth, friction, frame, model_version, model_ref):
    """A :class:`Contacts` of arrays already of its shapes, types and read-only (the detection
    kernel's outputs), ``model_ref`` a weak reference to the model. The same object as the
    dataclass's constructor gives: that one sets each of the nine fields through
    ``object.__setattr__`` (the class is frozen), a tenth of a detection call; this fills the
    instance's dictionary at once."""
    c = _new(Contacts)
    f = c.__dict__
    f["objects"], f["bodies"], f["point"], f["normal"] = objects, bodies, point, normal
    f["depth"], f["friction"], f["frame"] = depth, friction, frame
    f["model_version"], f["_model"] = model_version, model_ref
    return c


#: the fields of the detection's flat layout (:mod:`soadyn.kernels.collision.detect`) of k
#: contacts in blocks of capacity K: floats ``fl`` (17 K,) — points (3 K), normals (3 K),
#: depths (K), frictions (K), frames (9 K) — and integers ``il`` (4 K,) — objects (2 K),
#: bodies (2 K)
_FLAT_FIELDS = {
    "objects": lambda fl, il, k, K: il[:2 * k].reshape(k, 2),
    "bodies": lambda fl, il, k, K: il[2 * K:2 * K + 2 * k].reshape(k, 2),
    "point": lambda fl, il, k, K: fl[:3 * k].reshape(k, 3),
    "normal": lambda fl, il, k, K: fl[3 * K:3 * K + 3 * k].reshape(k, 3),
    "depth": lambda fl, il, k, K: fl[6 * K:6 * K + k],
    "friction": lambda fl, il, k, K: fl[7 * K:7 * K + k],
    "frame": lambda fl, il, k, K: fl[8 * K:8 * K + 9 * k].reshape(k, 3, 3),
}


def flat_contacts(fl, il, k, K, model_version, model_ref):
    """The :class:`Contacts` of k contacts in the detection's flat layout of capacity K
    (``fl`` (17 K,) floats, ``il`` (4 K,) integers, read-only arrays the Contacts then
    own, either possibly longer: its first entries; ``_FLAT_FIELDS``), ``model_ref`` a
    weak reference to the model. Its fields are views of the two arrays, made on first use (a time step returns contacts that its
    caller often reads only the object pairs of, for the next step's warm start)."""
    c = _new(Contacts)
    f = c.__dict__
    f["_flat"] = (fl, il, k, K)
    f["objects"] = il[:2 * k].reshape(k, 2)
    f["model_version"], f["_model"] = model_version, model_ref
    return c


def _checked(value, shape, name, unit):
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected numbers {unit}, got {value!r}") from None
    if a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite values, got {a[~np.isfinite(a)][0]}")
    return a
