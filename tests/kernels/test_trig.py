"""The inlined sine and cosine of the kinematic steps against libm's."""
import math

import numpy as np
from numba import njit

from soadyn.kernels.trig import sincos, sincos_into


@njit(cache=False)
def _errors(x):
    es = np.empty(x.shape[0])
    ec = np.empty(x.shape[0])
    for k in range(x.shape[0]):
        s, c = sincos(x[k])
        es[k] = s - math.sin(x[k])
        ec[k] = c - math.cos(x[k])
    return es, ec


def test_sincos_within_an_ulp_of_libm():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-4.0, 4.0, 200_000), rng.uniform(-1e5, 1e5, 200_000),
                        rng.uniform(-1e-6, 1e-6, 1000), [0.0, -0.0, 1e5, -1e5, 3e5, 1e300, np.pi / 4, -np.pi / 4],
                        # next to the quadrant boundaries, where the reduction cancels most digits
                        np.arange(-2000, 2001) * (np.pi / 2), np.arange(-2000, 2001) * (np.pi / 2) + 1e-11])
    es, ec = _errors(x)
    ulp = np.spacing(1.0)  # 2.2e-16: |sin|, |cos| ≤ 1
    assert np.abs(es).max() <= ulp and np.abs(ec).max() <= ulp
    # the sign of a zero sine and the exact values at 0
    assert _errors(np.array([0.0]))[0][0] == 0.0 and math.copysign(1.0, sincos_py(-0.0)[0]) == -1.0


def test_sincos_of_nonfinite_angles_is_nan():
    for x in (np.nan, np.inf, -np.inf):
        s, c = sincos_py(x)
        assert math.isnan(s) and math.isnan(c)


@njit(cache=False)
def _sincos(x):
    return sincos(x)


def sincos_py(x):
    return _sincos(x)


@njit(cache=False)
def _one_by_one(x):
    out = np.empty((2, x.shape[0]))
    for k in range(x.shape[0]):
        out[0, k], out[1, k] = sincos(x[k])
    return out


@njit(cache=False)
def _into(x, out):
    sincos_into(x, out)  # (compiled without a Python entry point)


def test_the_vectorized_pass_equals_sincos_bit_for_bit():
    """:func:`sincos_into` (the body loops' pass over all of q) gives exactly the scalar
    function's values, also beyond ±10⁵ rad and for non-finite angles (its second pass)."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-4.0, 4.0, 5000), rng.uniform(-1e5, 1e5, 5000), [0.0, -0.0, 1e5, -1e5, 3e5,
                        -7e8, 1e300, np.nan, np.inf, -np.inf], np.arange(-50, 51) * (np.pi / 2)])
    for n in (0, 1, 7, 36, x.shape[0]):  # lengths around and beyond a vector's width
        got = np.empty((2, n))
        _into(x[:n], got)
        np.testing.assert_array_equal(got, _one_by_one(x[:n]))
    signs = np.empty((2, 1))
    _into(np.array([-0.0]), signs)
    assert math.copysign(1.0, signs[0, 0]) == -1.0
