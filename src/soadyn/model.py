"""Model: a tree of bodies connected by hinges, with named frames (nodes) and, for
closed-chain systems, loop constraints and couplings.

Bodies are numbered parent-first (the parent's index is smaller than the child's;
seed 003's "regular numbering"); the inertial frame is not a body and has index −1.
Every body's frame coincides with its hinge's child frame: the hinge *placement* is
the pose of the joint frame in the parent body's frame at zero joint motion, and
the joint transform moves the child from there (URDF convention).

Build models in code with :meth:`Model.add_body` and :meth:`Model.add_frame`, or
load them with :func:`soadyn.load_urdf`.
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import joints as jt
from . import spatial as sp

__all__ = ["Model", "Body", "Frame", "Loop", "Coupling", "CompiledModel", "neutral",
           "random_configuration", "LOOP_KINDS"]


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
    return R.copy(), p.copy()


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
    mass = float(mass)
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
        problem = f"{where}: rotational inertia is not positive semi-definite (principal moments {lam})"
    elif lam[0] + lam[1] < lam[2] - tol:
        problem = (f"{where}: principal moments {lam} violate the triangle inequality I1 + I2 >= I3 "
                   "(no rigid body has this inertia)")
    if problem:
        if strict:
            raise ValueError(problem)
        warnings.warn(problem, stacklevel=3)
    return mass, com, 0.5 * (Ic + Ic.T)


def _symbolic_inertia(mass, com, inertia_com, where):
    com = np.array(com, dtype=object)
    Ic = np.zeros((3, 3), dtype=object) if inertia_com is None else np.array(inertia_com, dtype=object)
    if com.shape != (3,):
        raise ValueError(f"{where}: com must have 3 entries, got shape {com.shape}")
    if Ic.shape != (3, 3):
        raise ValueError(f"{where}: rotational inertia must be a 3x3 matrix, got shape {Ic.shape}")
    return mass, com, Ic


@dataclass
class Body:
    """A rigid body and the hinge connecting it to its parent."""

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
        """6×6 spatial inertia about the body origin (seed 003, M_i)."""
        return sp.spatial_inertia(self.mass, self.com, self.inertia_com)


@dataclass
class Frame:
    """A named frame (SOA node) fixed to a body (``body = -1``: the world)."""

    name: str
    index: int
    body: int
    rotation: np.ndarray
    translation: np.ndarray

    @property
    def placement(self):
        return self.rotation, self.translation


#: loop (cut) joint types and the aliases the URDF+ files use
LOOP_KINDS = ("weld", "revolute", "prismatic", "spherical", "universal", "cylindrical", "planar")
LOOP_KIND_ALIASES = {"fixed": "weld", "continuous": "revolute", "ball": "spherical"}


def _unit(vector, what):
    if isinstance(vector, str):
        return jt._axis_arg(vector, what)  # "x", "y" or "z"
    a = np.asarray(vector, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-12:
        raise ValueError(f"{what}: expected a nonzero 3-vector, got {vector!r}")
    return a / np.linalg.norm(a)


@dataclass
class Loop:
    """A cut joint closing a kinematic loop (URDF+ ``<loop>``, or :meth:`Model.add_loop`).

    The constraint acts between the frame ``predecessor`` and the frame ``successor``
    (both model frames); ``kind`` is the cut joint's type (one of ``LOOP_KINDS``, see
    :mod:`soadyn.closed.constraints`), ``axis`` its axis (revolute, prismatic, cylindrical),
    the first axis (universal) or the plane normal (planar), in the predecessor frame;
    ``axis2`` is a universal joint's second axis, in the successor frame (default: a unit
    vector perpendicular to ``axis``).
    """

    name: str
    kind: str
    predecessor: str
    successor: str
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    axis2: np.ndarray | None = None

    def __post_init__(self):
        kind = LOOP_KIND_ALIASES.get(self.kind, self.kind)
        if kind not in LOOP_KINDS:
            raise ValueError(f"loop {self.name!r}: unknown joint type {self.kind!r}; expected one of "
                             f"{list(LOOP_KINDS) + list(LOOP_KIND_ALIASES)}")
        self.kind = kind
        self.axis = _unit(self.axis, f"loop {self.name!r} axis")
        if self.axis2 is None:
            # the perpendicular closest to the coordinate axis least aligned with ``axis``
            e = np.eye(3)[int(np.argmin(np.abs(self.axis)))]
            self.axis2 = _unit(e - (e @ self.axis) * self.axis, "axis2")
        else:
            self.axis2 = _unit(self.axis2, f"loop {self.name!r} axis2")


@dataclass
class Coupling:
    """A gear or belt transmission (URDF+ ``<coupling>``) between 1-dof joints:
    ``ratio`` × (rates from the common ancestor to ``predecessor``) = (rates from the
    common ancestor to ``successor``), see DESIGN.md. At the position level the same
    relation holds for the joint coordinates up to the constant ``offset``:
    ratio·Σq_pred − Σq_succ = offset."""

    name: str
    predecessor: str  # link name
    successor: str  # link name
    ratio: float
    kind: str = "rolling"
    offset: float = 0.0


class CompiledModel:
    """Flat array form of a model for the compiled kernels (see ``dynamics._layout``)."""

    def __init__(self, model):
        from .dynamics._layout import pack_model
        bodies = model.bodies
        self.nb = len(bodies)
        self.nq = model.nq
        self.nv = model.nv
        self.parents = np.array([b.parent for b in bodies], dtype=np.int64)
        self.mi, self.mf = pack_model(bodies, model.gravity, self.nq, self.nv)
        self.tls = threading.local()


class Model:
    """A tree-topology multibody model.

    Parameters
    ----------
    name : str
    gravity : (3,) gravity acceleration in the world frame [m/s²], default (0, 0, −9.81).
    """

    def __init__(self, name="model", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self.bodies: list[Body] = []
        self.frames: list[Frame] = []
        self.loops: list[Loop] = []
        self.couplings: list[Coupling] = []
        self.user_constraints: list = []  # soadyn.closed HolonomicConstraint / NonholonomicConstraint
        self._joint_by_name = {}
        self._body_by_name = {}
        self._frame_by_name = {}
        self.nq = 0
        self.nv = 0
        self._compiled = None
        self.gravity = gravity

    # ----------------------------------------------------------------- building
    @property
    def gravity(self):
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity: expected 3 finite numbers, got {g!r}")
        self._gravity = g
        self._compiled = None

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
        index = len(self.bodies)
        joint.name, joint.q_index, joint.v_index, joint.body = jname, self.nq, self.nv, index
        self.nq += joint.nq
        self.nv += joint.nv
        body = Body(name, index, parent_index, joint, (R, p), m, c, Ic)
        self.bodies.append(body)
        self._body_by_name[name] = index
        self._joint_by_name[jname] = joint
        self._add_frame(name, index, np.eye(3), np.zeros(3))
        self._compiled = None
        return index

    def add_frame(self, name, body, placement=None):
        """Add a named frame fixed to ``body`` (name, index, or "world") at ``placement``
        (its pose in the body frame). Returns the frame index."""
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
        f = Frame(name, len(self.frames), body, R, p)
        self.frames.append(f)
        self._frame_by_name[name] = f
        return f.index

    def add_inertia(self, body, mass, com, inertia, strict_inertia=True):
        """Rigidly attach more mass to ``body`` (used when merging fixed links): the
        inertias are summed (parallel-axis theorem)."""
        b = self.bodies[self._resolve_body(body, "body")]
        m2, c2, I2 = check_rigid_inertia(mass, com, inertia, f"inertia added to {b.name!r}", strict_inertia)
        M = sp.spatial_inertia(b.mass, b.com, b.inertia_com) + sp.spatial_inertia(m2, c2, I2)
        b.mass, b.com, b.inertia_com = sp.inertia_parameters(M)
        self._compiled = None

    # ----------------------------------------------------------------- constraints
    def add_loop(self, name, kind, predecessor, successor, axis=(0.0, 0.0, 1.0), *,
                 predecessor_placement=None, successor_placement=None, axis2=None):
        """Close a kinematic loop with a cut joint (seed 001, "Single loop constraint").

        Frames ``"<name>_predecessor"`` and ``"<name>_successor"`` are added on
        ``predecessor`` and ``successor`` (body or frame names, or "world") at the given
        placements, as the URDF+ ``<loop>`` tag does. ``kind``: weld, revolute,
        prismatic, spherical, universal, cylindrical or planar; ``axis`` in the
        predecessor frame, ``axis2`` (universal only) in the successor frame.
        Returns the :class:`Loop`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        if any(lp.name == name for lp in self.loops):
            raise ValueError(f"name: a loop named {name!r} already exists")
        loop = Loop(name, kind, f"{name}_predecessor", f"{name}_successor", axis, axis2)
        for arg, where in (("predecessor", predecessor), ("successor", successor)):
            if not (isinstance(where, str) and where in self._frame_by_name):
                self._resolve_body(where, arg)  # raises for an unknown body before anything is added
        self.add_frame(loop.predecessor, predecessor, predecessor_placement)
        self.add_frame(loop.successor, successor, successor_placement)
        self.loops.append(loop)
        return loop

    def add_coupling(self, name, predecessor, successor, ratio, *, offset=0.0):
        """Add a gear/belt transmission between the joints leading to two links (see
        :class:`Coupling`); ``predecessor``/``successor`` are body or frame names."""
        for arg, link in (("predecessor", predecessor), ("successor", successor)):
            self.frame(link) if isinstance(link, str) else self._resolve_body(link, arg)
        if not np.isfinite(ratio) or not np.isfinite(offset):
            raise ValueError(f"ratio, offset: expected finite numbers, got {ratio!r}, {offset!r}")
        if any(c.name == name for c in self.couplings):
            raise ValueError(f"name: a coupling named {name!r} already exists")
        c = Coupling(name, predecessor if isinstance(predecessor, str) else self.body_name(predecessor),
                     successor if isinstance(successor, str) else self.body_name(successor),
                     float(ratio), offset=float(offset))
        self.couplings.append(c)
        return c

    def add_constraint(self, constraint):
        """Add a user constraint (:class:`soadyn.HolonomicConstraint` or
        :class:`soadyn.NonholonomicConstraint`); its functions are checked once at the
        neutral configuration (shapes, finiteness, time dependence)."""
        from .closed.constraints import UserConstraint
        if not isinstance(constraint, UserConstraint):
            raise TypeError(f"constraint: expected a HolonomicConstraint or NonholonomicConstraint, "
                            f"got {type(constraint).__name__}")
        names = {c.name for c in self.user_constraints} | {lp.name for lp in self.loops} \
            | {c.name for c in self.couplings}
        if constraint.name in names:
            raise ValueError(f"constraint: a constraint named {constraint.name!r} already exists")
        constraint.bind(self)
        self.user_constraints.append(constraint)
        return constraint

    @property
    def has_constraints(self):
        """True when the model has loops, couplings or user constraints (a closed-chain system)."""
        return bool(self.loops or self.couplings or self.user_constraints)

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
        return [b.joint for b in self.bodies]

    @property
    def parents(self):
        return [b.parent for b in self.bodies]

    def body_index(self, name):
        return self._resolve_body(name, "body")

    def body_name(self, index):
        return "world" if index < 0 else self.bodies[index].name

    def frame(self, name):
        """The :class:`Frame` called ``name`` (a Frame or frame index also accepted)."""
        if isinstance(name, Frame):
            return name
        if isinstance(name, (int, np.integer)):
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
    @property
    def compiled(self):
        """The flat array form used by the kernels (rebuilt after any change)."""
        if self._compiled is None:
            if not self.bodies:
                raise ValueError(f"model {self.name!r} has no bodies")
            if self.symbolic:
                raise TypeError(f"model {self.name!r} has symbolic (sympy) parameters: only the "
                                "operator layer (soadyn.operators) accepts it, not the compiled algorithms")
            c = CompiledModel(self)
            _check_positive_definite(self, c)
            self._compiled = c
        return self._compiled

    def compile(self):
        """Validate and pack the model now (it is otherwise done on first use)."""
        return self.compiled

    def workspace(self):
        """This thread's default :class:`~soadyn.Workspace` for the model."""
        c = self.compiled
        ws = getattr(c.tls, "workspace", None)
        if ws is None:
            from .dynamics._layout import Workspace
            ws = c.tls.workspace = Workspace(self)
            c.tls.buffer = ws.buffer  # read directly by the public functions' fast path
        return ws

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
            lines.append(f"  couplings: {[c.name for c in self.couplings]}")
        if self.user_constraints:
            lines.append(f"  constraints: {[c.name for c in self.user_constraints]}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<soadyn.Model {self.name!r}: {self.nbodies} bodies, nq={self.nq}, nv={self.nv}>"


def _fmt(x):
    return str(x) if sp.is_symbolic(x) else f"{x:.4g}"


def _check_positive_definite(model, compiled):
    """Mass-less bodies are legal only while the mass matrix stays positive definite."""
    from .dynamics.crba import mass_matrix_kernel
    from .dynamics._layout import workspace_size
    q = neutral(model)
    M = np.zeros((compiled.nv, compiled.nv))
    ws = np.zeros(workspace_size(compiled.nb, compiled.nv))
    mass_matrix_kernel(compiled.mi, compiled.mf, q, ws, compiled.nv, M)
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        bad = [b.name for b in model.bodies if b.joint.nv and not np.any(
            [model.bodies[k].mass > 0 or np.any(model.bodies[k].inertia_com) for k in _subtree(model, b.index)])]
        raise ValueError(f"model {model.name!r}: the mass matrix is not positive definite at the "
                         f"neutral configuration; joints that move no inertia: {bad or 'none found'}") from None


def _subtree(model, i):
    out = [i]
    for b in model.bodies[i + 1:]:
        if b.parent in out:
            out.append(b.index)
    return out


def neutral(model):
    """Neutral configuration (nq,): zero angles and displacements, identity quaternions."""
    return np.concatenate([b.joint.neutral() for b in model.bodies]) if model.bodies else np.zeros(0)


def random_configuration(model, rng=None):
    """A random configuration: joints within finite limits, angles in [-π, π] otherwise,
    random unit quaternions. ``rng`` is a numpy Generator or a seed."""
    rng = np.random.default_rng(rng)
    return np.concatenate([b.joint.random(rng) for b in model.bodies])
