"""Cluster joints: the constraints inside a body cluster in explicit form.

Seed 004 §II-B: the spanning-tree coordinates q of a cluster obey implicit constraints
φ(q) = 0, K(q) q̇ = 0, K(q) q̈ = k(q, q̇) with K = ∂φ/∂q and k = −K̇q̇ (eq. 2). Choosing
independent coordinates y among q gives the explicit form (eq. 3)

    q = γ(y),    q̇ = G(q) ẏ,    q̈ = G(q) ÿ + g(q, q̇),

with, after ordering q = [q_i; q_d] (004 §VII: "only depends on the adoption of
independent velocities"),

    G = [1; −K_d⁻¹ K_i],    g = [0; K_d⁻¹ k].

A :class:`ClusterJoint` assembles the constraint rows of the couplings, loops and
custom implicit constraints acting inside one cluster:

* couplings (gears and belts, URDF+ ``<coupling>``): linear rows
  ``ratio·Σ q̇(path to predecessor) − Σ q̇(path to successor) = 0`` (DESIGN.md), so G is
  constant, g = 0 and γ is linear — the geared rotor and the belt-driven revolute pair
  with rotors are this case;
* loops (URDF+ ``<loop>``): the cut joint between two frames must allow only the motion
  of its joint type; rows are evaluated from the cluster's own kinematics and the
  dependent coordinates are found by Gauss–Newton iteration (four-bars, general loops);
* :class:`ImplicitConstraint`: any φ(q) over a few 1-dof joints with its Jacobian and
  bias, e.g. built from sympy expressions with :func:`symbolic_constraint` (Tello's
  differentials).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import spatial as sp

__all__ = ["ConstraintError", "ImplicitConstraint", "symbolic_constraint", "add_constraint",
           "ClusterJoint"]


class ConstraintError(ValueError):
    """A constraint that cannot be put in explicit form (or solved) as requested."""


@dataclass
class ImplicitConstraint:
    """An implicit constraint φ(q_J) = 0 on the coordinates of the 1-dof joints ``joints``.

    Parameters
    ----------
    name : str
    joints : list of joint names, the order of the coordinate vector q_J.
    residual : callable q_J -> φ (m,).
    jacobian : callable q_J -> K = ∂φ/∂q_J (m, len(joints)).
    bias : callable (q_J, q̇_J) -> K̇ q̇_J (m,), the velocity-product term.
    independent : optional list of the joint names to use as independent coordinates.
    """

    name: str
    joints: list
    residual: object
    jacobian: object
    bias: object
    independent: list = field(default=None)


def symbolic_constraint(name, joints, expressions, symbols, independent=None):
    """An :class:`ImplicitConstraint` from sympy expressions φ(symbols).

    ``symbols[k]`` stands for the coordinate of joint ``joints[k]``. K = ∂φ/∂q and the bias
    K̇q̇ = Σ_j ∂(K q̇)/∂q_j q̇_j are derived symbolically and turned into numpy functions.
    Needs sympy (the ``symbolic`` extra).
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
    Kqd = K * qd
    bias = Kqd.jacobian(q) * qd
    # scalar ``math`` code: the constraints act on a handful of coordinates, where numpy's
    # per-call overhead would dominate
    f_phi = sympy.lambdify([list(q)], list(phi), "math", cse=True)
    f_K = sympy.lambdify([list(q)], K.tolist(), "math", cse=True)
    f_b = sympy.lambdify([list(q), list(qd)], list(bias), "math", cse=True)
    return ImplicitConstraint(
        name, list(joints),
        lambda x: np.array(f_phi(x.tolist()), dtype=float),
        lambda x: np.array(f_K(x.tolist()), dtype=float),
        lambda x, xd: np.array(f_b(x.tolist(), xd.tolist()), dtype=float),
        independent)


