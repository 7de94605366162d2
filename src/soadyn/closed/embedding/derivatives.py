"""First derivatives of C-RNEA and C-ABA with respect to the independent state (y, ẏ)
and τ_ind, for explicit clusters (rigid joints, rotors, gears, belts) and implicit ones
(loops, differentials). The derivation, with the equation numbers cited here, is
``docs/cluster_derivatives.md``.

With q = γ(y), q̇ = G ẏ, q̈ = G ÿ + g ([Chignoli23, eq. 3]) the independent forces are
τ_y = Gᵀ τ(q, q̇, q̈) (eq. CD-1), τ the spanning tree's inverse dynamics. Their
derivatives are the tree's (:func:`~soadyn.rnea_derivatives`) carried through G, plus,
for the implicit clusters only, the change of G, of q̇ and of q̈ along the constraint
manifold, each the solution of the differentiated constraint rows (the implicit function
theorem, eq. CD-5–CD-8). The second derivatives of the constraints that these need are
polarizations of the acceleration bias k = −K̇q̇ (exact for a bias quadratic in q̇,
eq. CD-4); the one third derivative (the change of the acceleration-level constraint
K(q) q̈ − k(q, q̇) with q at fixed q̇, q̈, eq. CD-7) is a central difference of the
constraint rows along the manifold (error ~1e-10 relative).
Explicit clusters need none of this: G is constant and g = 0 (eq. CD-9).

Python over the compiled building blocks (the spanning tree's RNEA and its derivatives,
the constraint rows, the solve of γ(y)); ÿ for the C-ABA derivatives comes from the
Cholesky factor of H = GᵀMG, which they need anyway, rather than from a C-ABA call, so
that a first call compiles no cluster kernel beyond the solve (the first
``cluster_aba_derivatives`` on a four-bar took 23.9 s with the C-ABA call, on the Mini
Cheetah 23.2 s). Single states only.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ...core import validation as val
from ...core.compile import derived, snapshot
from ...core.configuration import integrate
from ...dynamics.derivatives import rnea_derivatives
from ...dynamics.rnea import rnea
from ..kinematics import evaluate_constraint_set
from .algorithms import check_spanning_configuration, checked_state, spanning_state
from .clusters import cluster_tree

__all__ = ["cluster_rnea_derivatives", "cluster_aba_derivatives"]

#: step (on a unit tangent direction) of the central difference of eq. CD-7: truncation
#: ~h²/6 and rounding ~1e-16/h balance near 1e-5 (both ~1e-11 relative)
THIRD_DERIVATIVE_STEP = 1e-5


def _checked(model, y, vectors):
    """y and the (name, value) ``vectors`` of length nyv (None stays None) checked as single
    states; errors name the argument, the expected and the received shape."""
    tree = cluster_tree(model)
    if np.ndim(y) == 2:
        raise ValueError(f"y: expected one state of shape ({tree.nyq},) — the cluster derivatives take single "
                         f"states, no batches (loop over the states) — got shape {np.shape(y)}")
    out = [val.vector(y, tree.nyq, "y", batch_ok=False)]
    for name, x in vectors:
        out.append(None if x is None else val.vector(x, tree.nyv, name, batch_ok=False))
    return out


def _explicit_part(model, tree):
    """The constant part of G (nv, nyv): the blocks of the explicit clusters, once per model version."""
    def build(model):  # (the snapshot of the version: its cluster tree is ``tree``)
        G = np.zeros((model.nv, tree.nyv))
        for cl in tree.clusters:
            if cl.joint.linear:
                G[np.ix_(cl.joint.v_index, np.arange(cl.y_v.start, cl.y_v.stop))] = cl.joint.G0
        G.flags.writeable = False
        return G
    return derived(model).memo("cluster_derivatives_G", build)


class _ImplicitCluster:
    """One implicit cluster's constraint rows at the spanning configuration q: K, G, g and
    the derivative terms of eq. CD-5–CD-8, all in the cluster's own velocity coordinates."""

    def __init__(self, model, cl, q):
        self.model, self.cl, self.j, self.q = model, cl, cl.joint, q
        j = self.j
        st = self._rows(q, None)
        self.K = st.G[:, j.v_index]
        self.G, _ = j.explicit_form_of(self.K, None)
        self.Kd_pinv = np.linalg.pinv(self.K[:, j.dependent_v])  # K_d⁺: redundant rows are normal
        # (body-frame) Lie brackets of the spherical and free joints' tangent vectors (eq. CD-3)
        self.groups = []
        pos = 0
        for i in j.bodies:
            jt = model.bodies[i].joint
            if jt.kind in ("spherical", "free"):
                self.groups.append((jt.kind, pos))
            pos += jt.nv
        self.S = self.symmetric_second()

    def _full(self, u):
        x = np.zeros(self.model.nv)
        x[self.j.v_index] = u
        return x

    def _rows(self, q, u):
        """The cluster's constraint rows at (q, cluster velocity u) (u None: K only)."""
        return evaluate_constraint_set(self.j.constraint_set, q, None if u is None else self._full(u), 0.0,
                                       u is not None)

    def bias(self, u):
        """k(q, u) = −K̇u (m,), the acceleration bias at cluster velocity u."""
        return self._rows(self.q, u).acceleration_bias

    def bracket(self, d, x):
        """[d, x] per joint (eq. CD-3): δω × xω on a spherical joint, the spatial cross
        product on a free joint ([ω; v] order), zero on vector joints."""
        out = np.zeros(self.j.n)
        for kind, p in self.groups:
            dw, xw = d[p:p + 3], x[p:p + 3]
            out[p:p + 3] = np.cross(dw, xw)
            if kind == "free":
                out[p + 3:p + 6] = np.cross(dw, x[p + 3:p + 6]) + np.cross(d[p + 3:p + 6], xw)
        return out

    def symmetric_second(self):
        """S (ny, ny, m): S[k, l] = ½(B(x_k, x_l) + B(x_l, x_k)) for the columns x of G,
        B(d, x) = ∂K/∂q[d] x, by polarization of the bias (eq. CD-4): ny(ny + 1)
        evaluations of the rows."""
        X = self.G
        ny = X.shape[1]
        S = np.empty((ny, ny, self.K.shape[0]))
        for k in range(ny):
            for l in range(k, ny):
                S[k, l] = S[l, k] = -(self.bias(X[:, k] + X[:, l]) - self.bias(X[:, k] - X[:, l])) / 4.0
        return S

    def second(self, S, k, l):
        """B(x_k, x_l) = ∂K/∂q[x_k] x_l (m,): the symmetric part plus half the bracket term (eq. CD-3)."""
        if not self.groups:
            return S[k, l]
        return S[k, l] + 0.5 * (self.K @ self.bracket(self.G[:, k], self.G[:, l]))

    def dbias_dv(self, v, w):
        """∂k/∂q̇[w] at q̇ = v (m,): exact for a bias quadratic in q̇ (eq. CD-4)."""
        return (self.bias(v + w) - self.bias(v - w)) / 2.0

    def solve(self, r):
        """The cluster velocity vector with zero independent entries and dependent entries
        K_d⁺ r (the differentiated rows solved, eq. CD-5)."""
        out = np.zeros(self.j.n)
        out[self.j.dependent_v] = self.Kd_pinv @ r
        return out

    def acceleration_rows_rate(self, d, v, a):
        """d/ds [K(q ⊕ s d) a − k(q ⊕ s d, v)] at s = 0 (m,) by a central difference along
        the unit direction of d (eq. CD-7)."""
        dG, dk = constraint_rows_rate(self.j.constraint_set, self.q, self._full(v), self._full(d))
        return dG[:, self.j.v_index] @ a - dk


