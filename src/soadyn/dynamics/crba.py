"""The joint-space mass matrix M(q): composite rigid bodies, or [CDI18]'s JᵀMJ
(kernels in :mod:`soadyn.kernels.crba`)."""
from __future__ import annotations

from ..core.batch import Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..kernels.crba import mass_matrix_batch, mass_matrix_jtmj_kernel, mass_matrix_kernel

__all__ = ["mass_matrix"]


_CRBA = CompiledFunction(mass_matrix_kernel, Batch.twin(mass_matrix_batch), (Arg("q", "nq"),),
                         Outputs.shaped("vv_shape"), tree_function="mass_matrix")
_JTMJ = CompiledFunction(mass_matrix_jtmj_kernel, Batch.loop(), (Arg("q", "nq"),), Outputs.shaped("vv_shape"),
                         tree_function="mass_matrix")
METHODS = ("crba", "jtmj")


def mass_matrix(model, q, method="crba", *, out=None, workspace=None):
    """Joint-space mass matrix M(q) (nv, nv) [kg, kg m, kg m² blocks].

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    method : ``"crba"`` (composite rigid bodies, default, O(N d) for a tree of depth d)
        or ``"jtmj"`` ([CDI18]'s M = Gᵀ Ψ_Dᵀ M Ψ_D G column by column, O(N²), an
        independent check).
    out : optional (nv, nv) / (B, nv, nv) output array; workspace : optional
        :class:`~soadyn.Workspace` (the fastest way to call it repeatedly).

    Returns (nv, nv) or (B, nv, nv), symmetric positive semi-definite (singular when
    some joint moves no mass or inertia, or indefinite when a body's inertia is not
    positive semi-definite: see ``Model.singular_mass_matrix_causes``).
    """
    if method == "crba":
        return _CRBA.call(model, q, out, workspace)
    if method == "jtmj":
        return _JTMJ(model, (q,), (), out, workspace)
    raise ValueError(f"method: expected one of {list(METHODS)}, got {method!r}")
