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
from test_stateless import leg, leg_state

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


@pytest.mark.parametrize("name", MECHANISMS)
def test_aba_derivatives_match_differences(name):
    model = mechanism(name)
    y, yd, _ = _state(model, 2)
    tau = np.random.default_rng(3).normal(size=yd.size)
    q = sd.spanning_state(model, y, None)[0]
    got = sd.cluster_aba_derivatives(model, y, yd, tau)
    fd = _differences(lambda y_, yd_, tau_, q_guess: sd.cluster_aba(model, y_, yd_, tau_, q_guess=q_guess),
                      model, y, [yd, tau], q)
    _check(got, fd, ["dydd_dy", "dydd_dyd", "dydd_dtau"])
    assert np.allclose(got[2], got[2].T, rtol=0, atol=1e-12 * np.abs(got[2]).max())


#: models whose clusters are all explicit (rigid joints, rotors, gears, belts: G constant, g = 0)
EXPLICIT = [n for n in MECHANISMS if cluster_tree(mechanism(n)).linear]


def test_explicit_models_are_listed():
    assert {"mini_cheetah", "mit_humanoid", "jvrc1_humanoid", "geared_chain", "belt_chain"} <= set(EXPLICIT)


@pytest.mark.parametrize("name", EXPLICIT)
def test_explicit_clusters_are_the_chain_rule(name):
    """Explicit clusters: ∂τ_y/∂y = Gᵀ ∂τ/∂q G, ∂τ_y/∂ẏ = Gᵀ ∂τ/∂q̇ G and ∂ÿ/∂τ = (GᵀMG)⁻¹
    with the spanning tree's derivatives at (γ(y), Gẏ, Gÿ) (eq. CD-9)."""
    model = mechanism(name)
    y, yd, ydd = _state(model, 4)
    tree = cluster_tree(model)
    q = tree.spanning_positions(y.copy())
    G = tree.explicit_jacobian(q)
    dq, dv, M = sd.rnea_derivatives(model.spanning_tree(), q, G @ yd, G @ ydd)
    dy, dyd = sd.cluster_rnea_derivatives(model, y, yd, ydd)
    scale = max(np.abs(dq).max(), np.abs(dv).max())
    assert np.abs(dy - G.T @ dq @ G).max() <= 1e-12 * scale
    assert np.abs(dyd - G.T @ dv @ G).max() <= 1e-12 * scale
    Hinv = sd.cluster_aba_derivatives(model, y, yd, np.zeros(yd.size))[2]
    assert np.abs(Hinv @ (G.T @ M @ G) - np.eye(yd.size)).max() <= 1e-9


@pytest.mark.parametrize("name", ["tello", "crank_rocker"])
def test_external_forces_and_gravity(name):
    """f_ext (held in the body frames) and gravity=False go through as in cluster_rnea."""
    model = mechanism(name)
    y, yd, ydd = _state(model, 5)
    f_ext = np.random.default_rng(6).normal(size=(model.nbodies, 6))
    q = sd.spanning_state(model, y, None)[0]
    dy, dyd = sd.cluster_rnea_derivatives(model, y, yd, ydd, f_ext, gravity=False)
    fd = _differences(lambda y_, yd_, ydd_, q_guess: sd.cluster_rnea(model, y_, yd_, ydd_, f_ext, q_guess=q_guess,
                                                                     gravity=False), model, y, [yd, ydd], q)
    _check([dy, dyd], fd[:2], ["dtau_dy", "dtau_dyd"])