def constraint_rows_rate(cs, q, v, d, step=THIRD_DERIVATIVE_STEP):
    """(d/ds G_c(q ⊕ s d), d/ds 𝔘̊(q ⊕ s d, v)) at s = 0, shapes (m, nv) and (m,), for the
    rows of the constraint set ``cs`` (a :class:`~soadyn.closed.constraint_set.ConstraintSet`)
    at q (nq,), velocity v (nv,) and tangent direction d (nv,): one central difference on
    the unit direction of d with ``step`` (the rows' second, and the bias's third,
    derivative; eq. CD-7 and ``docs/kkt_derivatives.md``)."""
    scale = float(np.abs(d).max(initial=0.0))
    if scale == 0.0:
        return np.zeros((cs.m, cs.model.nv)), np.zeros(cs.m)
    unit = d / scale

    def rows(s):
        return evaluate_constraint_set(cs, integrate(cs.model, q, unit, s), v, 0.0, True)

    plus, minus = rows(step), rows(-step)
    f = scale / (2.0 * step)
    return (plus.G - minus.G) * f, (plus.acceleration_bias - minus.acceleration_bias) * f


def _checked_context(model, tree, y, f_ext, q, gravity):
    """``f_ext`` (nbodies, 6), ``q`` (nq,: finite, y its independent coordinates, on the
    constraint manifold) and ``gravity`` validated as :func:`~soadyn.cluster_rnea` validates
    them (errors name the argument)."""
    f_ext = val.external_forces(f_ext, model.nbodies, None)
    if q is not None:
        q = checked_state(model, tree, y, None, q, None)[2]
        check_spanning_configuration(model, tree, y, q)
    if gravity is not True and gravity is not False:
        gravity = val.GRAVITY(gravity)
    return f_ext, q, gravity


