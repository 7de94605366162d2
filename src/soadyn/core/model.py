"""Model: a tree of bodies connected by hinges, with named frames (nodes) and, for
closed-chain systems, loop constraints and couplings.

Bodies are numbered parent-first (the parent's index is smaller than the child's;
[CDI18]'s "regular numbering"); the inertial frame is not a body and has index −1.
Every body's frame coincides with its hinge's child frame: the hinge *placement* is
the pose of the joint frame in the parent body's frame at zero joint motion, and
the joint transform moves the child from there (URDF convention).

Build models in code with :meth:`Model.add_body` and :meth:`Model.add_frame`, or
load them with :func:`soadyn.load_urdf`.
"""
from __future__ import annotations

import threading
import warnings
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from . import joints as jt
from . import spatial as sp
from . import validation as val
from .collisions import CollisionObject, collision_tables
from .compile import compiled, derived
from .constraints import Coupling, LinearCoupling, Loop, Transmission, UserConstraint
from .parameters import body_inertia, check_dynamic_parameters
from .shapes import Plane, Shape
from .visuals import Visual

#: the constraint objects :meth:`Model.add_constraint` takes, by the tuple of the model that holds them
_CONSTRAINT_KINDS = ((Loop, "_loops"), (LinearCoupling, "_couplings"), (UserConstraint, "_user_constraints"))

__all__ = ["Model", "Body", "Frame", "check_rigid_inertia"]


def _placement(placement, name):
    """Normalise a pose given as None, (R, p) or a 4×4 homogeneous matrix.

    A pose holding sympy expressions (symbolic lengths or angles, for the operator layer)
    is kept as object arrays; only its shapes are checked.
    """
    if placement is None:
        return np.eye(3), np.zeros(3)
    if sp.is_symbolic(placement):
        return _symbolic_placement(placement, name)
    if isinstance(placement, tuple) and len(placement) == 2:
        R = np.asarray(placement[0], dtype=float)
        p = np.asarray(placement[1], dtype=float)
    else:
        T = np.asarray(placement, dtype=float)
        if T.shape != (4, 4):
            raise ValueError(f"{name}: expected (R, p) or a 4x4 homogeneous matrix, got shape {T.shape}")
        R, p = T[:3, :3], T[:3, 3]
    if R.shape != (3, 3) or p.shape != (3,):
        raise ValueError(f"{name}: expected R of shape (3, 3) and p of shape (3,), got {R.shape} and {p.shape}")
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(p))):
        raise ValueError(f"{name}: expected finite values")
    if np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0:
        raise ValueError(f"{name}: the rotation is not orthonormal with determinant +1")
    return _frozen(R), _frozen(p)


def _frozen(a):
    """A read-only copy: model data are edited through the model, never in place."""
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _symbolic_placement(placement, name):
    if isinstance(placement, tuple) and len(placement) == 2:
        R, p = np.array(placement[0], dtype=object), np.array(placement[1], dtype=object)
    else:
        T = np.array(placement, dtype=object)
        if T.shape != (4, 4):
            raise ValueError(f"{name}: expected (R, p) or a 4x4 homogeneous matrix, got shape {T.shape}")
        R, p = T[:3, :3].copy(), T[:3, 3].copy()
    if R.shape != (3, 3) or p.shape != (3,):
        raise ValueError(f"{name}: expected R of shape (3, 3) and p of shape (3,), got {R.shape} and {p.shape}")
    return R, p


def check_rigid_inertia(mass, com, inertia_com, where, strict=True):
    """Validate rigid-body inertial parameters; returns (mass, com, I_c) as floats.

    Non-finite values, negative mass and asymmetric inertias always raise. Physically
    impossible rotational inertias (not positive semi-definite, or principal moments
    violating the triangle inequality) raise when ``strict``, else only warn — robot
    description files in the wild contain such placeholder inertias.

    Parameters holding sympy expressions (a symbolic model for the operator layer) are
    kept as given (object arrays) after a shape check: their values cannot be checked.
    """
    if sp.is_symbolic(mass, com, inertia_com):
        return _symbolic_inertia(mass, com, inertia_com, where)
    try:
        mass = float(mass)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: mass must be a number [kg], got {mass!r}") from None
    if not np.isfinite(mass) or mass < 0:
        raise ValueError(f"{where}: mass must be finite and non-negative, got {mass}")
    com = np.asarray(com, dtype=float)
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise ValueError(f"{where}: com must be 3 finite numbers, got {com!r}")
    Ic = np.zeros((3, 3)) if inertia_com is None else np.asarray(inertia_com, dtype=float)
    if Ic.shape != (3, 3) or not np.all(np.isfinite(Ic)):
        raise ValueError(f"{where}: rotational inertia must be a finite 3x3 matrix, got shape {Ic.shape}")
    scale = max(1.0, float(np.abs(Ic).max()))
    if np.abs(Ic - Ic.T).max() > 1e-9 * scale:
        raise ValueError(f"{where}: rotational inertia is not symmetric:\n{Ic}")
    lam = np.linalg.eigvalsh(0.5 * (Ic + Ic.T))
    tol = 1e-9 * scale
    problem = None
    if lam[0] < -tol:
        problem = (f"{where}: rotational inertia is not positive semi-definite (principal moments {lam}); "
                   "the mass matrix is then indefinite and the functions that need M⁻¹ (aba, ...) refuse the model")
    elif lam[0] + lam[1] < lam[2] - tol:
        problem = (f"{where}: principal moments {lam} violate the triangle inequality I1 + I2 >= I3 "
                   "(no rigid body has this inertia)")
    if problem:
        if strict:
            raise ValueError(problem)
        warnings.warn(problem, stacklevel=3)
    return mass, _frozen(com), _frozen(0.5 * (Ic + Ic.T))


def _symbolic_inertia(mass, com, inertia_com, where):
    com = np.array(com, dtype=object)
    Ic = np.zeros((3, 3), dtype=object) if inertia_com is None else np.array(inertia_com, dtype=object)
    if com.shape != (3,):
        raise ValueError(f"{where}: com must have 3 entries, got shape {com.shape}")
    if Ic.shape != (3, 3):
        raise ValueError(f"{where}: rotational inertia must be a 3x3 matrix, got shape {Ic.shape}")
    return mass, com, Ic


def _rotor_inertia(inertia, mass):
    """(mass, com, I_com) of :meth:`Model.add_rotor`'s ``inertia`` argument."""
    expected = ("expected a (3, 3) rotational inertia [kg m²], a tuple (mass, com (3,), I_com (3, 3)) or a "
                "(6, 6) spatial inertia")
    if isinstance(inertia, tuple) and len(inertia) == 3 and np.ndim(inertia[0]) == 0:
        if mass != 0.0:
            raise ValueError("mass: give the mass inside inertia=(mass, com, I_com) or with a (3, 3) inertia, "
                             "not both")
        return inertia
    try:
        a = np.array(inertia, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"inertia: {expected}, got {inertia!r}") from None
    if a.shape == (3, 3):
        return mass, (0.0, 0.0, 0.0), a
    if a.shape == (6, 6):
        if mass != 0.0:
            raise ValueError("mass: a (6, 6) spatial inertia already holds the mass; leave mass=0")
        if not np.all(np.isfinite(a)) or np.abs(a - a.T).max() > 1e-9 * max(1.0, np.abs(a).max()):
            raise ValueError(f"inertia: expected a finite symmetric (6, 6) spatial inertia, got\n{a}")
        return sp.inertia_parameters(a)
    raise ValueError(f"inertia: {expected}, got shape {a.shape}")


