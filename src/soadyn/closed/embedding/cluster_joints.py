"""Cluster joints: the constraints inside a body cluster in explicit form.

[Chignoli23, §II-B]: the spanning-tree coordinates q of a cluster obey implicit constraints
φ(q) = 0, K(q) q̇ = 0, K(q) q̈ = k(q, q̇) with K = ∂φ/∂q and k = −K̇q̇ (eq. 2; [Jain24]
calls k the acceleration bias 𝔘̊). Choosing independent velocity coordinates ẏ among
the cluster's gives the explicit form (eq. 3)

    q = γ(y),    q̇ = G(q) ẏ,    q̈ = G(q) ÿ + g(q, q̇),

with, after ordering q̇ = [q̇_i; q̇_d] (004 §VII: the explicit form "only depends on the
adoption of independent velocities"),

    G = [1; −K_d⁺ K_i],    g = [0; K_d⁺ k].

The constraint rows are the cut-joint method's ([Jain24]): a :class:`ClusterJoint`
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
  Tello's differentials), from a caller's guess or from the cluster's reference
  configuration — fixed when the model is built, regular with a margin, never an earlier
  call's solution (see :class:`ClusterJoint`'s ``reference``). Such a cluster has
  several assembly branches (a four-bar's open and crossed forms); the solve finds the
  one nearest its start, and a caller who knows the spanning configuration passes it
  instead ([Chignoli23, Alg. 1] evaluates G and g at the spanning state).

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
from scipy.optimize import least_squares

from ...core.configuration import difference, integrate, neutral, random_configuration
from ...core.constraints import ConstraintError
from ..assembly import gauss_newton
from ..constraint_set import ConstraintSet
from ..kinematics import evaluate_constraint_set

__all__ = ["ClusterJoint", "REFERENCE_MARGIN", "REFERENCE_FLOOR", "SINGULAR_TOL"]

#: a cluster's reference configuration must have σ_min/σ_max of ∂φ/∂q_d at least this
#: (well away from singular configurations such as the branch point of a four-bar)
REFERENCE_MARGIN = 1e-3
#: ∂φ/∂q_d counts as singular below this relative singular value (or above the inverse
#: of it in ‖K_d‖·‖K_d⁻¹‖ for square K_d): γ and G are then not defined
SINGULAR_TOL = 1e-9
#: random configurations of a cluster's joints from which its reference assembly is tried
#: when the starts near the guess lead Gauss–Newton to local minima of |φ| only
RANDOM_STARTS = 24
#: the best end points of those Gauss–Newton runs from which a trust-region least-squares
#: solve (scipy's ``least_squares``, method "trf") is tried when none of them closed: it
#: leaves points where the Gauss–Newton line search stalls (a rank-deficient J whose
#: least-norm step does not decrease |φ|)
TRUST_REGION_STARTS = 8
#: when no reference candidate reaches REFERENCE_MARGIN, the best one is taken if its
#: σ_min/σ_max is at least this: ∂φ/∂q_d is then regular by six orders of magnitude above
#: SINGULAR_TOL, and a candidate can be no better where every candidate is the same
#: configuration (a cluster without independent coordinates: a locked loop) or the
#: mechanism is badly conditioned everywhere near it
REFERENCE_FLOOR = 1e-6


def off_manifold_message(constraint, cluster, residual, tol):
    """The error text for a given spanning configuration that violates ``constraint``."""
    return (f"q: the spanning configuration is off the constraint manifold: constraint {constraint!r} "
            f"(cluster {cluster!r}) has residual max |φ| = {residual:.3g} > {tol:g} [m, rad]; assemble q "
            "first (soadyn.close_loops or soadyn.spanning_state)")


def _rank(A, tol=1e-9, row_scale=None):
    """The rank of A: singular values above ``tol`` times the largest (at least 1), or, with
    the rows' scales ``row_scale`` (``ConstraintState.row_scale``), above ``tol`` times the
    largest once the rows at rounding level of their scale (rows that constrain nothing:
    a loop placed where it adds no constraint) are set to zero."""
    if A.size == 0:
        return 0
    floor = 1.0
    if row_scale is not None:
        vacuous = np.linalg.norm(A, axis=1) <= tol * row_scale
        if vacuous.any():
            A = A.copy()
            A[vacuous] = 0.0
        floor = 0.0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > tol * max(floor, s[0]))) if s[0] > 0 else 0


class ClusterJoint:
    """The joint of one cluster: spanning coordinates, constraint rows and explicit form.

    Immutable after construction: every method is a function of its arguments.

    Attributes
    ----------
    bodies : tuple of body indices (ascending).
    v_index, q_index : model velocity / position indices of the cluster's spanning
        coordinates (joint order = body order); ``cols`` the (body, axis) of each velocity.
    constraint_set : the cluster's :class:`~soadyn.closed.constraint_set.ConstraintSet`
        (None for a rigid cluster); ``constraint_names`` its constraints.
    independent_v, dependent_v : positions of the independent / dependent velocities in
        the cluster's spanning velocity vector; independent_q, dependent_q : positions of
        the configuration entries in y / solved by γ in the spanning position vector.
    constrained : the cluster has constraints; linear : G is constant and g = 0.
    G0 : the constant G of a linear cluster (nc, ny), else None.
    reference : the cluster's spanning coordinates (nc_q,) at its reference configuration,
        the start of the position solve γ(y) when no guess is given; None for linear
        clusters. Chosen once, when the model is built, and never changed by a call:
        the cluster is assembled (least-norm Gauss–Newton on all its coordinates) from
        the ``assembly_guess`` positions of its joints when the model sets any (an
        optional joint attribute, (nq,) per joint, e.g. to choose an assembly branch),
        else from the neutral configuration moved by a fixed pseudo-random offset (seed:
        the cluster's velocity count); γ is then solved at the independent coordinates of
        the guess (or of fixed offsets from it) from there, and the result accepted only
        where ∂φ/∂q_d is regular with margin (σ_min/σ_max ≥ ``REFERENCE_MARGIN``), so
        that no reference is a singular configuration (a four-bar's branch point); when no
        candidate has that margin, the most regular one if it has ``REFERENCE_FLOOR`` (a
        locked loop, whose candidates are all one configuration, or a mechanism badly
        conditioned everywhere near its assembly).
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
                                               and not any(c.has_offset for c in couplings)
                                               and all(j.nq == j.nv for j in js))
        self.constraint_set = ConstraintSet(model, loops, couplings, constraints) if self.constrained else None
        self._neutral = neutral(model)
        self._neutral.flags.writeable = False
        self._periodic = ()  # dependent angles γ wraps to (−π, π], found with the reference
        self._G_ref = None  # G at the reference (vector-joint clusters): γ's first-order start
        self._select_independent(independent)

    # ------------------------------------------------------------------ constraint rows
    def _rows(self, x, v=None):
        """The cluster's constraint rows at a model-sized state whose coordinates outside the
        cluster are valid (a :class:`~soadyn.closed.kinematics.ConstraintState`)."""
        return evaluate_constraint_set(self.constraint_set, x, v, 0.0, v is not None)

    def _local(self, q, qd=None):
        """A model-sized state with the cluster's coordinates of (q, q̇), neutral (at rest)
        elsewhere: the constraints are relative, so the rest does not enter."""
        x = self._neutral.copy()
        x[self.q_index] = q[self.q_index]
        if qd is None:
            return x, None
        xd = np.zeros(self.model.nv)
        xd[self.v_index] = qd[self.v_index]
        return x, xd

    def _K(self, q):
        """K(q) (m, nc), the cluster's constraint rows at q."""
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
        n = self.n
        self.reference = None
        if not self.constrained:
            self._set_partition([])
            self.G0 = np.eye(n)
            return
        q, hinted = self._guess()
        rng = np.random.default_rng(n)
        # K where the constraints hold: away from closure, rows can depend on directions
        # that leave the constraints unchanged on the manifold (a coupler's spin about its axis)
        qa = q if self.linear else self._assemble(q, rng, exact_first=hinted)
        st = self._rows(*self._local(qa))
        K = st.G[:, self.v_index]
        nd = _rank(K, row_scale=st.row_scale)
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
            self.G0 = self._explicit(K, check=True)[0]
            return
        self.G0 = None
        self._periodic = self._periodic_angles(qa)
        start = qa  # an assembled configuration: the start of the reference solve below
        error = None
        best = None  # (margin, configuration) of the most regular candidate below REFERENCE_MARGIN
        # a regular assembled reference configuration, at the independent coordinates of the
        # guess or near them, else (a mechanism that does not close there) of the assembly
        attempts = [(q, a) for a in range(6)] + ([] if self.linear or qa is q else [(qa, a) for a in range(6)])
        for base, attempt in attempts:
            qp = self._perturbed(base, rng, 0.3 * attempt)  # attempt 0: the base itself
            try:
                qc = self._solve(qp[self.q_index][self.independent_q], qp, start)
                self._explicit(self._K(qc), check=True)
            except ConstraintError as e:
                error = e
                continue
            margin = self._regularity(self._K(qc))
            if margin >= REFERENCE_MARGIN:
                self._set_reference(qc)
                return
            if best is None or margin > best[0]:
                best = (margin, qc)
        if best is not None and best[0] >= REFERENCE_FLOOR:
            self._set_reference(best[1])
            return
        if best is not None:
            raise ConstraintError(
                f"{self.name}: no regular reference configuration: σ_min/σ_max of ∂φ/∂q_d (the dependent "
                f"columns of the constraints {self.constraint_names}) is {best[0]:.3g} at the best of "
                f"{len(attempts)} assembled candidates, below {REFERENCE_FLOOR:g} (wanted ≥ "
                f"{REFERENCE_MARGIN:g}): the mechanism is singular or nearly so wherever it was assembled")
        raise error

    def _set_reference(self, qc):
        """Keep the model configuration ``qc`` (assembled, regular) as the reference."""
        self.reference = qc[self.q_index].copy()
        self.reference.flags.writeable = False
        # the reference branch's tangent, for the first-order start of γ (vector joints only)
        js = [self.model.bodies[i].joint for i in self.bodies]
        if all(j.nq == j.nv for j in js) and not self._locked_v.size and len(self.independent_q) == self.ny:
            self._G_ref = self._explicit(self._K(qc))[0]
            self._G_ref.flags.writeable = False

    def _guess(self):
        """The start of the reference assembly (model-sized): the neutral configuration
        with the ``assembly_guess`` of the cluster's joints that have one, and whether any
        had one."""
        q = neutral(self.model)
        hinted = False
        for i in self.bodies:
            j = self.model.bodies[i].joint
            g = getattr(j, "assembly_guess", None)
            if g is not None:
                g = np.asarray(g, dtype=float).reshape(-1)
                if g.shape != (j.nq,):
                    raise ValueError(f"joint {j.name!r}: assembly_guess must have {j.nq} entries, got {g.size}")
                q[j.q_index:j.q_index + j.nq] = g
                hinted = True
        return q, hinted

    def _regularity(self, K):
        """σ_min / σ_max of ∂φ/∂q_d (K's dependent columns): 0 at a singular configuration."""
        nd = len(self.dependent_v)
        if not nd:
            return 1.0
        sv = np.linalg.svd(K[:, self.dependent_v], compute_uv=False)
        return float(sv[nd - 1] / sv[0]) if sv[0] > 0 else 0.0

    def _periodic_angles(self, q):
        """The dependent revolute angles (model q indices) in which the constraints are
        2π-periodic (not those behind a gear): γ wraps them to (−π, π]."""
        out = []
        base = self.residual(q)
        for c in self.dependent_v:
            j = self._joint_of_column(c)
            if j.kind in ("revolute", "continuous"):
                x = q.copy()
                x[j.q_index] += 2 * np.pi
                if np.abs(self.residual(x) - base).max(initial=0.0) < 1e-9:
                    out.append(j.q_index)
        return tuple(out)

    def _assemble(self, q, rng, exact_first=False):
        """A configuration near ``q`` (perturbed, to avoid singular ones such as stretched
        loops; from ``q`` itself first when ``exact_first``: a guess the model gives) where
        the cluster's constraints hold, every coordinate free (least-norm Gauss–Newton
        steps)."""
        cols = self.v_index

        def rows(x):
            st = self._rows(x)
            return st.residual, st.G[:, cols], None

        def move(x, step, alpha):
            v = np.zeros(self.model.nv)
            v[cols] = step
            return integrate(self.model, x, v, alpha)

        ends = []  # (max |φ|, attempt, x, φ) where Gauss–Newton ended without closing
        for attempt in range(6 + RANDOM_STARTS):
            if attempt < 6:
                x0 = q if (exact_first and attempt == 0) else self._perturbed(q, rng, 0.5 + 0.3 * attempt)
            else:  # Gauss–Newton found only local minima of |φ| near q: anywhere in the joints' ranges
                x0 = q.copy()
                x0[self.q_index] = random_configuration(self.model, rng)[self.q_index]
            x, r, _, failure = gauss_newton(rows, x0, move, tol=1e-12, max_iter=100)
            if failure is None or np.abs(r).max() < 1e-9:
                return x
            if np.all(np.isfinite(r)):
                ends.append((float(np.abs(r).max()), attempt, x, r))
        ends.sort(key=lambda e: e[:2])
        for _, _, x0, _ in ends[:TRUST_REGION_STARTS]:  # where the line search stalled: a trust region
            x, r = self._trust_region_assembly(x0, cols)
            if np.abs(r).max() < 1e-9:
                return x
            ends.append((float(np.abs(r).max()), len(ends), x, r))
        best = min(ends, key=lambda e: e[:2], default=None)
        best = None if best is None else (best[2], best[3])
        worst = "" if best is None else self._worst_constraint(best[1])
        origin = "the joints' assembly_guess" if exact_first else "the neutral configuration"
        raise ConstraintError(
            f"{self.name}: no configuration where the constraints {self.constraint_names} hold was found, from "
            f"{origin} moved by up to 2 "
            f"[rad, m] or from {RANDOM_STARTS} random configurations (Gauss–Newton, then a trust region from "
            f"the {TRUST_REGION_STARTS} closest){worst}; constraint embedding needs one "
            "assembled configuration of each cluster (to choose its independent coordinates and to start "
            "γ(y)): give the cluster's joints an assembly_guess near one, or use a cut-joint method "
            "(method='direct', 'augmented' or 'projection'), which need none")

    def _trust_region_assembly(self, x0, cols):
        """(x, φ(x)): a trust-region least-squares solve of φ = 0 (scipy's ``least_squares``,
        "trf", finite-difference Jacobian) in the chart x0 ⊕ δ of the cluster's coordinates
        (``integrate``), from δ = 0."""
        model = self.model

        def at(d):
            v = np.zeros(model.nv)
            v[cols] = d
            return integrate(model, x0, v, 1.0)

        with np.errstate(all="ignore"):
            sol = least_squares(lambda d: self._rows(at(d)).residual, np.zeros(len(cols)), method="trf",
                                xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=200 * (len(cols) + 1))
        x = at(sol.x)
        return x, self._rows(x).residual

    def _worst_constraint(self, r):
        """", smallest residual max |φ| = … on <constraint>" for the residual vector ``r``."""
        k = int(np.argmax(np.abs(r)))
        block = next(b for b in self.constraint_set.blocks if b.rows.start <= k < b.rows.stop)
        return f" (smallest residual max |φ| = {abs(r[k]):.3g} [m, rad], on {block.kind} {block.name!r})"

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

    def _explicit(self, K, check=False):
        """(G, K_d⁺): G = [1; −K_d⁺K_i] (scattered to the cluster's coordinate order) and the
        K_d⁺ that gives g = [0; K_d⁺ k]. A square K_d is inverted directly; redundant rows
        (planar loops closed by spatial joints) go through the pseudo-inverse of one SVD,
        whose singular values also give the rank. ``check`` (setup) also verifies that
        K_d⁺ solves the rows exactly."""
        Kd, Ki = K[:, self.dependent_v], K[:, self.independent_v]
        nd = len(self.dependent_v)
        Kd_inv = None
        if Kd.shape[0] == nd and not check:
            try:
                Kd_inv = np.linalg.inv(Kd)
            except np.linalg.LinAlgError:
                pass
            else:  # ‖K_d‖·‖K_d⁻¹‖ (max norms) bounds the condition number: near-singular → SVD below
                if np.abs(Kd).max(initial=0.0) * np.abs(Kd_inv).max(initial=0.0) > 1.0 / SINGULAR_TOL:
                    Kd_inv = None
        if Kd_inv is None and nd == 0:  # nothing dependent (the rows constrain nothing): G = 1
            Kd_inv = np.zeros((0, Kd.shape[0]))
        if Kd_inv is None:
            U, sv, Vt, info = lapack.dgesdd(Kd, full_matrices=0)  # LAPACK directly: small matrices
            if info:
                raise np.linalg.LinAlgError(f"{self.name}: SVD of ∂φ/∂q_d did not converge (LAPACK info {info})")
            rank = int(np.sum(sv > SINGULAR_TOL * max(1.0, sv[0]))) if sv.size else 0
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
        return G, Kd_inv

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

    def constraint_violation(self, q, y=None):
        """[(constraint name, max |φ| [m, rad])] of the cluster's constraints at the model
        configuration ``q`` (nq,). A linear cluster (gears, belts: φ linear, no offsets) is
        measured by max |q_c − G y_c| for its independent coordinates ``y`` (nyq,) when
        given, as one entry named after all its constraints."""
        if not self.constrained:
            return []
        if self.linear:
            yc = q[self._y_q_model] if y is None else y
            r = np.abs(q[self.q_index] - self.G0 @ yc).max(initial=0.0)
            return [(" + ".join(self.constraint_names), float(r))]
        res = self.residual(q)
        return [(b.name, float(np.abs(res[b.rows]).max(initial=0.0))) for b in self.constraint_set.blocks]

    def _step(self, x, step, alpha):
        if self._moved_q is not None:
            out = x.copy()
            out[self._moved_q] += alpha * step
            return out
        full = np.zeros(self.model.nv)
        full[self._moved_v] = step
        return integrate(self.model, x, full, alpha)

    def _solve_rows(self, x, anchor):
        """Residual and Jacobian for γ: the constraint rows and, for partly independent
        joints, lock rows holding the independent components of their displacement from
        the configuration in y (``anchor``) at zero: γ(y) then lies on the chart
        q_y ⊕ (dependent directions) and is a function of y (the Jacobian of the lock rows
        by central differences)."""
        st = self._rows(x)
        r, J = st.residual, st.G[:, self._moved_v]
        if self._locked_v.size:
            model, h = self.model, 1e-7
            lock = difference(model, anchor, x)[self._locked_v]
            Jl = np.zeros((lock.size, self._moved_v.size))
            e = np.zeros(model.nv)
            for k in self._locked_in_moved_joints:
                e[self._moved_v[k]] = h
                Jl[:, k] = (difference(model, anchor, integrate(model, x, e, 1.0))
                            - difference(model, anchor, integrate(model, x, e, -1.0)))[self._locked_v] / (2 * h)
                e[self._moved_v[k]] = 0.0
            r, J = np.concatenate([r, lock]), np.vstack([J, Jl])
        return r, J, None

    def _solve(self, y, q, start, tol=1e-12, max_iter=50, restarts=True):
        """The model configuration with the cluster's coordinates γ(y) (the rest of ``q``
        kept): Gauss–Newton on φ(q) = 0 for the dependent coordinates
        (:func:`~soadyn.closed.assembly.gauss_newton`), started from ``start``'s dependent
        coordinates, then from perturbed starts (a start at a singular, e.g. stretched,
        configuration; not with ``restarts=False``). The assembly branch nearest the
        start is found; the dependent angles are wrapped to (−π, π]."""
        x0 = self._local(q)[0]
        x0[self._y_q_model] = y
        anchor = x0.copy()
        if start is not None:
            x0[self._moved_q_model] = start[self._moved_q_model]
        rng = np.random.default_rng(0)
        r = None
        for attempt in range(10 if restarts else 1):
            x = x0
            if attempt > 0:  # perturbed restarts
                v = np.zeros(self.model.nv)
                v[self._moved_v] = rng.uniform(-1.0, 1.0, len(self._moved_v))
                v[self._locked_v] = 0.0
                x = integrate(self.model, x0, v, 1.0)
            x, r, _, failure = gauss_newton(lambda z: self._solve_rows(z, anchor), x, self._step, tol=tol,
                                            max_iter=max_iter)
            if failure is None or (np.all(np.isfinite(r)) and np.abs(r).max() < 1e-9):
                out = q.copy()
                out[self.q_index] = x[self.q_index]
                for k in self._periodic:  # angles wrapped to (−π, π] (as the kernels: those there kept)
                    if not -np.pi < out[k] <= np.pi:
                        out[k] = np.pi - (np.pi - out[k]) % (2 * np.pi)
                return out
        raise ConstraintError(f"{self.name}: cannot solve the constraints {self.constraint_names} for the "
                              f"dependent coordinates at independent coordinates y = {np.asarray(y).tolist()} "
                              f"(residual {np.abs(r).max():.3g}); the mechanism may not assemble there")

    def solve_positions(self, y, q, q_guess=None):
        """γ(y): the cluster's spanning coordinates (nc_q,) for independent coordinates
        ``y``, written into ``q`` (model-sized, modified in place) and returned.

        Linear clusters: q_c = G y. Others: Gauss–Newton (:meth:`_solve`) from
        ``q_guess``'s cluster coordinates (model-sized) when given, else from the
        reference configuration q_ref moved to y along its branch to first order,
        q_c ← q_ref + G(q_ref)(y − y_ref) (clusters of vector joints: a parallelogram's
        branch is followed exactly), then, should that fail, from q_ref itself. The
        result depends on (y, q_guess) only. Raises ConstraintError when no start
        converges; the explicit form raises it at a singular solution."""
        qi = self.q_index
        if not self.constrained:
            q[qi] = y
            return q[qi]
        if self.linear:
            q[qi] = self.G0 @ y
            return q[qi]
        start = self._local(q)[0]
        if q_guess is not None:
            start[qi] = q_guess[qi]
            q[qi] = self._solve(y, q, start)[qi]
            return q[qi]
        if self._G_ref is not None:
            start[qi] = self.reference + self._G_ref @ (np.asarray(y) - self.reference[self.independent_q])
            try:
                q[qi] = self._solve(y, q, start, restarts=False)[qi]
                return q[qi]
            except ConstraintError:
                pass
        start[qi] = self.reference
        q[qi] = self._solve(y, q, start)[qi]
        return q[qi]

    def explicit_form(self, q, qd=None, tol=None):
        """(G (nc, ny), g (nc,) or None) at (q, q̇): q̇_c = G ẏ, q̈_c = G ÿ + g
        [Chignoli23, eq. 3], from one evaluation of the cluster's constraint rows.
        ``tol`` (without q̇): check q on the constraint manifold (:meth:`checked_K`)."""
        if self.linear:
            return self.G0, (None if qd is None else np.zeros(self.n))
        if qd is None:
            return self._explicit(self.checked_K(q, tol))[0], None
        st = self._rows(*self._local(q, qd))
        return self.explicit_form_of(st.G[:, self.v_index], st.acceleration_bias)

    def checked_K(self, q, tol=None):
        """K(q) (m, nc) of the cluster's constraint rows; with ``tol`` [m, rad], the same
        evaluation's residual checked first: ConstraintError naming the constraint when
        max |φ(q)| > tol on any of them."""
        if tol is None:
            return self._K(q)
        st = self._rows(*self._local(q))
        for b in self.constraint_set.blocks:
            r = float(np.abs(st.residual[b.rows]).max(initial=0.0))
            if not r <= tol:
                raise ConstraintError(off_manifold_message(b.name, self.name, r, tol))
        return st.G[:, self.v_index]

    def explicit_form_at(self, q, yd, tol=None):
        """(G, g, q̇_c) at q for independent velocities ẏ: G at q, q̇_c = G ẏ, then g at
        (q, q̇) — the rows at q serve both (K_d⁺ is formed once). ``tol``: check q on the
        constraint manifold first (:meth:`checked_K`)."""
        G, Kd_inv = self._explicit(self.checked_K(q, tol))
        qd_c = G @ yd
        x, _ = self._local(q)
        xd = np.zeros(self.model.nv)
        xd[self.v_index] = qd_c
        g = np.zeros(self.n)
        g[self.dependent_v] = Kd_inv @ self._rows(x, xd).acceleration_bias
        return G, g, qd_c

    def explicit_form_of(self, K, k):
        """(G, g) from the cluster's constraint rows K (m, nc) and their acceleration bias
        k = −K̇q̇ (m,) or None: G = [1; −K_d⁺K_i], g = [0; K_d⁺ k]."""
        G, Kd_inv = self._explicit(K)
        if k is None:
            return G, None
        g = np.zeros(self.n)
        g[self.dependent_v] = Kd_inv @ k
        return G, g

    def jacobian(self, q):
        """G(q) (nc, ny): q̇_c = G ẏ."""
        return self.explicit_form(q)[0]

    def bias(self, q, qd):
        """g(q, q̇) (nc,): q̈_c = G ÿ + g, with g = [0; K_d⁺ k], k = −K̇q̇ [Chignoli23, eq. 2–3]."""
        return self.explicit_form(q, qd)[1]

    def constraint_jacobian(self, q):
        """K(q) (m, nc) of the cluster's constraint rows (implicit form, [Chignoli23, eq. 2])."""
        if not self.constrained:
            return np.zeros((0, self.n))
        return self._K(q)

    def constraint_acceleration_bias(self, q, qd):
        """k = −K̇q̇ (m,): the cluster's rows read K q̈ = k ([Jain24]'s 𝔘̊)."""
        if not self.constrained:
            return np.zeros(0)
        return self._rows(*self._local(q, qd)).acceleration_bias
