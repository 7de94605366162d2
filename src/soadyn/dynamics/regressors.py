"""Regressors of the dynamics in the dynamic parameters π (:mod:`soadyn.core.parameters`):
the joint-torque regressor Y with rnea(q, q̇, q̈) = Y π and the energy regressors with
T = y_T π, U = y_U π ([Atkeson86]; kernels in :mod:`soadyn.kernels.torque_regressor` and
:mod:`soadyn.kernels.energy_regressors`).

Columns: ten per body in body order, each body's in Pinocchio's order (m, m c_x, m c_y,
m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz), the inertia about the body origin in body axes —
``pin.computeJointTorqueRegressor``'s columns when Pinocchio's joints and soadyn's bodies
correspond one to one (as for a URDF loaded by both); rows in soadyn's velocity order.
"""
from __future__ import annotations

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, Arg, CompiledFunction, Outputs
from ..kernels.energy_regressors import KINETIC, POTENTIAL, energy_regressors_kernel
from ..kernels.torque_regressor import torque_regressor_kernel

__all__ = ["joint_torque_regressor", "kinetic_energy_regressor", "potential_energy_regressor"]

_RATES = (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True))
_TORQUE = CompiledFunction(torque_regressor_kernel, Batch.stacked(), _RATES, Outputs.shaped("regressor_shape"),
                           params=(val.GRAVITY,), tree_function="joint_torque_regressor")
_ENERGY = CompiledFunction(energy_regressors_kernel, Batch.stacked(), _RATES[:2],
                           Outputs.computed(lambda c, state, params: ((2, 10 * c.nb),)))


def joint_torque_regressor(model, q, v, a, *, gravity=True, out=None, workspace=None):
    """Joint-torque regressor Y(q, q̇, q̈) (nv, 10 nb): ``rnea(model, q, v, a) = Y @ π`` for
    the model's dynamic parameters π = :func:`~soadyn.dynamic_parameters` (and for any other
    π of the same model's bodies: the inverse dynamics are linear in them, [Atkeson86]).

    Parameters
    ----------
    model : Model (a tree; a model with loops, couplings or user constraints raises
        :class:`~soadyn.ClosedChainError`: use :func:`~soadyn.cluster_torque_regressor`
        for its constrained dynamics, or ``model.spanning_tree()`` for the open tree).
    q : (nq,) or (B, nq); v, a : (nv,) or (B, nv) [rad/s, m/s; rad/s², m/s²], None means zero.
    gravity : include the model's gravity (default True), as :func:`~soadyn.rnea`.
    out : optional output; workspace : optional :class:`~soadyn.Workspace`.

    Returns Y, (nv, 10 nb) or (B, nv, 10 nb) [N m or N per unit of each parameter]: column
    10 k + e is parameter e of body k (module docstring); the block of body k is zero in the
    rows of the dofs that do not support it. Pinocchio's ``computeJointTorqueRegressor``
    (which always includes gravity) has the same columns for the same bodies and its rows
    in its velocity order.
    """
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    return _TORQUE.call(model, q, v, a, gravity, out, workspace)


def _energy_rows(model, q, v):
    return _ENERGY(model, (q, ABSENT if v is None else v))


def kinetic_energy_regressor(model, q, v):
    """Kinetic-energy regressor y_T(q, q̇) (10 nb,): ``kinetic_energy(model, q, v) = y_T @ π``
    (:func:`~soadyn.dynamic_parameters`; Pinocchio's ``computeKineticEnergyRegressor``).
    v None means zero. Batched q (B, nq), v (B, nv): (B, 10 nb). [J per unit of each
    parameter]"""
    return _energy_rows(model, q, v)[..., KINETIC, :].copy()


def potential_energy_regressor(model, q):
    """Potential-energy regressor y_U(q) (10 nb,): ``potential_energy(model, q) = y_U @ π``,
    U = −Σ m_k gᵀ c_k (Pinocchio's ``computePotentialEnergyRegressor``). Batched: (B, 10 nb)."""
    return _energy_rows(model, q, None)[..., POTENTIAL, :].copy()