def test_given_spanning_configuration():
    """q= fixes the assembly branch: on the planar leg's crossed branch (circle intersection,
    ``test_stateless.leg_state``) the derivatives differ from the parallelogram branch's and
    match differences on that branch."""
    model = leg()
    rng = np.random.default_rng(7)
    q_cross, v = leg_state(model, 0.2, 0.4, 1, 0.5, -0.8)
    y, yd = sd.independent_state(model, q_cross, v)
    ydd = rng.normal(size=yd.size)
    q_par = sd.spanning_state(model, y, None)[0]
    assert np.abs(q_cross - q_par).max() > 0.1, "the default solve should find the parallelogram branch"
    parallel = sd.cluster_rnea_derivatives(model, y, yd, ydd)
    assert all(np.array_equal(a, b) for a, b in zip(parallel, sd.cluster_rnea_derivatives(model, y, yd, ydd,
                                                                                           q=q_par)))
    dy, dyd = sd.cluster_rnea_derivatives(model, y, yd, ydd, q=q_cross)
    fd = _differences(lambda y_, yd_, ydd_, q_guess: sd.cluster_rnea(model, y_, yd_, ydd_, q_guess=q_guess),
                      model, y, [yd, ydd], q_cross)
    _check([dy, dyd], fd[:2], ["dtau_dy", "dtau_dyd"])
    assert np.abs(dy - parallel[0]).max() > 1e-2 * np.abs(dy).max()


def test_errors_name_the_argument():
    model = mechanism("crank_rocker")
    y, yd, ydd = _state(model, 8)
    with pytest.raises(ValueError, match="single states"):
        sd.cluster_rnea_derivatives(model, np.stack([y, y]), np.stack([yd, yd]), np.stack([ydd, ydd]))
    with pytest.raises(ValueError, match="single states"):
        sd.cluster_aba_derivatives(model, np.stack([y, y]), np.stack([yd, yd]), np.stack([ydd, ydd]))
    with pytest.raises(ValueError, match="yd"):
        sd.cluster_rnea_derivatives(model, y, np.zeros(yd.size + 1), ydd)
    with pytest.raises(ValueError, match="tau_ind"):
        sd.cluster_aba_derivatives(model, y, yd, np.zeros(yd.size + 2))
    q = sd.spanning_state(model, y, None)[0]
    with pytest.raises(sd.ConstraintError, match="off the constraint manifold"):
        sd.cluster_rnea_derivatives(model, y, yd, ydd, q=q + np.r_[0.0, 0.1, 0.0])


def test_pure_and_thread_safe():
    """Results depend on the arguments only: the same bits in any call order and from
    several threads at once (a loop cluster and the rotors, interleaved)."""
    import threading
    cases = []
    for name in ("crank_rocker", "mini_cheetah", "planar_leg_linkage"):
        model = mechanism(name)
        for seed in (9, 10):
            y, yd, ydd = _state(model, seed)
            cases.append(lambda m=model, y=y, yd=yd, ydd=ydd: sd.cluster_rnea_derivatives(m, y, yd, ydd))
            cases.append(lambda m=model, y=y, yd=yd, ydd=ydd: sd.cluster_aba_derivatives(m, y, yd, ydd))
    reference = [call() for call in cases]
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(5):
            for i in rng.permutation(len(cases)):
                if not all(np.array_equal(a, b) for a, b in zip(cases[i](), reference[i])):
                    failures.append(i)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_forces_configuration_and_gravity_are_checked():
    """The derivatives validate f_ext, q and gravity themselves (they run no C-RNEA or
    C-ABA that would): errors name the argument."""
    model = mechanism("crank_rocker")
    y, yd, ydd = _state(model, 11)
    q = sd.spanning_state(model, y, None)[0]
    for derivatives in (sd.cluster_rnea_derivatives, sd.cluster_aba_derivatives):
        with pytest.raises(ValueError, match=r"f_ext: expected shape \(%d, 6\)" % model.nbodies):
            derivatives(model, y, yd, ydd, np.zeros((model.nbodies, 3)))
        with pytest.raises(ValueError, match="q: expected finite values"):
            derivatives(model, y, yd, ydd, q=np.where(np.arange(q.size) == 1, np.nan, q))
        with pytest.raises(ValueError, match="y, q: y must be the independent coordinates"):
            derivatives(model, y + 0.1, yd, ydd, q=q)
        with pytest.raises(ValueError, match="q: expected"):
            derivatives(model, y, yd, ydd, q=q[:-1])
        with pytest.raises((TypeError, ValueError), match="gravity"):
            derivatives(model, y, yd, ydd, gravity="yes")
