"""Descriptions of the constraints of a closed-chain system: loop (cut) joints,
couplings (gear and belt transmissions) and user constraints.

A closed-chain system is a spanning tree plus bilateral constraints ([Jain24],
"Holonomic/Non-holonomic Bilateral Constraints"). This module says *what* a constraint
is; how its rows of G_c are evaluated is :mod:`soadyn.closed.constraint_set` (the
cut-joint method) and :mod:`soadyn.closed.embedding` (constraint embedding).

* :class:`Loop` — a cut joint of one of ``LOOP_KINDS`` between two frames;
* constant linear couplings of joint rates (:class:`LinearCoupling`, kept together in
  ``model.couplings``): :class:`Coupling` — ratio × (joint rates from the links' common
  ancestor to the predecessor) = (rates from it to the successor), URDF+ ``<coupling>`` —
  and :class:`Transmission` — Σ_i A[r, i] q̇_{J_i} = 0 on named 1-dof joints (gears,
  belts with per-stage ratios, constant differentials, rack and pinion);
* :class:`HolonomicConstraint` 𝔡(q, t) = 0 and :class:`NonholonomicConstraint`
  G_c(q, t) v = 𝔘(t); :func:`symbolic_constraint` builds a holonomic one from sympy.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import math
from dataclasses import dataclass, field

import numpy as np

from .configuration import integrate, neutral
from .expression_tape import NotCompilable, build_tape
from .joints import axis_argument

__all__ = ["LOOP_KINDS", "LOOP_KIND_ALIASES", "Loop", "LinearCoupling", "Coupling", "Transmission",
           "ConstraintError", "UserConstraint",
           "HolonomicConstraint", "NonholonomicConstraint", "symbolic_constraint"]


#: loop (cut) joint types and the aliases the URDF+ files use
LOOP_KINDS = ("weld", "revolute", "prismatic", "spherical", "universal", "cylindrical", "planar")
LOOP_KIND_ALIASES = {"fixed": "weld", "continuous": "revolute", "ball": "spherical"}


def _unit(vector, what):
    if isinstance(vector, str):
        return axis_argument(vector, what)  # "x", "y" or "z"
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


class LinearCoupling(ABC):
    """A constant linear relation between the rates of 1-dof joints J = (J_1 … J_k):

        A q̇_J = 0   (m rows),   and at the position level   A q_J = offset,

    with A (m, k) constant. Such a relation is already in explicit form
    ([Chignoli23, eq. 2–3] with K = A constant): with the dependent coordinates q_d solved
    from the others, q̇ = G ẏ with G = [1; −A_d⁻¹ A_i] constant and g = 0, and, when the
    offsets are zero, q = γ(y) = G y — constraint embedding needs no solve at run time
    (a LINEAR cluster). The cut-joint methods see the same constant rows in G_c.

    Subclasses say how J and A are found: :class:`Coupling` (URDF+, from two links and a
    ratio) and :class:`Transmission` (named joints and a coefficient matrix)."""

    @abstractmethod
    def joint_rows(self, model):
        """``(joints, A, offset)``: the coupled joints (k :class:`~soadyn.core.joints.Joint`
        objects of ``model``, each 1-dof), A (m, k) and offset (m,)."""

    @property
    def has_offset(self):
        """True when some row's position-level offset is nonzero (γ is then affine, and
        constraint embedding solves it by Gauss–Newton)."""
        return bool(np.any(np.asarray(self.offset) != 0.0))


def _one_dof(joint, what):
    if joint.nq != 1 or joint.nv != 1:
        raise ValueError(f"{what}: joint {joint.name!r} is a {joint.kind} joint; a transmission couples 1-dof "
                         "joints (revolute, continuous, prismatic, helical)")
    return joint


@dataclass
class Coupling(LinearCoupling):
    """A gear or belt transmission (URDF+ ``<coupling>``) between 1-dof joints:
    ``ratio`` × (rates from the common ancestor to ``predecessor``) = (rates from the
    common ancestor to ``successor``), see the module docstring. At the position level the same
    relation holds for the joint coordinates up to the constant ``offset``:
    ratio·Σq_pred − Σq_succ = offset. One row of a :class:`LinearCoupling`."""

    name: str
    predecessor: str  # link name
    successor: str  # link name
    ratio: float
    kind: str = "rolling"
    offset: float = 0.0

    def paths(self, model):
        """(predecessor path, successor path): the bodies from the nearest common ancestor
        of the two links (excluded) down to each link, child first."""
        bodies = []
        for role, link in (("predecessor", self.predecessor), ("successor", self.successor)):
            try:
                bodies.append(model.frame(link).body)
            except ValueError:
                raise ValueError(f"coupling {self.name!r}: unknown {role} link {link!r}") from None
        up = [model.ancestors(b) if b >= 0 else [] for b in bodies]
        common = set(up[0]) & set(up[1])
        return [i for i in up[0] if i not in common], [i for i in up[1] if i not in common]

    def joint_rows(self, model):
        joints, coefs = [], []
        for path, coef in zip(self.paths(model), (self.ratio, -1.0)):
            for b in path:
                j = model.bodies[b].joint
                if j.nv == 0:
                    continue
                if j.nv != 1 or j.nq != 1:
                    raise ValueError(f"coupling {self.name!r}: joint {j.name!r} ({j.kind}) on the transmission "
                                     "path is not a 1-dof joint")
                joints.append(j)
                coefs.append(coef)
        if not joints:
            raise ValueError(f"coupling {self.name!r}: no joint lies between {self.predecessor!r} and "
                             f"{self.successor!r} and their common ancestor")
        return joints, np.array([coefs], dtype=float), np.array([self.offset], dtype=float)


@dataclass(eq=False)  # compared by identity: the ratios are an array
class Transmission(LinearCoupling):
    """A constant linear transmission between named 1-dof joints
    ([Chignoli23, eq. 2–3] with constant K; see :class:`LinearCoupling`):

        Σ_i ratios[r, i] · q̇_{joints[i]} = 0   for every row r,
        Σ_i ratios[r, i] · q_{joints[i]} = offset[r].

    Parameters
    ----------
    name : str
    joints : sequence of k distinct names of 1-dof joints (revolute, continuous,
        prismatic, helical), anywhere in the tree.
    ratios : (k,) one row, or (m, k) m rows with m < k and full row rank. Units: each
        product ratios[r, i]·q̇_i has the unit of the row (rad/s for gears and belts, where
        the ratios are dimensionless; a rack and pinion q̇_slide = ρ q̇_pinion is the row
        [1, −ρ] on [slide, pinion] with ρ in m/rad).
    offset : float or (m,), the position-level constants [rad or m] (default 0; nonzero
        offsets make γ affine, which constraint embedding solves by Gauss–Newton).

    Examples: a gear q̇_rotor = N q̇_link is ``(["rotor", "link"], [1, -N])``; a belt that
    drives link B's absolute angle through two stages, q̇_rotor = N (r_A q̇_A + r_B q̇_B),
    is ``(["rotor", "A", "B"], [1, -N r_A, -N r_B])``; a differential q̇_out = (q̇_a + q̇_b)/2
    is ``(["out", "a", "b"], [1, -0.5, -0.5])``.
    """

    name: str
    joints: tuple
    ratios: np.ndarray
    offset: np.ndarray = 0.0

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: expected a non-empty string, got {self.name!r}")
        where = f"transmission {self.name!r}"
        joints = self.joints
        if isinstance(joints, str) or not hasattr(joints, "__len__") or not len(joints) \
                or not all(isinstance(j, str) and j for j in joints):
            raise ValueError(f"{where}: joints: expected a non-empty list of joint names, got {joints!r}")
        if len(set(joints)) != len(joints):
            raise ValueError(f"{where}: joints: a joint is listed twice in {list(joints)}")
        k = len(joints)
        if k < 2:
            raise ValueError(f"{where}: joints: a transmission relates at least 2 joints, got {list(joints)}")
        try:
            A = np.array(self.ratios, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: ratios: expected numbers, got {self.ratios!r}") from None
        if A.ndim == 1:
            A = A[None, :]
        if A.ndim != 2 or A.shape[1] != k:
            raise ValueError(f"{where}: ratios: expected shape ({k},) or (m, {k}) (one column per joint), "
                             f"got shape {np.shape(self.ratios)}")
        if not np.all(np.isfinite(A)):
            raise ValueError(f"{where}: ratios: expected finite numbers, got {A.tolist()}")
        m = A.shape[0]
        if m >= k:
            raise ValueError(f"{where}: ratios: {m} rows on {k} joints leave no motion; expected fewer rows "
                             "than joints")
        s = np.linalg.svd(A, compute_uv=False)
        if s[-1] <= 1e-12 * max(1.0, s[0]):
            raise ValueError(f"{where}: ratios: the rows {A.tolist()} are linearly dependent (or zero); "
                             "expected rows of full rank")
        offset = np.broadcast_to(np.array(self.offset, dtype=float), (m,)) if np.ndim(self.offset) == 0 \
            else np.array(self.offset, dtype=float)
        if offset.shape != (m,) or not np.all(np.isfinite(offset)):
            raise ValueError(f"{where}: offset: expected a finite number or {m} finite numbers, got {self.offset!r}")
        self.joints = tuple(joints)
        A.flags.writeable = False
        self.ratios = A
        offset = offset.copy()
        offset.flags.writeable = False
        self.offset = offset

    @property
    def rows(self):
        """m, the number of constraint rows."""
        return self.ratios.shape[0]

    def joint_rows(self, model):
        joints = []
        for name in self.joints:
            try:
                j = model.joint(name)
            except ValueError as e:
                raise ValueError(f"transmission {self.name!r}: {e}") from None
            joints.append(_one_dof(j, f"transmission {self.name!r}: joints"))
        return joints, self.ratios, self.offset


class ConstraintError(ValueError):
    """A constraint that cannot be evaluated, embedded or solved as requested."""


# --------------------------------------------------------------------------- user constraints
def _checked(value, shape, name, what, finite=True):
    out = np.asarray(value, dtype=float)
    if out.shape != shape:
        raise ValueError(f"constraint {name!r}: {what}: expected shape {shape}, got {out.shape}")
    # a sum is NaN or inf when an entry is (the functions run in hot loops: one reduction)
    if finite and not math.isfinite(out.sum()):
        raise ValueError(f"constraint {name!r}: {what}: returned NaN or inf")
    return out


class UserConstraint:
    """Common part of user constraints: a name, a row count fixed when the constraint is
    added to a model (:meth:`soadyn.Model.add_constraint`), and shape-checked calls."""

    holonomic = False
    joints = None  # names of the 1-dof joints the functions take, or None: the whole configuration
    #: (tape of φ and K, tape of the acceleration bias) for the compiled kernels
    #: (:mod:`soadyn.core.expression_tape`; made by :func:`symbolic_constraint`), or None:
    #: the constraint is evaluated in Python
    tapes = None

    def __init__(self, name, time_dependent):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name: expected a non-empty string, got {name!r}")
        self.name = name
        self.time_dependent = bool(time_dependent)
        self.size = None
        self.model = None

    def _call(self, fn, what, shape, *args):
        return _checked(fn(*args), shape, self.name, what, self.model is None or self.size is not None)

    def bind(self, model):
        """Fix the row count and check the functions' output shapes once at the neutral
        configuration (values may be singular there; finiteness is checked when evaluated)."""
        if self.model is not None and self.model is not model:
            raise ValueError(f"constraint {self.name!r} already belongs to model {self.model.name!r}")
        self._resolve_joints(model)
        self.model, self.size = model, None
        self.nv = model.nv
        try:
            with np.errstate(all="ignore"):  # the neutral configuration may be singular for 𝔡
                self.size = self._infer_size(self._coordinates(neutral(model)))
        except Exception:
            self.model = None
            raise

    def _resolve_joints(self, model):
        pass

    def _coordinates(self, q):
        return q

    def _size_of(self, value, what):
        arr = np.asarray(value, dtype=float)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"constraint {self.name!r}: {what} must return a non-empty 1-D array, "
                             f"got shape {arr.shape}")
        return arr.size

    def _check_time_independent(self, fn, what, *args_q):
        if self.time_dependent:
            return
        a = np.asarray(fn(*args_q, 0.0), dtype=float)
        b = np.asarray(fn(*args_q, 0.7311), dtype=float)
        if a.shape == b.shape and not np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True):
            raise ValueError(f"constraint {self.name!r}: {what} depends on t; pass time_dependent=True")


class HolonomicConstraint(UserConstraint):
    """A holonomic constraint 𝔡(q, t) = 0 ([Jain24], "Holonomic Bilateral Constraints";
    [Chignoli23, eq. 2]: the implicit constraint φ(q) = 0).

    Parameters
    ----------
    name : str
    function : callable ``(q, t) -> (n,)``, the residual 𝔡 [m or rad]. With ``joints``
        its first argument is the vector of those joints' coordinates instead of the whole
        configuration.
    jacobian : optional callable ``(q, t) -> (n, k)``: the derivative of 𝔡 with respect to
        the velocity coordinates (k = nv; with ``joints`` k = len(joints)), G_c = ∇𝔡 (equal
        to ∂𝔡/∂q for 1-dof joints). When omitted it is computed by central differences
        along the configuration manifold (``soadyn.integrate``).
    joints : optional list of names of 1-dof joints whose coordinates ``function`` takes.
        Declaring them keeps the evaluation small and lets constraint embedding place the
        constraint inside a body cluster (:func:`soadyn.cluster_tree`), which needs to
        know the joints a constraint acts on.
    time_dependent : bool
        Whether 𝔡 depends on t explicitly; then 𝔘 = −∂𝔡/∂t ≠ 0 (central differences).
    bias : optional callable ``(q, v, t) -> (n,)`` (with ``joints``: those joints'
        coordinates and rates): the acceleration bias 𝔘̊ with 𝔡̈ = G_c q̈ − 𝔘̊, i.e.
        −K̇q̇ for a time-invariant 𝔡 with Jacobian K. Default: one central difference of
        the analytic Jacobian along the constant-velocity path, or, without one, second
        differences of 𝔡 along t ↦ (q ⊕ v t, t) with Richardson extrapolation (accuracy
        ≈ 1e-9).
    """

    holonomic = True

    def __init__(self, name, function, jacobian=None, *, joints=None, time_dependent=False, bias=None):
        super().__init__(name, time_dependent)
        if not callable(function):
            raise TypeError(f"function: expected a callable (q, t) -> (n,), got {type(function).__name__}")
        for arg, fn in (("jacobian", jacobian), ("bias", bias)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{arg}: expected a callable, got {type(fn).__name__}")
        if joints is not None:
            if isinstance(joints, str) or not all(isinstance(j, str) for j in joints) or not len(joints):
                raise ValueError(f"joints: expected a non-empty list of joint names, got {joints!r}")
            if len(set(joints)) != len(joints):
                raise ValueError(f"joints: a joint is listed twice in {list(joints)}")
            self.joints = list(joints)
        self.function, self.jacobian_function, self.bias_function = function, jacobian, bias

    def _resolve_joints(self, model):
        if self.joints is None:
            return
        js = [model.joint(name) for name in self.joints]
        for j in js:
            if j.nq != 1 or j.nv != 1:
                raise ValueError(f"constraint {self.name!r}: joint {j.name!r} is a {j.kind} joint; the joints "
                                 "of a constraint must be 1-dof joints")
        # joints keep their indices when bodies are appended to the model later
        self.q_indices = np.array([j.q_index for j in js], dtype=np.int64)
        self.v_indices = np.array([j.v_index for j in js], dtype=np.int64)

    def _coordinates(self, q):
        return q if self.joints is None else q[self.q_indices]

    @property
    def width(self):
        """k, the number of velocity coordinates the constraint's functions see."""
        return self.nv if self.joints is None else len(self.joints)

    def _move(self, x, dx, s):
        """x moved along the velocity dx for time s (on the manifold for whole configurations)."""
        return x + s * dx if self.joints is not None else integrate(self.model, x, dx, s)

    def _infer_size(self, x0):
        n = self._size_of(self.function(x0, 0.0), "function(q, t)")
        self._check_time_independent(self.function, "function(q, t)", x0)
        if self.jacobian_function is not None:
            self._call(self.jacobian_function, "jacobian(q, t)", (n, self.width), x0, 0.0)
        if self.bias_function is not None:
            self._call(self.bias_function, "bias(q, v, t)", (n,), x0, np.zeros(self.width), 0.0)
        return n

    def residual(self, x, t):
        """𝔡 (n,) at the constraint's own coordinates x (see ``joints``)."""
        return self._call(self.function, "function(q, t)", (self.size,), x, t)

    def _path(self, x, xd, t, s):
        """𝔡 along the constant-velocity path through (x, t)."""
        return self.residual(self._move(x, xd, s), t + s if self.time_dependent else t)

    def evaluate_local(self, x, xd, t, with_bias):
        """(K (n, k), 𝔘 (n,), 𝔘̊ (n,) or None, 𝔡 (n,)) in the constraint's own coordinates
        x and rates ẋ (the whole state, or the declared joints' coordinates and rates)."""
        n, k = self.size, self.width
        d = self.residual(x, t)
        if self.jacobian_function is not None:
            G = self._call(self.jacobian_function, "jacobian(q, t)", (n, k), x, t)
        else:
            h = 1e-6
            G = np.empty((n, k))
            e = np.zeros(k)
            for c in range(k):
                e[c] = h
                G[:, c] = (self.residual(self._move(x, e, 1.0), t) - self.residual(self._move(x, e, -1.0), t)) / (2 * h)
                e[c] = 0.0
        U = np.zeros(n)
        if self.time_dependent:
            h = 1e-6
            U = -(self.residual(x, t + h) - self.residual(x, t - h)) / (2 * h)
        bias = None
        if with_bias:
            if self.bias_function is not None:
                bias = self._call(self.bias_function, "bias(q, v, t)", (n,), x, xd, t)
            elif not self.time_dependent and self.jacobian_function is not None:
                # 𝔡̈ − G q̈ = Ġ v: one central difference of G along the path
                h = 1e-5 / max(1.0, float(np.abs(xd).max(initial=0.0)))
                Gp = self._call(self.jacobian_function, "jacobian(q, t)", (n, k), self._move(x, xd, h), t)
                Gm = self._call(self.jacobian_function, "jacobian(q, t)", (n, k), self._move(x, xd, -h), t)
                bias = -((Gp - Gm) @ xd) / (2 * h)
            else:
                # 𝔡̈ at q̈ = 0 is the second derivative of 𝔡 along the path; Richardson
                # extrapolation of the second difference cancels its O(h²) error
                h = 2e-3 / max(1.0, float(np.abs(xd).max(initial=0.0)))

                def second(hh):
                    return (self._path(x, xd, t, hh) - 2 * d + self._path(x, xd, t, -hh)) / hh**2

                bias = -(4 * second(h / 2) - second(h)) / 3
        return G, U, bias, d

    def evaluate(self, q, v, t, with_bias):
        """(G_c (n, nv), 𝔘 (n,), 𝔘̊ (n,) or None, 𝔡 (n,)) at the model state (q, v, t)."""
        if self.joints is None:
            return self.evaluate_local(q, v, t, with_bias)
        K, U, bias, d = self.evaluate_local(q[self.q_indices], v[self.v_indices], t, with_bias)
        G = np.zeros((self.size, self.model.nv))
        G[:, self.v_indices] = K
        return G, U, bias, d


