"""Cluster joints: the constraints inside a body cluster in explicit form.

Seed 004 §II-B: the spanning-tree coordinates q of a cluster obey implicit constraints
φ(q) = 0, K(q) q̇ = 0, K(q) q̈ = k(q, q̇) with K = ∂φ/∂q and k = −K̇q̇ (eq. 2; seed 001
calls k the acceleration bias 𝔘̊). Choosing independent velocity coordinates ẏ among
the cluster's gives the explicit form (eq. 3)

    q = γ(y),    q̇ = G(q) ẏ,    q̈ = G(q) ÿ + g(q, q̇),

with, after ordering q̇ = [q̇_i; q̇_d] (004 §VII: the explicit form "only depends on the
adoption of independent velocities"),

    G = [1; −K_d⁺ K_i],    g = [0; K_d⁺ k].

The constraint rows are the cut-joint method's (seed 001): a :class:`ClusterJoint`
evaluates the loop joints, couplings and holonomic user constraints acting inside its
cluster as a :class:`~soadyn.closed.constraints.ConstraintSet` of its own (loop rows from
the compiled kernel of :mod:`soadyn.closed.kinematics`) and keeps the columns of its own
coordinates: the constraints are relative, so the coordinates outside the cluster do not
enter. K_d⁺ is the pseudo-inverse, since redundant rows (a planar loop closed by a spatial
revolute joint) are normal.

* Couplings alone (gears and belts) with zero offsets on 1-dof joints: G is constant,
  g = 0 and γ(y) = G y (``linear``) — the geared rotor and the belt-driven revolute pair.
* Otherwise γ(y) solves φ(q) = 0 for the dependent coordinates with the Gauss–Newton
  iteration of :func:`soadyn.closed.assembly.gauss_newton` (four-bars, general loops,
  Tello's differentials).

Independent coordinates: the joints marked ``independent=False`` (URDF+) are dependent,
or, when none is marked, a pivoted QR of K picks the dependent columns. Where a
multi-dof joint is marked but the constraints leave some of its freedom (the RSSR
coupler spinning about its own axis), the pivoted QR picks its dependent velocity
directions (at an assembled configuration) and the rest stay independent. y holds the
configuration of every joint with an independent velocity — all of it for such a partly
independent joint, and γ then solves φ(q) = 0 together with lock rows that hold the
independent components of the joint's displacement from that configuration (the log map
``soadyn.difference``) at zero, so that γ(y) is a function of y; ẏ holds the independent
velocities, so for such joints ẏ is not the time derivative of y.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack, qr

from ..joints import difference, integrate
from ..model import neutral
from .assembly import gauss_newton
from .constraints import ConstraintError, ConstraintSet
from .kinematics import evaluate_constraint_set

__all__ = ["ClusterJoint"]


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
        coordinates (joint order = body order); ``cols`` the (body, axis) of each velocity.
    constraint_set : the cluster's :class:`~soadyn.closed.constraints.ConstraintSet`
        (None for a rigid cluster); ``constraint_names`` its constraints.
    independent_v, dependent_v : positions of the independent / dependent velocities in
        the cluster's spanning velocity vector; independent_q, dependent_q : positions of
        the configuration entries in y / solved by γ in the spanning position vector.
    constrained : the cluster has constraints; linear : G is constant and g = 0.
    G0 : the constant G of a linear cluster (nc, ny), else None.
    """

    def __init__(self, model, bodies, parent_body, couplings=(), loops=(), constraints=(), independent=None,
                 name="cluster"):
        self.model = model
        self.name = name
        self.bodies = tuple(sorted(bodies))
        self.parent_body = parent_body
        js = [model.bodies[i].joint for i in self.bodies]
        self.v_index = np.array([j.v_index + k for j in js for k in range(j.nv)], dtype=np.int64)
        self.q_index = np.array([j.q_index + k for j in js for k in range(j.nq)], dtype=np.int64)
        self.cols = [(i, k) for i, j in zip(self.bodies, js) for k in range(j.nv)]
        self.n = len(self.cols)
        loops, couplings, constraints = list(loops), list(couplings), list(constraints)
        self.constraint_names = [c.name for c in loops + couplings + constraints]
        self.constrained = bool(self.constraint_names)
        self.has_loops = bool(loops)
        # rigid clusters, and couplings alone without offsets on vector joints
        self.linear = not self.constrained or (not loops and not constraints
                                               and all(c.offset == 0.0 for c in couplings)
                                               and all(j.nq == j.nv for j in js))
        self.constraint_set = ConstraintSet(model, loops, couplings, constraints) if self.constrained else None
        self._q = neutral(model)  # private state: the cluster's coordinates, neutral elsewhere
        self._v = np.zeros(model.nv)
        self._last = None
        self._solved = None  # (coordinates, K) of the last position solve
        self._rows_in = None
        self._select_independent(independent)

    # ------------------------------------------------------------------ constraint rows
    def _rows(self, x, v=None):
        """The cluster's constraint rows at a model-sized state whose coordinates outside the
        cluster are valid (a :class:`~soadyn.closed.kinematics.ConstraintState`)."""
        return evaluate_constraint_set(self.constraint_set, x, v, 0.0, v is not None)

    def _local(self, q, qd=None):
        """The private state with the cluster's coordinates of (q, q̇)."""
        self._q[self.q_index] = q[self.q_index]
        if qd is None:
            return self._q, None
        self._v[self.v_index] = qd[self.v_index]
        return self._q, self._v

    def _K(self, q):
        """K(q) (m, nc), reusing the rows of the last position solve at the same coordinates."""
        cache = self._solved
        if cache is not None and np.array_equal(cache[0], q[self.q_index]):
            return cache[1]
        return self._rows(*self._local(q)).G[:, self.v_index]

    def _perturbed(self, q, rng, scale):
        """q moved by a uniform random velocity in ±scale on the cluster's coordinates."""
        v = np.zeros(self.model.nv)
        v[self.v_index] = rng.uniform(-scale, scale, self.n)
        return integrate(self.model, q, v, 1.0)

    # ------------------------------------------------------------------ setup
    def _joint_of_column(self, c):
        return self.model.bodies[self.cols[c][0]].joint

    def _select_independent(self, independent):
        model, n = self.model, self.n
        if not self.constrained:
            self._set_partition([])
            self.G0 = np.eye(n)
            self._qref = None
            return
        q = neutral(model)
        rng = np.random.default_rng(n)
        # K where the constraints hold: away from closure, rows can depend on directions
        # that leave the constraints unchanged on the manifold (a coupler's spin about its axis)
        K = self._K(q if self.linear else self._assemble(q, rng))
        nd = _rank(K)
        names = [self._joint_of_column(c).name for c in range(n)]
        if independent is not None:
            unknown = set(independent) - set(names)
            if unknown:
                raise ConstraintError(f"{self.name}: independent joints {sorted(unknown)} are not joints of "
                                      f"this cluster ({list(dict.fromkeys(names))})")
            dep = [c for c in range(n) if names[c] not in set(independent)]
        else:
            dep = [c for c in range(n) if not getattr(self._joint_of_column(c), "independent", True)]
            if not dep:  # nothing marked: pick the dependent columns by pivoted QR of K
                dep = sorted(int(c) for c in qr(K, pivoting=True)[2][:nd])
            elif len(dep) > nd:
                dep = self._partly_dependent(dep, K, nd)
        if len(dep) != nd:
            raise ConstraintError(
                f"{self.name}: the constraints {self.constraint_names} remove {nd} degrees of freedom but "
                f"{len(dep)} coordinates are marked dependent "
                f"({list(dict.fromkeys(names[c] for c in dep))}); mark exactly {nd} joints "
                "independent=False or pass the independent joints explicitly")
        self._set_partition(dep)
        if self.linear:
            self.G0 = self._explicit(K)
            self._qref = None
            return
        self.G0 = None
        self._qref = self._solved[0]  # a start for the reference solve below
        self._solved = None
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

    def _assemble(self, q, rng):
        """A configuration near ``q`` (perturbed, to avoid singular ones such as stretched
        loops) where the cluster's constraints hold, every coordinate free (least-norm
        Gauss–Newton steps); its K is kept in ``_solved``."""
        cols = self.v_index

        def rows(x):
            st = self._rows(x)
            return st.residual, st.G[:, cols], st.G

        def move(x, step, alpha):
            v = np.zeros(self.model.nv)
            v[cols] = step
            return integrate(self.model, x, v, alpha)

        r = None
        for attempt in range(6):
            x, r, G, failure = gauss_newton(rows, self._perturbed(q, rng, 0.5 + 0.3 * attempt), move, tol=1e-12,
                                            max_iter=100)
            if failure is None or np.abs(r).max() < 1e-9:
                self._solved = (x[self.q_index].copy(), G[:, cols])
                return x
        raise ConstraintError(f"{self.name}: cannot solve the constraints {self.constraint_names} near any "
                              f"tried configuration (residual {np.abs(r).max():.3g}); the mechanism may not "
                              "assemble")

    def _partly_dependent(self, marked, K, nd):
        """The marked columns of 1-dof joints and, among those of multi-dof joints, the ones
        a pivoted QR of K picks (after removing the 1-dof columns' span) to make up ``nd``."""
        forced = [c for c in marked if self._joint_of_column(c).nv == 1]
        free = [c for c in marked if self._joint_of_column(c).nv > 1]
        if not free or len(forced) > nd:
            return marked
        Kf = K[:, forced]
        Kc = K[:, free]
        if forced:
            U = np.linalg.svd(Kf, full_matrices=False)[0][:, :_rank(Kf)]
            Kc = Kc - U @ (U.T @ Kc)
        piv = qr(Kc, pivoting=True)[2]
        return sorted(forced + [free[p] for p in piv[:nd - len(forced)]])

    def _set_partition(self, dep):
        """Velocity and position partitions for the dependent velocity columns ``dep``."""
        model = self.model
        self.dependent_v = np.array(sorted(dep), dtype=np.int64)
        self.independent_v = np.array([c for c in range(self.n) if c not in set(dep)], dtype=np.int64)
        free_bodies = {self.cols[c][0] for c in self.independent_v}
        qpos, iq, dq = 0, [], []
        for i in self.bodies:
            nq = model.bodies[i].joint.nq
            (iq if i in free_bodies else dq).extend(range(qpos, qpos + nq))
            qpos += nq
        self.independent_q = np.array(iq, dtype=np.int64)
        self.dependent_q = np.array(dq, dtype=np.int64)
        # dependent revolute angles, wrapped to [−π, π) unless found not 2π-periodic (behind a gear)
        self._angles = [self._joint_of_column(c).q_index for c in self.dependent_v
                        if self._joint_of_column(c).kind in ("revolute", "continuous")]
        self._G_identity = np.zeros((self.n, len(self.independent_v)))  # G's rows at the independent coordinates
        self._G_identity[self.independent_v] = np.eye(len(self.independent_v))
        # γ moves the dependent velocities and every velocity of a partly independent joint,
        # whose independent components are held by lock rows (see _solve_rows)
        partly = {self.cols[c][0] for c in self.dependent_v} & free_bodies
        locked = [c for c in self.independent_v if self.cols[c][0] in partly]
        moved = sorted(set(self.dependent_v.tolist()) | set(locked))
        self._moved_v = self.v_index[moved]
        self._locked_v = self.v_index[locked]
        # the moved directions of partly independent joints (the only ones the lock rows see)
        self._locked_in_moved_joints = [k for k, c in enumerate(moved) if self.cols[c][0] in partly]
        # configuration entries of the joints γ moves (restarts copy them from earlier solutions)
        moved_bodies = {self.cols[c][0] for c in moved}
        qpos, self._moved_q_pos = 0, []
        for i in self.bodies:
            nq = model.bodies[i].joint.nq
            if i in moved_bodies:
                self._moved_q_pos.extend(range(qpos, qpos + nq))
            qpos += nq
        self._moved_q_pos = np.array(self._moved_q_pos, dtype=np.int64)
        self._moved_q_model = self.q_index[self._moved_q_pos]
        self._y_q_model = self.q_index[self.independent_q]
        # dependent velocities of vector joints move their own coordinates (integrate adds v·dt)
        self._moved_q = None
        if not locked and all(self._joint_of_column(c).nq == self._joint_of_column(c).nv for c in moved):
            self._moved_q = np.array([model.bodies[self.cols[c][0]].joint.q_index + self.cols[c][1] for c in moved],
                                     dtype=np.int64)

    def _explicit(self, K, check=True):
        """G = [1; −K_d⁺K_i] (scattered to the cluster's coordinate order); keeps K_d⁺ for g.
        A square K_d is inverted directly; redundant rows (planar loops closed by spatial
        joints) go through the pseudo-inverse of one SVD, whose singular values also give
        the rank. ``check`` (setup) also verifies that K_d⁺ solves the rows exactly."""
        Kd, Ki = K[:, self.dependent_v], K[:, self.independent_v]
        nd = len(self.dependent_v)
        Kd_inv = None
        if Kd.shape[0] == nd and not check:
            try:
                Kd_inv = np.linalg.inv(Kd)
            except np.linalg.LinAlgError:
                pass
        if Kd_inv is None:
            U, sv, Vt, info = lapack.dgesdd(Kd, full_matrices=0)  # LAPACK directly: small matrices
            if info:
                raise np.linalg.LinAlgError(f"{self.name}: SVD of ∂φ/∂q_d did not converge (LAPACK info {info})")
            rank = int(np.sum(sv > 1e-9 * max(1.0, sv[0]))) if sv.size else 0
            if rank < nd:
                names = list(dict.fromkeys(self._joint_of_column(c).name for c in self.dependent_v))
                raise ConstraintError(f"{self.name}: the dependent coordinates {names} cannot be solved from the "
                                      f"constraints {self.constraint_names}: ∂φ/∂q_d has rank {rank} < {nd} "
                                      "(a singular configuration or a poor choice of independent coordinates)")
            Kd_inv = (Vt.T / sv) @ U.T
        Gd = -(Kd_inv @ Ki)
        if check and np.abs(Kd @ Gd + Ki).max(initial=0.0) > 1e-8 * max(1.0, np.abs(Ki).max(initial=0.0)):
            raise ConstraintError(f"{self.name}: the independent coordinates are not free: the constraints "
                                  f"{self.constraint_names} also restrict them")
        G = self._G_identity.copy()
        G[self.dependent_v] = Gd
        self._Kd_inv = Kd_inv
        return G

    # ------------------------------------------------------------------ explicit form
    @property
    def ny(self):
        return len(self.independent_v)

    @property
    def nyq(self):
        return len(self.independent_q)

    def residual(self, q):
        """φ(q) of all the cluster's constraints at the model configuration ``q``."""
        if not self.constrained:
            return np.zeros(0)
        return self._rows(*self._local(q)).residual

    def _step(self, x, step, alpha):
        if self._moved_q is not None:
            out = x.copy()
            out[self._moved_q] += alpha * step
            return out
        full = np.zeros(self.model.nv)
        full[self._moved_v] = step
        return integrate(self.model, x, full, alpha)

    def _solve_rows(self, x):
        """Residual and Jacobian for γ: the constraint rows and, for partly independent
        joints, lock rows holding the independent components of their displacement from
        the configuration in y (``_anchor``) at zero: γ(y) then lies on the chart
        q_y ⊕ (dependent directions) and is a function of y (the Jacobian of the lock
        rows by central differences)."""
        st = self._rows(x)
        r, J = st.residual, st.G[:, self._moved_v]
        if self._locked_v.size:
            model, h = self.model, 1e-7
            lock = difference(model, self._anchor, x)[self._locked_v]
            Jl = np.zeros((lock.size, self._moved_v.size))
            e = np.zeros(model.nv)
            for k in self._locked_in_moved_joints:
                e[self._moved_v[k]] = h
                Jl[:, k] = (difference(model, self._anchor, integrate(model, x, e, 1.0))
                            - difference(model, self._anchor, integrate(model, x, e, -1.0)))[self._locked_v] / (2 * h)
                e[self._moved_v[k]] = 0.0
            r, J = np.concatenate([r, lock]), np.vstack([J, Jl])
        return r, J, st.G

    def solve_positions(self, y, q, tol=1e-12, max_iter=50):
        """γ(y): write the cluster's spanning coordinates into ``q`` (model-sized, modified
        in place) for independent coordinates ``y``; returns the cluster's spanning vector.

        Linear clusters: q_c = G y. Others: Gauss–Newton on φ(q) = 0 for the dependent
        coordinates (:func:`~soadyn.closed.assembly.gauss_newton`), started from the
        previous solution, the reference configuration, the values in ``q``, then
        perturbed starts (the assembly branch nearest those starts is found).
        """
        qi = self.q_index
        if not self.constrained:
            q[qi] = y
            return q[qi]
        if self.linear:
            q[qi] = self.G0 @ y
            return q[qi]
        start = self._q.copy()
        start[qi] = q[qi]
        start[self._y_q_model] = y
        if self._locked_v.size:
            self._anchor = start.copy()
        dq, dq_local = self._moved_q_model, self._moved_q_pos
        rng = None
        r = None
        for attempt in range(11):
            x = start.copy()
            if attempt == 0 and self._last is not None:
                x[dq] = self._last[dq_local]
            elif attempt == 1 and self._qref is not None:
                x[dq] = self._qref[dq_local]
            elif attempt > 2:  # perturbed restarts for starts at a singular (e.g. stretched) configuration
                rng = np.random.default_rng(attempt) if rng is None else rng
                v = np.zeros(self.model.nv)
                v[self._moved_v] = rng.uniform(-1.0, 1.0, len(self._moved_v))
                v[self._locked_v] = 0.0
                x = integrate(self.model, x, v, 1.0)
            elif attempt != 2:
                continue
            x, r, G, failure = gauss_newton(self._solve_rows, x, self._step, tol=tol, max_iter=max_iter)
            if failure is None or (np.all(np.isfinite(r)) and np.abs(r).max() < 1e-9):
                return self._accept(x, q, G[:, self.v_index])
        raise ConstraintError(f"{self.name}: cannot solve the constraints {self.constraint_names} for the "
                              f"dependent coordinates at independent coordinates y = {np.asarray(y).tolist()} "
                              f"(residual {np.abs(r).max():.3g}); the mechanism may not assemble there")

    def _accept(self, x, q, K):
        """Keep a solution (and K there), dependent angles wrapped to [−π, π) where the
        constraints are periodic in them."""
        qi = self.q_index
        for k in self._angles:
            if not -np.pi <= x[k] < np.pi:
                old = x[k]
                x[k] = (old + np.pi) % (2 * np.pi) - np.pi
                if np.abs(self._rows(x).residual).max() > 1e-9:  # not periodic in this angle (e.g. behind a gear)
                    x[k] = old
                    self._angles.remove(k)
        q[qi] = x[qi]
        self._last = x[qi].copy()
        self._solved = (self._last, K)  # K is 2π-periodic in the wrapped angles too
        return q[qi]

    def explicit_form(self, q, qd=None):
        """(G (nc, ny), g (nc,) or None) at (q, q̇) from one evaluation of the cluster's
        constraint rows: q̇_c = G ẏ, q̈_c = G ÿ + g (seed 004 eq. 3)."""
        if self.linear:
            return self.G0, (None if qd is None else np.zeros(self.n))
        if qd is None:
            return self._explicit(self._K(q), check=False), None
        st = self._rows(*self._local(q, qd))
        return self.explicit_form_of(st.G[:, self.v_index], st.acceleration_bias)

    def bias_given_jacobian(self, q, qd):
        """g at (q, q̇) right after :meth:`jacobian` at the same q (its K_d⁺ is reused: one
        evaluation of the rows for k)."""
        g = np.zeros(self.n)
        g[self.dependent_v] = self._Kd_inv @ self._rows(*self._local(q, qd)).acceleration_bias
        return g

    def explicit_form_of(self, K, k):
        """(G, g) from the cluster's constraint rows K (m, nc) and their acceleration bias
        k = −K̇q̇ (m,) or None: G = [1; −K_d⁺K_i], g = [0; K_d⁺ k]."""
        G = self._explicit(K, check=False)
        if k is None:
            return G, None
        g = np.zeros(self.n)
        g[self.dependent_v] = self._Kd_inv @ k
        return G, g

    def rows_in(self, constraints):
        """Indices of this cluster's constraint rows in a model-wide
        :class:`~soadyn.closed.constraints.ConstraintSet` (the cut-joint evaluation)."""
        cache = self._rows_in
        if cache is None or cache[0] is not constraints:
            mine = {id(b.source) for b in self.constraint_set.blocks}
            rows = [np.arange(b.rows.start, b.rows.stop) for b in constraints.blocks if id(b.source) in mine]
            cache = self._rows_in = (constraints, np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64))
        return cache[1]

    def jacobian(self, q):
        """G(q) (nc, ny): q̇_c = G ẏ."""
        return self.explicit_form(q)[0]

    def bias(self, q, qd):
        """g(q, q̇) (nc,): q̈_c = G ÿ + g, with g = [0; K_d⁺ k], k = −K̇q̇ (seed 004 eq. 2–3)."""
        return self.explicit_form(q, qd)[1]

    def constraint_jacobian(self, q):
        """K(q) (m, nc) of the cluster's constraint rows (implicit form, seed 004 eq. 2)."""
        if not self.constrained:
            return np.zeros((0, self.n))
        return self._K(q)

    def constraint_acceleration_bias(self, q, qd):
        """k = −K̇q̇ (m,): the cluster's rows read K q̈ = k (seed 001's 𝔘̊)."""
        if not self.constrained:
            return np.zeros(0)
        return self._rows(*self._local(q, qd)).acceleration_bias
