"""Articulated-body quantities, the innovations factorization, M⁻¹ and log det M
(kernels in :mod:`soadyn.kernels.innovations`; [Jain24, topics 5–6])."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core import validation as val
from ..core.batch import NO_BATCH, Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..core.layout import numpy_model_tables
from ..core.partition import partitioned_body_names
from ..kernels.innovations import articulated_inertias_kernel, factor_product_kernel, log_det_kernel
from ..kernels.ltdl import mass_matrix_inverse_ltdl_batch, mass_matrix_inverse_ltdl_kernel
from ..kernels.minverse import mass_matrix_inverse_batch, mass_matrix_inverse_kernel
from ..kernels.aba import partitioned_inertias_kernel

__all__ = ["articulated_inertias", "mass_matrix_inverse", "log_det_mass_matrix",
           "apply_innovations_factor", "ArticulatedInertias"]

class ArticulatedInertias(namedtuple("ArticulatedInertias", ["P", "D", "G"])):
    """Output of :func:`articulated_inertias`: unpacks as ``P, D, G``; also carries
    ``P_plus`` and ``bodies``. Indexed by the bodies and dofs of the model, or, with
    ``partitioned=True``, of the bodies and sub-bodies of ``partition_hinges(model, q)``
    (every one with at most one dof).

    P (n, 6, 6): articulated body inertia P(k) of each (sub-)body, in its frame, about its
        origin [kg, kg m, kg m²].
    D (nv, nv): the block-diagonal operator D, D(k) = H(k)P(k)H*(k) at body k's dofs
        (diagonal when partitioned).
    G (6, nv): Kalman gains, G(k) = P(k)H*(k)D⁻¹(k) in the columns of body k's dofs.
    P_plus (n, 6, 6): P⁺(k) = τ̄(k)P(k) = P(k) − G(k)D(k)G*(k), the inertia that body k
        passes to its parent (P(k) for a fixed joint).
    bodies: the n body names.

    A leading batch dimension B is added to the arrays for batched ``q``.
    """

    # no __slots__: the instance dict holds P_plus and bodies (unpacking stays P, D, G)
    def __new__(cls, P, D, G, P_plus, bodies):
        self = super().__new__(cls, P, D, G)
        self.P_plus = P_plus
        self.bodies = bodies
        return self

    def __getnewargs__(self):
        return (self.P, self.D, self.G, self.P_plus, self.bodies)


def _articulated_outputs(c, state, params):
    return (c.nb, 6, 6), (c.nv, c.nv), (6, c.nv)


def _allocate_articulated(c, state):
    return np.empty((c.nb, 6, 6)), np.empty((c.nv, c.nv)), np.empty((6, c.nv))


_ARTICULATED = CompiledFunction(articulated_inertias_kernel, Batch.stacked(), (Arg("q", "nq"),),
                                Outputs.computed(_articulated_outputs, allocate=_allocate_articulated),
                                tree_function="articulated_inertias")

def _subbody_count(c):
    """Bodies of the partitioned model (one per sub-hinge, one per fixed-joint body)."""
    return int(np.maximum(numpy_model_tables(c.mi, c.mf).joint_nv, 1).sum())


def _partitioned_outputs(c, state, params):
    n = _subbody_count(c)
    return (n, 6, 6), (n, 6, 6), (c.nv, c.nv), (6, c.nv)


def _allocate_partitioned(c, state):
    n = _subbody_count(c)
    return np.empty((n, 6, 6)), np.empty((n, 6, 6)), np.empty((c.nv, c.nv)), np.empty((6, c.nv))


_PARTITIONED = CompiledFunction(partitioned_inertias_kernel, Batch.stacked(), (Arg("q", "nq"),),
                                Outputs.computed(_partitioned_outputs, allocate=_allocate_partitioned),
                                tree_function="articulated_inertias")
_MINV = CompiledFunction(mass_matrix_inverse_kernel, Batch.twin(mass_matrix_inverse_batch), (Arg("q", "nq"),),
                         Outputs.shaped("vv_shape"), tree_function="mass_matrix_inverse")
_LOG_DET = CompiledFunction(log_det_kernel, Batch.stacked(), (Arg("q", "nq"),),
                            Outputs.computed(lambda c, state, params: ((1,),)), tree_function="log_det_mass_matrix")
_MINV_LTDL = CompiledFunction(mass_matrix_inverse_ltdl_kernel, Batch.twin(mass_matrix_inverse_ltdl_batch),
                              (Arg("q", "nq"),), Outputs.shaped("vv_shape"), tree_function="mass_matrix_inverse")
#: the methods of :func:`mass_matrix_inverse`
MINV_METHODS = ("ltdl", "innovations")


def _plus(model, P, D, G):
    """P⁺(k) = P(k) − G(k)D(k)G*(k) per body (any leading batch dimension)."""
    out = P.copy()
    for b in model.bodies:
        j = b.joint
        if j.nv:
            dofs = slice(j.v_index, j.v_index + j.nv)
            Gk = G[..., :, dofs]
            out[..., b.index, :, :] -= Gk @ D[..., dofs, dofs] @ np.swapaxes(Gk, -1, -2)
    return out


def articulated_inertias(model, q, *, partitioned=False, workspace=None):
    """The articulated-body quantities P(k), P⁺(k), D(k), G(k) at ``q``.

    ``partitioned=False``: the ATBI recursion ([Jain23p, eq. 7]), O(N), tips to base:
    P(k) = M(k) + Σ_{j ∈ children(k)} φ(k, j)P⁺(j)φ*(k, j), D(k) = H(k)P(k)H*(k),
    G(k) = P(k)H*(k)D⁻¹(k), τ̄ = I − GH, P⁺(k) = τ̄(k)P(k); per body of the model.

    ``partitioned=True``: the partitioned ATBI recursion ([Jain23p, eq. 8],
    :mod:`soadyn.kernels.aba`), per body *and sub-body* of
    ``partition_hinges(model, q)`` (the mass-less sub-bodies of every multi-dof hinge, named
    as :func:`soadyn.partition_hinges` names them; the chart of spherical and free joints
    centred at this q), each with one dof (D diagonal) and in its own frame. For an
    original body k, P(k) equals the unpartitioned P(k) ([Jain23p, Lemma 3.3, eq. 17]) and
    ``P_plus`` is the partitioned P⁺(k) = τ̄(k)P(k) after k's own sub-hinge k″ only; the
    unpartitioned P⁺(k) is P⁺(k) − P⁺(k)H_C*(k)D⁻¹(k′)H_C(k)P⁺(k) (eq. 18), the
    quantity its inboard sub-bodies pass on.

    Parameters: model; q (nq,) (or (B, nq): then every array has a leading B);
    partitioned (bool).
    Returns :class:`ArticulatedInertias` ``(P, D, G)`` with ``.P_plus`` and ``.bodies``:
    P, P_plus (n, 6, 6) [kg, kg m, kg m²], D (nv, nv), G (6, nv), n the number of bodies
    (of sub-bodies and bodies when partitioned).
    """
    model = snapshot(model)
    if partitioned is not True and partitioned is not False:
        raise TypeError(f"partitioned: expected True or False, got {partitioned!r}")
    if partitioned:
        P, P_plus, D, G = _PARTITIONED(model, (q,), (), None, workspace)
        return ArticulatedInertias(P, D, G, P_plus, tuple(partitioned_body_names(model)))
    P, D, G = _ARTICULATED(model, (q,), (), None, workspace)
    return ArticulatedInertias(P, D, G, _plus(model, P, D, G), tuple(model.body_names))


def mass_matrix_inverse(model, q, *, method="innovations", out=None, workspace=None):
    """Inverse mass matrix M⁻¹(q).

    Methods:

    * ``"innovations"`` (default): the SOA operator expression
      M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] ([Jain24, topic 6]), O(N²), without forming or
      factoring M: the ATBI recursion in world axes, then per column of the identity one
      walk from its body to the root (the gather) and one pass over the bodies before it
      (the scatter, the upper triangle) (:mod:`soadyn.kernels.minverse`; with ``out=``
      and a ``Workspace``, faster than ``"ltdl"`` on the arms and quadrupeds measured and
      most on the humanoid: ``benchmarks/results/design_notes.md``).
    * ``"ltdl"``: M by composite rigid bodies, its sparse factorization M = LᵀDL with the
      tree's branch-induced sparsity (no fill-in) and the inverse from the factors
      ([Featherstone05]), O(N d²) for depth d.

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    method : ``"ltdl"`` or ``"innovations"`` (the same matrix to rounding).
    out : optional (nv, nv) / (B, nv, nv) output; workspace : optional :class:`~soadyn.Workspace`.

    Returns (nv, nv) or (B, nv, nv), symmetric positive definite [1/kg, 1/(kg m²), ...].
    """
    if method == "innovations":  # the default first: one comparison
        return _MINV.call(model, q, out, workspace)
    if method == "ltdl":
        return _MINV_LTDL.call(model, q, out, workspace)
    raise ValueError(f"method: expected one of {list(MINV_METHODS)}, got {method!r}")


def log_det_mass_matrix(model, q, *, workspace=None):
    """log det M(q) = Σ_k log det D(k) ([Jain24, topic 6], from the innovations
    factorization with unit-triangular factors), O(N). Returns a float, or (B,) for
    batched q."""
    out = _LOG_DET(model, (q,), (), None, workspace)
    return float(out[0]) if out.ndim == 1 else out[:, 0].copy()


_FACTOR = CompiledFunction(factor_product_kernel, NO_BATCH, (Arg("q", "nq"),),
                           Outputs.computed(lambda c, state, params: ((c.nv, params[0].shape[1]),)), names=("q", "x"),
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
    model = snapshot(model)
    c = model.compiled
    X = np.array(x, dtype=np.float64, order="C", copy=True)
    if X.ndim not in (1, 2) or X.shape[0] != c.nv:
        raise ValueError(f"x: expected shape ({c.nv},) or ({c.nv}, k), got {X.shape}")
    X2 = X.reshape(c.nv, -1)
    q = val.vector(q, c.nq, "q", batch_ok=False)
    _FACTOR(model, (q,), (np.empty((c.nb, X2.shape[1], 6)), bool(inverse), bool(adjoint)), X2, workspace)
    return X
