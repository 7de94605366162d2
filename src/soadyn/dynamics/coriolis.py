"""The Coriolis matrix C(q, q̇) of a tree (kernel in :mod:`soadyn.kernels.coriolis`)."""
from __future__ import annotations

from ..core.batch import Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..kernels.coriolis import coriolis_kernel

__all__ = ["coriolis_matrix"]

_CORIOLIS = CompiledFunction(coriolis_kernel, Batch.stacked(), (Arg("q", "nq"), Arg("v", "nv", optional=True)),
                             Outputs.shaped("vv_shape"), tree_function="coriolis_matrix")


def coriolis_matrix(model, q, v, *, out=None, workspace=None):
    """Coriolis matrix C(q, q̇) (nv, nv) [N m s/rad, ...]: C q̇ are the velocity-product
    forces of the inverse dynamics, rnea(q, q̇, q̈) = M q̈ + C q̇ + g(q), and Ṁ − 2C is
    skew-symmetric — the factorization consistent with the Christoffel symbols of M
    ([Echeandia21]; Pinocchio's ``computeCoriolisMatrix``), for which C = ½ ∂(C q̇)/∂q̇ when
    q̇ are coordinate rates. Computed in O(N d) from world-axes composite inertias, their
    rates and momenta (:mod:`soadyn.kernels.coriolis`, which states the equations).

    Parameters
    ----------
    model : Model (a tree: a model with loops, couplings or user constraints raises
        :class:`~soadyn.ClosedChainError`; use ``model.spanning_tree()`` for its tree).
    q : (nq,) or (B, nq) configuration; v : (nv,) or (B, nv) velocity [ω; v] convention of
        soadyn (None means zero: C = 0).
    out : optional (nv, nv) output; workspace : optional :class:`~soadyn.Workspace`.

    Returns C (nv, nv), or (B, nv, nv). Rows and columns in soadyn's velocity order (a
    Pinocchio free flyer's are [v; ω]: convert both with ``soadyn.interop.pinocchio``).
    """
    return _CORIOLIS.call(model, q, v, out, workspace)
