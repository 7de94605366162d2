"""Dynamic parameters π: Pinocchio's order (pin.Inertia.toDynamicParameters as the peer),
the round trip through Model.set_dynamic_parameters, the physical-consistency check by the
pseudo-inertia ([Wensing18]) against closed-form consistent and inconsistent bodies, and the
errors that name the argument or the body."""
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.core.parameters import body_inertia, body_parameters, pseudo_inertia
from soadyn.models import random_rigid_inertia


def two_links():
    model = sd.Model("two_links")
    model.add_body("upper", sd.joints.Revolute("y"), mass=2.0, com=(0.0, 0.0, -0.2),
                   inertia=np.diag([0.03, 0.03, 0.002]))
    model.add_body("lower", sd.joints.Revolute("y"), "upper", (np.eye(3), np.array([0.0, 0.0, -0.4])),
                   mass=1.0, com=(0.0, 0.05, -0.1), inertia=np.diag([0.01, 0.012, 0.003]))
    return model


def test_order_and_values_are_pinocchios():
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(0)
    for _ in range(10):
        mass, com, inertia = random_rigid_inertia(rng)
        ref = pin.Inertia(mass, com, inertia).toDynamicParameters()
        assert np.allclose(body_parameters(mass, com, inertia), ref, rtol=0.0, atol=1e-14)
        m2, c2, I2 = body_inertia(ref)
        assert np.isclose(m2, mass) and np.allclose(c2, com, atol=1e-14) and np.allclose(I2, inertia, atol=1e-14)


def test_round_trip_and_edits():
    model = two_links()
    version = model.version
    pi = sd.dynamic_parameters(model)
    assert pi.shape == (20,)
    # upper: m, m c, then I about the origin = I_c + m (|c|² 1 − c cᵀ) in the order xx, xy, yy, xz, yz, zz
    assert np.allclose(pi[:10], [2.0, 0.0, 0.0, -0.4, 0.03 + 0.08, 0.0, 0.03 + 0.08, 0.0, 0.0, 0.002], atol=1e-15)
    new = pi.copy()
    new[10] = 3.0  # the lower link three times as heavy, first moment and inertia unchanged
    model.set_dynamic_parameters(new)
    assert model.version > version
    lower = model.bodies[1]
    assert lower.mass == 3.0 and np.allclose(lower.com, np.array([0.0, 0.05, -0.1]) / 3.0)
    assert np.allclose(sd.dynamic_parameters(model), new, atol=1e-15)


def test_pseudo_inertia_is_positive_semidefinite_exactly_for_rigid_bodies():
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = body_parameters(*random_rigid_inertia(rng))
        assert np.linalg.eigvalsh(pseudo_inertia(p))[0] >= -1e-15
    # a point mass m at c: J = m [c; 1][c; 1]ᵀ (rank one)
    c = np.array([0.1, -0.2, 0.3])
    J = pseudo_inertia(body_parameters(2.0, c, np.zeros((3, 3))))
    assert np.allclose(J, 2.0 * np.outer(np.append(c, 1.0), np.append(c, 1.0)), atol=1e-15)


@pytest.mark.parametrize("edit, words", [
    (lambda p: p.__setitem__(10, -1.0), ["body 'lower'", "mass m = -1.0 is negative"]),
    # principal moments 0.01, 0.01, 0.05 about the centre of mass: 0.01 + 0.01 < 0.05
    (lambda p: p.__setitem__(slice(10, 20), body_parameters(1.0, np.zeros(3), np.diag([0.01, 0.01, 0.05]))),
     ["body 'lower'", "triangle inequality"]),
    (lambda p: p.__setitem__(slice(0, 10), np.concatenate([[0.0, 0.1, 0.0, 0.0], np.zeros(6)])),
     ["body 'upper'", "first moment"]),
    (lambda p: p.__setitem__(slice(10, 20), body_parameters(1.0, np.zeros(3), np.diag([-0.01, 0.02, 0.02]))),
     ["body 'lower'", "negative principal moment"]),
])
def test_inconsistent_parameters_are_named_by_body_and_change_nothing(edit, words):
    model = two_links()
    pi = sd.dynamic_parameters(model)
    bad = pi.copy()
    edit(bad)
    for check in (lambda: model.set_dynamic_parameters(bad), lambda: sd.check_dynamic_parameters(model, bad)):
        with pytest.raises(ValueError) as err:
            check()
        for w in words:
            assert w in str(err.value), (w, str(err.value))
    assert np.array_equal(sd.dynamic_parameters(model), pi)


def test_an_impossible_inertia_is_only_warned_about_when_not_strict():
    model = two_links()
    bad = sd.dynamic_parameters(model)
    bad[10:] = body_parameters(1.0, np.zeros(3), np.diag([0.01, 0.01, 0.05]))
    with pytest.warns(UserWarning, match="body 'lower'.*triangle inequality"):
        model.set_dynamic_parameters(bad, strict_inertia=False)
    assert np.allclose(sd.dynamic_parameters(model), bad, atol=1e-15)
    negative = bad.copy()
    negative[0] = -2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="body 'upper': mass m = -2.0 is negative"):
            model.set_dynamic_parameters(negative, strict_inertia=False)  # no rigid-body form at all


@pytest.mark.parametrize("value, error, words", [
    (np.zeros(19), ValueError, "expected shape (20,) — 10 per body of model 'two_links', which has 2 bodies — got shape (19,)"),
    (np.zeros((2, 10)), ValueError, "got shape (2, 10)"),
    (np.full(20, np.nan), ValueError, "NaN or inf at ['upper.m'"),
    ("twenty", TypeError, "expected 20 real numbers"),
])
def test_wrong_shapes_and_values_name_the_argument(value, error, words):
    with pytest.raises(error) as err:
        two_links().set_dynamic_parameters(value)
    assert str(err.value).startswith("parameters: ") and words in str(err.value), str(err.value)
