"""O(N) products with spatial propagation operators (SPOs): seed 003's two algorithms.

Seed 003 ("O(N) recursive operators") for an influence matrix Φ_A of a block-diagonal
A = diag{A_i} ([Φ_A](i, ℘(i)) = A_i) and Ψ_A = (e − Φ_A)⁻¹:

* z = Ψ_A x:   z_i = A_i z_℘(i) + x_i,  parents before children (base to tips);
* z = Ψ_Aᵀ x:  z = x, then z_℘(i) += A_iᵀ z_i,  children before parents (tips to base),

here for any tree (several children per body, several roots). With A_k = φ*(℘(k), k)
they are φ*x and φx (Ψ_A = φ*, since Φ_A = E_φ*); with A_k = ψ*(℘(k), k) =
τ̄*(k)φ*(℘(k), k) they are ψ*x and ψx (seed 001 topic 6, seed 002 §2.4 "O(N)
procedures for computing SPO operator and stacked vector products").
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _validation as val
from ._layout import PARENT
from .innovations import atbi, spo_adjoint_blocks
from .kinematics import check_quaternions, joint_placements, nonfinite

__all__ = ["influence_product", "spo_product"]


@njit(cache=True)
def influence_product_kernel(parents, A, x, z, transpose):
    """z = Ψ_A x (``transpose`` False) or z = Ψ_Aᵀ x (True); A (n, k, k), x and z (n, k)."""
    n = parents.shape[0]
    k = A.shape[1]
    if not transpose:
        for i in range(n):
            p = parents[i]
            for a in range(k):
                acc = x[i, a]
                if p >= 0:
                    for b in range(k):
                        acc += A[i, a, b] * z[p, b]
                z[i, a] = acc
    else:
        z[:] = x
        for i in range(n - 1, -1, -1):
            p = parents[i]
            if p >= 0:
                for a in range(k):
                    acc = 0.0
                    for b in range(k):
                        acc += A[i, b, a] * z[i, b]
                    z[p, a] += acc


@njit(cache=True)
def spo_product_kernel(mi, mf, q, ws, nv, psi, adjoint, A, x, z):
    if nonfinite(q):
        return val.BAD_FIRST
    if nonfinite(x.ravel()):
        return val.BAD_SECOND
    if psi:
        st = atbi(mi, mf, q, ws, nv)
        if st != val.OK:
            return st
    else:
        if not check_quaternions(mi, q):
            return val.BAD_QUATERNION
        joint_placements(mi, mf, q, ws, nv)
    spo_adjoint_blocks(mi, ws, nv, psi, A)
    influence_product_kernel(np.ascontiguousarray(mi[:, PARENT]), A, x, z, not adjoint)
    return val.OK


def _parents(model):
    return np.array(model.parents, dtype=np.int64)


def influence_product(model, A, x, transpose=False):
    """Seed 003's O(N) products z = Ψ_A x (or Ψ_Aᵀ x with ``transpose``) for any
    block-diagonal A.

    Parameters
    ----------
    model : Model (only its tree is used).
    A : (nb, k, k) blocks A_i (root blocks unused: seed 003's A_1 = 0).
    x : (nb, k) or (nb·k,) stacked vector.

    Returns z with the shape of ``x``. The dense Ψ_A is
    :func:`soadyn.operators.influence_resolvent`.
    """
    nb = model.nbodies
    A = np.ascontiguousarray(A, dtype=np.float64)
    if A.ndim != 3 or A.shape[0] != nb or A.shape[1] != A.shape[2]:
        raise ValueError(f"A: expected shape ({nb}, k, k), got {A.shape}")
    k = A.shape[1]
    xa = np.ascontiguousarray(x, dtype=np.float64)
    if xa.shape not in ((nb, k), (nb * k,)):
        raise ValueError(f"x: expected shape ({nb}, {k}) or ({nb * k},), got {xa.shape}")
    z = np.empty((nb, k))
    influence_product_kernel(_parents(model), A, xa.reshape(nb, k), z, bool(transpose))
    return z.reshape(xa.shape)


_OPERATORS = ("phi", "psi")


def spo_product(model, q, x, operator="phi", adjoint=False, *, workspace=None):
    """φx, φ*x, ψx or ψ*x in O(N) for a stacked spatial vector ``x``.

    ``operator``: ``"phi"`` (φ = (I − E_φ)⁻¹, seed 002 eq. 10) or ``"psi"``
    (ψ = (I − E_φτ̄)⁻¹, seed 001 topic 6, needs the ATBI); ``adjoint`` selects φ*/ψ*.
    φx is a tips-to-base gather of forces (f(k) = x(k) + Σ_children φ(k, j)f(j)); φ*x a
    base-to-tips scatter of motions.

    ``x``: (nb, 6) or (6·nb,) stacked spatial vector, body frames, angular first.
    Returns an array of the same shape.
    """
    if operator not in _OPERATORS:
        raise ValueError(f"operator: expected one of {_OPERATORS}, got {operator!r}")
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    xa = np.ascontiguousarray(x, dtype=np.float64)
    if xa.shape not in ((c.nb, 6), (6 * c.nb,)):
        raise ValueError(f"x: expected shape ({c.nb}, 6) or ({6 * c.nb},), got {xa.shape}")
    ws = workspace if workspace is not None else model.workspace()
    z = np.empty((c.nb, 6))
    st = spo_product_kernel(c.mi, c.mf, q, ws.buffer, c.nv, operator == "psi", bool(adjoint),
                            np.empty((c.nb, 6, 6)), xa.reshape(c.nb, 6), z)
    if st:
        val.raise_status(st, ("q", "x"))
    return z.reshape(xa.shape)
