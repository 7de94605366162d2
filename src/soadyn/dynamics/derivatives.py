"""Analytical derivatives of inverse and forward dynamics for trees ([Carpentier18];
kernels in :mod:`soadyn.kernels.derivatives`, equations in ``docs/derivatives.md``)."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, NO_FORCES, Arg, CompiledFunction, Outputs
from ..kernels.derivatives import aba_derivatives_kernel, rnea_derivatives_kernel

__all__ = ["rnea_derivatives", "aba_derivatives"]


def _three_square(c, state, params):
    return (c.vv_shape,) * 3


def _allocate(c, state):
    # one allocation for the three outputs (each C-contiguous): cheaper than three
    block = np.empty((3,) + c.vv_shape)
    return block[0], block[1], block[2]


_RNEA_D = CompiledFunction(rnea_derivatives_kernel, Batch.stacked(),
                           (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True),
                            Arg("f_ext", "forces")),
                           Outputs.computed(_three_square, allocate=_allocate), params=(val.GRAVITY,),
                           tree_function="rnea_derivatives")
_ABA_D = CompiledFunction(aba_derivatives_kernel, Batch.stacked(),
                          (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("tau", "nv"), Arg("f_ext", "forces")),
                          Outputs.computed(_three_square, allocate=_allocate), params=(val.GRAVITY,),
                          tree_function="aba_derivatives")


def _gravity(gravity):
    # the fast path would read its truth value
    return gravity if gravity is True or gravity is False else val.GRAVITY(gravity)


def rnea_derivatives(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Partial derivatives of the inverse dynamics τ = rnea(q, v, a, f_ext).

    Analytical O(N d) recursions in spatial algebra (d: the depth of the tree)
    [Carpentier18]: one forward pass for the world-frame joint columns and the
    derivatives of the body velocities and accelerations, one backward pass that gathers
    the composite inertias, their rates and forces of the subtrees (``docs/derivatives.md``).

    Derivatives with respect to q are taken in the tangent space: column j of ∂τ/∂q is
    d/dε τ(integrate(q, ε e_j), v, a) at ε = 0 — for a free or spherical joint a rotation
    (and translation) of its child body by a body-frame increment, as :func:`~soadyn.integrate`
    applies it (Pinocchio's convention; soadyn's free-joint order is [ω; v]).

    Parameters
    ----------
    model : Model (a tree: models with loops, couplings or user constraints are refused)
    q : (nq,) or (B, nq) configuration.
    v, a : (nv,) or (B, nv) velocity and acceleration; None means zero.
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on the bodies,
        body frame (held fixed in the body frame when q varies).
    gravity : include the model's gravity (default True).
    out : optional tuple of three (nv, nv) (or (B, nv, nv)) output arrays; workspace :
        optional :class:`~soadyn.Workspace`.

    Returns ``(dtau_dq, dtau_dv, M)``, each (nv, nv) or (B, nv, nv): ∂τ/∂q [N m/rad, ...],
    ∂τ/∂v [N m s/rad, ...] and ∂τ/∂a = M(q), the mass matrix. Row i, column j holds
    ∂τ_i/∂x_j.
    """
    return _RNEA_D(model, (q, ABSENT if v is None else v, ABSENT if a is None else a,
                           NO_FORCES if f_ext is None else f_ext), (_gravity(gravity),), out, workspace)


def aba_derivatives(model, q, v, tau, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Partial derivatives of the forward dynamics q̈ = aba(q, v, tau, f_ext).

    From the inverse dynamics M(q)q̈ + C(q, v)v + g(q) − Σ J_kᵀ f_ext(k) = τ differentiated at
    a = q̈: ∂q̈/∂q = −M⁻¹ ∂τ/∂q, ∂q̈/∂v = −M⁻¹ ∂τ/∂v, ∂q̈/∂τ = M⁻¹ — q̈ by the ABA, M⁻¹ by
    its operator expression [I − HψK]* D⁻¹ [I − HψK] on the articulated quantities the ABA
    leaves ([Jain24, topic 6]), ∂τ by :func:`rnea_derivatives`' recursions.

    q-derivatives in the tangent space, as for :func:`rnea_derivatives`. Parameters as
    :func:`~soadyn.aba` (``tau`` required, ``v`` None means zero), ``out`` a tuple of
    three (nv, nv) arrays.

    Returns ``(dqdd_dq, dqdd_dv, dqdd_dtau)``, each (nv, nv) or (B, nv, nv);
    ``dqdd_dtau`` = M⁻¹(q), symmetric. Raises ``numpy.linalg.LinAlgError`` when M is
    singular (as :func:`~soadyn.aba`).
    """
    return _ABA_D(model, (q, ABSENT if v is None else v, tau, NO_FORCES if f_ext is None else f_ext),
                  (_gravity(gravity),), out, workspace)
