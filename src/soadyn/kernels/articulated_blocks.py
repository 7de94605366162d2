"""The block passes of the articulated-body inertia (ATBI) recursion: one n_k × n_k D(k) per hinge.

[Jain23p, eq. 7] (the Riccati recursion for the articulated body inertia P) and the O(N)
forward dynamics of [Jain24, topics 5–7], in SOA notation, with each multi-dof hinge
eliminated as one block:

tips-to-base gather, for each body k (:func:`articulated_body_pass`)::

    P(k)  = M(k) + Σ_{j ∈ children(k)} φ(k, j) P⁺(j) φ*(k, j)
    D(k)  = H(k) P(k) H*(k),     G(k) = P(k) H*(k) D⁻¹(k),     τ̄(k) = I − G(k)H(k)
    P⁺(k) = τ̄(k) P(k)
    z(k)  = Σ_{j ∈ children(k)} φ(k, j) z⁺(j) + P(k)a(k) + b(k) − f_ext(k)
    ε(k)  = T(k) − H(k) z(k),    ν(k) = D⁻¹(k) ε(k),    z⁺(k) = z(k) + G(k) ε(k)

base-to-tips scatter (:func:`acceleration_pass`)::

    α⁺(k) = φ*(℘(k), k) α(℘(k))          (α(world) = −g)
    θ̈(k)  = ν(k) − G*(k) α⁺(k)
    α(k)  = α⁺(k) + H*(k) θ̈(k) + a(k)

``sd.aba`` does not run these passes: it runs the partitioned recursion of
:mod:`soadyn.kernels.aba` ([Jain23p, eq. 8]: scalar D per sub-hinge, the same q̈). The
block passes serve the algorithms that need U(k) = P(k)H*(k) and D⁻¹(k) per hinge: the
innovations factorization (:mod:`soadyn.kernels.innovations`, and through it the OSCM) and
the direct method of :mod:`soadyn.kernels.direct`.
"""
from __future__ import annotations


from ..core.jit import helper
from ..core.layout import model_tables, workspace_views
from .primitives import articulated_to_parent, init_articulated, inverse_times_rows, parent_acceleration, spd_inverse


@helper
def articulated_body_pass(mi, mf, ws, tau, fext, has_v):
    """The tips-to-base gather: P, D⁻¹, U = P H*, G* and ε into the workspace, z⁺ into z.

    Needs ``joint_placements`` (and ``body_velocities`` when ``has_v``) first. Returns
    False when some D(k) is not positive definite. On return,
    for every body k with a parent: ``w.P[k]`` = P⁺(k), ``w.z[k]`` = z⁺(k) and the rows
    ``w.Gt`` = G*(k) = D⁻¹(k)U(k)ᵀ; a root body keeps P(k) and z(k). A joint whose map
    is a unit column ±e_j (``axis_code``) has U = ±P[:, j] and D = P[j, j]: no products
    with H* are formed. An empty ``tau`` means T = 0, an empty ``fext`` no forces.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    P, z, U, Gt, Dinv, eps, S = w.P, w.z, w.U, w.Gt, w.Dinv, w.eps, w.S
    has_tau = tau.shape[0] > 0
    for i in range(m.nb):
        init_articulated(m, w, i, fext, has_v)
    for i in range(m.nb - 1, -1, -1):
        vi = m.v_index[i]
        n = m.joint_nv[i]
        if has_v:  # z(k) += P(k) a(k)
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += P[i, a, b] * w.coriolis[i, b]
                z[i, a] += acc
        p = m.parent[i]
        code = m.axis_code[i]
        if code != 0:
            j = abs(code) - 1
            d = P[i, j, j]
            if not d > 0.0:
                return False
            dinv = 1.0 / d
            Dinv[i, 0, 0] = dinv
            e = tau[vi] if has_tau else 0.0
            if code > 0:
                e -= z[i, j]
                for a in range(6):
                    U[vi, a] = P[i, a, j]
            else:
                e += z[i, j]
                for a in range(6):
                    U[vi, a] = -P[i, a, j]
            eps[vi] = e
            if p < 0:
                continue
            # P⁺ = P − U D⁻¹ Uᵀ (symmetric) and z⁺ = z + U D⁻¹ ε
            for a in range(6):
                ga = U[vi, a] * dinv
                Gt[vi, a] = ga
                z[i, a] += ga * e
                for b in range(a, 6):
                    x = P[i, a, b] - ga * U[vi, b]
                    P[i, a, b] = x
                    P[i, b, a] = x
        else:
            D = w.scratch[2]
            for c in range(n):
                for a in range(6):
                    acc = 0.0
                    for b in range(6):
                        acc += P[i, a, b] * S[vi + c, b]
                    U[vi + c, a] = acc
                for c2 in range(c + 1):
                    acc = 0.0
                    for a in range(6):
                        acc += S[vi + c2, a] * U[vi + c, a]
                    D[c, c2] = acc
                    D[c2, c] = acc
                acc = tau[vi + c] if has_tau else 0.0
                for a in range(6):
                    acc -= S[vi + c, a] * z[i, a]
                eps[vi + c] = acc
            if n > 0 and not spd_inverse(D, Dinv, i, n):
                return False
            if p < 0:
                continue
            # G* = D⁻¹ Uᵀ, P⁺ = P − U G* and z⁺ = z + U D⁻¹ ε, in place
            inverse_times_rows(Dinv, i, U, vi, n, Gt)
            for a in range(6):
                for b in range(a, 6):
                    acc = 0.0
                    for c in range(n):
                        acc += U[vi + c, a] * Gt[vi + c, b]
                    x = P[i, a, b] - acc
                    P[i, a, b] = x
                    P[i, b, a] = x
                acc = 0.0
                for c in range(n):
                    acc += Gt[vi + c, a] * eps[vi + c]
                z[i, a] += acc
        articulated_to_parent(m, w, i, p)
    return True


@helper
def acceleration_pass(mi, mf, ws, gravity, has_v, qdd):
    """The base-to-tips scatter: θ̈(k) = ν(k) − G*(k)α⁺(k) into ``qdd``, α(k) into
    ``w.alpha`` (ν(k) = D⁻¹(k)ε(k))."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    A, U, Dinv, eps = w.alpha, w.U, w.Dinv, w.eps
    h = w.scratch[0, 0]
    for i in range(m.nb):
        parent_acceleration(w.R, w.t, i, m.parent[i], m.gravity, gravity, A)
        vi = m.v_index[i]
        code = m.axis_code[i]
        if code != 0:
            acc = eps[vi]
            for a in range(6):
                acc -= U[vi, a] * A[i, a]
            x = Dinv[i, 0, 0] * acc
            qdd[vi] = x
            j = abs(code) - 1
            A[i, j] += x if code > 0 else -x
        else:
            n = m.joint_nv[i]
            for c in range(n):  # ε − Uᵀα⁺
                acc = eps[vi + c]
                for a in range(6):
                    acc -= U[vi + c, a] * A[i, a]
                h[c] = acc
            for c in range(n):
                acc = 0.0
                for c2 in range(n):
                    acc += Dinv[i, c, c2] * h[c2]
                qdd[vi + c] = acc
                for a in range(6):
                    A[i, a] += w.S[vi + c, a] * acc
        if has_v:
            for a in range(6):
                A[i, a] += w.coriolis[i, a]