def add_constraint(model, constraint):
    """Attach an :class:`ImplicitConstraint` to ``model`` (kept in ``model.constraints``)."""
    if not isinstance(constraint, ImplicitConstraint):
        raise TypeError(f"constraint: expected an ImplicitConstraint, got {type(constraint).__name__}")
    for j in constraint.joints:
        joint = model.joint(j)
        if joint.nv != 1 or joint.nq != 1:
            raise ValueError(f"constraint {constraint.name!r}: joint {j!r} is a {joint.kind} joint; "
                             "implicit constraints act on 1-dof joints")
    existing = getattr(model, "constraints", None)
    if existing is None:
        model.constraints = existing = []
    if any(c.name == constraint.name for c in existing):
        raise ValueError(f"constraint: a constraint named {constraint.name!r} already exists")
    existing.append(constraint)
    model._cluster_cache = None


# --------------------------------------------------------------------------- cluster kinematics
class _Kinematics:
    """Poses, velocities and accelerations (at q̈ = 0) of a cluster's bodies relative to the
    body the cluster hangs from (its parent body, or the world)."""

    def __init__(self, model, bodies, parent_body):
        self.model = model
        self.bodies = bodies
        self.parent_body = parent_body

    def evaluate(self, q, qd=None):
        """Fill per-body dicts R, o (world axes of the parent body), V, A (body frame)."""
        m = self.model
        R, o, V, A = {}, {}, {}, {}
        p0 = self.parent_body
        R[p0], o[p0] = np.eye(3), np.zeros(3)
        V[p0], A[p0] = np.zeros(6), np.zeros(6)
        for i in self.bodies:
            b = m.bodies[i]
            j = b.joint
            qi = q[j.q_index:j.q_index + j.nq]
            Rj, pj = j.pose(qi)
            Rt, pt = b.placement
            Rl, tl = Rt @ Rj, pt + Rt @ pj  # pose of i in its parent
            lam = b.parent
            R[i] = R[lam] @ Rl
            o[i] = o[lam] + R[lam] @ tl
            if qd is not None:
                vi = qd[j.v_index:j.v_index + j.nv]
                Sv = j.motion_subspace(qi) @ vi
                V[i] = sp.transform_motion(Rl, tl, V[lam]) + Sv
                A[i] = sp.transform_motion(Rl, tl, A[lam]) + sp.cross_motion(V[i], Sv) + j.bias(qi, vi)
        self.R, self.o, self.V, self.A = R, o, V, A

    def frame_state(self, body, Rf, pf, with_rates):
        """World-of-parent pose, angular velocity, origin velocity, angular and classical
        origin acceleration of a frame at (Rf, pf) on ``body``."""
        R, o = self.R[body], self.o[body]
        pose = (R @ Rf, o + R @ pf)
        if not with_rates:
            return pose, None
        w, v = self.V[body][:3], self.V[body][3:]
        al, a = self.A[body][:3], self.A[body][3:]
        vp = v + np.cross(w, pf)
        ap = a + np.cross(al, pf) + np.cross(w, vp)
        return pose, (R @ w, R @ vp, R @ al, R @ ap)

    def frame_jacobian(self, body, Rf, pf, cols):
        """(6, n) map from the cluster velocities to [ω; ȯ] of the frame (parent axes)."""
        J = np.zeros((6, len(cols)))
        if body == self.parent_body:
            return J
        of = self.o[body] + self.R[body] @ pf
        anc = set(self.model.ancestors(body))
        for c, (i, k) in enumerate(cols):
            if i not in anc:
                continue
            s = self.model.bodies[i].joint.motion_subspace(self._q_of(i))[:, k]
            w = self.R[i] @ s[:3]
            J[:3, c] = w
            J[3:, c] = self.R[i] @ s[3:] + np.cross(w, of - self.o[i])
        return J

    def _q_of(self, i):
        j = self.model.bodies[i].joint
        return self._q[j.q_index:j.q_index + j.nq]