def _assign_owned(item, name, value, assign=object.__setattr__):
    """Assign an attribute of a body or frame: an edit of the model that owns it, made under
    the model's edit lock (:meth:`Model._editing`). ``assign(item, name, value)`` makes the
    assignment (a frame sets the kernels' copy of its pose in the same edit). (A joint's
    assignment records its edit after it is made, :class:`~soadyn.joints.Joint`: one
    attribute, which a build copies whole, before or after.)"""
    owner = item.__dict__.get("_owner")
    model = None if owner is None else owner()
    if model is None:
        assign(item, name, value)
        return
    with model._editing():
        assign(item, name, value)


class _Owned:
    """Model data whose edits (by assignment) invalidate what was derived from the model;
    each assignment is one edit of the model, made under its edit lock."""

    def __setattr__(self, name, value):
        _assign_owned(self, name, value)

    def __getstate__(self):
        return jt.owned_state(self)

    def __setstate__(self, state):
        jt.restore_owned_state(self, state)


@dataclass
class Body(_Owned):
    """A rigid body and the hinge connecting it to its parent. Assigning ``mass``,
    ``com`` or ``inertia_com`` edits the model (prefer :meth:`Model.set_inertia`, which
    checks the values)."""

    name: str
    index: int
    parent: int
    joint: jt.Joint
    placement: tuple  # (R, p): joint frame in the parent body frame
    mass: float
    com: np.ndarray  # body frame [m]
    inertia_com: np.ndarray  # about the centre of mass, body axes [kg m²]

    @property
    def inertia(self):
        """6×6 spatial inertia about the body origin ([CDI18], M_i)."""
        return sp.spatial_inertia(self.mass, self.com, self.inertia_com)


@dataclass
class Frame(_Owned):
    """A named frame (SOA node) fixed to a body (``body = -1``: the world).

    ``kernel_rotation`` and ``kernel_translation`` are writeable copies of the (read-only)
    pose that the compiled frame functions pass to their kernels: Numba's dispatcher
    types a read-only array on its slow path, a cost per array and call. They follow
    every assignment of ``rotation`` or ``translation``; never edit them (None for a
    symbolic pose)."""

    name: str
    index: int
    body: int
    rotation: np.ndarray
    translation: np.ndarray

    def __setattr__(self, name, value):
        _assign_owned(self, name, value, _assign_pose)

    @property
    def placement(self):
        return self.rotation, self.translation


def _assign_pose(frame, name, value):
    """Assign a frame's attribute and, for its pose, the kernels' copy with it (one edit)."""
    object.__setattr__(frame, name, value)
    if name == "rotation" or name == "translation":
        object.__setattr__(frame, "kernel_" + name, _writeable_copy(value))


def _copy_part(item, owner):
    """A copy of a model part (body, joint, frame) owned by the model ``owner`` (its
    read-only arrays shared: model data are never edited in place)."""
    part = object.__new__(type(item))
    part.__dict__.update(item.__dict__)
    part.__dict__["_owner"] = weakref.ref(owner)  # not by assignment: that records an edit
    return part


def _writeable_copy(a):
    """A writeable float64 copy of a numeric array, or None for a symbolic one."""
    try:
        return np.array(a, dtype=np.float64)
    except (TypeError, ValueError):
        return None


