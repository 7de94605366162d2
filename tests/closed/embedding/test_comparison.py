"""[Chignoli23, §II] comparison methods: approximate, unconstrained and projected."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.comparison import (approximate_model, projected_efpa, projected_forward_dynamics,
                                      projected_rnea)
from soadyn.closed.embedding import cluster_aba, cluster_efpa, cluster_rnea

from conftest import mechanism, random_state, tree_mass_matrix

NAMES = ["mini_cheetah", "mit_humanoid", "tello", "belt_chain", "urdf:four_bar"]


@pytest.mark.parametrize("name", NAMES)
def test_projected_methods_are_exact(name):
    model = mechanism(name)
    rng = np.random.default_rng(5)
    y, yd = random_state(model, rng)
    ydd, tau = rng.normal(size=len(yd)), rng.normal(size=len(yd))
    assert np.allclose(projected_rnea(model, y, yd, ydd), cluster_rnea(model, y, yd, ydd), atol=1e-9)
    assert np.allclose(projected_forward_dynamics(model, y, yd, tau), cluster_aba(model, y, yd, tau), atol=1e-8)
    frame = [f.name for f in model.frames if f.body >= 0][-1]
    assert np.allclose(projected_efpa(model, y, [frame]), cluster_efpa(model, y, [frame]), atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_approximate_methods(name):
    """Approximate ABA/RNEA/EFPA equal the dense expressions (H_ind + H̃)⁻¹(τ − C_ind),
    H_ind ÿ + C_ind + H̃ÿ and J(H_ind + H̃)⁻¹Jᵀ of the independent tree; the unconstrained
    variant is the plain ABA of the independent tree."""
    model = mechanism(name)
    am, um = approximate_model(model), approximate_model(model, reflected=False)
    rng = np.random.default_rng(6)
    y, yd = random_state(model, rng)
    ydd, tau = rng.normal(size=len(yd)), rng.normal(size=len(yd))
    H = tree_mass_matrix(am.model, y) + am.reflected
    c = sd.bias_forces(am.model, y, yd)
    assert np.allclose(am.aba(y, yd, tau), np.linalg.solve(H, tau - c), atol=1e-8)
    assert np.allclose(am.rnea(y, yd, ydd), H @ ydd + c, atol=1e-9)
    # a batch: each row the single call (H̃ ÿ row by row)
    Y, YD, YDD = np.stack([y, y]), np.stack([yd, -yd]), np.stack([ydd, 2 * ydd])
    assert np.allclose(am.rnea(Y, YD, YDD), [am.rnea(Y[b], YD[b], YDD[b]) for b in range(2)], atol=1e-12)
    frame = [f.name for f in am.model.frames if f.body >= 0][-1]
    J = sd.frame_jacobian(am.model, y, frame)
    assert np.allclose(am.efpa(y, [frame]), J @ np.linalg.solve(H, J.T), atol=1e-9)
    assert np.allclose(um.aba(y, yd, tau), sd.aba(um.model, y, yd, tau), atol=1e-8)
    assert not np.any(um.reflected)


def test_reflected_inertia_is_exact_for_a_rotor_on_a_fixed_base():
    """One link driven by a rotor on the ground about a common fixed axis: the rotor turns
    N times faster about a fixed axis, so H = I_link + N² I_rot exactly ([Chignoli23, §II-C])."""
    model = sd.models.geared_chain(1, ratio=6.0, gravity=(0.0, 0.0, 0.0))
    am = approximate_model(model)
    assert np.isclose(am.reflected[0, 0], 36 * 1e-4)
    rng = np.random.default_rng(1)
    for _ in range(3):
        y, yd, tau = rng.normal(size=1), rng.normal(size=1), rng.normal(size=1)
        assert np.allclose(am.aba(y, yd, tau), cluster_aba(model, y, yd, tau), atol=1e-12)


def test_approximation_error_grows_with_coupling():
    """On the MIT Humanoid leg the approximate inverse dynamics is closer to the exact one
    than the unconstrained one, and neither is exact ([Chignoli23, §IX-B])."""
    model = mechanism("mit_humanoid_leg")
    am, um = approximate_model(model), approximate_model(model, reflected=False)
    rng = np.random.default_rng(2)
    y, yd = random_state(model, rng)
    ydd = rng.normal(size=len(yd)) * 20
    exact = cluster_rnea(model, y, yd, ydd)
    e_approx = np.abs(am.rnea(y, yd, ydd) - exact).max()
    e_unc = np.abs(um.rnea(y, yd, ydd) - exact).max()
    assert 1e-6 < e_approx < e_unc
