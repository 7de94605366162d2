"""Kinetic and potential energy (kernel in :mod:`soadyn.kernels.energy`; the centre of mass
is in :mod:`soadyn.dynamics.centroidal`)."""
from __future__ import annotations

from ..core.batch import Batch
from ..core.call import ABSENT, Arg, CompiledFunction, Outputs
from ..kernels.energy import energy_kernel

__all__ = ["kinetic_energy", "potential_energy"]

_ENERGY = CompiledFunction(energy_kernel, Batch.stacked(), (Arg("q", "nq"), Arg("v", "nv", optional=True)),
                           Outputs.computed(lambda c, state, params: ((2,),)))


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