# --------------------------------------------------------------------------- constraint rows
class _CouplingRows:
    """One linear row: ratio·Σ q̇(NCA→predecessor) − Σ q̇(NCA→successor) = 0."""

    linear = True
    m = 1

    def __init__(self, model, coupling, col_of):
        self.name = coupling.name
        pred, succ = model.body_index(coupling.predecessor), model.body_index(coupling.successor)
        up_p, up_s = model.ancestors(pred), model.ancestors(succ)
        common = set(up_p) & set(up_s)
        self.row = np.zeros(len(col_of))
        for path, coef in ((up_p, coupling.ratio), (up_s, -1.0)):
            for i in path:
                if i in common:
                    break
                j = model.bodies[i].joint
                if j.nv != 1 or j.nq != 1:
                    raise ConstraintError(f"coupling {coupling.name!r}: joint {j.name!r} on its path is a "
                                          f"{j.kind} joint; couplings act on 1-dof joints")
                self.row[col_of[(i, 0)]] += coef

    def residual(self, q, kin):
        return np.array([self.row @ q])

    def jacobian(self, kin):
        return self.row[None, :]

    def bias(self, kin):
        return np.zeros(1)


_LOOP_KINDS = ("revolute", "continuous", "prismatic", "fixed", "spherical")


class _LoopRows:
    """Loop closure between two frames (seed 001; URDF+ ``<loop>``).

    With R_p, o_p the predecessor frame and R_s, o_s the successor frame, the relative pose
    is R_rel = R_pᵀR_s, p_rel = R_pᵀ(o_s − o_p). Rows: p_rel = 0 (revolute, spherical, fixed);
    the loop axis a kept aligned, b_k·R_rel a = 0 (revolute); no relative rotation
    (prismatic, fixed; velocity rows ω_rel = 0); b_k·p_rel = 0 (prismatic).
    """

    linear = False

    def __init__(self, model, loop):
        if loop.kind not in _LOOP_KINDS:
            raise ConstraintError(f"loop {loop.name!r}: unsupported cut-joint type {loop.kind!r} "
                                  f"(supported: {', '.join(_LOOP_KINDS)})")
        self.name = loop.name
        self.kind = "revolute" if loop.kind == "continuous" else loop.kind
        self.fp = model.frame(loop.predecessor)
        self.fs = model.frame(loop.successor)
        a = np.asarray(loop.axis, dtype=float)
        self.axis = a / np.linalg.norm(a)
        # two unit vectors orthogonal to the axis
        helper = np.eye(3)[int(np.argmin(np.abs(self.axis)))]
        b1 = np.cross(self.axis, helper)
        b1 /= np.linalg.norm(b1)
        self.B = np.vstack([b1, np.cross(self.axis, b1)])
        self.m = {"revolute": 5, "prismatic": 5, "fixed": 6, "spherical": 3}[self.kind]

    def _poses(self, kin):
        (Rp, op), _ = kin.frame_state(self.fp.body, self.fp.rotation, self.fp.translation, False)
        (Rs, os_), _ = kin.frame_state(self.fs.body, self.fs.rotation, self.fs.translation, False)
        return Rp, op, Rs, os_

    def residual(self, q, kin):
        Rp, op, Rs, os_ = self._poses(kin)
        Rrel = Rp.T @ Rs
        prel = Rp.T @ (os_ - op)
        rot = 0.5 * sp.unskew(Rrel - Rrel.T)
        if self.kind == "revolute":
            return np.concatenate([prel, self.B @ (Rrel @ self.axis)])
        if self.kind == "prismatic":
            return np.concatenate([rot, self.B @ prel])
        if self.kind == "fixed":
            return np.concatenate([rot, prel])
        return prel

    def jacobian(self, kin):
        Rp, op, Rs, os_ = self._poses(kin)
        Jp = kin.frame_jacobian(self.fp.body, self.fp.rotation, self.fp.translation, kin.cols)
        Js = kin.frame_jacobian(self.fs.body, self.fs.rotation, self.fs.translation, kin.cols)
        prel = Rp.T @ (os_ - op)
        # ṗ_rel = R_pᵀ(ȯ_s − ȯ_p) − (R_pᵀω_p) × p_rel;  ω_rel = R_pᵀ(ω_s − ω_p)
        Jpos = Rp.T @ (Js[3:] - Jp[3:]) + sp.skew(prel) @ (Rp.T @ Jp[:3])
        Jrot = Rp.T @ (Js[:3] - Jp[:3])
        if self.kind == "revolute":
            r = Rp.T @ Rs @ self.axis
            return np.vstack([Jpos, -(self.B @ sp.skew(r)) @ Jrot])  # d/dt b·r = b·(ω_rel × r)
        if self.kind == "prismatic":
            return np.vstack([Jrot, self.B @ Jpos])
        if self.kind == "fixed":
            return np.vstack([Jrot, Jpos])
        return Jpos

    def bias(self, kin):
        """K̇q̇: the rows' second time derivative at q̈ = 0."""
        (Rp, op), (wp, vp, alp, ap) = kin.frame_state(self.fp.body, self.fp.rotation, self.fp.translation, True)
        (Rs, os_), (ws, vs, als, as_) = kin.frame_state(self.fs.body, self.fs.rotation, self.fs.translation, True)
        P = Rp.T
        prel = P @ (os_ - op)
        wpl, alpl = P @ wp, P @ alp
        dv = P @ (vs - vp)
        prel_dot = dv - np.cross(wpl, prel)
        pos_dd = P @ (as_ - ap) - np.cross(wpl, dv) - np.cross(alpl, prel) - np.cross(wpl, prel_dot)
        wrel = P @ (ws - wp)
        wrel_dot = P @ (als - alp) - np.cross(wpl, wrel)
        if self.kind == "revolute":
            r = P @ Rs @ self.axis
            return np.concatenate([pos_dd, self.B @ (np.cross(wrel_dot, r) + np.cross(wrel, np.cross(wrel, r)))])
        if self.kind == "prismatic":
            return np.concatenate([wrel_dot, self.B @ pos_dd])
        if self.kind == "fixed":
            return np.concatenate([wrel_dot, pos_dd])
        return pos_dd


