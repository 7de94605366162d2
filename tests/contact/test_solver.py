"""The Coulomb NCP solvers (solve_contacts, ADMM and PGS): against Pinocchio's
ADMMConstraintSolver / PGSConstraintSolver on the same (G, g, μ, R), closed forms of one
contact (separating, sticking, sliding), the NCP conditions checked directly on the
solution, non-convergence reported, bad input named."""
import warnings

import numpy as np
import pytest

import soadyn as sd
from conftest import peers
from soadyn.contact import ContactSolverWarning

METHODS = ("admm", "pgs")


def random_problem(rng, k, compliance=0.0):
    """A Delassus-like G = A Aᵀ (rank deficient when 3k exceeds A's columns), g with a mix of
    approaching, sliding and separating contacts, μ in [0.1, 1.2]."""
    A = rng.normal(size=(3 * k, max(3, 2 * k)))
    G = A @ A.T
    g = rng.normal(size=(k, 3))
    g[:, 2] = rng.uniform(-1.0, 0.5, size=k)  # most approach, some separate
    return G, g.reshape(-1), rng.uniform(0.1, 1.2, size=k), np.full(3 * k, compliance)


def ncp_violation(G, g, mu, R, lam):
    """Largest violation of K_μ ∋ λ ⊥ σ + Γ(σ) ∈ K_μ*, σ = (G + R)λ + g, evaluated directly."""
    lam = lam.reshape(-1, 3)
    sigma = ((G + np.diag(R)) @ lam.reshape(-1) + g).reshape(-1, 3)
    worst = 0.0
    for m, l, s in zip(mu, lam, sigma):
        shat = s + np.array([0.0, 0.0, m * np.linalg.norm(s[:2])])
        worst = max(worst, np.linalg.norm(l[:2]) - m * l[2], -l[2],  # λ ∈ K_μ
                    m * np.linalg.norm(shat[:2]) - shat[2],  # σ̂ ∈ K_μ*
                    abs(l @ shat))  # λ ⊥ σ̂
    return worst


def pinocchio_solve(G, g, mu, R, method, tol=1e-11):
    pin = pytest.importorskip("pinocchio")
    k = len(mu)
    cms, cds = peers.pinocchio_cone_constraints(mu)
    D = pin.DelassusOperatorDense(G)
    D.updateCompliance(R)
    if method == "admm":
        settings, result, solver = pin.ADMMSolverSettings(), pin.ADMMSolverResult(), pin.ADMMConstraintSolver(3 * k)
    else:
        settings, result, solver = pin.PGSSolverSettings(), pin.PGSSolverResult(), pin.PGSConstraintSolver(3 * k)
    settings.absolute_feasibility_tol = settings.absolute_complementarity_tol = tol
    settings.relative_feasibility_tol = settings.relative_complementarity_tol = 0.0
    settings.max_iterations = 20000
    solver.solve(D, g, cms, cds, settings, result)
    assert result.converged
    return result.retrieveConstraintImpulses().copy()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(4))
def test_same_solution_as_pinocchio_admm_with_compliance(method, seed):
    """R > 0: both methods reach the solution Pinocchio's ADMM finds."""
    rng = np.random.default_rng(seed)
    G, g, mu, R = random_problem(rng, 2 + seed, compliance=0.05)
    sol = sd.solve_contacts(G, g, mu, method=method, R=R, max_iter=20000)
    assert sol.converged and sol.residual <= 1e-10
    ref = pinocchio_solve(G, g, mu, R, "admm")
    assert np.abs(sol.impulses.reshape(-1) - ref).max() < 1e-8


@pytest.mark.parametrize("seed", range(3))
def test_pgs_same_solution_as_pinocchio_pgs(seed):
    """On diagonally dominant problems (where Pinocchio's PGS, whose tangential step is
    1/min(D_t1, D_t2), converges; on the problems above it stalls) the two PGS agree."""
    rng = np.random.default_rng(10 + seed)
    G, g, mu, R = random_problem(rng, 3 + seed, compliance=0.05)
    G += 3.0 * np.diag(np.diag(G))
    sol = sd.solve_contacts(G, g, mu, method="pgs", R=R, max_iter=20000)
    assert sol.converged
    assert np.abs(sol.impulses.reshape(-1) - pinocchio_solve(G, g, mu, R, "pgs")).max() < 1e-8


@pytest.mark.parametrize("method", METHODS)
def test_converged_solutions_satisfy_the_ncp(method):
    rng = np.random.default_rng(11)
    for rigid in (True, False):
        G, g, mu, R = random_problem(rng, 5, 0.0 if rigid else 0.01)
        G += 0.1 * np.eye(15)  # well posed enough to reach 1e-10 in the iteration budget
        sol = sd.solve_contacts(G, g, mu, method=method, R=None if rigid else R, max_iter=20000)
        assert sol.converged
        assert max(sol.primal, sol.dual, sol.complementarity) <= 1e-10
        assert ncp_violation(G, g, mu, R, sol.impulses) <= 1e-9
        np.testing.assert_allclose(sol.velocities.reshape(-1), (G + np.diag(R)) @ sol.impulses.reshape(-1) + g,
                                   atol=1e-12)


# --------------------------------------------------------------------------- one contact, closed forms
D_T, D_N, MU = 2.0, 0.5, 0.4
G1 = np.diag([D_T, D_T, D_N])


