"""Kinetic and potential energy, centre of mass (kernel in :mod:`soadyn.kernels.energy`)."""
from __future__ import annotations

from ..core.call import ABSENT, Arg, CompiledFunction
from ..kernels.energy import energy_kernel

__all__ = ["kinetic_energy", "potential_energy", "center_of_mass"]

_ENERGY = CompiledFunction(energy_kernel, "stacked", (Arg("q", "nq"), Arg("v", "nv", optional=True)),
                           lambda c, state, params: ((9,),))


def _column(e, k):
    return float(e[k]) if e.ndim == 1 else e[:, k].copy()


def kinetic_energy(model, q, v):
    """Kinetic energy T = ½ Σ V(k)ᵀ M(k) V(k) = ½ vᵀ M v [J]: a float, or (B,) for
    batched q (B, nq) and v (B, nv) (v None means zero)."""
    return _column(_ENERGY(model, (q, v)), 0)


def potential_energy(model, q):
    """Gravitational potential energy U = −Σ m_k gᵀ c_k [J] (zero at the world origin):
    a float, or (B,) for batched q."""
    return _column(_ENERGY(model, (q, ABSENT)), 1)


def center_of_mass(model, q, v=None):
    """World position of the system's centre of mass (3,) [m]; with ``v`` also returns its
    velocity (3,) [m/s] as a second value ((B, 3) each for batched q and v). A mass-less
    system raises ValueError."""
    e = _ENERGY(model, (q, ABSENT if v is None else v))
    if e[..., 2].min() <= 0:
        raise ValueError(f"model: {model.name!r} has no mass, so its centre of mass is undefined")
    return (e[..., 3:6].copy(), e[..., 6:9].copy()) if v is not None else e[..., 3:6].copy()