class _SpanningForm:
    """The spanning configuration at y (the given q, else γ(y)), the explicit map G
    (nv, nyv) there and the implicit clusters' rows (:class:`_ImplicitCluster`)."""

    def __init__(self, model, tree, y, q):
        self.model, self.spanning = model, model.spanning_tree()
        # (the compiled solve, also for explicit clusters: the Python closed form was a
        # large part of a Mini Cheetah call, benchmarks/results/design_notes.md)
        self.q = spanning_state(model, y, None)[0] if q is None else np.asarray(q, dtype=float)
        self.G = _explicit_part(model, tree).copy()
        self.implicit = []
        for cl in tree.clusters:
            if not cl.joint.linear:
                c = _ImplicitCluster(model, cl, self.q)
                self.G[np.ix_(cl.joint.v_index, np.arange(cl.y_v.start, cl.y_v.stop))] = c.G
                self.implicit.append(c)

    def rates(self, yd, ydd):
        """q̇ = G ẏ and q̈ = G ÿ + g, g = [0; K_d⁺ k] with k(q̇) = −ẏᵀSẏ (eq. CD-1, CD-4)."""
        v, a = self.G @ yd, self.G @ ydd
        for c in self.implicit:
            ydc = yd[c.cl.y_v]
            a[c.j.v_index] += c.solve(-np.einsum("k,klm,l->m", ydc, c.S, ydc))
        return v, a

    def accelerations(self, yd, tau_ind, f_ext, gravity):
        """(ÿ, the Cholesky factor of H = GᵀMG): ÿ solves H ÿ = τ_ind − Gᵀτ(q, Gẏ, g), the
        forward dynamics C-ABA computes ([Chignoli23, Alg. 1]; ``docs/cluster_derivatives.md``,
        eq. CD-10: τ is affine in q̈, so τ_y(ÿ) = Gᵀτ(q, Gẏ, g) + H ÿ). Solved here rather
        than by a C-ABA call: the derivatives need H anyway, and a first call then compiles
        no C-ABA kernel."""
        v, a = self.rates(yd, np.zeros(yd.size))
        # M from the tree derivatives' kernel, which the derivatives run anyway: no other to compile
        _, _, M = rnea_derivatives(self.spanning, self.q, v, a, f_ext, gravity=gravity)
        bias = self.G.T @ rnea(self.spanning, self.q, v, a, f_ext, gravity=gravity)
        factor, info = lapack.dpotrf(self.G.T @ M @ self.G)
        if info:
            raise np.linalg.LinAlgError(f"y: the mass matrix of the independent coordinates H = GᵀMG is not "
                                        f"positive definite at this configuration (LAPACK dpotrf info {info})")
        return lapack.dpotrs(factor, tau_ind - bias)[0], factor