class _ImplicitRows:
    """Rows of a user :class:`ImplicitConstraint`."""

    linear = False

    def __init__(self, model, constraint, col_of):
        self.name = constraint.name
        self.c = constraint
        self.cols = [col_of[(model.joint(j).body, 0)] for j in constraint.joints]
        self.qidx = [model.joint(j).q_index for j in constraint.joints]
        self.vidx = [model.joint(j).v_index for j in constraint.joints]
        self.m = len(np.atleast_1d(constraint.residual(np.zeros(len(self.cols)))))

    def residual(self, q, kin):
        return np.asarray(self.c.residual(kin.q_full[self.qidx]), dtype=float).reshape(-1)

    def jacobian(self, kin):
        J = np.zeros((self.m, kin.n))
        J[:, self.cols] = self.c.jacobian(kin.q_full[self.qidx])
        return J

    def bias(self, kin):
        return np.asarray(self.c.bias(kin.q_full[self.qidx], kin.qd_full[self.vidx]), dtype=float).reshape(-1)


# --------------------------------------------------------------------------- cluster joint
def _rank(A, tol=1e-9):
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(1.0, s[0])))


class ClusterJoint:
    """The joint of one cluster: spanning coordinates, constraint rows and explicit form.

    Attributes
    ----------
    bodies : tuple of body indices (ascending).
    v_index, q_index : model velocity / position indices of the cluster's spanning
        coordinates (joint order = body order).
    independent_v, independent_q : positions of the independent coordinates y inside the
        cluster's spanning velocity / position vectors.
    linear : True when G is constant and g = 0 (no loops or custom constraints).
    G0 : the constant G of a linear cluster (nc, ny), else None.
    """

    def __init__(self, model, bodies, parent_body, couplings=(), loops=(), implicits=(), independent=None,
                 name="cluster"):
        self.model = model
        self.name = name
        self.bodies = tuple(sorted(bodies))
        self.parent_body = parent_body
        js = [model.bodies[i].joint for i in self.bodies]
        self.v_index = np.array([j.v_index + k for j in js for k in range(j.nv)], dtype=np.int64)
        self.q_index = np.array([j.q_index + k for j in js for k in range(j.nq)], dtype=np.int64)
        self.cols = [(i, k) for i, j in zip(self.bodies, js) for k in range(j.nv)]
        col_of = {c: n for n, c in enumerate(self.cols)}
        self.rows = ([_CouplingRows(model, c, col_of) for c in couplings]
                     + [_LoopRows(model, lp) for lp in loops]
                     + [_ImplicitRows(model, c, col_of) for c in implicits])
        self.constraint_names = [r.name for r in self.rows]
        self.linear = all(r.linear for r in self.rows)
        self._loops = any(isinstance(r, _LoopRows) for r in self.rows)  # rows that need the kinematics
        self.n = len(self.cols)
        self._kin = _Kinematics(model, self.bodies, parent_body)
        self._kin.cols = self.cols
        self._kin.n = self.n
        if self.rows and any(j.nq != j.nv for j in js):
            bad = [j.name for j in js if j.nq != j.nv]
            raise ConstraintError(f"{name}: joints {bad} have quaternion coordinates; constrained "
                                  "clusters need joints with nq = nv")
        self._last = None
        self._cache = None
        self._select_independent(independent)

    # ------------------------------------------------------------------ setup
    def _select_independent(self, independent):
        model, n = self.model, self.n
        if not self.rows:
            self.independent_v = np.arange(n)
            self.independent_q = np.arange(len(self.q_index))
            self.G0 = np.eye(n)
            self._qref = None
            return
        from ..model import neutral
        q = neutral(model)
        rng = np.random.default_rng(len(self.cols))
        if self.linear:
            nd = _rank(self._K(q))
        else:  # the generic rank: neutral configurations are often singular (stretched loops)
            nd = max(_rank(self._K(self._perturbed(q, rng, 1.0))) for _ in range(4))
        if independent is not None:
            names = set(independent)
            unknown = names - {model.bodies[i].joint.name for i in self.bodies}
            if unknown:
                raise ConstraintError(f"{self.name}: independent joints {sorted(unknown)} are not joints of "
                                      f"this cluster ({[model.bodies[i].joint.name for i in self.bodies]})")
            dep = [c for c, (i, k) in enumerate(self.cols) if model.bodies[i].joint.name not in names]
        else:
            dep = [c for c, (i, k) in enumerate(self.cols) if not getattr(model.bodies[i].joint, "independent", True)]
            if not dep:  # nothing marked: pick the dependent columns by pivoted QR of K
                from scipy.linalg import qr
                _, _, piv = qr(self._K(self._perturbed(q, rng, 1.0)), pivoting=True)
                dep = sorted(int(c) for c in piv[:nd])
        self.dependent_v = np.array(sorted(dep), dtype=np.int64)
        self.independent_v = np.array([c for c in range(n) if c not in dep], dtype=np.int64)
        self.independent_q = self.independent_v.copy()
        if len(dep) != nd:
            raise ConstraintError(
                f"{self.name}: the constraints {self.constraint_names} remove {nd} degrees of freedom but "
                f"{len(dep)} coordinates are marked dependent "
                f"({[model.bodies[self.cols[c][0]].joint.name for c in dep]}); mark exactly {nd} joints "
                "independent=False or pass the independent joints explicitly")
        if self.linear:
            self.G0 = self._explicit(self._K(q))
            self._qref = None
            return
        self.G0 = None
        self._qref = None
        error = None
        for attempt in range(6):  # a generic assembled reference configuration
            qa = self._perturbed(q, rng, 0.3 * attempt)
            try:
                qc = self.solve_positions(qa[self.q_index][self.independent_q], qa).copy()
                self._explicit(self._K(qa))
            except ConstraintError as e:
                error = e
                continue
            self._qref = qc
            return
        raise error

    def _perturbed(self, q, rng, scale):
        q = q.copy()
        q[self.q_index] += rng.uniform(-scale, scale, len(self.q_index))
        return q

    def _rows(self, fn, q, qd=None):
        kin = self._kin
        kin._q = q
        kin.q_full, kin.qd_full = q, qd
        if self._loops:
            kin.evaluate(q, qd)
        return [fn(r, kin) for r in self.rows]

    def _K(self, q):
        return np.vstack(self._rows(lambda r, k: r.jacobian(k), q))

    def _explicit(self, K, check=True):
        """G = [1; −K_d⁻¹K_i] (scattered to the cluster's coordinate order); keeps the solver
        of K_d for g. ``check`` verifies the ranks (setup); per call only a square K_d is
        solved directly (redundant rows, as in planar loops, go through least squares)."""
        Kd, Ki = K[:, self.dependent_v], K[:, self.independent_v]
        nd = len(self.dependent_v)
        square = Kd.shape[0] == nd
        if check or not square:
            if _rank(Kd) < nd:
                names = [self.model.bodies[self.cols[c][0]].joint.name for c in self.dependent_v]
                raise ConstraintError(f"{self.name}: the dependent coordinates {names} cannot be solved from the "
                                      f"constraints {self.constraint_names}: ∂φ/∂q_d has rank {_rank(Kd)} < {nd} "
                                      "(a singular configuration or a poor choice of independent coordinates)")
            Kd_inv = np.linalg.pinv(Kd)
            Gd = -(Kd_inv @ Ki)
            if np.abs(Kd @ Gd + Ki).max() > 1e-8 * max(1.0, np.abs(Ki).max()):
                raise ConstraintError(f"{self.name}: the independent coordinates are not free: the constraints "
                                      f"{self.constraint_names} also restrict them")
        else:
            try:
                Kd_inv = np.linalg.inv(Kd)
            except np.linalg.LinAlgError:
                raise ConstraintError(f"{self.name}: ∂φ/∂q_d is singular at this configuration") from None
            Gd = -(Kd_inv @ Ki)
        G = np.zeros((self.n, len(self.independent_v)))
        G[self.independent_v] = np.eye(len(self.independent_v))
        G[self.dependent_v] = Gd
        self._Kd_inv = Kd_inv
        return G

    def _explicit_at(self, q):
        """(G, K_d⁻¹) at ``q``, reusing the last evaluation at the same configuration."""
        qc = q[self.q_index]
        cache = self._cache
        if cache is not None and np.array_equal(cache[0], qc):
            return cache[1], cache[2]
        G = self._explicit(self._K(q), check=False)
        self._cache = (qc.copy(), G, self._Kd_inv)
        return G, self._Kd_inv

    # ------------------------------------------------------------------ explicit form
    @property
    def ny(self):
        return len(self.independent_v)

    @property
    def nyq(self):
        return len(self.independent_q)

    def residual(self, q):
        """φ(q) of all the cluster's constraints at the model configuration ``q``."""
        if not self.rows:
            return np.zeros(0)
        return np.concatenate(self._rows(lambda r, k: r.residual(q[self.q_index], k), q))

    def solve_positions(self, y, q, tol=1e-12, max_iter=50):
        """γ(y): write the cluster's spanning coordinates into ``q`` (model-sized, modified
        in place) for independent coordinates ``y``; returns the cluster's spanning vector.

        Linear clusters: q_c = G y. Others: Gauss–Newton on φ(q) = 0 for the dependent
        coordinates, started from the previous solution, then from the reference
        configuration (the assembly branch nearest those starts is found).
        """
        qi = self.q_index
        if not self.rows:
            q[qi] = y
            return q[qi]
        if self.linear:
            q[qi] = self.G0 @ y
            return q[qi]
        q[qi[self.independent_q]] = y
        dep = qi[self.dependent_v]
        fallback = q[qi].copy()
        rng = None
        for attempt in range(11):
            if attempt == 0 and self._last is not None:
                q[dep] = self._last[self.dependent_v]
            elif attempt == 1 and self._qref is not None:
                q[dep] = self._qref[self.dependent_v]
            elif attempt == 2:
                q[dep] = fallback[self.dependent_v]
            elif attempt > 2:  # perturbed restarts for starts at a singular (e.g. stretched) configuration
                rng = np.random.default_rng(attempt) if rng is None else rng
                q[dep] = fallback[self.dependent_v] + rng.uniform(-1.0, 1.0, len(dep))
            else:
                continue
            for _ in range(max_iter):
                r = self.residual(q)
                if np.abs(r).max() < tol:
                    return self._accept(q)
                Kd = self._K(q)[:, self.dependent_v]
                if Kd.shape[0] == Kd.shape[1]:
                    try:
                        step = np.linalg.solve(Kd, r)
                    except np.linalg.LinAlgError:
                        step = np.linalg.lstsq(Kd, r, rcond=None)[0]
                else:
                    step = np.linalg.lstsq(Kd, r, rcond=None)[0]
                q[dep] -= step
                if not np.all(np.isfinite(q[dep])):
                    break
            r = self.residual(q)
            if np.all(np.isfinite(r)) and np.abs(r).max() < 1e-9:
                return self._accept(q)
        raise ConstraintError(f"{self.name}: cannot solve the constraints {self.constraint_names} for the "
                              f"dependent coordinates at independent coordinates y = {np.asarray(y).tolist()} "
                              f"(residual {np.abs(self.residual(q)).max():.3g}); the mechanism may not "
                              "assemble there")

    def _accept(self, q):
        """Keep a solution, dependent angles wrapped to [−π, π) where the constraints are periodic in them."""
        qi = self.q_index
        for c in self.dependent_v:
            j = self.model.bodies[self.cols[c][0]].joint
            if j.kind in ("revolute", "continuous") and not -np.pi <= q[qi[c]] < np.pi:
                old = q[qi[c]]
                q[qi[c]] = (old + np.pi) % (2 * np.pi) - np.pi
                if np.abs(self.residual(q)).max() > 1e-9:  # not periodic in this angle (e.g. behind a gear)
                    q[qi[c]] = old
        self._last = q[qi].copy()
        return q[qi]

    def jacobian(self, q):
        """G(q) (nc, ny): q̇_c = G ẏ."""
        if self.linear:
            return self.G0
        return self._explicit_at(q)[0]

    def bias(self, q, qd):
        """g(q, q̇) (nc,): q̈_c = G ÿ + g, with g = [0; K_d⁻¹ k], k = −K̇q̇ (seed 004 eq. 2–3)."""
        if self.linear:
            return np.zeros(self.n)
        Kd_inv = self._explicit_at(q)[1]
        kdot = np.concatenate(self._rows(lambda r, k: r.bias(k), q, qd))
        g = np.zeros(self.n)
        g[self.dependent_v] = Kd_inv @ (-kdot)
        return g

    def constraint_jacobian(self, q):
        """K(q) (m, nc) of the cluster's constraint rows (implicit form, seed 004 eq. 2)."""
        if not self.rows:
            return np.zeros((0, self.n))
        return self._K(q)

    def constraint_bias(self, q, qd):
        """K̇q̇ (m,) of the cluster's constraint rows."""
        if not self.rows:
            return np.zeros(0)
        return np.concatenate(self._rows(lambda r, k: r.bias(k), q, qd))
