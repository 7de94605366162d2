"""The single-kernel front of cluster_aba and cluster_rnea on explicit models: every
argument form gives the validated path's result, and wrong arguments still get its errors."""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.algorithms import _explicit_call

from conftest import projection, random_state


@pytest.fixture(scope="module")
def cheetah():
    return sd.models.mini_cheetah()


def test_front_matches_the_projection_method_for_every_argument_form(cheetah):
    model = cheetah
    sd.cluster_aba(model, *random_state(model, np.random.default_rng(0)), np.zeros(18))  # first call: general path
    assert _explicit_call(model)  # every cluster explicit: the one-kernel front applies
    rng = np.random.default_rng(6)
    y, yd = random_state(model, rng)
    tau = rng.normal(size=len(yd))
    fext = rng.normal(size=(model.nbodies, 6))
    q, v, G, g, M, c, H = projection(model, y, yd)
    ydd = np.linalg.solve(H, tau - G.T @ c)
    tol = 1e-9 * (1 + np.abs(ydd).max())
    out = np.empty(len(yd))
    assert sd.cluster_aba(model, y, yd, tau, out=out) is out and np.allclose(out, ydd, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_aba(model, list(y), list(yd), list(tau)), ydd, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_rnea(model, y, yd, ydd), tau, rtol=0, atol=tol)
    # external forces: f_ext on body i enters as −Gᵀ J_iᵀ f_ext,i; the tree's RNEA with forces gives Gᵀ of it
    tau_f = G.T @ sd.rnea(model.spanning_tree(), q, v, G @ ydd + g, fext)
    assert np.allclose(sd.cluster_rnea(model, y, yd, ydd, fext), tau_f, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_aba(model, y, yd, tau_f, fext), ydd, rtol=0, atol=tol)
    # yd None: zero velocity (the general path)
    assert np.allclose(sd.cluster_aba(model, y, None, tau), sd.cluster_aba(model, y, np.zeros_like(yd), tau),
                       rtol=0, atol=0)


@pytest.mark.parametrize("bad, name", [("y", "y"), ("tau_ind", "tau_ind"), ("out", "out")])
def test_front_passes_wrong_lengths_to_the_validated_errors(cheetah, bad, name):
    model = cheetah
    y, yd = random_state(model, np.random.default_rng(1))
    tau = np.zeros(len(yd))
    args = {"y": y, "tau_ind": tau, "out": np.empty(len(yd))}
    args[bad] = args[bad][:-1]
    with pytest.raises(ValueError, match=name):
        sd.cluster_aba(model, args["y"], yd, args["tau_ind"], out=args["out"])
