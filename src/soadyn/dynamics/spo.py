"""O(N) products with the spatial propagation operators φ, φ*, ψ, ψ* and [CDI18]'s
influence operators Ψ_A (kernels in :mod:`soadyn.kernels.spo`)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.batch import NO_BATCH
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..kernels.spo import influence_product_kernel, spo_product_kernel

__all__ = ["influence_product", "spo_product"]

_SPO = CompiledFunction(spo_product_kernel, NO_BATCH, (Arg("q", "nq"),),
                        Outputs.computed(lambda c, state, params: ((c.nb, 6),)), names=("q", "x"))


def _parents(model):
    return np.array(model.parents, dtype=np.int64)


def influence_product(model, A, x, transpose=False):
    """[CDI18]'s O(N) products z = Ψ_A x (or Ψ_Aᵀ x with ``transpose``) for any
    block-diagonal A.

    Parameters
    ----------
    model : Model (only its tree is used).
    A : (nb, k, k) blocks A_i (root blocks unused: [CDI18]'s A_1 = 0).
    x : (nb, k) or (nb·k,) stacked vector.

    Returns z with the shape of ``x``. The dense Ψ_A is
    :func:`soadyn.operators.influence_resolvent`.
    """
    model = snapshot(model)
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

    ``operator``: ``"phi"`` (φ = (I − E_φ)⁻¹, [Jain12, eq. 10]) or ``"psi"``
    (ψ = (I − E_φτ̄)⁻¹, [Jain24, topic 6], needs the ATBI); ``adjoint`` selects φ*/ψ*.
    φx is a tips-to-base gather of forces (f(k) = x(k) + Σ_children φ(k, j)f(j)); φ*x a
    base-to-tips scatter of motions.

    ``x``: (nb, 6) or (6·nb,) stacked spatial vector, body frames, angular first.
    Returns an array of the same shape.
    """
    model = snapshot(model)
    if operator not in _OPERATORS:
        raise ValueError(f"operator: expected one of {_OPERATORS}, got {operator!r}")
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    xa = np.ascontiguousarray(x, dtype=np.float64)
    if xa.shape not in ((c.nb, 6), (6 * c.nb,)):
        raise ValueError(f"x: expected shape ({c.nb}, 6) or ({6 * c.nb},), got {xa.shape}")
    if not np.all(np.isfinite(xa)):
        raise ValueError("x: expected finite values, got NaN or inf")
    z = _SPO(model, (q,), (operator == "psi", bool(adjoint), np.empty((c.nb, 6, 6)), xa.reshape(c.nb, 6)), None,
             workspace)
    return z.reshape(xa.shape)
