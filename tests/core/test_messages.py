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
    """Also on the fast path (a float dt is the compiled signature's type): integrate used
    to return NaN silently once a first call had compiled it."""
    m, q = arm
    assert np.all(np.isfinite(sd.integrate(m, q, np.ones(3), 0.1)))  # the fast path is ready
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


# ----------------------------------------------------------------------------- state arrays
@pytest.mark.parametrize("q, error, match", [
    (np.zeros(3, complex), TypeError, r"got complex values \(dtype complex128\)"),
    (0.0, ValueError, "got the scalar 0.0"),
    ("abc", TypeError, "got str 'abc'"),
    ([[0.0, 0.0, 0.0], [0.0, 0.0]], TypeError, "got a ragged nested sequence"),
    (np.zeros(4), ValueError, r"shape \(3,\) or \(B, 3\), got \(4,\)"),
    (None, TypeError, "got None"),
])
def test_state_errors_say_what_was_received(arm, q, error, match):
    m, _ = arm
    with pytest.raises(error, match=rf"q: expected .*{match}"):
        sd.rnea(m, q, None, None)


def test_f_ext_of_complex_numbers_is_refused(arm):
    m, q = arm
    with pytest.raises(TypeError, match=r"f_ext: expected an array of spatial forces, got complex values"):
        sd.rnea(m, q, None, None, np.zeros((3, 6), complex))


@pytest.mark.parametrize("call", [
    lambda m, q, g: sd.rnea(m, q, None, None, gravity=g),
    lambda m, q, g: sd.aba(m, q, None, np.zeros(3), gravity=g),
    lambda m, q, g: sd.forward_kinematics(m, q, np.zeros(3), np.zeros(3), gravity=g),
])
def test_gravity_must_be_a_boolean(arm, call):
    """``gravity="no"`` used to mean True, ``gravity=None`` False and, on the fast path,
    ``gravity=0.5`` True."""
    m, q = arm
    call(m, q, True)  # the fast path is ready
    for bad in ("no", None, 0.5, 2):
        with pytest.raises(TypeError, match=rf"gravity: expected True or False, got {bad!r}"):
            call(m, q, bad)
    for a, b in ((True, 1), (False, np.False_)):
        r0, r1 = call(m, q, a), call(m, q, b)
        if isinstance(r0, np.ndarray):
            assert np.array_equal(r0, r1)
        else:
            assert np.array_equal(r0.accelerations, r1.accelerations)


# ----------------------------------------------------------------------------- model queries and building
def test_model_queries_name_the_argument(arm):
    m, _ = arm
    assert m.body_name(-1) == "world" and m.body_name(2) == "link3"
    with pytest.raises(ValueError, match=r"index: body index 7 out of range \[-1, 3\)"):
        m.body_name(7)
    with pytest.raises(ValueError, match=r"joint: unknown joint 'theta9'; known joints: \['theta1'"):
        m.joint("theta9")
    with pytest.raises(ValueError, match="frame: unknown frame 'link' in model 'three_link_arm'; similar"):
        m.frame("link")
    with pytest.raises(TypeError, match="body 'a': mass must be a number \\[kg\\], got 'heavy'"):
        sd.Model("x").add_body("a", jt.Revolute("z"), mass="heavy")


def test_a_model_without_bodies():
    """nq = nv = 0: the configuration space functions in Python answer with empty arrays
    (random_configuration used to raise numpy's 'need at least one array to concatenate',
    then a ValueError, while neutral returned an empty q); the compiled functions say that
    they need a body."""
    empty = sd.Model("empty")
    for q in (sd.neutral(empty), sd.random_configuration(empty), sd.random_configuration(empty, 3)):
        assert q.shape == (0,) and q.dtype == np.float64
    with pytest.raises(ValueError, match=r"model: expected a model with at least one body .* got 'empty' with none"):
        sd.mass_matrix(empty, np.zeros(0))
    with pytest.raises(ValueError, match=r"model: expected a model with at least one body"):
        sd.integrate(empty, np.zeros(0), np.zeros(0), 0.1)


def test_random_configuration_rng_errors(arm):
    m, _ = arm
    with pytest.raises(TypeError, match=r"rng: expected a numpy Generator, a seed .* got 'abc'"):
        sd.random_configuration(m, "abc")
    assert np.array_equal(sd.random_configuration(m, 5), sd.random_configuration(m, np.random.default_rng(5)))


@pytest.mark.parametrize("call", [
    lambda x, q: sd.rnea(x, q, None, None),
    lambda x, q: sd.aba(x, q, None, np.zeros(3)),
    lambda x, q: sd.mass_matrix(x, q),
    lambda x, q: sd.neutral(x),
    lambda x, q: sd.random_configuration(x),
    lambda x, q: sd.frame_placement(x, q, "tool"),
    lambda x, q: sd.constrained_forward_dynamics(x, q, None, np.zeros(3)),
    lambda x, q: sd.Workspace(x),
])
def test_a_model_argument_that_is_not_a_model(arm, call):
    m, q = arm
    for bad, hint in (("three_link_arm", "load one first"), (q, "the model is the first argument"), (None, "")):
        with pytest.raises(TypeError, match=rf"model: expected a soadyn.Model, got {type(bad).__name__}.*{hint}"):
            call(bad, m if bad is q else q)


def test_joint_limit_errors_name_the_arguments():
    with pytest.raises(ValueError, match=r"lower, upper: a revolute joint expected 1 limits each, got 2 and 2"):
        jt.Revolute("z", lower=[0, 1], upper=[1, 2])
    with pytest.raises(ValueError, match=r"lower, upper: the lower limit \[1.\] exceeds the upper limit \[0.\]"):
        jt.Revolute("z", lower=[1], upper=[0])


def test_cluster_functions_gravity_must_be_a_boolean():
    model = sd.models.four_bar_linkage()
    q, v = sd.close_loops(model, [0.4, 0.3, -0.2], np.zeros(3))
    y, yd = sd.independent_state(model, q, v)
    sd.cluster_rnea(model, y, yd, yd, gravity=False)
    for call in (lambda g: sd.cluster_rnea(model, y, yd, yd, gravity=g),
                 lambda g: sd.cluster_aba(model, y, yd, yd, gravity=g)):
        for bad in ("no", None, 0.5):
            with pytest.raises(TypeError, match=rf"gravity: expected True or False, got {bad!r}"):
                call(bad)