def symbolic_constraint(name, joints, expressions, symbols):
    """A :class:`HolonomicConstraint` φ(q_J) = 0 on the 1-dof ``joints`` from sympy
    expressions ([Chignoli23, eq. 2]: the implicit constraint, K = ∂φ/∂q, K q̈ = −K̇q̇).

    ``symbols[k]`` stands for the coordinate of joint ``joints[k]``. The Jacobian K and
    the acceleration bias 𝔘̊ = −K̇q̇ = −Σ_j ∂(K q̇)/∂q_j q̇_j are derived symbolically and
    turned into plain-Python functions (the cut-joint methods in Python) and into
    instruction tapes (``tapes``, :mod:`soadyn.core.expression_tape`) that the compiled
    cluster kernels run — no kernel is compiled per constraint. Expressions may use
    +, −, ×, ÷, powers, sqrt, exp, log, abs, the trigonometric and hyperbolic functions,
    their inverses and atan2; with any other function the constraint stays in Python
    (``tapes`` is None). Needs sympy (the ``symbolic`` extra).
    """
    try:
        import sympy  # optional (extra 'symbolic'): imported only for symbolic input
    except ImportError:  # pragma: no cover - sympy is part of the test environment
        raise ImportError("symbolic_constraint needs sympy, a dependency of soadyn: pip install sympy") from None
    q = sympy.Matrix(list(symbols))
    if len(q) != len(joints):
        raise ValueError(f"symbols: expected one symbol per joint ({len(joints)}), got {len(q)}")
    qd = sympy.Matrix(sympy.symbols(f"qd0:{len(q)}", real=True))
    phi = sympy.Matrix(list(expressions))
    K = phi.jacobian(q)
    bias = -(K * qd).jacobian(q) * qd
    c = HolonomicConstraint(
        name, _SymbolicFunction([list(q)], list(phi)), jacobian=_SymbolicFunction([list(q)], K.tolist()),
        bias=_SymbolicFunction([list(q), list(qd)], list(bias)), joints=list(joints))
    # the same expressions as tapes for the compiled kernels: (φ, K row-major) from q_J,
    # the bias from (q_J, q̇_J); None when an operation has no compiled form
    try:
        c.tapes = (build_tape(list(q), list(phi) + list(K)), build_tape(list(q) + list(qd), list(bias)))
    except NotCompilable:
        c.tapes = None
    return c


