"""Error messages name the argument, what was expected and what was received (issue 11,
item 8), for the inputs users get wrong most often."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt


@pytest.fixture(scope="module")
def arm():
    m = sd.models.three_link_arm()
    return m, np.array([0.3, -0.5, 0.8])


# ----------------------------------------------------------------------------- out=
def _readonly(shape):
    a = np.zeros(shape)
    a.flags.writeable = False
    return a


OUTS = {
    "float32": (lambda s: np.zeros(s, np.float32), "got dtype float32"),
    "non-contiguous": (lambda s: np.zeros(s[:-1] + (2 * s[-1],))[..., ::2], "got a non-contiguous layout"),
    "read-only": (_readonly, "got a read-only array"),
    "wrong shape": (lambda s: np.zeros(s[:-1] + (s[-1] + 1,)), r"got shape \("),
}
CALLS = {
    "mass_matrix": (lambda m, q, out: sd.mass_matrix(m, q, out=out), (3, 3)),
    "aba": (lambda m, q, out: sd.aba(m, q, None, np.zeros(3), out=out), (3,)),
    "rnea": (lambda m, q, out: sd.rnea(m, q, None, None, out=out), (3,)),
    "integrate": (lambda m, q, out: sd.integrate(m, q, np.ones(3), 0.1, out=out), (3,)),
    "difference": (lambda m, q, out: sd.difference(m, q, q, out=out), (3,)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("kind", sorted(OUTS))
def test_out_errors_say_what_is_wrong(arm, call, kind):
    m, q = arm
    f, shape = CALLS[call]
    make, what = OUTS[kind]
    with pytest.raises(ValueError, match=rf"out: expected a C-contiguous, writeable float64 array of shape "
                                         rf"\({shape[0]},{' 3' if len(shape) == 2 else ''}\), {what}"):
        f(m, q, make(shape))
    with pytest.raises(TypeError, match=r"out: expected a numpy array of shape .* got list"):
        f(m, q, np.zeros(shape).tolist())


# ----------------------------------------------------------------------------- integrate, difference
@pytest.mark.parametrize("dt", [np.nan, np.inf, -np.inf])
def test_integrate_refuses_a_non_finite_time_step(arm, dt):
    m, q = arm
    with pytest.raises(ValueError, match=rf"dt: expected a finite number, got {dt}"):
        sd.integrate(m, q, np.ones(3), dt)
    with pytest.raises(TypeError, match=r"dt: expected a real number, got 'x'"):
        sd.integrate(m, q, np.ones(3), "x")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_integrate_and_difference_refuse_non_finite_states(arm, bad):
    m, q = arm
    qb = q.copy()
    qb[1] = bad
    with pytest.raises(ValueError, match="q: expected finite values, got NaN or inf"):
        sd.integrate(m, qb, np.ones(3), 0.1)
    with pytest.raises(ValueError, match="v: expected finite values, got NaN or inf"):
        sd.integrate(m, q, np.array([0.0, bad, 0.0]), 0.1)
    with pytest.raises(ValueError, match="q0: expected finite values"):
        sd.difference(m, qb, q)
    with pytest.raises(ValueError, match="q1: expected finite values"):
        sd.difference(m, q, qb)
