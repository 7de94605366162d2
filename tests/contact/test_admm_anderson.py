"""Anderson's acceleration of the contact ADMM (soadyn.kernels.contact.admm.anderson_step) and
what the solver returns when the iterations stop before the tolerance.

Truths: on an affine map w ↦ T w + c of dimension d, Anderson's method with memory m ≥ d is
GMRES in disguise [Walker11] and reaches the fixed point (I − T)⁻¹c within d + 1 accelerated
steps, where the plain iteration with T's spectral radius 0.99 still has an error of about
0.99ᵈ; stack problems built from a known
solution with contacts sticking, sliding and separating are solved (the NCP evaluated in
numpy); a solve stopped by max_iter returns a
λ in the friction cones with its own σ = (G + R)λ + g and the NCP residuals of that λ,
evaluated here in numpy."""
import numpy as np
import pytest

from soadyn.core.jit import kernel  # soadyn's decorator: a kernel may call soadyn's helpers (link-only code)
from soadyn.kernels.contact.admm import (AA_MEMORY, AA_SMALL, INFO_SIZE, WARM_RETRY, admm_kernel, admm_scratch_size, admm_solve,
                                         anderson_step)
from test_admm_dual_start import ncp_violation


@kernel
def _anderson(y, z, x, y_prev, z_prev, x_prev, dF, dR, last_f, last_r, small, state, accepted):
    count, head, have_last, accelerated, accepted[0] = anderson_step(
        y, z, x, y_prev, z_prev, x_prev, dF, dR, last_f, last_r, small, state[0], state[1], state[2] == 1,
        state[3] == 1, accepted[0])
    state[0], state[1], state[2], state[3] = count, head, 1 if have_last else 0, 1 if accelerated else 0


def test_anderson_solves_an_affine_map_in_d_plus_one_steps():
    rng = np.random.default_rng(1)
    n = 2  # w = (y, z): d = 4 ≤ AA_MEMORY
    d = 2 * n
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    T = Q @ np.diag([0.99, 0.9, -0.5, 0.3]) @ Q.T
    c = rng.normal(size=d)
    w_star = np.linalg.solve(np.eye(d) - T, c)
    y, z, x = np.zeros(n), np.zeros(n), np.zeros(n)
    rows = {k: np.zeros(n) for k in ("y_prev", "z_prev", "x_prev")}
    dF, dR = np.zeros((AA_MEMORY, d)), np.zeros((AA_MEMORY, d))
    last_f, last_r, small = np.zeros(d), np.zeros(d), np.zeros(AA_SMALL)
    state, accepted = np.zeros(4, dtype=np.int64), np.zeros(1)
    errors = []
    for _ in range(d + 2):
        rows["y_prev"][:], rows["z_prev"][:] = y, z
        f = T @ np.concatenate([y, z]) + c  # the map
        y[:], z[:] = f[:n], f[n:]
        _anderson(y, z, x, rows["y_prev"], rows["z_prev"], rows["x_prev"], dF, dR, last_f, last_r, small, state,
                  accepted)
        errors.append(np.abs(np.concatenate([y, z]) - w_star).max())
    scale = np.abs(w_star).max()
    assert errors[-1] <= 1e-6 * scale, errors
    assert 0.99 ** (d + 2) * np.abs(w_star).max() > 1e3 * errors[-1]  # the plain iteration is far from it


def _stack_problem(seed, R=0.0):
    """A 5-box stack's Delassus-like G (test_envelope.stack_delassus) and g = σ* − (G + R)λ* of
    a known solution (λ*, σ*) with the three modes: sticking (λ* inside its cone, σ* = 0),
    sliding (λ* on its cone, σ*_T against λ*_T, σ*_n = 0) and separating (λ* = 0, σ*_n > 0):
    a problem that has a solution (not the only one: the Coulomb NCP is not monotone)."""
    from test_envelope import stack_delassus
    rng = np.random.default_rng(seed)
    G, _ = stack_delassus(rng)
    n = G.shape[0]
    k = n // 3
    mu = rng.uniform(0.3, 1.0, size=k)
    lam, sig = np.zeros((k, 3)), np.zeros((k, 3))
    for i, mode in enumerate(rng.permutation(np.arange(k) % 3)):
        u = rng.normal(size=2)
        u /= np.linalg.norm(u)
        if mode == 0:  # sticking
            lam[i, 2] = rng.uniform(0.5, 2.0)
            lam[i, :2] = rng.uniform(0.0, 0.9) * mu[i] * lam[i, 2] * u
        elif mode == 1:  # sliding
            lam[i, 2] = rng.uniform(0.5, 2.0)
            lam[i, :2] = mu[i] * lam[i, 2] * u
            sig[i, :2] = -rng.uniform(0.01, 0.1) * u
        else:  # separating
            sig[i] = 0.05 * rng.normal(size=3)
            sig[i, 2] = rng.uniform(0.01, 0.1)
    lam, sig = lam.reshape(-1), sig.reshape(-1)
    return G, sig - (G + R * np.eye(n)) @ lam, mu, lam


