"""The SOA operators of a model at a configuration, as dense matrices (numeric or symbolic).

This is the *specification* layer of soadyn: every system-level operator of
the SKO model (H, φ, M) of [Jain12, §2.3–2.4] and of the articulated-body factorization
of [Jain24] (topics 5–6, 10) is formed as an explicit matrix, so that the identities of
the seeds can be read off and tested directly; the recursive algorithms in
:mod:`soadyn.dynamics` are held against these matrices. It is short and slow by design.

Block structure and numbering
-----------------------------
Bodies are numbered parent-first (℘(k) < k; the inertial frame is not a body). A
stacked spatial vector x ∈ R^{6n} holds body k's 6-vector (angular first, body frame)
in rows ``6k : 6k+6``; a stacked joint vector θ ∈ R^N holds body k's hinge velocities
in rows ``v_k : v_k + n_k`` (the model's ``v_index`` and ``nv``). Hence:

* **E_φ** (6n × 6n) has its only nonzero blocks φ(℘(k), k) at block row ℘(k), block
  column k. With parent-first numbering it is strictly block *upper* triangular;
  Jain's canonical numbering ([Jain12, §2.3], children before parents) is the reverse
  order, in which it is strictly lower triangular. The identities are the same.
* **φ** = (I − E_φ)⁻¹ has blocks φ(i, j) = φ(i, k₁)φ(k₁, k₂)⋯φ(k_m, j) when body i is
  an ancestor of j (φ(j, j) = I), zero otherwise; block upper triangular.
* **H** (N × 6n) is block diagonal: H(k) = H*(k)ᵀ at rows v_k…, block column k.
* **M**, **P**, **τ̄** (6n × 6n) and **D** (N × N) are block diagonal; **G** (6n × N) has
  G(k) = P(k)H*(k)D⁻¹(k) at block row k and the columns of body k's dofs;
  **K** = E_φ G (block ℘(k), k: φ(℘(k), k)G(k)); **E_ψ** = E_φ τ̄ and ψ = (I − E_ψ)⁻¹
  share E_φ's pattern.
* [CDI18]'s influence matrix **Φ_A** has the transposed pattern, [Φ_A](i, ℘(i)) = A_i:
  with A_i = φ*(℘(i), i) it is E_φ*, and Ψ_A = (I − Φ_A)⁻¹ is then φ*.

Numeric and symbolic
--------------------
The operators are numpy float arrays, or object arrays of sympy expressions when the
model (masses, lengths, inertias, placements: see ``Model.symbolic``) or q / v hold
sympy symbols. In symbolic mode every float constant that is a simple fraction (joint
axes, identity rotations, 0.5, ...) is replaced by that exact rational, so that
expressions simplify exactly. Expensive operators are computed on first access.

Partitioned and aggregated operators ([Jain12, §4, §6]): :func:`partition` and
:func:`aggregate` (:mod:`soadyn.spec.partitioned`).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core import spatial as sp
from .partitioned import Aggregation, Partition, aggregate, partition

__all__ = ["SKO", "sko", "influence_matrix", "influence_resolvent", "partition", "Partition", "aggregate",
           "Aggregation"]


# --------------------------------------------------------------------------- helpers
def _exact(x):
    """Object array of sympy numbers/expressions in which every float constant that is a
    simple fraction (denominator ≤ 10⁶: joint axes, identity rotations, 0.5, 0.3, ...)
    becomes that exact rational; other floats stay floats, since their exact binary
    rationals would make the expressions swell."""
    import sympy  # optional (extra 'symbolic'): imported only for symbolic input

    def number(f):
        f = float(f)
        r = sympy.Rational(f).limit_denominator(10**6)
        return r if float(r) == f else sympy.Float(f)

    def conv(e):
        if isinstance(e, (bool, np.bool_, int, np.integer)):
            return sympy.Integer(int(e))
        if isinstance(e, (float, np.floating)):
            return number(e)
        if isinstance(e, sympy.Basic):
            floats = e.atoms(sympy.Float)
            return e.xreplace({f: number(f) for f in floats}) if floats else e
        return sympy.sympify(e)

    x = np.asarray(x, dtype=object)
    return np.vectorize(conv, otypes=[object])(x) if x.size else x


def _zeros(shape, symbolic):
    if symbolic:
        import sympy  # optional (extra 'symbolic'): imported only for symbolic input
        out = np.empty(shape, dtype=object)
        out.fill(sympy.Integer(0))
        return out
    return np.zeros(shape)


def _eye(n, symbolic):
    if not symbolic:
        return np.eye(n)
    import sympy  # optional (extra 'symbolic'): imported only for symbolic input
    out = _zeros((n, n), True)
    for k in range(n):
        out[k, k] = sympy.Integer(1)
    return out


def _inverse(A, symbolic):
    """Inverse of a small (≤ 6×6) block: sympy for symbolic blocks, numpy otherwise."""
    if A.shape[0] == 0:
        return A.copy()
    if symbolic:
        import sympy  # optional (extra 'symbolic'): imported only for symbolic input
        return np.array(sympy.Matrix(A).inv(), dtype=object)
    return np.linalg.inv(A)


def _depths(parents):
    depth = []
    for k, p in enumerate(parents):
        depth.append(1 if p < 0 else depth[p] + 1)
    return depth


def _resolvent(E, nilpotency, symbolic):
    """(I − E)⁻¹ = I + E + E² + ⋯ + E^{m−1} for a nilpotent E with E^m = 0 ([CDI18])."""
    out = _eye(E.shape[0], symbolic)
    power = out
    for _ in range(nilpotency - 1):
        power = power @ E
        out = out + power
    return out


def _parents_of(model_or_parents):
    if hasattr(model_or_parents, "parents"):
        return [int(p) for p in model_or_parents.parents]
    return [int(p) for p in model_or_parents]


def _check_parents(parents):
    for k, p in enumerate(parents):
        if not -1 <= p < k:
            raise ValueError(f"parents: body {k} has parent {p}; expected parent-first numbering "
                             f"(-1 <= parent < {k})")


# --------------------------------------------------------------------------- [CDI18]
def influence_matrix(model_or_parents, A):
    """[CDI18]'s influence matrix Φ_A (Def. 1) for a block-diagonal ``A``.

    Parameters
    ----------
    model_or_parents : Model, or the parent index of each body (−1 for a root),
        parent-first.
    A : (n, k, k) array or sequence of n (k × k) blocks A_i (numeric or sympy).
        Blocks of root bodies are not used ([CDI18]: A_1 = 0).

    Returns the (nk × nk) matrix with [Φ_A](i, ℘(i)) = A_i and zeros elsewhere
    (strictly block lower triangular in parent-first numbering). Its transpose is
    Φ_Aᵀ of Def. 2.
    """
    parents = _parents_of(model_or_parents)
    _check_parents(parents)
    blocks = [np.asarray(a) for a in A]
    if len(blocks) != len(parents):
        raise ValueError(f"A: expected {len(parents)} blocks (one per body), got {len(blocks)}")
    k = blocks[0].shape[0] if blocks else 0
    symbolic = any(b.dtype == object for b in blocks)
    for i, b in enumerate(blocks):
        if b.shape != (k, k):
            raise ValueError(f"A[{i}]: expected shape ({k}, {k}), got {b.shape}")
    out = _zeros((len(parents) * k, len(parents) * k), symbolic)
    for i, p in enumerate(parents):
        if p >= 0:
            out[i * k:(i + 1) * k, p * k:(p + 1) * k] = blocks[i]
    return out


def influence_resolvent(model_or_parents, A):
    """[CDI18]'s Ψ_A = (e − Φ_A)⁻¹ = e + Φ_A + ⋯ + Φ_A^{m−1} (m: the longest chain).

    ``z = Ψ_A x`` is the parent-to-child recursion z_i = A_i z_℘(i) + x_i and
    ``z = Ψ_Aᵀ x`` the child-to-parent one ([CDI18] "O(N) recursive operators"; the
    compiled versions are in :mod:`soadyn.dynamics.spo`). Same arguments as
    :func:`influence_matrix`.
    """
    Phi = influence_matrix(model_or_parents, A)
    parents = _parents_of(model_or_parents)
    return _resolvent(Phi, max(_depths(parents), default=1), Phi.dtype == object)


# --------------------------------------------------------------------------- SKO model
class SKO:
    """The SKO model (H, φ, M) of a tree at (q, v) and the operators derived from it.

    Construct with :func:`sko`. Attributes (see the module docstring for the block
    structure; n bodies, N = nv dofs; all operators dense):

    =========== =========== ===============================================================
    name        shape       meaning (seed equation)
    =========== =========== ===============================================================
    E_phi       6n × 6n     SKO, blocks φ(℘(k), k) ([Jain12, eq. 9])
    phi         6n × 6n     SPO φ = (I − E_φ)⁻¹ ([Jain12, eq. 10])
    H           N × 6n      joint maps, block diagonal ([Jain12, eq. 6])
    M           6n × 6n     spatial inertias about the body origins, block diagonal
    V, a, b     6n          body velocities φ*H*θ̇, Coriolis accelerations, gyroscopic
                            forces V ×* M V ([Jain12, eq. 11–13]); need ``v``
    mass_matrix N × N       HφMφ*H* ([Jain12, eq. 17])
    coriolis    N           Hφ(Mφ*a + b) ([Jain12, eq. 17], no gravity); needs ``v``
    P           6n × 6n     articulated body inertias, the Riccati solution ([Jain23p, eq. 7])
    D, Dinv     N × N       HPH* and its inverse
    G           6n × N      PH*D⁻¹ (Kalman gains)
    K           6n × N      E_φ G
    tau_bar     6n × 6n     I − GH
    E_psi, psi  6n × 6n     E_φ τ̄ and ψ = (I − E_ψ)⁻¹
    Omega       6n × 6n     EOSCM ψ*H*D⁻¹Hψ ([Jain24], "Focus on Ω")
    =========== =========== ===============================================================

    Methods give the innovations factors (:meth:`innovations_factor`,
    :meth:`innovations_factor_inverse`), the mass-matrix inverse by its operator
    expression (:meth:`mass_matrix_inverse`), the pick-off operator :meth:`B`, the
    Jacobian :meth:`jacobian` and the operational-space compliance :meth:`Lambda`.
    """

    def __init__(self, model, q, v=None):
        self.model = model
        self.nb = model.nbodies
        self.nv = model.nv
        self.symbolic = bool(model.symbolic or sp.is_symbolic(q) or (v is not None and sp.is_symbolic(v)))
        self.parents = [b.parent for b in model.bodies]
        self.dofs = [slice(b.joint.v_index, b.joint.v_index + b.joint.nv) for b in model.bodies]
        self.q = self._vector(q, model.nq, "q")
        self.v = None if v is None else self._vector(v, model.nv, "v")
        self._nilpotency = max(_depths(self.parents), default=1)
        self._body_poses = []  # (R, t): pose of body k in its parent (joint included)
        self._joint_maps = []  # H*(k), 6 × n_k
        for b in model.bodies:
            j = b.joint
            qk = self.q[j.q_index:j.q_index + j.nq]
            Rj, pj = j.pose(qk)
            R0, p0 = b.placement
            R, t = sp.compose_poses(np.asarray(R0), np.asarray(p0), np.asarray(Rj), np.asarray(pj))
            self._body_poses.append(self._cast(R, t))
            self._joint_maps.append(self._cast(j.motion_subspace(qk))[0])

    # ------------------------------------------------------------------ plumbing
    def _cast(self, *xs):
        if self.symbolic:
            return tuple(_exact(x) for x in xs)
        return tuple(np.asarray(x, dtype=float) for x in xs)

    def _vector(self, x, n, name):
        if self.symbolic:
            x = _exact(np.array(x, dtype=object).reshape(-1))
        else:
            x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != (n,):
            raise ValueError(f"{name}: expected shape ({n},), got {np.shape(x)}")
        return x

    def _blk(self, k):
        return slice(6 * k, 6 * k + 6)

    def _zeros(self, *shape):
        return _zeros(shape, self.symbolic)

    def _eye(self, n):
        return _eye(n, self.symbolic)

    def children(self, k):
        return [c for c, p in enumerate(self.parents) if p == k]

    # ------------------------------------------------------------------ SKO model (H, φ, M)
    @cached_property
    def E_phi(self):
        E = self._zeros(6 * self.nb, 6 * self.nb)
        for k, p in enumerate(self.parents):
            if p >= 0:
                E[self._blk(p), self._blk(k)] = sp.force_transform(*self._body_poses[k])
        return E

    @cached_property
    def phi(self):
        return _resolvent(self.E_phi, self._nilpotency, self.symbolic)

    @cached_property
    def H(self):
        H = self._zeros(self.nv, 6 * self.nb)
        for k in range(self.nb):
            H[self.dofs[k], self._blk(k)] = self._joint_maps[k].T
        return H

    @cached_property
    def M(self):
        M = self._zeros(6 * self.nb, 6 * self.nb)
        for k, b in enumerate(self.model.bodies):
            M[self._blk(k), self._blk(k)] = self._cast(b.inertia)[0]
        return M

    def _need_v(self, what):
        if self.v is None:
            raise ValueError(f"{what} needs the velocity: call sko(model, q, v)")

    @cached_property
    def V(self):
        self._need_v("V")
        return self.phi.T @ (self.H.T @ self.v)

    @cached_property
    def a(self):
        """a(k) = V(k) × H*(k)θ̇(k) + Ḣ*(k)θ̇(k) (body-frame Coriolis acceleration)."""
        self._need_v("a")
        a = self._zeros(6 * self.nb)
        for k, b in enumerate(self.model.bodies):
            j = b.joint
            vk = self.v[self.dofs[k]]
            rel = self._joint_maps[k] @ vk
            Vk = self.V[self._blk(k)]
            qk = self.q[j.q_index:j.q_index + j.nq]
            a[self._blk(k)] = sp.cross_motion(Vk, rel) + self._cast(j.bias(qk, vk))[0]
        return a

    @cached_property
    def b(self):
        """b(k) = V(k) ×* M(k)V(k) (gyroscopic force)."""
        self._need_v("b")
        out = self._zeros(6 * self.nb)
        for k in range(self.nb):
            Vk = self.V[self._blk(k)]
            out[self._blk(k)] = sp.cross_force(Vk, self.M[self._blk(k), self._blk(k)] @ Vk)
        return out

    @cached_property
    def mass_matrix(self):
        """M = HφMφ*H* ([Jain12, eq. 17]; [CDI18, eq. 14])."""
        Hphi = self.H @ self.phi
        return Hphi @ self.M @ Hphi.T

    @cached_property
    def coriolis(self):
        """C = Hφ(Mφ*a + b) ([Jain12, eq. 17]), without gravity."""
        return self.H @ (self.phi @ (self.M @ (self.phi.T @ self.a) + self.b))

    # ------------------------------------------------------------------ articulated quantities
    @cached_property
    def _articulated(self):
        """Solve the Riccati equation P = M + E_φ τ̄ P E_φ* ([Jain23p, eq. 7], operator form).

        E_φ X E_φ* is block diagonal for block-diagonal X, with block k summing over k's
        children; P(k) therefore depends on the children's blocks only and the equation
        is solved by back substitution from the last body.
        """
        n = self.nb
        P = self._zeros(6 * n, 6 * n)
        Plus = self._zeros(6 * n, 6 * n)
        D = self._zeros(self.nv, self.nv)
        Dinv = self._zeros(self.nv, self.nv)
        G = self._zeros(6 * n, self.nv)
        tau_bar = self._zeros(6 * n, 6 * n)
        E = self.E_phi
        for k in reversed(range(n)):
            bk, dk = self._blk(k), self.dofs[k]
            Pk = self.M[bk, bk].copy()
            for c in self.children(k):
                bc = self._blk(c)
                Pk = Pk + E[bk, bc] @ Plus[bc, bc] @ E[bk, bc].T
            Hk = self._joint_maps[k].T
            Dk = Hk @ Pk @ Hk.T
            Dk_inv = _inverse(Dk, self.symbolic)
            Gk = Pk @ Hk.T @ Dk_inv
            tk = self._eye(6) - Gk @ Hk
            P[bk, bk] = Pk
            Plus[bk, bk] = tk @ Pk
            D[dk, dk] = Dk
            Dinv[dk, dk] = Dk_inv
            G[bk, dk] = Gk
            tau_bar[bk, bk] = tk
        return P, D, Dinv, G, tau_bar

    P = property(lambda self: self._articulated[0], doc="Articulated body inertias P (6n × 6n).")
    D = property(lambda self: self._articulated[1], doc="D = HPH* (N × N).")
    Dinv = property(lambda self: self._articulated[2], doc="D⁻¹ (N × N).")
    G = property(lambda self: self._articulated[3], doc="Kalman gains G = PH*D⁻¹ (6n × N).")
    tau_bar = property(lambda self: self._articulated[4], doc="τ̄ = I − GH (6n × 6n).")

    @cached_property
    def K(self):
        return self.E_phi @ self.G

    @cached_property
    def E_psi(self):
        return self.E_phi @ self.tau_bar

    @cached_property
    def psi(self):
        return _resolvent(self.E_psi, self._nilpotency, self.symbolic)

    def innovations_factor(self):
        """I + HφK: M = [I + HφK] D [I + HφK]* ([Jain24, topic 6], innovations factorization)."""
        return self._eye(self.nv) + self.H @ self.phi @ self.K

    def innovations_factor_inverse(self):
        """I − HψK = [I + HφK]⁻¹ ([Jain24, topic 6])."""
        return self._eye(self.nv) - self.H @ self.psi @ self.K

    def mass_matrix_inverse(self):
        """M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] ([Jain24, topic 6]; used in [Jain24, eq. 11.18])."""
        L = self.innovations_factor_inverse()
        return L.T @ self.Dinv @ L

    @cached_property
    def Omega(self):
        """EOSCM Ω = ψ*H*D⁻¹Hψ ([Jain24], "Focus on Ω"), 6n × 6n."""
        Hpsi = self.H @ self.psi
        return Hpsi.T @ self.Dinv @ Hpsi

    # ------------------------------------------------------------------ nodes
    def _frames(self, frames):
        if isinstance(frames, (str, int, np.integer)):
            frames = [frames]
        return [self.model.frame(f) for f in frames]

    def B(self, frames):
        """Pick-off operator ℬ (6n × 6m) for the frames (nodes) ``frames`` ([Jain24], "Recall:
        ℬ Pick-Off Operator"): block (b_f, f) = φ(b_f, O_f), the force transform from frame f
        to its body b_f; ℬ* maps body velocities to frame velocities (frame axes, frame
        origin). A frame fixed to the world gives a zero block column."""
        fs = self._frames(frames)
        out = self._zeros(6 * self.nb, 6 * len(fs))
        for c, f in enumerate(fs):
            if f.body >= 0:
                R, p = self._cast(f.rotation, f.translation)
                out[self._blk(f.body), 6 * c:6 * c + 6] = sp.force_transform(R, p)
        return out

    def jacobian(self, frames):
        """𝒥 = ℬ*φ*H* (6m × N): the stacked frame Jacobians in the frames' own axes."""
        return self.B(frames).T @ self.phi.T @ self.H.T

    def Lambda(self, frames):
        """Operational-space compliance Λ = ℬ*Ωℬ = 𝒥M⁻¹𝒥* ([Jain24], "Operational space
        terminology"), 6m × 6m."""
        B = self.B(frames)
        return B.T @ self.Omega @ B


def sko(model, q, v=None):
    """The SKO model operators of ``model`` at configuration ``q`` (and velocity ``v``).

    Returns an :class:`SKO` carrying E_φ, φ, H, M, (V, a, b), P, D, G, K, τ̄, E_ψ, ψ, Ω, the
    mass matrix and the innovations factors as dense matrices — numpy arrays, or sympy
    object arrays when the model or q / v hold sympy symbols. See the module docstring.
    """
    return SKO(model, q, v)

