"""The envelope of a Delassus matrix: the products, the Cholesky factor and its solves of
the contact ADMM (:mod:`.admm`) over the entries that can be nonzero.

G(i, j) = J_i M⁻¹ J_jᵀ is zero where contacts i and j move no common degree of freedom:
contacts between bodies of separate subtrees (objects lying on the ground, a stack of
boxes: contact i couples only with the contacts that share one of its bodies). With the
contacts listed as the detection finds them, pair after pair, such a G has a band: row r
of the lower triangle is zero before its first nonzero column f_r (the 5-box stack: each
contact's rows start at the contacts of the interface below, 897 of the 1653 entries of
the lower triangle of a 57-row G). The envelope {(r, c) : f_r ≤ c ≤ r} is what the
Cholesky factor of G + D (D diagonal) fills: no fill before f_r in any row (George & Liu,
*Computer solution of large sparse positive definite systems*, 1981, §4.2), since
L(r, c) = (A(r, c) − Σ_{p<c} L(r, p) L(c, p)) / L(c, c) and every term of row r before f_r
is zero. So the factorization costs Σ_r (r − f_r)² / 2 instead of n³/6, a solve and a
product 2 Σ_r (r − f_r + 1) instead of 2n², and on a dense G (a floating base, where every
contact moves the base: f_r = 0) they are the dense algorithms.

The envelope is found from G itself (its exact zeros: the Delassus kernel writes only the
blocks of pairs that share a body), once per solve; ``first`` holds f_r as floats (a row
of the solver's float scratch), or is empty (f_r = 0). On a dense G the solver calls the
dense algorithms themselves (:func:`~.admm.shifted_cholesky`, :func:`~.admm.cholesky_solve`,
:func:`~.cones.compliant_product`): these take no slices and read no envelope (their
results on solo12 and talos are those of the solver before the envelope).
"""
from __future__ import annotations

import math

from ...core.jit import helper
from .cones import row_dot


@helper(forceinline=True)
def _first(first, r):
    """f_r, the first column of row r in the envelope (0 when ``first`` is empty)."""
    return int(first[r]) if first.shape[0] > 0 else 0


@helper
def find_envelope(G, first):
    """first (n,) ← f_r per row r of the symmetric G (n, n): the first column c ≤ r with
    G[r, c] ≠ 0 (r itself when there is none), then lowered to the least over the rows
    from r on, f_r ← min(f_r, f_{r+1}), so that f is nondecreasing. The lowered envelope
    holds the true one (the rows only gain zeros to skip no more), and with f
    nondecreasing the nonzeros of row r's upper part, the columns c > r with f_c ≤ r,
    are a prefix of the columns after r (:func:`envelope_product`). Returns the size of
    the envelope, Σ_r (r − f_r + 1) (n(n + 1)/2: dense)."""
    n = G.shape[0]
    for r in range(n):
        Gr = G[r]
        c = 0
        while c < r and Gr[c] == 0.0:
            c += 1
        first[r] = c
    size = n
    for r in range(n - 2, -1, -1):
        first[r] = min(first[r], first[r + 1])
    for r in range(n):
        size += r - int(first[r])
    return size


@helper
def envelope_product(G, R, g, lam, sigma, first):
    """σ = (G + diag R) λ + g (n,) over the envelope ``first`` of the symmetric G (n, n),
    stored whole (:func:`find_envelope`: f nondecreasing): row r is zero outside the
    columns f_r..l_r, l_r the last row c with f_c ≤ r (G[r, c] = G[c, r] = 0 for c > l_r),
    read once, contiguously, by a dot product with four partial sums
    (:func:`~.cones.row_dot`)."""
    n = g.shape[0]
    last = 0
    for r in range(n):
        while last + 1 < n and _first(first, last + 1) <= r:
            last += 1
        f = _first(first, r)
        sigma[r] = g[r] + R[r] * lam[r] + row_dot(G[r, f:], lam[f:], last + 1 - f)


@helper
def envelope_cholesky(G, R, shift, A, first):
    """A's lower triangle ← L with L Lᵀ = G + diag R + shift I (G (n, n) symmetric, only
    its lower triangle read) over the envelope ``first``, column by column
    (Cholesky–Crout, as :func:`~.admm.shifted_cholesky`): column j's pivot, then its
    entries in the rows i > j whose envelope holds column j (f_i ≤ j: with f nondecreasing,
    the rows after j up to the last such), each a dot product of two rows of L over the
    columns both rows have in the envelope (from f_i ≥ f_j). No pivoting: with G + R
    positive semidefinite and shift > 0 the matrix is positive definite, and Cholesky is
    backward stable on such a matrix without it. Entries of A before f_r are not written
    (never read). Returns n, or the first row whose pivot is not positive."""
    n = G.shape[0]
    for j in range(n):
        Lj = A[j]
        fj = _first(first, j)
        d = G[j, j] + R[j] + shift - row_dot(Lj[fj:], Lj[fj:], j - fj)
        if not d > 0.0:
            return j
        pivot = math.sqrt(d)
        Lj[j] = pivot
        i = j + 1
        while i < n and _first(first, i) <= j:
            Li = A[i]
            f = _first(first, i)
            Li[j] = (G[i, j] - row_dot(Li[f:], Lj[f:], j - f)) / pivot
            i += 1
    return n


@helper
def envelope_solve(A, b, x, first):
    """x (n,) ← (L Lᵀ)⁻¹ b for L in the lower triangle of A over the envelope ``first``
    (:func:`envelope_cholesky`); x may be b. Both sweeps read L by rows: forward
    y_i = (b_i − L[i, f_i:i]·y)/L_ii, backward by columns of Lᵀ (x_i = y_i/L_ii, then
    y[f_i:i] −= L[i, f_i:i] x_i), each division a product with 1/L_ii."""
    n = b.shape[0]
    for i in range(n):
        f = _first(first, i)
        # times the reciprocal, which depends on L alone: the division leaves the chain
        # of dependent rows (a multiplication's latency on it instead of a division's)
        x[i] = (b[i] - row_dot(A[i, f:], x[f:], i - f)) * (1.0 / A[i, i])
    for i in range(n - 1, -1, -1):
        Li = A[i]
        xi = x[i] * (1.0 / Li[i])
        x[i] = xi
        for c in range(_first(first, i), i):
            x[c] -= Li[c] * xi
