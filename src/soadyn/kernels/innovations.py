"""Articulated-body quantities, the innovations factorization, M⁻¹ and log det M.

[Jain24, topics 5–6] (articulated body inertia; mass matrix factorization and inversion)
for tree SKO models [Jain12, §2.4], with the ATBI (Riccati) recursion of [Jain23p, eq. 7]
— run by the shared :func:`~soadyn.kernels.articulated_blocks.articulated_body_pass` — giving per body
P(k), D(k) = H(k)P(k)H*(k), G(k) = P(k)H*(k)D⁻¹(k) and τ̄(k) = I − G(k)H(k). On these,
with K = E_φ G and ψ = (I − E_φ τ̄)⁻¹:

* innovations factorization   M = [I + HφK] D [I + HφK]*
* its inverse factor          [I + HφK]⁻¹ = I − HψK
* the mass-matrix inverse     M⁻¹ = [I − HψK]* D⁻¹ [I − HψK]  (:mod:`.minverse`)
* the determinant             det M = Π_k det D(k)

Each factor is applied by one O(N) recursion to a block of columns (:func:`factor_gather`
tips-to-base for [I + HφK] and [I − HψK], :func:`factor_scatter` base-to-tips for their
adjoints); applied to the N columns of the identity they give M⁻¹ in O(N²) without
forming or factoring M (:mod:`.minverse` does so with the identity's sparsity).
"""
from __future__ import annotations

import math


from ..core.jit import helper, kernel
from ..core.layout import model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, OK, SINGULAR
from .articulated_blocks import articulated_body_pass
from .kinematics import absent, configuration_status, joint_placements, no_forces, nonfinite_matrix
from .primitives import add_force_to_parent, motion_to_child


# --------------------------------------------------------------------------- ATBI
@helper(inline="always")
def atbi(mi, mf, ws, q):
    """The ATBI recursion [Jain23p, eq. 7] at ``q`` with zero velocity and forces.

    Leaves in the workspace: the body poses (R, t) defining φ(℘(k), k), the joint maps S,
    U = P(k)H*(k), G* = D⁻¹Uᵀ, D⁻¹(k) and, for non-root bodies, P⁺(k) in P (roots keep
    P(k)) — the layout of ``articulated_body_pass``. Returns a status.

    Inlined into each caller by Numba (``inline="always"``): compiled on its own, this thin
    wrapper re-optimised both passes in a library of its own (~4.7k lines of LLVM IR, ~0.5 s
    of the first call of every kernel that uses it).
    """
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    joint_placements(mi, mf, ws, q)
    if not articulated_body_pass(mi, mf, ws, absent(ws), no_forces(ws), False):
        return SINGULAR
    return OK