class _SymbolicFunction:
    """sympy ``expressions`` of the symbol lists ``args`` as a function ``(x, [xd,] t) ->
    array`` (t unused), turned into plain-Python code; it pickles as its expressions (and
    is turned into code again when unpickled)."""

    def __init__(self, args, expressions):
        self.args, self.expressions = args, expressions
        self._compile()

    def _compile(self):
        import sympy
        # scalar ``math`` code: the constraints act on a handful of coordinates, where
        # numpy's per-call overhead would dominate
        self._code = sympy.lambdify(self.args, self.expressions, "math", cse=True)

    def __call__(self, *values):
        return np.array(self._code(*(x.tolist() for x in values[:len(self.args)])), dtype=float)

    def __getstate__(self):
        return {"args": self.args, "expressions": self.expressions}

    def __setstate__(self, state):
        self.args, self.expressions = state["args"], state["expressions"]
        self._compile()


class NonholonomicConstraint(UserConstraint):
    """A non-holonomic constraint G_c(q, t) v = 𝔘(t) ([Jain24], "Non-holonomic Bilateral
    Constraints"), e.g. rolling without slipping.

    Parameters
    ----------
    name : str
    jacobian : callable ``(q, t) -> (n, nv)``, G_c.
    rhs : optional callable ``t -> (n,)``, 𝔘(t) (default zero).
    time_dependent : bool, whether G_c depends on t explicitly.
    bias : optional callable ``(q, v, t) -> (n,)``, 𝔘̊ = 𝔘̇ − Ġ_c v. Default: central
        differences of G_c along the constant-velocity path and of 𝔘 in t.
    """

    def __init__(self, name, jacobian, rhs=None, *, time_dependent=False, bias=None):
        super().__init__(name, time_dependent)
        for arg, fn in (("jacobian", jacobian), ("rhs", rhs), ("bias", bias)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{arg}: expected a callable, got {type(fn).__name__}")
        if jacobian is None:
            raise TypeError("jacobian: a non-holonomic constraint needs G_c(q, t)")
        self.jacobian_function, self.rhs_function, self.bias_function = jacobian, rhs, bias

    def _infer_size(self, q0):
        G = np.asarray(self.jacobian_function(q0, 0.0), dtype=float)
        if G.ndim != 2 or G.shape[0] == 0 or G.shape[1] != self.nv:
            raise ValueError(f"constraint {self.name!r}: jacobian(q, t) must return an (n, {self.nv}) "
                             f"array (one column per velocity coordinate), got shape {G.shape}")
        self._check_time_independent(self.jacobian_function, "jacobian(q, t)", q0)
        n = G.shape[0]
        if self.rhs_function is not None:
            self._call(self.rhs_function, "rhs(t)", (n,), 0.0)
        if self.bias_function is not None:
            self._call(self.bias_function, "bias(q, v, t)", (n,), q0, np.zeros(self.nv), 0.0)
        return n

    def _G(self, q, t):
        return self._call(self.jacobian_function, "jacobian(q, t)", (self.size, self.nv), q, t)

    def _U(self, t):
        if self.rhs_function is None:
            return np.zeros(self.size)
        return self._call(self.rhs_function, "rhs(t)", (self.size,), t)

    def evaluate(self, q, v, t, with_bias):
        G = self._G(q, t)
        U = self._U(t)
        bias = None
        if with_bias:
            if self.bias_function is not None:
                bias = self._call(self.bias_function, "bias(q, v, t)", (self.size,), q, v, t)
            else:
                h = 1e-5 / max(1.0, float(np.abs(v).max(initial=0.0)))
                dt = h if self.time_dependent else 0.0
                Gdot_v = (self._G(integrate(self.model, q, v, h), t + dt)
                          - self._G(integrate(self.model, q, v, -h), t - dt)) @ v / (2 * h)
                Udot = 0.0
                if self.rhs_function is not None:
                    Udot = (self._U(t + 1e-6) - self._U(t - 1e-6)) / 2e-6
                bias = Udot - Gdot_v
        return G, U, bias, np.zeros(self.size)