def _derivatives(form, yd, ydd, f_ext, gravity):
    """(∂τ_y/∂y, ∂τ_y/∂ẏ) at the spanning form of a validated single state."""
    model, G, qs = form.model, form.G, form.q
    nv, nyv = model.nv, G.shape[1]
    v, a = form.rates(yd, ydd)
    dq, dv, M = rnea_derivatives(form.spanning, qs, v, a, f_ext, gravity=gravity)
    # the chain rule through G (eq. CD-2, CD-9): all there is for explicit clusters
    dtau_dy = G.T @ (dq @ G)
    dtau_dyd = G.T @ (dv @ G)
    if form.implicit:
        MG = M @ G
        tau = rnea(form.spanning, qs, v, a, f_ext, gravity=gravity)
        Vy = np.zeros((nv, nyv))   # ∂q̇/∂y (eq. CD-6)
        Ay = np.zeros((nv, nyv))   # ∂q̈/∂y (eq. CD-7)
        Ayd = np.zeros((nv, nyv))  # ∂q̈/∂ẏ = ∂g/∂ẏ (eq. CD-8)
        T = np.zeros((nyv, nyv))   # (∂G/∂y)ᵀ τ (eq. CD-2)
        for c in form.implicit:
            vi, cols = c.j.v_index, np.arange(c.cl.y_v.start, c.cl.y_v.stop)
            X, ydc, vc, ac = c.G, yd[cols], v[vi], a[vi]
            S, ny = c.S, X.shape[1]
            dk_dv = -2.0 * np.einsum("l,lkm->km", ydc, S)  # ∂k/∂q̇[x_k] = −2 Σ_l ẏ_l S[l, k] (eq. CD-4)
            for k in range(ny):
                dG = np.stack([c.solve(-c.second(S, k, l)) for l in range(ny)], axis=1)  # ∂G/∂y_k (eq. CD-5)
                dvk = dG @ ydc
                Vy[vi, cols[k]] = dvk
                T[cols, cols[k]] = dG.T @ tau[vi]
                rate = c.acceleration_rows_rate(X[:, k], vc, ac)
                Ay[vi, cols[k]] = c.solve(c.dbias_dv(vc, dvk) - rate)
                Ayd[vi, cols[k]] = c.solve(dk_dv[k])
        dtau_dy += G.T @ (dv @ Vy + M @ Ay) + T
        dtau_dyd += MG.T @ Ayd
    return dtau_dy, dtau_dyd


_STATE_DOC = """
    q : optional (nq,) spanning configuration that fixes the assembly branch, as for
        :func:`~soadyn.cluster_rnea` (y must be its independent coordinates and q must
        satisfy the constraints); default γ(y) solved as :func:`~soadyn.cluster_rnea` does.
    gravity : include the model's gravity.

    Derivatives with respect to y are taken along the constraint manifold in the
    tangent space of the independent joints: column k of ∂/∂y is d/dε at ε = 0 along a
    motion q(ε) on the manifold with dq/dε = G e_k, i.e. independent velocity ẏ = e_k
    (for independent free and spherical joints a body-frame increment, as
    :func:`~soadyn.integrate` applies it: the tree convention of
    :func:`~soadyn.rnea_derivatives`). Row i, column j holds ∂(output)_i/∂(input)_j.

    Single states only: a batch raises ValueError (loop over the states). A pure
    function of its arguments."""