@helper
def spo_adjoint_blocks(mi, mf, ws, psi, A):
    """A[k] = φ*(℘(k), k) (``psi`` False) or ψ*(℘(k), k) = τ̄*(k)φ*(℘(k), k) (``psi`` True).

    These are [CDI18]'s influence weights A_k for the SPOs φ and ψ: z = φ*x is
    z_k = A_k z_℘(k) + x_k. Needs :func:`atbi` (or ``joint_placements`` for φ) first.
    Root blocks are zero.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    e, x, y = w.scratch[0, 0], w.scratch[1, 0], w.scratch[2]
    for k in range(m.nb):
        if m.parent[k] < 0:
            A[k, :, :] = 0.0
            continue
        # φ*(℘(k), k) = [[Rᵀ, 0], [−Rᵀ[t]×, Rᵀ]] applied to the unit vectors
        for c in range(6):
            for a in range(6):
                e[a] = 1.0 if a == c else 0.0
            motion_to_child(w.R, w.t, k, w.scratch[0], 0, w.scratch[1], 0)
            for a in range(6):
                A[k, a, c] = x[a]
        if psi:
            # τ̄*(k) = I − H*(k) D⁻¹(k) U(k)ᵀ = I − H*(k) G*(k), applied on the left
            vi = m.v_index[k]
            n = m.joint_nv[k]
            for c in range(6):
                for r in range(n):
                    acc = 0.0
                    for a in range(6):
                        acc += w.Gt[vi + r, a] * A[k, a, c]
                    y[0, r] = acc
                for a in range(6):
                    acc = 0.0
                    for r in range(n):
                        acc += w.S[vi + r, a] * y[0, r]
                    A[k, a, c] -= acc


# --------------------------------------------------------------------------- factor products
@helper(forceinline=True)
def _rows_times(rows, vi, n, z, zi, out):
    """out[r] = rows[vi + r] · z[zi] for the n dofs of a body (H z with rows = S, Uᵀz with U)."""
    for r in range(n):
        acc = 0.0
        for a in range(6):
            acc += rows[vi + r, a] * z[zi, a]
        out[r] = acc


@helper(forceinline=True)
def _dinv_times(Dinv, k, n, h, out):
    """out = D⁻¹(k) h."""
    for r in range(n):
        acc = 0.0
        for r2 in range(n):
            acc += Dinv[k, r, r2] * h[r2]
        out[r] = acc


@helper(forceinline=True)
def _add_rows_combination(rows, vi, n, g, z, zi):
    """z[zi] += Σ_r g[r] rows[vi + r] (H*g with rows = S, U g with U)."""
    for a in range(6):
        acc = 0.0
        for r in range(n):
            acc += rows[vi + r, a] * g[r]
        z[zi, a] += acc


@helper(forceinline=True)
def _update_rows(X, vi, n, c, d, inverse, h):
    """X[vi + r, c] ← x ∓ d[r]; h ← the result (``inverse``) or the old x."""
    for r in range(n):
        x = X[vi + r, c]
        y = x - d[r] if inverse else x + d[r]
        X[vi + r, c] = y
        h[r] = y if inverse else x


@helper(forceinline=True)
def _column_is_zero(X, vi, n, c, Zk):
    """True when column c has no entry at body k's dofs and no force gathered from its
    children: the gather then leaves it zero there. Columns supported on a few dofs (the
    identity of M⁻¹, the rows of a loop constraint) stay zero on every body that is not
    one of their ancestors, so the gather skips those bodies."""
    for r in range(n):
        if X[vi + r, c] != 0.0:
            return False
    for a in range(6):
        if Zk[c, a] != 0.0:
            return False
    return True


@helper
def factor_gather(mi, mf, ws, X, Z, inverse):
    """X ← [I + HφK] X, or with ``inverse`` X ← [I − HψK] X = [I + HφK]⁻¹ X, in place.

    ``X`` (nv, ncols); ``Z`` (nb, ncols, 6) scratch. Tips-to-base gather of
    y = φKx (resp. ψKx): y(k) = Σ_{c ∈ children(k)} φ(k, c) w(c) with
      [I + HφK]:  r(k) = x(k) + H(k)y(k),   w(k) = y(k) + G(k)x(k)
      [I − HψK]:  r(k) = x(k) − H(k)y(k),   w(k) = y(k) + G(k)r(k) = τ̄(k)y(k) + G(k)x(k)
    and r the result [Jain24, topic 6]. Needs :func:`atbi` first.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    Z[:] = 0.0
    d, h, g = w.scratch[0, 0], w.scratch[0, 1], w.scratch[0, 2]
    for k in range(m.nb - 1, -1, -1):
        vi = m.v_index[k]
        n = m.joint_nv[k]
        p = m.parent[k]
        Zk = Z[k]
        for c in range(X.shape[1]):
            if _column_is_zero(X, vi, n, c, Zk):
                continue  # nothing enters or leaves body k: r(k) = 0, w(k) = 0
            _rows_times(w.S, vi, n, Zk, c, d)  # H y
            _update_rows(X, vi, n, c, d, inverse, h)
            _dinv_times(w.Dinv, k, n, h, g)
            _add_rows_combination(w.U, vi, n, g, Zk, c)  # w = y + U D⁻¹ h
            if p >= 0:
                add_force_to_parent(w.R, w.t, k, Zk, c, Z[p], c)


