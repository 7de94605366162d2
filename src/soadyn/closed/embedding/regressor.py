"""The regressor of the constrained dynamics in the independent coordinates: Y_c(y, ẏ, ÿ)
with cluster_rnea(y, ẏ, ÿ) = Y_c π over the spanning tree's bodies, rotors included.

With q = γ(y), q̇ = G ẏ, q̈ = G ÿ + g ([Chignoli23, eq. 3]) the independent forces are
τ_ind = Gᵀ τ(q, q̇, q̈) ([Chignoli23, §V-D, eq. 29–31]; ``docs/cluster_derivatives.md``, eq. CD-1),
τ the spanning tree's inverse dynamics, which is linear in the bodies' dynamic parameters
π (:mod:`soadyn.core.parameters`): τ = Y(q, q̇, q̈) π ([Atkeson86];
:func:`~soadyn.joint_torque_regressor`). Hence

    Y_c(y, ẏ, ÿ) = G(q)ᵀ Y(q, G ẏ, G ÿ + g)      (nyv, 10 nb).

G and g do not depend on π, so a transmission's effect on the identification — a rotor's
inertia reaches the independent coordinates only through G, a geared rotor's axial moment
as N² I_rot and its coupling with the link it rides on — is in Y_c exactly, not in an
approximate reflected inertia ([Chignoli23, §II-C]).
"""
from __future__ import annotations

import numpy as np

from ...core import validation as val
from ...dynamics.regressors import joint_torque_regressor
from .algorithms import check_spanning_configuration, checked_state
from .clusters import cluster_tree
from .derivatives import _SpanningForm

__all__ = ["cluster_torque_regressor"]


def cluster_torque_regressor(model, y, yd, ydd, q=None, *, gravity=True):
    """Regressor Y_c (nyv, 10 nb) of the constrained inverse dynamics in independent
    coordinates: ``cluster_rnea(model, y, yd, ydd) = Y_c @ dynamic_parameters(model)`` (and
    for any other π of the model's bodies), the columns over every body of the spanning
    tree — rotors and dependent bodies included — ten per body in the order of
    :func:`~soadyn.dynamic_parameters` (Pinocchio's: m, m c, the inertia about the body
    origin). Y_c = G(q)ᵀ Y(q, G ẏ, G ÿ + g) ([Chignoli23, eq. 3, §V-D]; module docstring).

    Parameters
    ----------
    model : Model with loops, couplings or holonomic user constraints (see
        :func:`~soadyn.cluster_tree`).
    y : (nyq,) independent coordinates [rad, m]; yd, ydd : (nyv,) their rates [rad/s, m/s;
        rad/s², m/s²] (None means zero).
    q : optional (nq,) spanning configuration that fixes the assembly branch, as for
        :func:`~soadyn.cluster_rnea` (y must be its independent coordinates and q must
        satisfy the constraints); default q = γ(y), solved as :func:`~soadyn.cluster_rnea`
        solves it.
    gravity : include the model's gravity (default True).

    Batches: y (B, nyq), yd, ydd (B, nyv) (and q (B, nq) when given) are evaluated state by
    state; returns (B, nyv, 10 nb).

    Returns Y_c (nyv, 10 nb) [N m or N per unit of each parameter]. External forces are not
    part of it (subtract their generalized forces from the measured τ_ind). A pure function
    of its arguments.
    """
    tree = cluster_tree(model)
    if np.ndim(y) == 2:
        rows = np.shape(y)[0]

        def row(x, b):
            return None if x is None else x[b]
        return np.stack([cluster_torque_regressor(model, y[b], row(yd, b), row(ydd, b), row(q, b), gravity=gravity)
                         for b in range(rows)]) if rows else np.zeros((0, tree.nyv, 10 * model.nbodies))
    if gravity is not True and gravity is not False:
        gravity = val.GRAVITY(gravity)
    y, yd, q, _ = checked_state(model, tree, y, yd, q, None)
    ydd = None if ydd is None else val.vector(ydd, tree.nyv, "ydd", batch_ok=False)
    if q is not None:
        check_spanning_configuration(model, tree, y, q)
    form = _SpanningForm(model, tree, y, q)
    zero = np.zeros(tree.nyv)
    v, a = form.rates(zero if yd is None else yd, zero if ydd is None else ydd)
    return form.G.T @ joint_torque_regressor(form.spanning, form.q, v, a, gravity=gravity)
