"""The sticking solve (soadyn.kernels.contact.sticking): the contact NCP of a step whose
contacts all stick, by one linear solve.

Truths: where every contact sticks, σ = 0 and λ = −(G + R)⁻¹g inside the cones solves the
Coulomb NCP (σ = 0 lies in the dual cones, De Saxcé's correction vanishes, λ·σ̂ = 0): a
problem built from a known λ* strictly inside its cones gives back λ*; a problem whose
bodies separate (g_n > 0: the solution is λ = 0, σ = g) and a rank-deficient G (two contacts
at one point) are refused, and left to the solver. In a time step, solo12 standing under PD
is solved that way at rest (0 iterations) while its impulses still carry its weight.
"""
import numpy as np
import pytest

import soadyn as sd
from soadyn.core.jit import kernel  # soadyn's decorator: a kernel may call soadyn's helpers
from soadyn.kernels.contact.sticking import sticking_solve, sticking_start


@kernel(cache=False)
def _solve(G, g, mu, R, tol, A, x, sigma, p, res):
    return sticking_solve(G, g, mu, R, tol, A, x, sigma, p, res)


@kernel(cache=False)
def _start(mu, lam, warm):
    return sticking_start(mu, lam, warm)


def _delassus(rng, k, nv):
    """G = J M⁻¹ Jᵀ (3k, 3k) of a random J (3k, nv) and SPD M (nv, nv)."""
    J = rng.normal(size=(3 * k, nv))
    B = rng.normal(size=(nv, nv))
    M = B @ B.T + nv * np.eye(nv)
    return J @ np.linalg.solve(M, J.T)


def _run(G, g, mu, R, tol=1e-10):
    n = g.shape[0]
    x, sigma, p, res = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(3)
    ok = _solve(G, g, mu, R, tol, np.zeros((n, n)), x, sigma, p, res)
    return ok, x, sigma, res


@pytest.mark.parametrize("k, nv, compliance", [(1, 6, 0.0), (4, 18, 0.0), (4, 18, 1e-4), (8, 38, 0.0)])
def test_a_known_sticking_solution_is_found(k, nv, compliance):
    rng = np.random.default_rng(k + nv)
    G = _delassus(rng, k, nv)
    R = np.full(3 * k, compliance)
    mu = rng.uniform(0.3, 1.0, size=k)
    lam = np.zeros((k, 3))  # strictly inside each cone: ‖λ_T‖ = μ λ_n / 2
    lam[:, 2] = rng.uniform(0.5, 2.0, size=k)
    angle = rng.uniform(0, 2 * np.pi, size=k)
    lam[:, 0], lam[:, 1] = 0.5 * mu * lam[:, 2] * np.cos(angle), 0.5 * mu * lam[:, 2] * np.sin(angle)
    g = -(G + np.diag(R)) @ lam.reshape(-1)
    ok, x, sigma, res = _run(G, g, mu, R)
    assert ok
    np.testing.assert_allclose(x, lam.reshape(-1), rtol=0, atol=1e-9)
    assert np.abs(sigma).max() <= 1e-10
    assert res.max() <= 1e-10


def test_separating_bodies_are_refused():
    # g_n > 0 with no tangential velocity: the contacts open (λ = 0 is the solution), and
    # the impulses that would stop them pull
    rng = np.random.default_rng(3)
    G = _delassus(rng, 4, 18)
    g = np.tile([0.0, 0.0, 0.01], 4)
    ok, x, _, res = _run(G, g, np.full(4, 0.5), np.zeros(12))
    assert not ok
    assert res.max() > 1e-10


def test_a_rank_deficient_delassus_is_refused():
    rng = np.random.default_rng(5)
    J = rng.normal(size=(6, 18))
    J[3:] = J[:3]  # two contacts at one point of one body: rows 3-5 repeat rows 0-2
    G = J @ J.T
    lam = np.tile([0.0, 0.0, 1.0], 2)
    ok, *_ = _run(G, -G @ lam, np.full(2, 0.5), np.zeros(6))
    assert not ok


def test_the_start_says_sticking_only_inside_the_cones():
    mu = np.array([0.5, 0.5])
    assert _start(mu, np.array([0.1, 0.0, 1.0, 0.0, 0.2, 1.0]), True)
    assert not _start(mu, np.array([0.1, 0.0, 1.0, 0.5, 0.0, 1.0]), True)  # the second slides (on the cone)
    assert not _start(mu, np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), True)  # the second does not press
    assert _start(mu, np.zeros(6), False)  # no warm start: nothing known, try it


def test_standing_quadruped_steps_are_solved_by_the_sticking_solve():
    """solo12 standing under PD (test_physics's scene): once at rest, its steps take 0
    iterations (the sticking solve), converged, and their impulses carry its weight."""
    import importlib.util
    import os
    import sys
    from conftest import HERE, robot_path
    robot_path("solo12")
    spec = importlib.util.spec_from_file_location("soadyn_contact_scenes",
                                                  os.path.join(HERE, "..", "benchmarks", "contact_scenes.py"))
    scenes = sys.modules.get(spec.name)
    if scenes is None:
        scenes = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = scenes
        spec.loader.exec_module(scenes)
    scene = scenes.quadruped()
    model, p = scene.model, scene.params
    q, v, r = scene.q0.copy(), scene.v0.copy(), None
    iterations = []
    for i in range(600):
        tau = scenes.pd_torque(model, q, v, p["q_ref"], p["kp"], p["kd"])
        r = sd.step(model, q, v, tau, scene.dt, warm_start=r)
        q, v = r.q, r.v
        if i >= 300:
            iterations.append(r.solution.iterations)
            assert r.solution.converged
            assert r.impulses[:, 2].sum() == pytest.approx(p["mass"] * p["g"] * scene.dt, rel=0.01)
    assert np.mean(np.array(iterations) == 0) > 0.9
