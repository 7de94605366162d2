"""The regressor of the constrained dynamics Y_c (cluster_torque_regressor) against the
independent dynamics it must reproduce: Y_c π = cluster_rnea on random states for the
model's π and for others set with set_dynamic_parameters, and its columns equal to central
differences of cluster_rnea in π (the dynamics are linear in π: the differences are exact
up to rounding) — on rotors, belts, loops and implicit differentials."""
import warnings

import numpy as np
import pytest

import soadyn as sd
from conftest import assert_close
from soadyn.closed.embedding import random_independent_state
from soadyn.core.parameters import body_parameters
from soadyn.models import random_rigid_inertia

MODELS = ["four_bar_linkage", "planar_leg_linkage", "mit_humanoid_leg", "mini_cheetah", "geared_chain", "belt_chain",
          "tello"]


def random_parameters(model, rng):
    """A physically consistent π for the model's bodies, far enough from the inconsistent
    ones for the differences below to stay consistent."""
    return np.concatenate([body_parameters(*random_rigid_inertia(rng)) for _ in model.bodies])


def states(model, rng, count):
    for _ in range(count):
        y, yd = random_independent_state(model, rng, 0.5)
        yield y, yd, rng.normal(size=yd.size)


def set_parameters(model, pi):
    with warnings.catch_warnings():  # the published rotor inertias violate the triangle inequality
        warnings.simplefilter("ignore", UserWarning)
        model.set_dynamic_parameters(pi, strict_inertia=False)


@pytest.mark.parametrize("name", MODELS)
def test_regressor_times_parameters_is_the_cluster_rnea(name):
    model = getattr(sd.models, name)()
    rng = np.random.default_rng(len(name))
    for y, yd, ydd in states(model, rng, 2):
        Yc = sd.cluster_torque_regressor(model, y, yd, ydd)
        assert Yc.shape == (yd.size, 10 * model.nbodies)
        assert_close(Yc @ sd.dynamic_parameters(model), sd.cluster_rnea(model, y, yd, ydd), what="Y_c π (published)")
        set_parameters(model, random_parameters(model, rng))
        assert_close(Yc @ sd.dynamic_parameters(model), sd.cluster_rnea(model, y, yd, ydd), what="Y_c π (set)")
        assert_close(sd.cluster_torque_regressor(model, y, yd, ydd, gravity=False) @ sd.dynamic_parameters(model),
                     sd.cluster_rnea(model, y, yd, ydd, gravity=False), what="Y_c π without gravity")


def central_difference(model, pi, direction, y, yd, ydd, h=1e-4):
    """d/ds cluster_rnea(π + s d) at s = 0, (τ(π + h d) − τ(π − h d)) / 2h."""
    set_parameters(model, pi + h * direction)
    plus = sd.cluster_rnea(model, y, yd, ydd)
    set_parameters(model, pi - h * direction)
    minus = sd.cluster_rnea(model, y, yd, ydd)
    set_parameters(model, pi)
    return (plus - minus) / (2 * h)


def test_columns_are_central_differences_of_the_independent_dynamics():
    """Every column of a four-bar's Y_c (an implicit loop), each by its own difference."""
    model = sd.models.four_bar_linkage()
    rng = np.random.default_rng(7)
    pi = random_parameters(model, rng)
    set_parameters(model, pi)
    y, yd, ydd = next(states(model, rng, 1))
    Yc = sd.cluster_torque_regressor(model, y, yd, ydd)
    for j in range(pi.size):
        assert_close(Yc[:, j], central_difference(model, pi, np.eye(pi.size)[j], y, yd, ydd), 1e-8, f"column {j}")


@pytest.mark.parametrize("name", ["mit_humanoid_leg", "mini_cheetah", "tello"])
def test_directional_differences_of_the_independent_dynamics(name):
    """Y_c d for random directions d of π against the difference of the dynamics along d."""
    model = getattr(sd.models, name)()
    rng = np.random.default_rng(11)
    pi = random_parameters(model, rng)
    set_parameters(model, pi)
    y, yd, ydd = next(states(model, rng, 1))
    Yc = sd.cluster_torque_regressor(model, y, yd, ydd)
    for _ in range(3):
        d = rng.normal(size=pi.size) * np.abs(pi).max() * 1e-2
        assert_close(Yc @ d, central_difference(model, pi, d, y, yd, ydd), 1e-8, "Y_c d")


def test_given_spanning_configuration_and_batches():
    model = sd.models.four_bar_linkage()
    rng = np.random.default_rng(3)
    Y, YD, YDD = (np.stack(x) for x in zip(*states(model, rng, 4)))
    batch = sd.cluster_torque_regressor(model, Y, YD, YDD)
    for b in range(4):
        single = sd.cluster_torque_regressor(model, Y[b], YD[b], YDD[b])
        assert np.array_equal(batch[b], single)
        q, _ = sd.spanning_state(model, Y[b], YD[b])
        assert_close(sd.cluster_torque_regressor(model, Y[b], YD[b], YDD[b], q), single, 1e-12, "with q")
    with pytest.raises(ValueError, match=r"ydd: expected shape \(1,\)"):
        sd.cluster_torque_regressor(model, Y[0], YD[0], np.zeros(2))
