"""The plain-call kernels: the common call of the tree functions with the most arguments —
``rnea(model, q, v, a)`` and ``aba(model, q, v, tau)``: one state, gravity on, no
external forces, no workspace given — and of the cheap functions whose call would be
mostly dispatch on a small robot (``centroidal_momentum_matrix``,
``center_of_mass_jacobian``), with the model's tables and the calling thread's workspace
in one array argument.

Why a second entry point: Numba's dispatcher types and unboxes every argument of a call
from Python, and on a small robot that is a large part of the call: a compiled function
that does nothing costs markedly more called with the nine arguments of
:func:`~soadyn.kernels.rnea.rnea_kernel` (three table arrays, q, v, a, the external
forces, the gravity flag, τ) than with five, and the public ``rnea`` and ``aba`` of the
small arms got faster by this entry (``benchmarks/results/design_notes.md``). Each
kernel here unpacks the array (:func:`~soadyn.core.layout.split_tables` of
:func:`~soadyn.core.layout.pack_tables` [mi | mf | ws]) and calls the full kernel, compiled
once and linked, not copied.

An absent rate is passed as None: Numba compiles a version per combination of None and
arrays on the first plain call of those types (a function's first call takes the validated
path; ``soadyn precompile`` makes them all), each a fraction of a second from an empty cache
(``benchmarks/results/design_notes.md``). An *empty* array given for a rate
returns ``BAD_SHAPE`` instead of being read as zero, so that the caller's validated path
names it.
"""
from __future__ import annotations

from numba import types
from numba.extending import overload

from ..core.jit import kernel
from ..core.layout import split_tables
from ..core.status import BAD_SHAPE
from .aba import aba_kernel
from .centroidal_map import centroidal_map_kernel
from .kinematics import absent, no_forces
from .rnea import rnea_kernel


def rate_or_zero(x, zero):
    """``x``, or ``zero`` (an empty vector: the kernels read it as zero) when x is None."""
    return zero if x is None else x


@overload(rate_or_zero)
def _rate_or_zero(x, zero):
    if isinstance(x, types.NoneType):
        return lambda x, zero: zero
    return lambda x, zero: x


def given_empty(x):
    """True when ``x`` is an array of length 0 (None is not)."""
    return x is not None and len(x) == 0


@overload(given_empty)
def _given_empty(x):
    if isinstance(x, types.NoneType):
        return lambda x: False
    return lambda x: x.shape[0] == 0


@kernel
def rnea_plain_kernel(tables, q, v, a, tau):
    """:func:`~soadyn.kernels.rnea.rnea_kernel` with gravity and without external forces,
    from the packed tables; ``v``, ``a``: arrays or None (zero)."""
    ok, mi, mf, ws = split_tables(tables)
    if not ok or given_empty(v) or given_empty(a):
        return BAD_SHAPE
    zero = absent(mf)
    return rnea_kernel(mi, mf, ws, q, rate_or_zero(v, zero), rate_or_zero(a, zero), no_forces(mf), True, tau)


@kernel
def aba_plain_kernel(tables, q, v, tau, qdd):
    """:func:`~soadyn.kernels.aba.aba_kernel` with gravity and without external forces,
    from the packed tables; ``v``: an array or None (zero)."""
    ok, mi, mf, ws = split_tables(tables)
    if not ok or given_empty(v):
        return BAD_SHAPE
    return aba_kernel(mi, mf, ws, q, rate_or_zero(v, absent(mf)), tau, no_forces(mf), True, qdd)


@kernel
def centroidal_map_plain_kernel(tables, q, A):
    """:func:`~soadyn.kernels.centroidal_map.centroidal_map_kernel` (A_G into ``A`` (6, nv),
    J_c into ``A`` (3, nv)) from the packed tables."""
    ok, mi, mf, ws = split_tables(tables)
    if not ok:
        return BAD_SHAPE
    return centroidal_map_kernel(mi, mf, ws, q, A)
