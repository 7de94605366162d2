"""Sine and cosine of a joint angle in one inlined evaluation.

The body loops evaluate sin θ and cos θ of every revolute joint; Numba calls libm's
``sincos`` for them, an opaque call that costs about half of a world-pose step of a
humanoid (``benchmarks/results/design_notes.md``). :func:`sincos` is the same computation inlined: the reduction
θ = nπ/2 + r (|r| ≤ π/4) with π/2 split into three parts (Cody–Waite), then the
minimax polynomials of fdlibm's ``__kernel_sin`` and ``__kernel_cos`` (Sun
Microsystems, k_sin.c and k_cos.c, error < 1 ulp on [−π/4, π/4]) with the reduction's
tail, and the quadrant n mod 4 selected without branches. Angles beyond ±10⁵ rad
(where the reduction would lose digits) go to libm.
"""
from __future__ import annotations

import math

from ..core.jit import helper

# the polynomial coefficients of fdlibm's __kernel_sin (S1..S6) and __kernel_cos (C1..C6)
S1, S2, S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
S4, S5, S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
C1, C2, C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
C4, C5, C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
#: 2/π, and π/2 as PIO2_1 + PIO2_2 + PIO2_2T (the first two with 33 significant bits, so
#: that n·PIO2_k is exact for |n| < 2²⁰)
INV_PIO2 = 6.36619772367581382433e-01
PIO2_1, PIO2_2, PIO2_2T = 1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624879595063154e-21
#: 1.5·2⁵², added and subtracted: rounds to the nearest integer (for |x| < 2⁵¹)
ROUND = 6755399441055744.0
#: beyond this |θ| [rad] the angle goes to libm
LARGE = 1.0e5


@helper(forceinline=True, fastmath=False)
def sincos(x):
    """(sin x, cos x), within 1 ulp of libm's for |x| ≤ 10⁵ (module docstring)."""
    if not abs(x) <= LARGE:  # (also NaN)
        return math.sin(x), math.cos(x)
    return reduced_sincos(x)


@helper(fastmath=False)
def sincos_into(x, out):
    """``out[0, k], out[1, k]`` = :func:`sincos` of ``x[k]`` for every k, bit for bit.

    The polynomial pass has no branch, so the compiler evaluates several angles per vector
    instruction (several times faster than the same loop over :func:`sincos`, whose branch
    to libm keeps it scalar: ``benchmarks/results/design_notes.md``); the angles beyond ±10⁵ rad (and
    NaN) are redone by libm in a second pass."""
    for k in range(x.shape[0]):
        out[0, k], out[1, k] = reduced_sincos(x[k])
    for k in range(x.shape[0]):
        if not abs(x[k]) <= LARGE:
            out[0, k], out[1, k] = math.sin(x[k]), math.cos(x[k])


@helper(forceinline=True, fastmath=False)
def reduced_sincos(x):
    """(sin x, cos x) by the reduction and polynomials of the module docstring, for
    |x| ≤ 10⁵ (beyond, digits are lost: :func:`sincos` sends such angles to libm)."""
    fn = (x * INV_PIO2 + ROUND) - ROUND
    n = int(fn)
    # r = x − n π/2 as y0 + y1 (e_rem_pio2's second-order reduction)
    t = x - fn * PIO2_1
    w = fn * PIO2_2
    r = t - w
    w = fn * PIO2_2T - ((t - r) - w)
    y0 = r - w
    y1 = (r - y0) - w
    z = y0 * y0
    v = z * y0
    ps = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))
    s = y0 - ((z * (0.5 * y1 - v * ps) - y1) - v * S1)
    pc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))))
    hz = 0.5 * z
    h = 1.0 - hz
    c = h + (((1.0 - h) - hz) + (z * pc - y0 * y1))
    # quadrant n mod 4: (s, c), (c, −s), (−s, −c), (−c, s)
    odd = n & 1
    a = c if odd else s
    b = s if odd else c
    return a * (1 - 2 * ((n >> 1) & 1)), b * (1 - 2 * (((n + 1) >> 1) & 1))
