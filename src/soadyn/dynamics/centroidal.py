"""Centre of mass and centroidal dynamics ([Orin13]): the centre of mass and its rates, its
Jacobian, the centroidal momentum matrix A_G, the centroidal momentum h_G = A_G q̇ and its
rate, the centroidal composite inertia (kernels in :mod:`soadyn.kernels.centroidal_map` and
:mod:`soadyn.kernels.centroidal_momentum`).

Everything is in world axes; spatial quantities are angular first like every spatial vector
of soadyn: h_G = [k_G; l_G] (angular momentum about the centre of mass, then linear
momentum) and the rows of A_G in the same order. Pinocchio orders them linear first: its
``data.hg`` is [l_G; k_G], its ``Ag`` (``computeCentroidalMap``, ``ccrba``) has the linear
rows first and its columns in Pinocchio's velocity order (a free flyer's [v; ω]), its
``data.Ig`` is linear first. :mod:`soadyn.interop.pinocchio` maps them:
``A_G = jacobian_from_pinocchio(model, Ag)`` (rows [3, 4, 5, 0, 1, 2] of Pinocchio's, its
columns in soadyn's order), ``h_G = force_from_pinocchio(hg)``,
``J_c = v_from_pinocchio(model, Jcom)`` (the columns).
"""
from __future__ import annotations

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, Arg, CompiledFunction, Outputs
from ..kernels.centroidal_map import centroidal_map_kernel
from ..kernels.centroidal_momentum import (COM, COM_ACCELERATION, COM_VELOCITY, INERTIA, MOMENTUM, MOMENTUM_RATE,
                                           SIZE, centroidal_momentum_kernel)
from ..kernels.plain import centroidal_map_plain_kernel

__all__ = ["center_of_mass", "center_of_mass_jacobian", "centroidal_momentum_matrix", "centroidal_momentum",
           "centroidal_momentum_rate", "centroidal_inertia"]

_Q = (Arg("q", "nq"),)

# one kernel for A_G (6, nv) and J_c (3, nv), the output's rows saying which, with its plain
# call (one array of tables instead of three, soadyn.kernels.plain: on solo12 the dispatch of
# the arguments is a large part of the call)
_MAP = CompiledFunction(centroidal_map_kernel, Batch.stacked(), _Q, Outputs.shaped("jacobian_shape"),
                        plain=centroidal_map_plain_kernel)
_COM_JACOBIAN = CompiledFunction(centroidal_map_kernel, Batch.stacked(), _Q, Outputs.shaped("com_jacobian_shape"),
                                 plain=centroidal_map_plain_kernel)
_MOMENTUM = CompiledFunction(centroidal_momentum_kernel, Batch.stacked(),
                             _Q + (Arg("v", "nv", optional=True), Arg("a", "nv", optional=True)),
                             Outputs.computed(lambda c, state, params: ((SIZE,),)), params=(val.flag("rate"),))


def _rates(model, q, v, a, rate=False):
    """The kernel's output for (q, v, a), absent rates as the stand-in the fast path takes;
    with ``rate`` the rates c̈ and ḣ_G too."""
    return _MOMENTUM(model, (q, ABSENT if v is None else v, ABSENT if a is None else a), (rate,))


def _entries(e, start, size):
    """Entries start..start + size − 1 of each state's output (a copy)."""
    return e[..., start:start + size].copy()


def center_of_mass(model, q, v=None, a=None):
    """World position of the system's centre of mass c = Σ m_k c_k / m (3,) [m]; with ``v``
    also its velocity ċ (3,) [m/s], with ``v`` and ``a`` (or ``a`` alone: then q̇ = 0) also
    its acceleration c̈ (3,) [m/s²], returned as a tuple (c, ċ) or (c, ċ, c̈). Batched q (B,
    nq) with v, a (B, nv) give (B, 3) each. c̈ is the kinematic acceleration, l̇_G / m (no
    gravity in it); ċ = J_c q̇ (:func:`center_of_mass_jacobian`). A mass-less system
    raises ValueError."""
    e = _rates(model, q, v, a, a is not None)
    c = _entries(e, COM, 3)
    if v is None and a is None:
        return c
    if a is None:
        return c, _entries(e, COM_VELOCITY, 3)
    return c, _entries(e, COM_VELOCITY, 3), _entries(e, COM_ACCELERATION, 3)


