"""Constraints of a closed-chain system: a spanning tree plus bilateral constraints.

Seed 001 ("Holonomic/Non-holonomic Bilateral Constraints", "Closed-chain Equations of
Motion"): every constraint contributes rows to

    𝔡̇(θ, t) = G_c(θ, t) θ̇ − 𝔘(t) = 0,       𝔡̈ = G_c θ̈ − 𝔘̊ = 0,

with 𝔘̊ ≜ 𝔘̇ − Ġ_c θ̇ (the acceleration bias). Three sources of rows, in this order:

* **loop (cut) joints** (seed 001, "Single loop constraint", Q V_nd = 0 and
  G_c = Q B* φ* H*; seed 002 §2.1–2.2: the cut edges of a rooted digraph): a joint of
  type ``kind`` between a predecessor frame P and a successor frame S removes the
  relative spatial velocity components that the joint does not allow. The rows, in
  P axes, angular rows first, are

  ======================  ===============================  ==============================
  kind (dof)              rotation rows                    translation rows
  ======================  ===============================  ==============================
  weld (0)                e_x, e_y, e_z                    e_x, e_y, e_z
  revolute (1)            b₁, b₂ (⊥ axis a)                e_x, e_y, e_z
  prismatic (1)           e_x, e_y, e_z                    b₁, b₂
  spherical (3)           —                                e_x, e_y, e_z
  universal (2)           n = (R_rel c) × a                e_x, e_y, e_z
  cylindrical (2)         b₁, b₂                           b₁, b₂
  planar (3, normal a)    b₁, b₂                           a
  ======================  ===============================  ==============================

  (c: the universal joint's second axis, fixed in S). The position residuals whose
  derivatives these rows are (exactly for translation and universal rows, to first
  order at closure for the others) are T·p_rel, log(R_rel) (weld, prismatic) and
  b·(a × R_rel a) (revolute, cylindrical, planar), a·R_rel c (universal), where
  (R_rel, p_rel) is the pose of S in P.
* **couplings** (gear and belt transmissions, DESIGN.md): constant rows
  ratio·Σ e_pred − Σ e_succ over the 1-dof joints on the two tree paths from the links'
  nearest common ancestor;
* **user constraints**: :class:`HolonomicConstraint` 𝔡(q, t) = 0 — on the whole
  configuration, or on the coordinates of a few declared 1-dof joints (``joints=``; e.g.
  built from sympy expressions by :func:`symbolic_constraint`) — and
  :class:`NonholonomicConstraint` G_c(q, t) v = 𝔘(t).

The same constraints serve both closed-chain methods: the cut-joint methods evaluate all
of them (:class:`ConstraintSet`, evaluated in :mod:`soadyn.closed.kinematics`), and
constraint embedding (seed 004) evaluates the subset inside each body cluster to put it
in explicit form (:mod:`soadyn.closed.cluster_joints`).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from ..joints import integrate
from ..model import LOOP_KINDS, neutral

__all__ = ["HolonomicConstraint", "NonholonomicConstraint", "UserConstraint", "ConstraintSet",
           "constraint_set", "LOOP_ROWS", "ConstraintBlock", "ConstraintError", "symbolic_constraint",
           "tree_paths"]

# kind codes used by the kernel: index into LOOP_KINDS
WELD, REVOLUTE, PRISMATIC, SPHERICAL, UNIVERSAL, CYLINDRICAL, PLANAR = range(7)
assert LOOP_KINDS == ("weld", "revolute", "prismatic", "spherical", "universal", "cylindrical", "planar")

#: number of constraint rows (6 − joint dof) of each loop joint kind
LOOP_ROWS = {"weld": 6, "revolute": 5, "prismatic": 5, "spherical": 3, "universal": 4,
             "cylindrical": 4, "planar": 3}

#: layout of one row of the packed loop parameters ``loop_f``
LOOP_FLOATS = 36  # R_P (9), p_P (3), R_S (9), p_S (3), a (3), b1 (3), b2 (3), c (3)


def orthonormal_complement(a):
    """Two unit vectors b₁, b₂ with (a, b₁, b₂) a right-handed orthonormal basis."""
    e = np.eye(3)[int(np.argmin(np.abs(a)))]
    b1 = e - (e @ a) * a
    b1 /= np.linalg.norm(b1)
    return b1, np.cross(a, b1)


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
    """A holonomic constraint 𝔡(q, t) = 0 (seed 001, "Holonomic Bilateral Constraints";
    seed 004 eq. 2: the implicit constraint φ(q) = 0).

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
    expressions (seed 004 eq. 2: the implicit constraint, K = ∂φ/∂q, K q̈ = −K̇q̇).

    ``symbols[k]`` stands for the coordinate of joint ``joints[k]``. The Jacobian K and
    the acceleration bias 𝔘̊ = −K̇q̇ = −Σ_j ∂(K q̇)/∂q_j q̇_j are derived symbolically and
    turned into plain-Python functions. Needs sympy (the ``symbolic`` extra).
    """
    try:
        import sympy
    except ImportError:  # pragma: no cover - sympy is part of the test environment
        raise ImportError("symbolic_constraint needs sympy (pip install soadyn[symbolic])") from None
    q = sympy.Matrix(list(symbols))
    if len(q) != len(joints):
        raise ValueError(f"symbols: expected one symbol per joint ({len(joints)}), got {len(q)}")
    qd = sympy.Matrix(sympy.symbols(f"qd0:{len(q)}", real=True))
    phi = sympy.Matrix(list(expressions))
    K = phi.jacobian(q)
    bias = -(K * qd).jacobian(q) * qd
    # scalar ``math`` code: the constraints act on a handful of coordinates, where numpy's
    # per-call overhead would dominate
    f_phi = sympy.lambdify([list(q)], list(phi), "math", cse=True)
    f_K = sympy.lambdify([list(q)], K.tolist(), "math", cse=True)
    f_b = sympy.lambdify([list(q), list(qd)], list(bias), "math", cse=True)
    return HolonomicConstraint(
        name, lambda x, t: np.array(f_phi(x.tolist()), dtype=float),
        jacobian=lambda x, t: np.array(f_K(x.tolist()), dtype=float),
        bias=lambda x, xd, t: np.array(f_b(x.tolist(), xd.tolist()), dtype=float),
        joints=list(joints))


class NonholonomicConstraint(UserConstraint):
    """A non-holonomic constraint G_c(q, t) v = 𝔘(t) (seed 001, "Non-holonomic Bilateral
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


# --------------------------------------------------------------------------- packing
@dataclass
class ConstraintBlock:
    """A named group of constraint rows: ``kind`` is "loop", "coupling", "holonomic" or
    "nonholonomic"; ``rows`` its slice of G_c."""

    name: str
    kind: str
    rows: slice
    source: object


def tree_paths(model, a, b):
    """The bodies on the tree paths from the nearest common ancestor of bodies ``a`` and
    ``b`` (−1: the world) down to each of them, the ancestor excluded, child first."""
    up_a = model.ancestors(a) if a >= 0 else []
    up_b = model.ancestors(b) if b >= 0 else []
    common = set(up_a) & set(up_b)
    return [i for i in up_a if i not in common], [i for i in up_b if i not in common]


def coupling_paths(model, c):
    """(predecessor path, successor path) of a coupling (see :func:`tree_paths`)."""
    bodies = []
    for role, link in (("predecessor", c.predecessor), ("successor", c.successor)):
        try:
            bodies.append(model.frame(link).body)
        except ValueError:
            raise ValueError(f"coupling {c.name!r}: unknown {role} link {link!r}") from None
    return tree_paths(model, *bodies)


def _coupling_row(model, c):
    """(v coefficients (nv,), q coefficients (nq,)) of ratio·Σ pred − Σ succ."""
    gv, gq = np.zeros(model.nv), np.zeros(model.nq)
    for path, coef in zip(coupling_paths(model, c), (c.ratio, -1.0)):
        for b in path:
            j = model.bodies[b].joint
            if j.nv == 0:
                continue
            if j.nv != 1 or j.nq != 1:
                raise ValueError(f"coupling {c.name!r}: joint {j.name!r} ({j.kind}) on the transmission "
                                 "path is not a 1-dof joint")
            gv[j.v_index] += coef
            gq[j.q_index] += coef
    if not np.any(gv):
        raise ValueError(f"coupling {c.name!r}: no joint lies between {c.predecessor!r} and "
                         f"{c.successor!r} and their common ancestor")
    return gv, gq


class ConstraintSet:
    """The constraints of a model — all of them, or the given subsets (the constraints
    inside one body cluster) — in row order loops | couplings | user constraints.

    Attributes
    ----------
    m : number of rows of G_c; ``blocks``: list of :class:`ConstraintBlock`;
    holonomic : (m,) bool, rows with a position-level residual;
    loop_int (nl, 4) [pred body, succ body, kind code, first row], loop_float (nl, 36):
        the loop joints packed for the kernel; ``m_loop`` their row count;
    node_frames : frame names [P₁, S₁, P₂, S₂, ...] of the cut-joint nodes, in the order
        of the 12 columns of each loop's node selection Q (see ConstraintState);
        ``node_body``, ``node_rotation``, ``node_translation``: their bodies and poses there;
        ``loop_of_row`` (m_loop,): the loop each loop row belongs to;
    coupling_v (nc, nv), coupling_q (nc, nq), coupling_offset (nc,).
    """

    def __init__(self, model, loops=None, couplings=None, user_constraints=None):
        self.model = model
        self.compiled = model.compiled
        self.key = constraints_key(model)
        self.buffers = threading.local()  # evaluation buffers, one set per thread
        loops = model.loops if loops is None else list(loops)
        couplings = model.couplings if couplings is None else list(couplings)
        user_constraints = model.user_constraints if user_constraints is None else list(user_constraints)
        nl = len(loops)
        self.loop_int = np.zeros((nl, 4), dtype=np.int64)
        self.loop_float = np.zeros((nl, LOOP_FLOATS))
        self.blocks = []
        self.node_frames = []
        row = 0
        for l, lp in enumerate(loops):
            fP, fS = model.frame(lp.predecessor), model.frame(lp.successor)
            kind = LOOP_KINDS.index(lp.kind)
            n = LOOP_ROWS[lp.kind]
            if fP.body == fS.body:
                raise ValueError(f"loop {lp.name!r}: predecessor and successor frames are on the same "
                                 f"body {model.body_name(fP.body)!r}")
            self.loop_int[l] = (fP.body, fS.body, kind, row)
            b1, b2 = orthonormal_complement(lp.axis)
            self.loop_float[l] = np.concatenate([fP.rotation.ravel(), fP.translation, fS.rotation.ravel(),
                                                 fS.translation, lp.axis, b1, b2, lp.axis2])
            self.blocks.append(ConstraintBlock(lp.name, "loop", slice(row, row + n), lp))
            self.node_frames += [fP.name, fS.name]
            row += n
        self.m_loop = row
        # node k of the list node_frames: its body and pose there; loop index of each loop row
        nodes = [model.frame(n) for n in self.node_frames]
        self.node_body = np.array([f.body for f in nodes], dtype=np.int64)
        self.node_rotation = np.array([f.rotation for f in nodes]).reshape(-1, 3, 3)
        self.node_translation = np.array([f.translation for f in nodes]).reshape(-1, 3)
        self.loop_of_row = np.zeros(row, dtype=np.int64)
        for l, b in enumerate(b for b in self.blocks if b.kind == "loop"):
            self.loop_of_row[b.rows] = l
        rows_v, rows_q, offsets = [], [], []
        for c in couplings:
            gv, gq = _coupling_row(model, c)
            rows_v.append(gv)
            rows_q.append(gq)
            offsets.append(c.offset)
            self.blocks.append(ConstraintBlock(c.name, "coupling", slice(row, row + 1), c))
            row += 1
        self.coupling_v = np.array(rows_v).reshape(-1, model.nv)
        self.coupling_q = np.array(rows_q).reshape(-1, model.nq)
        self.coupling_offset = np.array(offsets, dtype=float)
        self.m_coupling = len(couplings)
        for uc in user_constraints:
            kind = "holonomic" if uc.holonomic else "nonholonomic"
            self.blocks.append(ConstraintBlock(uc.name, kind, slice(row, row + uc.size), uc))
            row += uc.size
        self.m = row
        self.user_blocks = self.blocks[len(self.blocks) - len(user_constraints):]
        self.holonomic = np.ones(row, dtype=bool)
        for b in self.blocks:
            if b.kind == "nonholonomic":
                self.holonomic[b.rows] = False

    def block(self, name):
        for b in self.blocks:
            if b.name == name:
                return b
        raise ValueError(f"constraint: unknown constraint {name!r}; known: {[b.name for b in self.blocks]}")


def constraints_key(model):
    """Identity of a model's constraint lists: caches are rebuilt when it changes."""
    return (tuple(map(id, model.loops)), tuple(map(id, model.couplings)),
            tuple(map(id, model.user_constraints)))


def constraint_set(model):
    """The packed :class:`ConstraintSet` of ``model`` (cached until the model or its
    constraint lists change)."""
    cs = getattr(model, "_constraint_set", None)
    if cs is None or cs.compiled is not model.compiled or cs.key != constraints_key(model):
        cs = ConstraintSet(model)
        model._constraint_set = cs
    return cs
