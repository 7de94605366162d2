"""Articulated-body quantities, the innovations factorization, M⁻¹ and log det M
(kernels in :mod:`soadyn.kernels.innovations`; [Jain24, topics 5–6])."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core import validation as val
from ..core.call import Arg, CompiledFunction
from ..kernels.innovations import (articulated_inertias_batch, articulated_inertias_kernel, factor_product_kernel,
                                   log_det_batch, log_det_kernel, mass_matrix_inverse_batch, mass_matrix_inverse_kernel)

__all__ = ["articulated_inertias", "mass_matrix_inverse", "log_det_mass_matrix",
           "apply_innovations_factor", "ArticulatedInertias"]

ArticulatedInertias = namedtuple("ArticulatedInertias", ["P", "D", "G"])
ArticulatedInertias.__doc__ = """Output of :func:`articulated_inertias`.

P (nb, 6, 6): articulated body inertia P(k) of each body, body frame, about its origin.
D (nv, nv): the block-diagonal operator D, D(k) = H(k)P(k)H*(k) at body k's dofs.
G (6, nv): Kalman gains, G(k) = P(k)H*(k)D⁻¹(k) in the columns of body k's dofs.
"""


def _articulated_outputs(c, state, params):
    return (c.nb, 6, 6), (c.nv, c.nv), (6, c.nv)


def _allocate_articulated(c, state):
    return np.empty((c.nb, 6, 6)), np.empty((c.nv, c.nv)), np.empty((6, c.nv))


_ARTICULATED = CompiledFunction(articulated_inertias_kernel, articulated_inertias_batch, (Arg("q", "nq"),), _articulated_outputs,
                                allocate=_allocate_articulated, tree_function="articulated_inertias")
_MINV = CompiledFunction(mass_matrix_inverse_kernel, mass_matrix_inverse_batch, (Arg("q", "nq"),), "vv_shape",
                         tree_function="mass_matrix_inverse")
_LOG_DET = CompiledFunction(log_det_kernel, log_det_batch, (Arg("q", "nq"),), lambda c, state, params: ((1,),),
                            tree_function="log_det_mass_matrix")


def articulated_inertias(model, q, *, workspace=None):
    """The articulated-body quantities P(k), D(k), G(k) at ``q`` (ATBI, [Jain23p, eq. 7]).

    O(N) Riccati recursion, tips to base: P(k) = M(k) + Σ_{j ∈ children(k)} φ(k, j)τ̄(j)P(j)φ*(k, j),
    D(k) = H(k)P(k)H*(k), G(k) = P(k)H*(k)D⁻¹(k), τ̄ = I − GH.

    Parameters: model; q (nq,) (or (B, nq): then every output has a leading B).
    Returns :class:`ArticulatedInertias` ``(P, D, G)``: P (nb, 6, 6) [kg, kg m, kg m²],
    D (nv, nv) block diagonal, G (6, nv).
    """
    return ArticulatedInertias(*_ARTICULATED(model, (q,), (), None, workspace))


def mass_matrix_inverse(model, q, *, out=None, workspace=None):
    """Inverse mass matrix M⁻¹(q) by its operator expression M⁻¹ = [I − HψK]* D⁻¹ [I − HψK].

    [Jain24, topic 6] (and the "G_c M⁻¹ G_c* simplification" there): one tips-to-base
    gather and one base-to-tips scatter over the N columns of the identity, O(N²),
    without forming or factoring M.

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    out : optional (nv, nv) / (B, nv, nv) output; workspace : optional :class:`~soadyn.Workspace`.

    Returns (nv, nv) or (B, nv, nv), symmetric positive definite [1/kg, 1/(kg m²), ...].
    """
    return _MINV(model, (q,), (), out, workspace)


def log_det_mass_matrix(model, q, *, workspace=None):
    """log det M(q) = Σ_k log det D(k) ([Jain24, topic 6], from the innovations
    factorization with unit-triangular factors), O(N). Returns a float, or (B,) for
    batched q."""
    out = _LOG_DET(model, (q,), (), None, workspace)
    return float(out[0]) if out.ndim == 1 else out[:, 0].copy()


_FACTOR = CompiledFunction(factor_product_kernel, None, (Arg("q", "nq"),),
                           lambda c, state, params: ((c.nv, params[0].shape[1]),), names=("q", "x"),
                           tree_function="apply_innovations_factor")


def apply_innovations_factor(model, q, x, *, inverse=False, adjoint=False, workspace=None):
    """Product of an innovations factor with ``x`` in O(N) per column [Jain24, topic 6].

    ==========  ==========  ==========================
    inverse     adjoint     returns
    ==========  ==========  ==========================
    False       False       [I + HφK] x
    False       True        [I + HφK]* x
    True        False       [I − HψK] x = [I + HφK]⁻¹ x
    True        True        [I − HψK]* x
    ==========  ==========  ==========================

    M = [I + HφK] D [I + HφK]* and M⁻¹ = [I − HψK]* D⁻¹ [I − HψK].
    ``x``: (nv,) or (nv, k) for k columns; the result has the same shape.
    """
    c = model.compiled
    X = np.array(x, dtype=np.float64, order="C", copy=True)
    if X.ndim not in (1, 2) or X.shape[0] != c.nv:
        raise ValueError(f"x: expected shape ({c.nv},) or ({c.nv}, k), got {X.shape}")
    X2 = X.reshape(c.nv, -1)
    q = val.vector(q, c.nq, "q", batch_ok=False)
    _FACTOR(model, (q,), (np.empty((c.nb, X2.shape[1], 6)), bool(inverse), bool(adjoint)), X2, workspace)
    return X