def center_of_mass_jacobian(model, q, *, out=None, workspace=None):
    """Jacobian of the centre of mass J_c (3, nv), world axes: ċ = J_c q̇ [m/s per unit of
    q̇]. Pinocchio's ``jacobianCenterOfMass`` (columns in its velocity order). O(N) from the
    subtree masses and first moments (:mod:`soadyn.kernels.com_jacobian`).

    q : (nq,) or (B, nq) → (3, nv) or (B, 3, nv). out : optional output; workspace :
    optional :class:`~soadyn.Workspace`. A mass-less system raises ValueError."""
    return _COM_JACOBIAN.call(model, q, out, workspace)


def centroidal_momentum_matrix(model, q, *, out=None, workspace=None):
    """Centroidal momentum matrix A_G(q) (6, nv) [Orin13]: h_G = A_G q̇ is the system's
    spatial momentum about its centre of mass in world axes, angular first [k_G; l_G]
    [kg m²/s; kg m/s]. O(N) from the composite rigid-body inertias of the subtrees
    (:mod:`soadyn.kernels.centroidal_map`); its linear rows are m J_c.

    Pinocchio's ``computeCentroidalMap`` / ``ccrba`` return the same matrix with the linear
    rows first ([l_G; k_G]): soadyn's rows are Pinocchio's rows [3, 4, 5, 0, 1, 2]
    (``soadyn.interop.pinocchio.jacobian_from_pinocchio`` maps the columns; see the module
    docstring).

    q : (nq,) or (B, nq) → (6, nv) or (B, 6, nv). out : optional output; workspace :
    optional :class:`~soadyn.Workspace`. A mass-less system raises ValueError."""
    return _MAP.call(model, q, out, workspace)


def centroidal_momentum(model, q, v):
    """Centroidal momentum h_G = [k_G; l_G] = A_G q̇ (6,) [kg m²/s; kg m/s]: the sum of the
    bodies' momenta about the centre of mass, world axes, angular first (Pinocchio's
    ``computeCentroidalMomentum`` gives [l_G; k_G]). v None means zero. Batched: (B, 6)."""
    return _entries(_rates(model, q, v, None), MOMENTUM, 6)


def centroidal_momentum_rate(model, q, v, a):
    """Rate of the centroidal momentum ḣ_G = A_G q̈ + Ȧ_G q̇ (6,) [N m; N], angular first,
    world axes about the (moving) centre of mass: the net external wrench on the system
    about the centre of mass, gravity's included (the kinematic rate: gravity is not
    subtracted; l̇_G = m c̈). Pinocchio's ``computeCentroidalMomentumTimeVariation`` gives
    [l̇_G; k̇_G]. v, a None mean zero. Batched: (B, 6)."""
    return _entries(_rates(model, q, v, a, True), MOMENTUM_RATE, 6)


def centroidal_inertia(model, q):
    """Centroidal composite rigid-body inertia I_G (6, 6): the inertia of the whole system,
    locked at q, about its centre of mass in world axes, angular first: [[I_c, 0], [0, m 1]]
    [kg m², kg] (h_G = I_G V_G for the system moving rigidly with V_G; Pinocchio's
    ``data.Ig`` after ``ccrba``, linear first). Batched: (B, 6, 6)."""
    e = _rates(model, q, None, None)
    return e[..., INERTIA:INERTIA + 36].reshape(e.shape[:-1] + (6, 6)).copy()
