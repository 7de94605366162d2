"""The products of the contact Jacobian J a time stepper needs, without forming J: the
contact velocities σ = J v, the generalized impulse Jᵀλ and the velocity change
Δv = M⁻¹ Jᵀλ (kernels in :mod:`soadyn.kernels.contact.points`)."""
from __future__ import annotations

import numpy as np

from ..closed.embedding.algorithms import cluster_aba
from ..closed.embedding.clusters import cluster_tree, independent_state
from ..core.batch import NO_BATCH
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import snapshot
from ..dynamics.aba import aba
from ..kernels.contact.points import contact_impulse_kernel, contact_velocities_kernel
from .delassus import contact_arrays

__all__ = ["contact_velocities", "contact_impulse", "impulse_response"]

_VELOCITIES = CompiledFunction(contact_velocities_kernel, NO_BATCH, (Arg("q", "nq"), Arg("v", "nv")),
                               Outputs.param_shaped(lambda c, cbody: (cbody.shape[0], 3)), params=(None,) * 3)
_IMPULSE = CompiledFunction(contact_impulse_kernel, NO_BATCH, (Arg("q", "nq"),),
                            Outputs.computed(lambda c, state, params: ((c.nb, 6), (c.nv,)),
                                             allocate=lambda c, state: (np.empty((c.nb, 6)), np.empty(c.nv))),
                            params=(None,) * 4)


def _impulses(impulses, k):
    try:
        lam = np.asarray(impulses, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"impulses: expected (k, 3) numbers [N s], got {type(impulses).__name__}") from None
    if lam.size == 3 * k and lam.ndim in (1, 2) and (lam.ndim == 1 or lam.shape[1] == 3):
        lam = lam.reshape(k, 3)
    else:
        raise ValueError(f"impulses: expected shape ({k}, 3), got {lam.shape}")
    if not np.all(np.isfinite(lam)):
        raise ValueError(f"impulses: expected finite values, got {lam[~np.isfinite(lam)][0]}")
    return np.ascontiguousarray(lam)


def contact_velocities(model, q, v, contacts):
    """σ = J v (k, 3) [m/s]: the velocity of each contact's second body relative to its
    first at the contact point, in the contact frame (t1, t2, n) (σ_n > 0: separating).
    q (nq,), v (nv,) (on a model with loops, a spanning state that satisfies them)."""
    model = snapshot(model)  # one model state for the check and the kernels
    cbody, cpoint, cframe = contact_arrays(model, contacts)
    return _VELOCITIES(model, (q, v), (cbody, cpoint, cframe))


def contact_impulse(model, q, contacts, impulses):
    """The generalized impulse Jᵀλ (nv,) [N m s, N s] of contact impulses λ (k, 3) (in the
    contact frames, on the second body, −λ on the first), by one tips-to-base gather
    ([Jain12, eq. 12]) of the bodies' spatial impulses."""
    model = snapshot(model)  # one model state for the check and the kernels
    cbody, cpoint, cframe = contact_arrays(model, contacts)
    lam = _impulses(impulses, cbody.shape[0])
    return _IMPULSE(model, (q,), (cbody, cpoint, cframe, lam))[1]


def impulse_response(model, q, contacts, impulses):
    """Δv = M⁻¹ Jᵀλ (nv,) [rad/s, m/s], the velocity change of contact impulses λ (k, 3), in
    O(N): the ABA with the bodies' spatial impulses as external forces, no velocity and no
    gravity. On a model with loops, couplings or user constraints, the constrained response
    Δv = G_y H⁻¹ G_yᵀ Jᵀλ by C-ABA in the independent coordinates ([Chignoli23, Alg. 1];
    q a spanning configuration that satisfies the constraints)."""
    model = snapshot(model)  # one model state for the check and the kernels
    cbody, cpoint, cframe = contact_arrays(model, contacts)
    lam = _impulses(impulses, cbody.shape[0])
    F, _ = _IMPULSE(model, (q,), (cbody, cpoint, cframe, lam))
    if not model.has_constraints:
        return aba(model, q, None, np.zeros(model.nv), F, gravity=False)
    tree = cluster_tree(model)
    q = np.asarray(q, dtype=float)
    y, _ = independent_state(model, q, None)
    ydd = cluster_aba(model, y, None, np.zeros(tree.nyv), F, q=q, gravity=False)
    return tree.explicit_jacobian(q) @ ydd