class Model:
    """A tree-topology multibody model.

    Parameters
    ----------
    name : str
    gravity : (3,) gravity acceleration in the world frame [m/s²], default (0, 0, −9.81).
    """

    def __init__(self, name="model", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        # Every edit holds the lock from its first change to its last (an edit calling other
        # edits, e.g. add_rotor, is one edit), and the derived data are built under it
        # (soadyn.core.compile.derived): a build never sees a half-made edit.
        self._lock = threading.RLock()
        self._edit_depth = 0  # edits in progress on the thread holding the lock
        # The model's parts, as tuples: edited through the model's methods only (the
        # public names are read-only properties).
        self._bodies: tuple[Body, ...] = ()
        self._frames: tuple[Frame, ...] = ()
        self._loops: tuple[Loop, ...] = ()
        self._couplings: tuple[LinearCoupling, ...] = ()  # Coupling (URDF+) and Transmission
        self._user_constraints: tuple = ()  # HolonomicConstraint / NonholonomicConstraint
        self._declared_clusters: tuple = ()  # see soadyn.declare_cluster
        self._visuals: tuple[Visual, ...] = ()  # drawn by soadyn.viewer; not model data the dynamics uses
        self._collisions = ()  # CollisionObjects: model data (see add_collision)
        self._collision_exclusions = ()  # pairs of selectors (see disable_collision)
        self._joint_by_name = {}
        self._body_by_name = {}
        self._frame_by_name = {}
        self._nq = 0
        self._nv = 0
        self._version = 0  # incremented by every edit (see soadyn.core.compile)
        self._derived = None  # the one cache of derived data, managed by soadyn.core.compile
        self._spanning_tree_of = None  # weak reference to the model whose spanning_tree() this is
        self._origin = None  # a snapshot (see _snapshot): weak reference to the model it was taken of
        self.gravity = gravity

    bodies = property(lambda self: self._bodies, doc="The bodies (a tuple, in index order: parent first). "
                      "Add them with :meth:`add_body`.")
    frames = property(lambda self: self._frames, doc="The named frames (a tuple, in index order). Add them "
                      "with :meth:`add_frame`.")
    loops = property(lambda self: self._loops, doc="The loop (cut) joints (a tuple of :class:`Loop`). Add "
                     "them with :meth:`add_loop` or :meth:`add_constraint`.")
    couplings = property(lambda self: self._couplings, doc="The couplings and transmissions (a tuple). Add "
                         "them with :meth:`add_coupling`, :meth:`add_transmission` or :meth:`add_constraint`.")
    user_constraints = property(lambda self: self._user_constraints, doc="The user constraints (a tuple of "
                                "HolonomicConstraint / NonholonomicConstraint). Add them with "
                                ":meth:`add_constraint`.")
    declared_clusters = property(lambda self: self._declared_clusters, doc="The clusters declared by hand (a "
                                 "tuple of read-only mappings ``bodies``, ``name``, ``independent``; see "
                                 ":func:`soadyn.declare_cluster`).")
    visuals = property(lambda self: self._visuals, doc="The visual shapes (a tuple of :class:`Visual`; not "
                       "model data the dynamics uses). Add them with :meth:`add_visual`.")
    nq = property(lambda self: self._nq, doc="Size of the configuration q.")
    nv = property(lambda self: self._nv, doc="Size of the velocity v.")

    @contextmanager
    def _editing(self):
        """One edit of the model: everything in the ``with`` block is made under the model's
        lock and recorded as an edit at its end (also when it raises: a partial change is
        never served from the cache of the state before it). Raises for a snapshot."""
        if self._origin is not None:
            raise self._read_only()
        with self._lock:
            self._edit_depth += 1
            self._derived = None  # (calls made by this thread inside the edit build from the model as it is)
            try:
                yield
            finally:
                self._edit_depth -= 1
                if not self._edit_depth:
                    self._edited()

    def _read_only(self):
        return TypeError(f"model: {self.name!r} (version {self._version}) is the read-only snapshot of a model that "
                         "a call works on (soadyn.core.compile.snapshot); edit the model itself")

    def _edited(self):
        """Record an edit (the end of :meth:`_editing`, or a joint's assignment): everything
        derived from the model is rebuilt on next use."""
        if self._origin is not None:  # (a joint of a snapshot assigned: see _editing)
            raise self._read_only()
        with self._lock:
            self._derived = None
            if self._edit_depth:  # a part of an edit in progress: recorded once, at its end
                return
            self._version += 1
            source = self.__dict__.get("_spanning_tree_of")
            if source is not None:
                # an edited spanning tree becomes a model of its own; the model it came from
                # drops its cache (which holds this object) and builds a fresh spanning tree
                self._spanning_tree_of = None
                source = source()
                if source is not None:
                    source._edited()

    @property
    def version(self):
        """A number that every edit of the model increases."""
        return self._version

    def __getstate__(self):
        """Pickling (e.g. to ship a model to other processes) keeps the model's description
        and drops everything derived from it (compiled arrays, workspaces, memoized
        constraint sets, cluster trees, spanning tree: :mod:`soadyn.core.compile`), which
        the unpickled model rebuilds on first use. A pickled spanning tree or snapshot
        becomes a model of its own. User constraints pickle with their functions (a lambda
        needs ``cloudpickle``, as Dask uses, rather than ``pickle``)."""
        state = self.__dict__.copy()
        for derived_or_local in ("_derived", "_spanning_tree_of", "_origin", "_lock"):
            state[derived_or_local] = None
        state["_edit_depth"] = 0
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        for item in (*self._bodies, *(b.joint for b in self._bodies), *self._frames):
            item.__dict__["_owner"] = weakref.ref(self)  # not by assignment: that records an edit

    def _own(self, item):
        item._owner = weakref.ref(self)
        return item

    def _snapshot(self, store):
        """A read-only copy of the model as it is now, whose derived data are ``store`` (a
        :class:`soadyn.core.compile.Derived`, built from it): the state a call works on from
        its start to its end, whatever edits other threads make meanwhile. Its bodies,
        joints and frames are copies (the model's own are edited by assignment); loops,
        couplings, transmissions and visuals are immutable and shared, as the user
        constraints are (user objects). Taken under the model's lock (see
        :func:`soadyn.core.compile.derived`). Editing it raises."""
        s = Model.__new__(Model)
        s.__dict__.update(self.__dict__)
        s._lock = threading.RLock()
        s._edit_depth = 0
        s._derived = store
        s._spanning_tree_of = None
        self._copy_parts_to(s)
        s._origin = weakref.ref(self)
        return s

    def _copy_parts_to(self, target):
        """Give ``target`` copies of this model's bodies, joints and frames (owned by it),
        their name tables and the sizes nq, nv."""
        bodies = []
        joints = {}
        for b in self._bodies:
            body = _copy_part(b, target)
            joint = body.__dict__["joint"] = _copy_part(b.joint, target)
            joints[joint.name] = joint
            bodies.append(body)
        target._bodies = tuple(bodies)
        target._frames = tuple(_copy_part(f, target) for f in self._frames)
        target._joint_by_name = joints
        target._body_by_name = dict(self._body_by_name)
        target._frame_by_name = {f.name: f for f in target._frames}
        target._nq, target._nv = self._nq, self._nv

    # ----------------------------------------------------------------- building
    @property
    def gravity(self):
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        try:
            g = _frozen(g)
        except (TypeError, ValueError):
            raise ValueError(f"gravity: expected 3 finite numbers [m/s²], got {g!r}") from None
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity: expected 3 finite numbers [m/s²], got {g!r}")
        with self._editing():
            self._gravity = g

    def _resolve_body(self, body, argname):
        if body is None or (isinstance(body, str) and body == "world"):
            return -1
        if isinstance(body, (int, np.integer)):
            if not -1 <= body < len(self.bodies):
                raise ValueError(f"{argname}: body index {body} out of range [-1, {len(self.bodies)})")
            return int(body)
        if body in self._body_by_name:
            return self._body_by_name[body]
        if body in self._frame_by_name:  # a link merged into its parent through a fixed joint
            raise ValueError(f"{argname}: {body!r} is a frame, not a body; use its body "
                             f"{self.body_name(self._frame_by_name[body].body)!r}")
        raise ValueError(f"{argname}: unknown body {body!r}; known bodies: {self.body_names}")

    def add_body(self, name, joint=None, parent=None, placement=None, *, mass=0.0, com=(0.0, 0.0, 0.0),
                 inertia=None, joint_name=None, strict_inertia=True):
        """Append a body connected to ``parent`` (name, index, or None for the world).

        Parameters
        ----------
        name : str
            Body name; a frame of the same name is created at the body origin.
        joint : Joint
            The hinge to the parent (default: :class:`~soadyn.joints.Fixed`). A joint
            instance belongs to one body only.
        placement : (R, p) or 4×4
            Pose of the joint frame in the parent body frame [m].
        mass : float [kg]; com : (3,) [m], body frame; inertia : (3, 3) [kg m²] about
            the centre of mass, body axes.
        joint_name : str, default ``name``.
        strict_inertia : raise (True, default) or only warn (False) for a physically
            impossible rotational inertia.

        Returns the body index.
        """
        with self._editing():
            return self._add_body(name, joint, parent, placement, mass, com, inertia, joint_name, strict_inertia)

    def _add_body(self, name, joint, parent, placement, mass, com, inertia, joint_name, strict_inertia):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        if name in self._body_by_name or name in self._frame_by_name:
            raise ValueError(f"name: a body or frame named {name!r} already exists")
        joint = jt.Fixed() if joint is None else joint
        if not isinstance(joint, jt.Joint):
            raise TypeError(f"joint: expected a soadyn.joints.Joint, got {type(joint).__name__}")
        if joint.body is not None:
            raise ValueError(f"joint: this {joint.kind} joint already connects body {joint.body}; "
                             "create a new joint instance")
        jname = name if joint_name is None else joint_name
        if jname in self._joint_by_name:
            raise ValueError(f"joint_name: a joint named {jname!r} already exists")
        parent_index = self._resolve_body(parent, "parent")
        R, p = _placement(placement, "placement")
        m, c, Ic = check_rigid_inertia(mass, com, inertia, f"body {name!r}", strict_inertia)
        index = len(self._bodies)
        joint.name, joint.q_index, joint.v_index, joint.body = jname, self._nq, self._nv, index
        self._nq += joint.nq
        self._nv += joint.nv
        body = Body(name, index, parent_index, joint, (R, p), m, c, Ic)
        self._bodies += (self._own(body),)
        self._own(joint)
        self._body_by_name[name] = index
        self._joint_by_name[jname] = joint
        self._add_frame(name, index, np.eye(3), np.zeros(3))
        return index

    def add_frame(self, name, body, placement=None):
        """Add a named frame fixed to ``body`` (name, index, or "world") at ``placement``
        (its pose in the body frame). Returns the frame index."""
        with self._editing():
            return self._add_named_frame(name, body, placement)

    def _add_named_frame(self, name, body, placement):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        if name in self._frame_by_name:
            raise ValueError(f"name: a frame named {name!r} already exists")
        if isinstance(body, str) and body in self._frame_by_name and body not in self._body_by_name:
            # a frame on a merged link: compose with that frame's placement
            base = self._frame_by_name[body]
            R, p = _placement(placement, "placement")
            return self._add_frame(name, base.body, *sp.compose_poses(base.rotation, base.translation, R, p))
        b = self._resolve_body(body, "body")
        R, p = _placement(placement, "placement")
        return self._add_frame(name, b, R, p)

    def _add_frame(self, name, body, R, p):
        if not sp.is_symbolic(R, p):
            R, p = _frozen(R), _frozen(p)
        with self._editing():
            f = Frame(name, len(self._frames), body, R, p)
            self._frames += (self._own(f),)
            self._frame_by_name[name] = f
        return f.index

    def add_inertia(self, body, mass, com, inertia, strict_inertia=True):
        """Rigidly attach more mass to ``body`` (used when merging fixed links): the
        inertias are summed (parallel-axis theorem)."""
        with self._editing():  # one edit: no build sees the new mass with the old centre of mass
            b = self._bodies[self._resolve_body(body, "body")]
            m2, c2, I2 = check_rigid_inertia(mass, com, inertia, f"inertia added to {b.name!r}", strict_inertia)
            M = sp.spatial_inertia(b.mass, b.com, b.inertia_com) + sp.spatial_inertia(m2, c2, I2)
            mass, com, inertia = sp.inertia_parameters(M)
            b.mass, b.com, b.inertia_com = float(mass), _frozen(com), _frozen(inertia)

    def set_inertia(self, body, mass, com=(0.0, 0.0, 0.0), inertia=None, strict_inertia=True):
        """Replace the inertial parameters of ``body`` (name or index): ``mass`` [kg],
        ``com`` (3,) [m] in the body frame, ``inertia`` (3, 3) [kg m²] about the centre of
        mass, body axes (checked as in :meth:`add_body`)."""
        with self._editing():  # one edit: no build sees the new mass with the old centre of mass
            b = self._bodies[self._resolve_body(body, "body")]
            b.mass, b.com, b.inertia_com = check_rigid_inertia(mass, com, inertia, f"body {b.name!r}",
                                                               strict_inertia)

    def set_dynamic_parameters(self, parameters, strict_inertia=True):
        """Replace every body's inertial parameters by the dynamic parameters ``parameters``
        (10 nb,): per body, in body order, (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz,
        I_yz, I_zz) — mass [kg], first moment [kg m], rotational inertia about the body origin
        [kg m²], body frame; Pinocchio's order (:func:`soadyn.dynamic_parameters` gives a
        model's, :mod:`soadyn.core.parameters`).

        Checked first (:func:`soadyn.check_dynamic_parameters`): a wrong shape or non-finite
        entries raise ValueError naming the argument; a body whose parameters are physically
        inconsistent (pseudo-inertia not positive semi-definite: a negative mass, a first
        moment without mass, a rotational inertia that is not positive semi-definite or
        violates the triangle inequality) raises ValueError naming the body and the reason,
        or, with ``strict_inertia=False``, only warns when the parameters still have a
        rigid-body form (mass ≥ 0, no first moment without mass). Nothing is changed when
        the check fails."""
        values = check_dynamic_parameters(self, parameters, strict_inertia)
        with self._editing():  # one edit: no build sees some bodies changed and others not
            for b, p in zip(self._bodies, values):
                mass, com, inertia_com = body_inertia(p)
                b.mass, b.com, b.inertia_com = float(mass), _frozen(com), _frozen(inertia_com)

    # ----------------------------------------------------------------- constraints
    def add_loop(self, name, kind, predecessor, successor, axis=(0.0, 0.0, 1.0), *,
                 predecessor_placement=None, successor_placement=None, axis2=None):
        """Close a kinematic loop with a cut joint ([Jain24], "Single loop constraint").

        Frames ``"<name>_predecessor"`` and ``"<name>_successor"`` are added on
        ``predecessor`` and ``successor`` (body or frame names, or "world") at the given
        placements, as the URDF+ ``<loop>`` tag does. ``kind``: weld, revolute,
        prismatic, spherical, universal, cylindrical or planar; ``axis`` in the
        predecessor frame, ``axis2`` (universal only) in the successor frame.
        Returns the :class:`Loop`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        with self._editing():  # the two frames and the loop: one edit
            if any(lp.name == name for lp in self._loops):
                raise ValueError(f"name: a loop named {name!r} already exists")
            loop = Loop(name, kind, f"{name}_predecessor", f"{name}_successor", axis, axis2)
            for arg, where in (("predecessor", predecessor), ("successor", successor)):
                if not (isinstance(where, str) and where in self._frame_by_name):
                    self._resolve_body(where, arg)  # raises for an unknown body before anything is added
            self.add_frame(loop.predecessor, predecessor, predecessor_placement)
            self.add_frame(loop.successor, successor, successor_placement)
            return self.add_constraint(loop)

    def add_coupling(self, name, predecessor, successor, ratio, *, offset=0.0):
        """Add a gear/belt transmission between the joints leading to two links, by the
        URDF+ ``<coupling>`` rule (see :class:`Coupling`); ``predecessor``/``successor`` are
        body or frame names. One ratio over two tree paths: for per-stage ratios, several
        rows or joints on other paths use :meth:`add_transmission`."""
        with self._editing():
            for arg, link in (("predecessor", predecessor), ("successor", successor)):
                self.frame(link) if isinstance(link, str) else self._resolve_body(link, arg)
            try:
                ratio_, offset_ = float(ratio), float(offset)
            except (TypeError, ValueError):
                raise ValueError(f"ratio, offset: expected finite numbers, got {ratio!r}, {offset!r}") from None
            c = Coupling(name, predecessor if isinstance(predecessor, str) else self.body_name(predecessor),
                         successor if isinstance(successor, str) else self.body_name(successor),
                         ratio_, offset=offset_)
            return self.add_constraint(c)

    def _constraint_names(self):
        return {c.name for c in self._user_constraints} | {lp.name for lp in self._loops} \
            | {c.name for c in self._couplings}

    def add_transmission(self, name, joints, ratios, *, offset=0.0, dependent=None):
        """Add a constant linear transmission between 1-dof joints — gears, belts with
        per-stage ratios, constant differentials, rack and pinion — as the rows

            Σ_i ratios[r, i] · q̇_{joints[i]} = 0,     Σ_i ratios[r, i] · q_{joints[i]} = offset[r]

        (:class:`~soadyn.core.constraints.Transmission`; [Chignoli23, eq. 2–3] with a
        constant Jacobian). The cut-joint methods see these rows in G_c; constraint
        embedding puts the joints' bodies in one cluster whose explicit form q̇ = G ẏ has a
        constant G and g = 0, so no position or velocity solve runs per call (with zero
        offsets; a nonzero offset is solved by Gauss–Newton).

        Parameters
        ----------
        name : str, unique among the model's constraints.
        joints : sequence of k names of 1-dof joints (revolute, continuous, prismatic,
            helical) already in the model.
        ratios : (k,) or (m, k), m < k, rows of full rank; each ratios[r, i]·q̇_i in the
            row's unit (dimensionless ratios for rotations; m/rad for a rack and pinion).
        offset : float or (m,) [rad or m], the position-level constants (default 0).
        dependent : names of m joints solved from the rows (marked
            ``independent = False``, as URDF+ ``independent="false"``); default the first m of ``joints``,
            so list the driven joints first. ``()`` marks none (each cluster then picks its
            dependent coordinates by a pivoted QR).

        Examples: ``add_transmission("gear", ["rotor", "knee"], [1, -N])`` is
        q̇_rotor = N q̇_knee; ``add_transmission("belt", ["rotor_b", "knee", "ankle"],
        [1, -N * r1, -N * r2])`` is a two-stage belt q̇_rotor_b = N (r1 q̇_knee + r2 q̇_ankle).

        Returns the :class:`~soadyn.core.constraints.Transmission`.
        """
        with self._editing():  # the rows and the joints' ``independent`` flags: one edit
            return self._add_transmission(name, joints, ratios, offset, dependent)

    def _add_transmission(self, name, joints, ratios, offset, dependent):
        if isinstance(name, str) and name in self._constraint_names():
            raise ValueError(f"name: a constraint named {name!r} already exists")
        t = Transmission(name, joints, ratios, offset)
        js = t.joint_rows(self)[0]  # unknown and multi-dof joints raise here
        m = t.rows
        if dependent is None:
            dep = list(t.joints[:m])
        elif isinstance(dependent, str):
            dep = [dependent]
        else:
            dep = list(dependent)
        if dep:
            unknown = [d for d in dep if d not in t.joints]
            if unknown or len(set(dep)) != len(dep) or len(dep) != m:
                raise ValueError(f"dependent: expected {m} distinct name(s) among the joints {list(t.joints)} "
                                 f"(one per row), got {dep!r}")
            cols = [t.joints.index(d) for d in dep]
            s_ = np.linalg.svd(t.ratios[:, cols], compute_uv=False)
            if s_[-1] <= 1e-12 * max(1.0, float(np.abs(t.ratios).max())):
                raise ValueError(f"dependent: the joints {dep} cannot be solved from the rows {t.ratios.tolist()} "
                                 "(their columns of ratios are singular); choose other dependent joints")
            for j in js:
                if j.name in dep:
                    j.independent = False
        return self.add_constraint(t)

    def add_rotor(self, name, parent, axis, inertia, gear_ratio, drives, *, placement=None, mass=0.0,
                  joint_name=None, transmission_name=None, strict_inertia=True):
        """Add a geared motor's rotor: a body on a revolute joint about ``axis`` that
        spins ``gear_ratio`` times as fast as the joint it ``drives``,

            q̇_rotor = gear_ratio · q̇_drives     (q_rotor = gear_ratio · q_drives),

        for the common arrangement where the rotor sits on the same parent body as the
        link it drives ([Chignoli23, Fig. 3a], the geared-transmission cluster). Adds the
        rotor body and joint (:meth:`add_body`) and a :class:`Transmission` with rows
        [1, −gear_ratio] on [rotor joint, ``drives``], the rotor joint dependent: the
        driven joint stays the independent coordinate. Other arrangements (a rotor
        elsewhere in the tree, belts over several joints) are written with
        :meth:`add_transmission`.

        Parameters
        ----------
        name : str, the rotor body (and, by default, joint) name.
        parent : body name or index — must be the parent of the body ``drives`` moves.
        axis : 'x', 'y', 'z' or a 3-vector, the rotor's spin axis in its joint frame.
        inertia : the rotor's inertia: a (3, 3) rotational inertia [kg m²] about its
            centre of mass at the rotor frame origin (body axes; ``mass`` [kg] there), or a
            tuple ``(mass [kg], com (3,) [m], I_com (3, 3) [kg m²])`` as for
            :meth:`add_body`, or a (6, 6) spatial inertia about the rotor frame origin.
        gear_ratio : float, nonzero: N [rad/rad, or rad/m when ``drives`` is prismatic].
        drives : name of the driven 1-dof joint.
        placement : (R, p) or 4×4, pose of the rotor joint frame in the parent body frame
            [m] (default identity).
        mass : float [kg], with a (3, 3) ``inertia`` only.
        joint_name, transmission_name : default ``name`` and ``"<name>_transmission"``.
        strict_inertia : as for :meth:`add_body`.

        Returns the rotor's body index.
        """
        with self._editing():  # the body and its transmission: one edit
            return self._add_rotor(name, parent, axis, inertia, gear_ratio, drives, placement, mass, joint_name,
                                   transmission_name, strict_inertia)

    def _add_rotor(self, name, parent, axis, inertia, gear_ratio, drives, placement, mass, joint_name,
                   transmission_name, strict_inertia):
        if not isinstance(drives, str):
            raise ValueError(f"drives: expected the name of the driven joint, got {drives!r}")
        driven = self._joint_by_name.get(drives)
        if driven is None:
            raise ValueError(f"drives: unknown joint {drives!r}; known joints: {list(self._joint_by_name)}")
        if driven.nq != 1 or driven.nv != 1:
            raise ValueError(f"drives: joint {drives!r} is a {driven.kind} joint; a rotor drives a 1-dof joint "
                             "(revolute, continuous, prismatic, helical)")
        link_parent = self._bodies[driven.body].parent
        if self._resolve_body(parent, "parent") != link_parent:
            raise ValueError(f"parent: expected {self.body_name(link_parent)!r}, the parent of the link that joint "
                             f"{drives!r} moves, got {parent!r}; for a rotor elsewhere use add_body and "
                             "add_transmission")
        try:
            N = float(gear_ratio)
        except (TypeError, ValueError):
            raise ValueError(f"gear_ratio: expected a finite nonzero number, got {gear_ratio!r}") from None
        if not np.isfinite(N) or N == 0.0:
            raise ValueError(f"gear_ratio: expected a finite nonzero number, got {gear_ratio!r}")
        m_, com, Ic = _rotor_inertia(inertia, mass)
        tname = f"{name}_transmission" if transmission_name is None else transmission_name
        if not isinstance(tname, str) or not tname or tname in self._constraint_names():
            raise ValueError(f"transmission_name: expected a new constraint name, got {tname!r}")
        jname = name if joint_name is None else joint_name
        # validate the joint before the body is added (add_body checks the rest first)
        joint = jt.Revolute(axis)
        index = self.add_body(name, joint, link_parent, placement, mass=m_, com=com, inertia=Ic,
                              joint_name=jname, strict_inertia=strict_inertia)
        self.add_transmission(tname, [jname, drives], [1.0, -N])
        return index

    def add_constraint(self, constraint):
        """Add a constraint object: a user constraint (:class:`soadyn.HolonomicConstraint`
        or :class:`soadyn.NonholonomicConstraint`; its functions are checked once at the
        neutral configuration: shapes, finiteness, time dependence), a :class:`Loop` between
        two frames of the model (:meth:`add_loop` makes the frames and the loop), or a
        :class:`Coupling` or :class:`Transmission` (as :meth:`add_coupling` and
        :meth:`add_transmission` make them; a transmission's ``dependent`` joints are
        marked by :meth:`add_transmission` only). The object is checked against the model
        (its frames, links or joints exist; a coupling's ratio and offset are finite) and
        becomes part of it: loops, couplings and transmissions are immutable. Returns it."""
        for kind, where in _CONSTRAINT_KINDS:
            if isinstance(constraint, kind):
                break
        else:
            raise TypeError(f"constraint: expected a HolonomicConstraint, NonholonomicConstraint, Loop, Coupling or "
                            f"Transmission, got {type(constraint).__name__}")
        with self._editing():
            name = constraint.name
            # loops and URDF+ couplings have names of their own kind (URDF+ files may reuse a
            # name across tags); transmissions and user constraints are unique among all
            if kind is Loop:
                what, clash = "loop", any(lp.name == name for lp in self._loops)
            elif isinstance(constraint, Coupling):
                what, clash = "coupling", any(c.name == name for c in self._couplings)
            else:
                what, clash = "constraint", name in self._constraint_names()
            if clash:
                raise ValueError(f"name: a {what} named {name!r} already exists")
            if kind is Loop:
                for role in ("predecessor", "successor"):
                    if getattr(constraint, role) not in self._frame_by_name:
                        raise ValueError(f"constraint: loop {name!r}: unknown {role} frame "
                                         f"{getattr(constraint, role)!r}; add it first (add_frame) or use add_loop")
            elif isinstance(constraint, Coupling):
                if not (np.isfinite(constraint.ratio) and np.isfinite(constraint.offset)):
                    raise ValueError(f"ratio, offset: expected finite numbers, got {constraint.ratio!r}, "
                                     f"{constraint.offset!r}")
                constraint.joint_rows(self)  # raises for unknown links or joints that are not 1-dof
            elif kind is LinearCoupling:
                constraint.joint_rows(self)
            else:
                constraint.bind(self)
            setattr(self, where, getattr(self, where) + (constraint,))
        return constraint

    def add_visual(self, visual):
        """Add a :class:`~soadyn.core.visuals.Visual` (a shape fixed to a frame of the
        model, drawn by :mod:`soadyn.viewer`). Visuals are not data the dynamics uses:
        adding one is not an edit of the model's version. Returns it."""
        if not isinstance(visual, Visual):
            raise TypeError(f"visual: expected a soadyn Visual, got {type(visual).__name__}")
        with self._lock:
            if visual.frame not in self._frame_by_name:
                raise ValueError(f"visual: {visual.name!r} is fixed to the unknown frame {visual.frame!r}")
            if any(v.name == visual.name for v in self._visuals):
                raise ValueError(f"visual: a visual named {visual.name!r} already exists")
            self._visuals += (visual,)
        return visual

    def add_cluster_declaration(self, bodies, name=None, independent=None):
        """Record a body cluster declared by hand (body indices; see
        :func:`soadyn.declare_cluster`, which checks the aggregation condition first)."""
        with self._editing():
            bodies = tuple(sorted({self._resolve_body(b, "bodies") for b in bodies}))
            self._declared_clusters += (MappingProxyType({
                "bodies": bodies, "name": name, "independent": None if independent is None else tuple(independent)}),)

    @property
    def has_constraints(self):
        """True when the model has loops, couplings or user constraints (a closed-chain system)."""
        return bool(self._loops or self._couplings or self._user_constraints)

    def spanning_tree(self):
        """The open spanning tree of a closed-chain model: a :class:`Model` with the same
        bodies, joints (copies: same names, types, ``q_index``/``v_index``, ``independent``
        flags), frames (the loops' node frames included, same indices) and gravity, and no
        loops, couplings, user constraints or declared clusters.

        The tree-dynamics functions (``aba``, ``rnea``, ``mass_matrix``, ...) refuse a model
        with constraints (:class:`~soadyn.core.status.ClosedChainError`); pass them
        ``model.spanning_tree()`` to get the dynamics of the open tree — the unconstrained
        system, in the same q and v. A model without constraints is its own spanning tree
        (returned as is).

        The spanning tree is built once per model version and shared (it lives in the
        model's derived cache, :mod:`soadyn.core.compile`): after an edit of the model the
        next call returns a new one that reflects the edit. Editing the returned tree
        detaches it (it becomes an independent model; this model then builds a fresh one).
        """
        if not self.has_constraints:
            return self
        d = self._derived
        if d is None:
            if self.symbolic:  # the operator layer's models have no compiled cache
                return self._build_spanning_tree()
            d = derived(self)
        return d.memo("spanning_tree", Model._build_spanning_tree)

    def _build_spanning_tree(self):
        """The spanning tree of this model (of the snapshot of a version, when memoized in
        its derived data); it reports its edits to the model it was made for."""
        tree = Model(f"{self.name} (spanning tree)", self._gravity)
        with tree._editing():
            self._copy_parts_to(tree)
            tree._visuals = self._visuals  # frozen Visuals on the same frame names
            # frozen objects on the same frames and body indices: contacts step on the tree's bodies
            tree._collisions, tree._collision_exclusions = self._collisions, self._collision_exclusions
        tree._spanning_tree_of = self._origin if self._origin is not None else weakref.ref(self)
        return tree

    # ----------------------------------------------------------------- collision objects
    @property
    def collisions(self):
        """The collision objects (a tuple of :class:`~soadyn.core.collisions.CollisionObject`;
        object k is the k-th added). Read-only: add objects with :meth:`add_collision` and
        :meth:`add_ground`, filter pairs with :meth:`disable_collision`."""
        return self._collisions

    def add_collision(self, frame, shape, placement=None, name=None, friction=1.0, *, contype=1, conaffinity=1):
        """Fix a collision shape to a frame: an edit (the model's version moves on).

        Parameters
        ----------
        frame : the name of a model frame (a body, a merged link, a site, ...) or
            ``"world"``, the world frame (a :class:`Frame` or frame index also accepted).
        shape : a :mod:`soadyn.geometry` shape (``Sphere``, ``Capsule``, ``Cylinder``,
            ``Box``, ``Ellipsoid``, ``ConvexMesh``, ``Mesh``, ``Plane``).
        placement : (R, p) or 4×4, the pose of the shape frame in ``frame`` [m] (default
            identity).
        name : unique among the collision objects (default ``"<frame>_<i>"``, i counting the
            frame's objects, as Pinocchio names a link's geometry objects).
        friction : the Coulomb coefficient μ ≥ 0 of the object's surface.
        contype, conaffinity : MuJoCo's collision bitmasks (ints ≥ 0, default 1; see
            :mod:`soadyn.core.collisions` for the pairs they allow).

        Returns the object's index in :attr:`collisions`.
        """
        if not isinstance(shape, Shape):
            raise TypeError(f"shape: expected a soadyn.geometry shape (Sphere, Capsule, Cylinder, Box, Ellipsoid, "
                            f"ConvexMesh, Mesh, Plane), got {type(shape).__name__}")
        frame_name, body, Rf, pf = self._collision_frame(frame)
        if sp.is_symbolic(placement):
            raise TypeError("placement: expected numbers (a collision object's pose cannot be symbolic)")
        R, p = _placement(placement, "placement")
        return self._add_collision_object(frame_name, body, (Rf, pf), (R, p), shape, name, friction, contype,
                                          conaffinity)

    def add_ground(self, height=0.0, friction=1.0):
        """Add the ground: a :class:`~soadyn.geometry.Plane` on the world whose surface is
        the horizontal plane z = ``height`` [m] (world frame), outward normal +z, named
        ``"ground"`` (``"ground_2"``, ... when taken). Returns the object's index."""
        z = val.finite_scalar(height, "height")
        name = "ground"
        names = {o.name for o in self._collisions}
        k = 2
        while name in names:
            name, k = f"ground_{k}", k + 1
        world = (np.eye(3), np.zeros(3))
        return self._add_collision_object("world", -1, world, (np.eye(3), np.array([0.0, 0.0, z])), Plane(), name,
                                          friction, 1, 1)

    def _collision_frame(self, frame):
        """(frame name, body, R, p) of ``add_collision``'s ``frame``: the frame's pose on its body."""
        if isinstance(frame, str) and frame == "world":  # the world itself, whatever frame shares its name
            return "world", -1, np.eye(3), np.zeros(3)
        f = self.frame(frame)
        if sp.is_symbolic(f.rotation, f.translation):
            raise TypeError(f"frame: {f.name!r} has a symbolic pose; collision objects need numbers")
        return f.name, f.body, f.rotation, f.translation

    def _add_collision_object(self, frame_name, body, frame_pose, pose, shape, name, friction, contype, conaffinity):
        names = {o.name for o in self._collisions}
        if name is None:
            k = sum(o.frame == frame_name for o in self._collisions)
            while f"{frame_name}_{k}" in names:
                k += 1
            name = f"{frame_name}_{k}"
        elif not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        elif name in names:
            raise ValueError(f"name: a collision object named {name!r} already exists")
        mu = val.finite_scalar(friction, "friction")
        if mu < 0:
            raise ValueError(f"friction: expected a coefficient ≥ 0, got {friction!r}")
        masks = []
        for arg, value in (("contype", contype), ("conaffinity", conaffinity)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < 2**31:
                raise ValueError(f"{arg}: expected a bitmask, an int in [0, 2**31), got {value!r}")
            masks.append(int(value))
        T, B = np.eye(4), np.eye(4)
        T[:3, :3], T[:3, 3] = pose
        B[:3, :3], B[:3, 3] = sp.compose_poses(*frame_pose, *pose)
        obj = CollisionObject(name, frame_name, int(body), shape, T, B, mu, *masks)
        with self._editing():
            self._collisions = self._collisions + (obj,)
            return len(self._collisions) - 1

    def disable_collision(self, a, b):
        """Never let ``a`` and ``b`` collide: an edit (the model's version moves on).

        Each of ``a``, ``b`` names a collision object, a body (every object on it, including
        those on links merged into it; ``"world"``: every object of the world) or another
        frame (every object fixed to that frame: a merged link, an MJCF body welded to its
        parent). An object's name is taken before a body's or frame's of the same name. A
        body or frame keeps the objects added to it later out as well."""
        sa, sb = self._collision_selector(a, "a"), self._collision_selector(b, "b")
        if sa == sb:
            raise ValueError(f"a, b: expected two different objects, bodies or frames, got {a!r} twice")
        with self._editing():
            self._collision_exclusions = self._collision_exclusions + ((sa, sb),)

    def _collision_selector(self, x, argname):
        if not isinstance(x, str):
            raise TypeError(f"{argname}: expected the name of a collision object, body or frame, got {x!r}")
        if any(o.name == x for o in self._collisions):
            return ("object", x)
        if x == "world":
            return ("body", -1)
        if x in self._body_by_name:
            return ("body", self._body_by_name[x])
        if x in self._frame_by_name:
            return ("frame", x)
        raise ValueError(f"{argname}: no collision object, body or frame named {x!r} in model {self.name!r} "
                         f"(collision objects: {[o.name for o in self._collisions][:10]})")

    def collision_pairs(self):
        """(P, 2) int64 array: the pairs (i, j), i < j, of :attr:`collisions` that may
        collide, after every filter, sorted (:mod:`soadyn.core.collisions`)."""
        return collision_tables(self).pairs.copy()

    # ----------------------------------------------------------------- queries
    @property
    def nbodies(self):
        return len(self.bodies)

    @property
    def body_names(self):
        return [b.name for b in self.bodies]

    @property
    def frame_names(self):
        return [f.name for f in self.frames]

    @property
    def joints(self):
        """The hinges in body order; each has ``name, q_index, v_index, nq, nv``."""
        return tuple(b.joint for b in self._bodies)

    @property
    def parents(self):
        return [b.parent for b in self.bodies]

    def body_index(self, name):
        return self._resolve_body(name, "body")

    def body_name(self, index):
        return "world" if index == -1 else self.bodies[self._resolve_body(index, "index")].name

    def frame(self, name):
        """The :class:`Frame` called ``name`` (a Frame of this model or frame index also
        accepted: the frame of this model with that index)."""
        if isinstance(name, Frame):
            if 0 <= name.index < len(self._frames) and self._frames[name.index].name == name.name:
                return self._frames[name.index]
            raise ValueError(f"frame: {name.name!r} (index {name.index}) is not a frame of model {self.name!r}")
        if isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
            if not 0 <= name < len(self.frames):
                raise ValueError(f"frame: index {name} out of range [0, {len(self.frames)})")
            return self.frames[name]
        try:
            return self._frame_by_name[name]
        except (KeyError, TypeError):
            close = [n for n in self._frame_by_name if str(name).lower() in n.lower()][:5]
            hint = f"; similar: {close}" if close else ""
            raise ValueError(f"frame: unknown frame {name!r} in model {self.name!r}{hint}") from None

    def joint(self, name):
        try:
            return self._joint_by_name[name]
        except KeyError:
            raise ValueError(f"joint: unknown joint {name!r}; known joints: {list(self._joint_by_name)}") from None

    def ancestors(self, body):
        """Bodies on the path from ``body`` to the root, ``body`` first."""
        out = []
        b = self._resolve_body(body, "body")
        while b >= 0:
            out.append(b)
            b = self.bodies[b].parent
        return out

    def children(self, body):
        b = self._resolve_body(body, "body")
        return [c.index for c in self.bodies if c.parent == b]

    @property
    def symbolic(self):
        """True when some body's parameters (mass, centre of mass, inertia, placement) are
        sympy expressions: such a model serves the operator layer (:mod:`soadyn.operators`)
        only, not the compiled algorithms."""
        return any(sp.is_symbolic(b.mass, b.com, b.inertia_com, b.placement) for b in self.bodies) or \
            any(sp.is_symbolic(f.rotation, f.translation) for f in self.frames)

    # ----------------------------------------------------------------- compiled form
    def check_compilable(self):
        """Raise unless the compiled algorithms can run on the model (it has bodies and
        no symbolic parameters)."""
        if not self.bodies:
            raise ValueError(f"model: expected a model with at least one body (a joint to move), got "
                             f"{self.name!r} with none (nq = nv = 0)")
        if self.symbolic:
            raise TypeError(f"model: {self.name!r} has symbolic (sympy) parameters: only the operator "
                            "layer (soadyn.operators) accepts it, not the compiled algorithms")

    @property
    def compiled(self):
        """The flat array form the kernels read (:class:`soadyn.core.compile.CompiledModel`)."""
        return compiled(self)

    def compile(self):
        """Validate and pack the model now (it is otherwise done on first use)."""
        return derived(self).compiled

    def joints_moving_no_inertia(self):
        """Names of the joints whose motion moves no mass and no rotational inertia (their
        whole subtree is mass-less): they make the mass matrix singular."""
        moving = [False] * len(self.bodies)
        for b in reversed(self.bodies):
            moving[b.index] = moving[b.index] or b.mass > 0 or bool(np.any(b.inertia_com))
            if b.parent >= 0:
                moving[b.parent] = moving[b.parent] or moving[b.index]
        return [b.joint.name for b in self.bodies if b.joint.nv and not moving[b.index]]

    def singular_mass_matrix_causes(self):
        """Reasons, found in the model's structure and parameters, why its mass matrix can
        be singular or indefinite: a list of sentences naming the bodies and joints (empty
        when none is found; M can still be singular at particular configurations).

        * a body whose spatial inertia is not positive semi-definite (negative mass, or a
          rotational inertia about the centre of mass with a negative principal moment —
          loaded with ``strict_inertia=False``, or assigned directly): M is indefinite;
        * joints that move no mass and no rotational inertia
          (:meth:`joints_moving_no_inertia`);
        * a joint that can translate a subtree without mass;
        * a body without mass or inertia whose joint's motion its children's joints can
          undo (e.g. two free joints in a row, as when ``load_urdf(..., floating_base=True)``
          is given a URDF whose mass-less root link already has a floating joint).

        Joint motion subspaces are taken at the neutral configuration.
        """
        if self.symbolic:
            return []
        causes = []
        for b in self.bodies:
            lam = np.linalg.eigvalsh(0.5 * (b.inertia_com + np.transpose(b.inertia_com)))
            if b.mass < 0:
                causes.append(f"body {b.name!r} has a negative mass ({b.mass:g} kg), so M is indefinite")
            elif lam[0] < -1e-9 * max(1.0, float(np.abs(lam).max())):
                causes.append(f"body {b.name!r} has a rotational inertia about its centre of mass that is not "
                              f"positive semi-definite (principal moments {_fmt_list(lam)} kg m²), so M is "
                              "indefinite")
        dead = self.joints_moving_no_inertia()
        if dead:
            causes.append(f"the joints {dead} move no mass or inertia")
        subtree_mass = [b.mass for b in self.bodies]
        inert = [b.mass != 0 or bool(np.any(b.inertia_com)) for b in self.bodies]
        moving = list(inert)  # the body's subtree holds mass or inertia
        for b in reversed(self.bodies):
            if b.parent >= 0:
                subtree_mass[b.parent] += subtree_mass[b.index]
                moving[b.parent] = moving[b.parent] or moving[b.index]
        children = [[] for _ in self.bodies]
        for b in self.bodies:
            if b.parent >= 0:
                children[b.parent].append(b)
        for b in self.bodies:
            j = b.joint
            if not j.nv or not moving[b.index]:
                continue  # no motion, or already reported as moving nothing
            S = np.asarray(j.motion_subspace(j.neutral()), dtype=float)
            if subtree_mass[b.index] == 0 and np.linalg.matrix_rank(S[:3], 1e-9) < j.nv:
                bodies = [c.name for c in self.bodies if b.index in self.ancestors(c.index)]
                causes.append(f"the {j.kind} joint {j.name!r} can translate the bodies {bodies}, which have "
                              "rotational inertia but no mass")
                continue
            if inert[b.index]:
                continue
            # body b has no inertia: which motions of its joint can the children's joints undo?
            loaded = [c for c in children[b.index] if moving[c.index]]
            stack = []
            for c in loaded:
                cj = c.joint
                R, p = sp.compose_poses(*c.placement, *cj.pose(cj.neutral()))
                X = sp.motion_transform(R, p)  # body b → child c
                A = np.linalg.solve(X, np.asarray(cj.motion_subspace(cj.neutral()), dtype=float))
                if A.shape[1]:
                    Q_, _ = np.linalg.qr(A)
                    stack.append(S - Q_ @ (Q_.T @ S))  # the part of S that child c cannot undo
                else:
                    stack.append(S)
            if not stack:
                continue
            sv = np.linalg.svd(np.vstack(stack), compute_uv=False)
            lost = j.nv - int(np.sum(sv > 1e-9 * max(1.0, sv[0] if sv.size else 0.0)))
            if lost > 0:
                joints = [f"{c.joint.kind} joint {c.joint.name!r} of {c.name!r}" for c in loaded]
                what = "every motion" if lost == j.nv else f"{lost} of the {j.nv} directions of motion"
                causes.append(f"body {b.name!r} has no mass or inertia and the joints of its children "
                              f"({', '.join(joints)}) can undo {what} of its {j.kind} joint {j.name!r}, so that "
                              "motion moves nothing (two joints in a row move the same bodies the same way"
                              + (", e.g. a free joint added above a URDF's own floating joint)"
                                 if j.kind == "free" and any(c.joint.kind == "free" for c in loaded) else ")"))
        return causes + self._joints_moving_no_inertia_at_neutral(causes)

    def _joints_moving_no_inertia_at_neutral(self, found):
        """Causes for joints not named in ``found`` whose motion moves no inertia at the
        neutral configuration although their subtree has some: SᵀI_cS, the joint's
        diagonal block of M with I_c the composite inertia of the bodies it carries, is
        singular (e.g. a point mass on a revolute joint's own axis)."""
        composite = [b.inertia for b in self.bodies]  # about each body's origin, body axes
        for b in reversed(self.bodies):
            if b.parent >= 0:
                R, p = sp.compose_poses(*b.placement, *b.joint.pose(b.joint.neutral()))
                composite[b.parent] = composite[b.parent] + sp.transform_inertia(R, p, composite[b.index])
        blocks = []
        for b in self.bodies:
            j = b.joint
            if j.nv:
                S = np.asarray(j.motion_subspace(j.neutral()), dtype=float)
                blocks.append((b, np.linalg.eigvalsh(S.T @ composite[b.index] @ S)))
        scale = max((float(lam[-1]) for _, lam in blocks), default=0.0)
        causes = []
        for b, lam in blocks:
            j = b.joint
            lost = int(np.sum(lam <= 1e-12 * scale))
            if lost and not any(repr(j.name) in cause for cause in found):
                carried = [c.name for c in self.bodies if c.index == b.index or b.index in self.ancestors(c.index)]
                what = "any direction" if lost == j.nv else f"{lost} of its {j.nv} directions"
                causes.append(f"the {j.kind} joint {j.name!r} moves no inertia in {what} at the neutral "
                              f"configuration: the bodies it carries ({carried}) have no mass away from its axis "
                              "and no inertia about it (e.g. a point mass on a revolute joint's own axis)")
        return causes

    # ----------------------------------------------------------------- display
    def summary(self):
        """A readable description: topology, joints, sizes and mass."""
        lines = [f"Model {self.name!r}: {self.nbodies} bodies, nq = {self.nq}, nv = {self.nv}, "
                 f"total mass {_fmt(sum(b.mass for b in self.bodies))} kg, gravity {self._gravity.tolist()}"]
        depth = {-1: -1}
        for b in self.bodies:
            depth[b.index] = depth[b.parent] + 1
            j = b.joint
            lines.append(f"  {'  ' * depth[b.index]}{b.index:3d} {b.name:<20s} <- {j.kind:<10s} "
                         f"{j.name!r} (q[{j.q_index}:{j.q_index + j.nq}], v[{j.v_index}:{j.v_index + j.nv}]) "
                         f"m = {_fmt(b.mass)} kg")
        extra = len(self.frames) - self.nbodies
        if extra:
            lines.append(f"  + {extra} additional frames")
        if self.loops:
            lines.append(f"  loops: {[lp.name for lp in self.loops]}")
        if self.couplings:
            lines.append(f"  couplings and transmissions: {[c.name for c in self.couplings]}")
        if self.user_constraints:
            lines.append(f"  constraints: {[c.name for c in self.user_constraints]}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<soadyn.Model {self.name!r}: {self.nbodies} bodies, nq={self.nq}, nv={self.nv}>"


def _fmt(x):
    return str(x) if sp.is_symbolic(x) else f"{x:.4g}"


def _fmt_list(values):
    return "[" + ", ".join(f"{v:.4g}" for v in values) + "]"