@pytest.mark.parametrize("max_iter", [1, 2, 5, 17])
def test_a_stopped_solve_returns_a_cone_point_with_its_own_residuals(max_iter):
    from test_step import ncp_residuals
    G, g, mu, _ = _stack_problem(3)
    n = g.shape[0]
    R = np.zeros(n)
    lam, sigma, info = np.zeros(n), np.zeros(n), np.zeros(INFO_SIZE)
    assert admm_kernel(G, g, mu, R, 1e-14, max_iter, False, lam, sigma, info, np.empty((n, n)),
                       np.empty(admm_scratch_size.py_func(n))) == 0
    assert info[1] == 0.0 and info[0] == max_iter  # stopped, not converged
    L = lam.reshape(-1, 3)
    assert np.all(np.hypot(L[:, 0], L[:, 1]) <= mu * L[:, 2] + 1e-15) and np.all(L[:, 2] >= 0)
    np.testing.assert_allclose(sigma, G @ lam + g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(info[2:5], ncp_residuals(lam.reshape(-1, 3), sigma.reshape(-1, 3), mu), rtol=1e-9,
                               atol=1e-15)


@pytest.mark.parametrize("seed", [7, 8, 11])
@pytest.mark.parametrize("R", [0.0, 1e-4])
def test_the_accelerated_solve_solves_the_ncp(seed, R):
    G, g, mu, _ = _stack_problem(seed, R)
    n = g.shape[0]
    Rv = np.full(n, R)
    lam, sigma, info = np.zeros(n), np.zeros(n), np.zeros(INFO_SIZE)
    assert admm_kernel(G, g, mu, Rv, 1e-10, 2000, False, lam, sigma, info, np.empty((n, n)),
                       np.empty(admm_scratch_size.py_func(n))) == 0
    assert info[1] == 1.0
    assert ncp_violation(G, g, mu, Rv, lam) <= 1e-9


@kernel
def _solve_from_scale(G, g, mu, R, tol, max_iter, lam, sigma, info, A, V, L0, power0):
    status, L, power = admm_solve(G, g, mu, R, tol, max_iter, True, lam, sigma, info, A, V, L0, power0, sigma[:0])
    return status


def test_a_solve_from_a_wrong_scale_starts_again_with_its_own():
    """A time stepper's given penalty scale that does not fit the problem (ρ far too small:
    p = −3) is dropped after WARM_RETRY iterations for a cold start's, from the best iterate:
    the solve then takes about WARM_RETRY more iterations than a cold one (the spectral rule
    alone, walking p back by steps of 0.05, takes several times the cold count). The problem:
    two stacked boxes whose contacts all stick, g = −Gλ* for normal impulses λ*."""
    from test_envelope import stack_delassus
    rng = np.random.default_rng(7)
    G, _ = stack_delassus(rng, bodies=2)
    n = G.shape[0]
    lam_star = np.zeros(n)
    lam_star[2::3] = rng.uniform(0.5, 2.0, n // 3)
    g, mu, R = -G @ lam_star, np.full(n // 3, 0.8), np.zeros(n)
    lam, sigma, info = np.zeros(n), np.zeros(n), np.zeros(INFO_SIZE)
    assert admm_kernel(G, g, mu, R, 1e-10, 5000, False, lam, sigma, info, np.empty((n, n)),
                       np.empty(admm_scratch_size.py_func(n))) == 0
    cold = info[0]
    lam[:] = 0.0
    assert _solve_from_scale(G, g, mu, R, 1e-10, 5000, lam, sigma, info, np.empty((n, n)),
                             np.empty(admm_scratch_size.py_func(n)), np.linalg.eigvalsh(G).max(), -3.0) == 0
    assert info[1] == 1.0
    assert WARM_RETRY < info[0] <= WARM_RETRY + 2 * cold
    assert ncp_violation(G, g, mu, R, lam) <= 1e-9


def test_a_stalled_acceleration_gives_way_to_the_plain_iterations():
    """A problem on which Anderson's combination stalls (its fixed-point residual stops
    falling while the plain ADMM converges: the first contacts of five 0.1 m boxes stacked
    with 0.1 mm overlaps, g moved by 1e-6 m/s on one row, as benchmarks/contact_step.py's
    stage breakdown solves it) is solved: the history restarts after AA_PATIENCE iterations
    without progress, and a second stall turns the acceleration off. The NCP is evaluated in
    numpy."""
    import soadyn as sd
    bodies = "".join(f'<body name="box{k}" pos="0 0 {0.05 + k * 0.1 - 1e-4 * k:.6f}"><freejoint/>'
                     f'<geom type="box" size="0.05 0.05 0.05" mass="1"/></body>' for k in range(5))
    xml = ('<mujoco model="box stack"><option timestep="0.001" integrator="Euler" cone="elliptic"/><worldbody>'
           f'<geom name="ground" type="plane" size="0 0 1"/>{bodies}</worldbody></mujoco>')
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loader names the MJCF options it does not read
        model = sd.load_mjcf(xml)
    q = sd.io.mjcf.q_from_mujoco(model, np.concatenate(
        [np.r_[0.0, 0.0, 0.05 + k * 0.1 - 1e-4 * k, 1.0, 0.0, 0.0, 0.0] for k in range(5)]))
    r = sd.step(model, q, np.zeros(model.nv), np.zeros(model.nv), 1e-3)
    contacts = r.contacts
    G = sd.delassus(model, q, contacts)
    g = r.solution.velocities.reshape(-1) - G @ r.impulses.reshape(-1)
    g[2] -= 1e-6
    solution = sd.solve_contacts(G, g, contacts.friction, max_iter=2000, warn=False)
    assert solution.converged
    n = g.shape[0]
    assert ncp_violation(G, g, np.asarray(contacts.friction), np.zeros(n), solution.impulses.reshape(-1)) <= 1e-9
