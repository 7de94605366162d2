"""The plain calls of cluster_aba, cluster_rnea and cluster_efpa on models with implicit
clusters (the position solve and the algorithm in one kernel): the validated path's result
to the last bit, independent of earlier calls, and wrong arguments still get its errors.

Truths used: the validated path (separate kernels: the compiled preparation, then the
algorithm), the cut-joint direct method at the spanning configuration."""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding import algorithms as alg
from soadyn.closed.embedding.clusters import cluster_tree, random_independent_state

FRAMES = {"planar_leg_linkage": ["end_effector"], "tello": ["left-toe", "right-heel"]}


@pytest.fixture(scope="module", params=sorted(FRAMES))
def robot(request):
    return request.param, getattr(sd.models, request.param)()


def _states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y, yd = random_independent_state(model, rng)
        out.append((y, yd, rng.normal(size=len(yd)), rng.normal(size=len(yd))))
    return out


def test_plain_calls_equal_the_validated_path_to_the_last_bit(robot):
    name, model = robot
    frames = FRAMES[name]
    sd.cluster_aba(model, *_states(model, 1, 5)[0][:2], np.zeros(cluster_tree(model).nyv))
    assert alg._plain_call(model)[-1] == 1  # implicit clusters, all compiled: the solving plain calls
    zero = np.zeros((model.nbodies, 6))
    for y, yd, ydd, tau in _states(model, 3):
        plain = alg._run_plain(alg._CABA_PLAIN, model, y, yd, tau, True, None)
        assert plain is not None
        validated = alg.aba_with(model, None, y, yd, tau)
        assert np.array_equal(plain, validated) and np.array_equal(sd.cluster_aba(model, y, yd, tau), validated)
        plain = alg._run_plain(alg._CRNEA_PLAIN, model, y, yd, ydd, True, None)
        assert plain is not None
        validated = sd.cluster_rnea(model, y, yd, ydd, zero)  # f_ext given: not the plain call
        assert np.array_equal(plain, validated) and np.array_equal(sd.cluster_rnea(model, y, yd, ydd), validated)
        sd.cluster_efpa(model, y, frames)  # this thread's first call with these frames: validated
        plain = alg._efpa_plain(model, y, frames)
        assert plain is not None
        validated = alg.efpa_with(model, None, y, frames)
        assert np.array_equal(plain, validated) and np.array_equal(sd.cluster_efpa(model, y, frames), validated)
        # gravity off, and the given spanning configuration q = γ(y) (no solve): the same bits
        assert np.array_equal(sd.cluster_aba(model, y, yd, tau, gravity=False),
                              alg.aba_with(model, None, y, yd, tau, gravity=False))
        q, _ = sd.spanning_state(model, y, yd)
        assert np.array_equal(sd.cluster_rnea(model, y, yd, ydd), sd.cluster_rnea(model, y, yd, ydd, q=q))
        assert np.array_equal(sd.cluster_efpa(model, y, frames), sd.cluster_efpa(model, y, frames, q=q))


def test_plain_calls_do_not_depend_on_earlier_calls(robot):
    name, model = robot
    states = _states(model, 3, seed=1)
    first = [(sd.cluster_aba(model, y, yd, tau), sd.cluster_rnea(model, y, yd, ydd)) for y, yd, ydd, tau in states]
    for k in (2, 0, 1, 0):  # another order, each after a different state
        y, yd, ydd, tau = states[k]
        assert np.array_equal(sd.cluster_aba(model, y, yd, tau), first[k][0])
        assert np.array_equal(sd.cluster_rnea(model, y, yd, ydd), first[k][1])


def test_plain_call_agrees_with_the_direct_method(robot):
    name, model = robot
    tree = cluster_tree(model)
    for y, yd, _, tau_ind in _states(model, 2, seed=2):
        q, v = sd.spanning_state(model, y, yd)
        tau = np.zeros(model.nv)
        tau[tree.independent_v_index] = tau_ind
        qdd = sd.constrained_forward_dynamics(model, q, v, tau, method="direct").qdd
        assert np.allclose(sd.cluster_aba(model, y, yd, tau_ind), qdd[tree.independent_v_index], rtol=1e-8,
                           atol=1e-8)


@pytest.mark.parametrize("bad", ["y", "yd", "tau_ind", "out"])
def test_plain_call_passes_wrong_lengths_to_the_validated_errors(robot, bad):
    name, model = robot
    y, yd, ydd, tau = _states(model, 1, seed=3)[0]
    args = {"y": y, "yd": yd, "tau_ind": tau, "out": np.empty(len(yd))}
    args[bad] = args[bad][:-1]
    # the kernel refuses them (it reads nothing past an end) ...
    assert alg._run_plain(alg._CABA_PLAIN, model, args["y"], args["yd"], args["tau_ind"], True,
                             args["out"]) is None
    # ... and the validated path names them
    with pytest.raises(ValueError, match=bad):
        sd.cluster_aba(model, args["y"], args["yd"], args["tau_ind"], out=args["out"])
    if bad != "out":
        with pytest.raises(ValueError, match=bad.replace("tau_ind", "ydd")):
            sd.cluster_rnea(model, args["y"], args["yd"], args["tau_ind"])
    with pytest.raises(ValueError, match="y"):
        sd.cluster_efpa(model, y[:-1], FRAMES[name])


def test_plain_call_passes_bad_values_to_the_validated_errors(robot):
    name, model = robot
    y, yd, ydd, tau = _states(model, 1, seed=4)[0]
    for which in ("y", "yd"):
        args = {"y": y.copy(), "yd": yd.copy()}
        args[which][0] = np.nan
        assert alg._run_plain(alg._CABA_PLAIN, model, args["y"], args["yd"], tau, True, None) is None
        with pytest.raises(ValueError, match=which):
            sd.cluster_aba(model, args["y"], args["yd"], tau)
        with pytest.raises(ValueError, match=which):
            sd.cluster_rnea(model, args["y"], args["yd"], ydd)
    with pytest.raises(ValueError, match="unknown frame"):
        sd.cluster_efpa(model, y, ["no such frame"])
    # other argument forms take the validated path, with the same result
    assert np.array_equal(sd.cluster_aba(model, list(y), list(yd), list(tau)), sd.cluster_aba(model, y, yd, tau))
