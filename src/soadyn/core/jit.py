"""The one Numba decorator of soadyn's kernels: :func:`njit`, Numba's ``njit`` with
floating-point contraction allowed.

``fastmath={"contract"}`` lets the compiler fuse a multiplication and the addition that
consumes it into one fused multiply-add (one rounding instead of two). It is the only
relaxation: no reassociation, no assumption that values are finite or non-zero, so every
result is still IEEE arithmetic, each fused step at least as accurate as the pair it
replaces; results can differ from an unfused evaluation in the last bits. The recursions
are chains of dependent multiply-adds (6-vector dot products, spatial cross products,
inertia times motion), and a fused step puts one instruction on that chain where there
were two dependent ones: on the Mini Cheetah the C-RNEA kernel went from 1.72–1.77 to
1.53–1.56 µs and C-ABA's from 4.32–4.33 to 3.99–4.21 µs in a compiled loop (2026-11-27,
the same process kind alternated).

Code that must reproduce another evaluation's roundings exactly passes
``fastmath=False``: the expression tapes, which match sympy's numpy evaluation
operation for operation (:mod:`soadyn.kernels.tape`), and the inlined sine and cosine,
whose argument reduction and fdlibm polynomials are written for unfused arithmetic
(:mod:`soadyn.kernels.trig`).
"""
from __future__ import annotations

import numba

#: the floating-point relaxation every kernel is compiled with (module docstring)
CONTRACT = frozenset({"contract"})


def njit(*args, **options):
    """``numba.njit`` with ``fastmath=CONTRACT`` unless the caller gives ``fastmath``;
    used as ``@njit(cache=True, ...)`` like Numba's."""
    options.setdefault("fastmath", set(CONTRACT))
    return numba.njit(*args, **options)