@pytest.mark.parametrize("method", METHODS)
def test_single_contact_separating(method):
    sol = sd.solve_contacts(G1, [0.3, -0.2, 0.1], [MU], method=method)
    assert sol.converged and np.all(sol.impulses == 0.0)
    np.testing.assert_allclose(sol.velocities[0], [0.3, -0.2, 0.1])


@pytest.mark.parametrize("method", METHODS)
def test_single_contact_sticking(method):
    """‖g_T‖/d_T ≤ μ|g_n|/d_N: the contact stops, λ = −G⁻¹g inside the cone."""
    g = np.array([0.05, -0.02, -1.0])
    assert np.linalg.norm(g[:2]) / D_T <= MU * abs(g[2]) / D_N
    sol = sd.solve_contacts(G1, g, [MU], method=method)
    assert sol.converged
    np.testing.assert_allclose(sol.impulses[0], -g / np.diag(G1), atol=1e-9)
    np.testing.assert_allclose(sol.velocities[0], 0.0, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_single_contact_sliding(method):
    """‖g_T‖/d_T > μ|g_n|/d_N: λ_n = −g_n/d_N, λ_T on the cone boundary opposite the
    tangential velocity, which keeps the direction of g_T."""
    g = np.array([3.0, -4.0, -1.0])
    sol = sd.solve_contacts(G1, g, [MU], method=method)
    assert sol.converged
    lam_n = -g[2] / D_N
    u = g[:2] / np.linalg.norm(g[:2])
    np.testing.assert_allclose(sol.impulses[0], [*(-MU * lam_n * u), lam_n], atol=1e-9)
    slip = sol.velocities[0, :2]
    np.testing.assert_allclose(slip, (np.linalg.norm(g[:2]) - D_T * MU * lam_n) * u, atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_compliance_softens_a_sticking_contact(method):
    """R > 0 inside the cone: λ = −(G + R)⁻¹ g (compliant contact), smaller than the rigid one."""
    g = np.array([0.05, -0.02, -1.0])
    R = np.array([0.5, 0.5, 0.25])
    sol = sd.solve_contacts(G1, g, [MU], method=method, R=R)
    assert sol.converged
    np.testing.assert_allclose(sol.impulses[0], -g / (np.diag(G1) + R), atol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_frictionless_contact(method):
    """μ = 0: no tangential impulse; the normal one stops the approach."""
    sol = sd.solve_contacts(G1, [1.0, 2.0, -1.0], [0.0], method=method)
    assert sol.converged
    np.testing.assert_allclose(sol.impulses[0], [0.0, 0.0, 1.0 / D_N], atol=1e-9)


# --------------------------------------------------------------------------- warm start, reporting
@pytest.mark.parametrize("method", METHODS)
def test_warm_start_is_an_argument(method):
    rng = np.random.default_rng(2)
    G, g, mu, R = random_problem(rng, 4, 0.05)
    first = sd.solve_contacts(G, g, mu, method=method, R=R, max_iter=20000)
    again = sd.solve_contacts(G, g, mu, method=method, R=R, warm_start=first.impulses)
    assert again.iterations <= 1 and again.converged
    np.testing.assert_allclose(again.impulses, first.impulses, atol=1e-9)
    cold = sd.solve_contacts(G, g, mu, method=method, R=R, max_iter=20000)  # no state kept
    assert cold.iterations == first.iterations
    np.testing.assert_array_equal(cold.impulses, first.impulses)


@pytest.mark.parametrize("method", METHODS)
def test_non_convergence_is_reported(method):
    rng = np.random.default_rng(3)
    G, g, mu, _ = random_problem(rng, 6)
    with pytest.warns(ContactSolverWarning, match="did not converge"):
        sol = sd.solve_contacts(G, g, mu, method=method, max_iter=2)
    assert not sol.converged and sol.iterations == 2 and sol.residual > sol.tol
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = sd.solve_contacts(G, g, mu, method=method, max_iter=2, warn=False)
    assert not quiet.converged


# --------------------------------------------------------------------------- bad input
def test_bad_input_names_the_argument():
    G, g, mu = np.eye(6), np.zeros(6), [0.5, 0.5]
    cases = [
        (dict(G=np.eye(5)), "G"), (dict(G=np.ones((6, 3))), "G"), (dict(G=np.triu(np.ones((6, 6)))), "symmetric"),
        (dict(G=np.where(np.eye(6) > 0, np.nan, 0.0)), "G"), (dict(g=np.zeros(3)), "g"),
        (dict(g=np.array([0, 0, np.nan, 0, 0, 0])), "g"), (dict(friction=[0.5, -0.1]), "friction"),
        (dict(friction=[0.5]), "friction"), (dict(R=-np.ones(6)), "R"), (dict(method="lemke"), "method"),
        (dict(tol=0.0), "tol"), (dict(max_iter=-1), "max_iter"), (dict(warm_start=np.zeros(4)), "warm_start"),
    ]
    for change, name in cases:
        args = dict(G=G, g=g, friction=mu) | change
        with pytest.raises(ValueError, match=name):
            sd.solve_contacts(**args)
    with pytest.raises(TypeError, match="G"):
        sd.solve_contacts("G", g, mu)


@pytest.mark.parametrize("method", METHODS)
def test_no_contacts_is_an_empty_converged_solution(method):
    """k = 0 (a step that found no contacts): no impulses, converged at once, zero residuals."""
    s = sd.solve_contacts(np.zeros((0, 0)), np.zeros(0), np.zeros(0), method=method)
    assert s.impulses.shape == (0, 3) and s.converged and s.iterations == 0 and s.residual == 0.0
