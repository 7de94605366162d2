"""Derivatives of C-RNEA and C-ABA with respect to (y, ẏ, τ_ind)
(``sd.cluster_rnea_derivatives``, ``sd.cluster_aba_derivatives``; docs/cluster_derivatives.md):
central finite differences of ``cluster_rnea`` / ``cluster_aba`` through γ(y) on every seed
robot and closed-chain mechanism, and, for explicit clusters, the chain rule through the
spanning tree's derivatives and G."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.clusters import cluster_tree

from conftest import MECHANISMS, mechanism, random_state

#: central differences: step on y, ẏ, τ; agreement required, relative to the largest entry
#: of the derivative blocks (the rounding of the differences scales with the largest terms
#: of τ_y, not with an entry that cancels)
EPS, TOL = 1e-5, 1e-6


def _state(model, seed):
    rng = np.random.default_rng(seed)
    y, yd = random_state(model, rng, 0.4)
    return y, 2.0 * yd, 2.0 * rng.normal(size=yd.size)


def _moved(model, q, k, eps):
    """(y, q) moved along independent velocity e_k for ``eps`` on the spanning tree's
    configuration (y on its Lie-group chart: quaternions by body-frame increments)."""
    tree = cluster_tree(model)
    v = np.zeros(model.nv)
    v[tree.independent_v_index[k]] = eps
    q2 = sd.integrate(model.spanning_tree(), q, v, 1.0)
    return q2[tree.independent_q_index], q2


def _differences(f, model, y, x_list, q):
    """Central differences of f(y, *x_list) (nyv,) through y (on its chart) and through each x."""
    n = cluster_tree(model).nyv
    out = [np.empty((n, n)) for _ in range(1 + len(x_list))]
    for k in range(n):
        yp, qp = _moved(model, q, k, EPS)
        ym, qm = _moved(model, q, k, -EPS)
        out[0][:, k] = (f(yp, *x_list, q_guess=qp) - f(ym, *x_list, q_guess=qm)) / (2 * EPS)
        for i, x in enumerate(x_list):
            e = np.zeros(n)
            e[k] = EPS
            xp, xm = list(x_list), list(x_list)
            xp[i], xm[i] = x + e, x - e
            out[i + 1][:, k] = (f(y, *xp, q_guess=q) - f(y, *xm, q_guess=q)) / (2 * EPS)
    return out


def _check(actual, expected, what):
    scale = max(np.abs(e).max() for e in expected)
    for a, e, w in zip(actual, expected, what):
        err = np.abs(a - e).max() / scale
        assert err <= TOL, f"{w}: relative error {err:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("name", MECHANISMS)
def test_rnea_derivatives_match_differences(name):
    model = mechanism(name)
    y, yd, ydd = _state(model, 1)
    q = sd.spanning_state(model, y, None)[0]
    dy, dyd = sd.cluster_rnea_derivatives(model, y, yd, ydd)
    fd = _differences(lambda y_, yd_, ydd_, q_guess: sd.cluster_rnea(model, y_, yd_, ydd_, q_guess=q_guess),
                      model, y, [yd, ydd], q)
    H = sd.cluster_mass_matrix(model, y)
    _check([dy, dyd, H], fd, ["dtau_dy", "dtau_dyd", "H"])