@helper
def factor_scatter(mi, mf, ws, X, Z, inverse):
    """X ← [I + HφK]* X, or with ``inverse`` X ← [I − HψK]* X, in place.

    Base-to-tips scatter of s = φ*H*x (resp. ψ*H*x) with a⁺(k) = φ*(℘(k), k)s(℘(k)):
      [I + HφK]*:  r(k) = x(k) + G*(k)a⁺(k),   s(k) = a⁺(k) + H*(k)x(k)
      [I − HψK]*:  r(k) = x(k) − G*(k)a⁺(k),   s(k) = a⁺(k) + H*(k)r(k) = τ̄*a⁺ + H*x
    [Jain24, topic 6]; the second is the acceleration pass of the ABA. Needs :func:`atbi`.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    d, h, g = w.scratch[0, 0], w.scratch[0, 1], w.scratch[0, 2]
    for k in range(m.nb):
        vi = m.v_index[k]
        n = m.joint_nv[k]
        p = m.parent[k]
        Zk = Z[k]
        for c in range(X.shape[1]):
            if p >= 0:
                motion_to_child(w.R, w.t, k, Z[p], c, Zk, c)
            else:
                Zk[c, :] = 0.0
            _rows_times(w.U, vi, n, Zk, c, d)  # G* a⁺ = D⁻¹ Uᵀ a⁺
            _dinv_times(w.Dinv, k, n, d, g)
            _update_rows(X, vi, n, c, g, inverse, h)
            _add_rows_combination(w.S, vi, n, h, Zk, c)  # s = a⁺ + H* h


@helper
def apply_dinv(mi, mf, ws, X, inverse):
    """X ← D⁻¹X (``inverse``) or X ← DX, blockwise, D(k) = H(k)U(k) (D block diagonal)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    h = w.scratch[0, 0]
    for k in range(m.nb):
        vi = m.v_index[k]
        n = m.joint_nv[k]
        for c in range(X.shape[1]):
            for r in range(n):
                h[r] = X[vi + r, c]
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    if inverse:
                        acc += w.Dinv[k, r, r2] * h[r2]
                    else:
                        d = 0.0
                        for a in range(6):
                            d += w.S[vi + r, a] * w.U[vi + r2, a]
                        acc += d * h[r2]
                X[vi + r, c] = acc


@kernel
def factor_product_kernel(mi, mf, ws, q, Z, inverse, adjoint, X):
    """X ← one innovations factor times X, in place (see ``apply_innovations_factor``);
    ``Z`` (nb, ncols, 6) scratch."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    if X.shape[0] != m.nv or Z.shape[0] != m.nb or Z.shape[1] != X.shape[1]:
        return BAD_SHAPE
    if nonfinite_matrix(X):
        return BAD_SECOND
    if adjoint:
        factor_scatter(mi, mf, ws, X, Z, inverse)
    else:
        factor_gather(mi, mf, ws, X, Z, inverse)
    return OK


# --------------------------------------------------------------------------- det
@kernel(nogil=True)
def log_det_kernel(mi, mf, ws, q, out):
    """out[b] = log det M of state b (:func:`_log_det_state`), for B = len(q) / nq states
    stored one after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a
    block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _log_det_state(mi, mf, ws, state_of(q, b, B), state_of(out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _log_det_state(mi, mf, ws, q, out):
    """out[0] = log det M = Σ_k log det D(k) [Jain24, topic 6], O(N)."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    L = w.scratch[1]
    total = 0.0
    for k in range(m.nb):
        vi = m.v_index[k]
        n = m.joint_nv[k]
        # Cholesky of D(k) = H(k)U(k): log det = 2 Σ log L_rr
        for r in range(n):
            for r2 in range(r + 1):
                s = 0.0
                for a in range(6):
                    s += w.S[vi + r, a] * w.U[vi + r2, a]
                for j in range(r2):
                    s -= L[r, j] * L[r2, j]
                if r == r2:
                    if not s > 0.0:
                        return SINGULAR
                    L[r, r] = math.sqrt(s)
                    total += 2.0 * math.log(L[r, r])
                else:
                    L[r, r2] = s / L[r2, r2]
    out[0] = total
    return OK


@kernel(nogil=True)
def articulated_inertias_kernel(mi, mf, ws, q, P_out, D_out, G_out):
    """P(k), D and G of :func:`_articulated_inertias_state`, for B = len(q) / nq states
    stored one after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a
    block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _articulated_inertias_state(mi, mf, ws, state_of(q, b, B), state_of(P_out, b, B), state_of(D_out, b, B),
                                         state_of(G_out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _articulated_inertias_state(mi, mf, ws, q, P_out, D_out, G_out):
    """P(k) (nb, 6, 6), D = blockdiag D(k) (nv, nv), G (6, nv) with G(k) in k's columns."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    D_out[:] = 0.0
    for k in range(m.nb):
        vi = m.v_index[k]
        n = m.joint_nv[k]
        for r in range(n):
            for r2 in range(n):
                acc = 0.0
                for a in range(6):
                    acc += w.S[vi + r, a] * w.U[vi + r2, a]
                D_out[vi + r, vi + r2] = acc
        for a in range(6):
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    acc += w.U[vi + r2, a] * w.Dinv[k, r2, r]
                G_out[a, vi + r] = acc
        # the pass leaves P⁺(k) = P(k) − U D⁻¹ Uᵀ for non-root bodies
        restore = m.parent[k] >= 0
        for a in range(6):
            for b in range(6):
                acc = w.P[k, a, b]
                if restore:
                    for r in range(n):
                        acc += G_out[a, vi + r] * w.U[vi + r, b]
                P_out[k, a, b] = acc
    return OK