def cluster_rnea_derivatives(model, y, yd, ydd, f_ext=None, *, q=None, gravity=True):
    """Derivatives of the cluster inverse dynamics τ_ind = C-RNEA(y, ẏ, ÿ)
    ([Chignoli23, §VI]; ``docs/cluster_derivatives.md``, eq. CD-2, CD-5–CD-9):

        ∂τ_y/∂ẏ = Gᵀ(∂τ/∂q̇ G + M ∂g/∂ẏ)
        ∂τ_y/∂y = (∂G/∂y)ᵀτ + Gᵀ(∂τ/∂q G + ∂τ/∂q̇ ∂q̇/∂y + M ∂q̈/∂y)

    with τ, ∂τ/∂q, ∂τ/∂q̇, M the spanning tree's at (γ(y), Gẏ, Gÿ + g); the last three
    terms vanish for explicit clusters (rigid joints, rotors, gears, belts).

    Parameters
    ----------
    model : Model with clusters (see :func:`~soadyn.cluster_tree`).
    y : (nyq,) independent coordinates [rad, m]; yd, ydd : (nyv,) independent velocities
        and accelerations (None means zero).
    f_ext : optional (nbodies, 6) spatial forces on the bodies, body frame [N m, N]
        (held fixed in the body frames when y varies).{state}

    Returns ``(dtau_dy, dtau_dyd)``, each (nyv, nyv) [N m/rad, ...; N m s/rad, ...].
    """
    model = snapshot(model)
    tree = cluster_tree(model)
    y, yd, ydd = _checked(model, y, (("yd", yd), ("ydd", ydd)))
    f_ext, q, gravity = _checked_context(model, tree, y, f_ext, q, gravity)
    yd = np.zeros(tree.nyv) if yd is None else yd
    ydd = np.zeros(tree.nyv) if ydd is None else ydd
    return _derivatives(_SpanningForm(model, tree, y, q), yd, ydd, f_ext, gravity)


def cluster_aba_derivatives(model, y, yd, tau_ind, f_ext=None, *, q=None, gravity=True):
    """Derivatives of the cluster forward dynamics ÿ = C-ABA(y, ẏ, τ_ind) ([Chignoli23,
    Alg. 1]; ``docs/cluster_derivatives.md``, eq. CD-10): from H(y) ÿ + C_y(y, ẏ) = τ_ind
    differentiated at the C-ABA solution,

        ∂ÿ/∂y = −H⁻¹ ∂τ_y/∂y |_{ÿ},   ∂ÿ/∂ẏ = −H⁻¹ ∂τ_y/∂ẏ |_{ÿ},   ∂ÿ/∂τ_ind = H⁻¹,

    H = GᵀMG, ∂τ_y from :func:`cluster_rnea_derivatives` at ÿ.

    Parameters
    ----------
    model, y, yd, f_ext : as :func:`cluster_rnea_derivatives`.
    tau_ind : (nyv,) generalized forces on the independent coordinates [N m, N].{state}

    Returns ``(dydd_dy, dydd_dyd, dydd_dtau)``, each (nyv, nyv); ``dydd_dtau`` = H⁻¹,
    symmetric. Raises ``numpy.linalg.LinAlgError`` when H is not positive definite.
    """
    model = snapshot(model)
    tree = cluster_tree(model)
    y, yd, tau_ind = _checked(model, y, (("yd", yd), ("tau_ind", tau_ind)))
    f_ext, q, gravity = _checked_context(model, tree, y, f_ext, q, gravity)
    yd = np.zeros(tree.nyv) if yd is None else yd
    tau_ind = np.zeros(tree.nyv) if tau_ind is None else tau_ind
    form = _SpanningForm(model, tree, y, q)
    ydd, factor = form.accelerations(yd, tau_ind, f_ext, gravity)
    dtau_dy, dtau_dyd = _derivatives(form, yd, ydd, f_ext, gravity)
    n = ydd.size
    # one Cholesky factorization of H, three right sides (LAPACK directly: small matrices)
    X = lapack.dpotrs(factor, np.hstack([np.eye(n), dtau_dy, dtau_dyd]))[0]
    Hinv = X[:, :n]
    return -X[:, n:2 * n], -X[:, 2 * n:], 0.5 * (Hinv + Hinv.T)


for _f in (cluster_rnea_derivatives, cluster_aba_derivatives):
    _f.__doc__ = _f.__doc__.replace("{state}", _STATE_DOC)
