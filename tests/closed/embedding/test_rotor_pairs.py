"""The link–rotor pair step of C-ABA (:func:`soadyn.kernels.cluster.inertia.project_rotor_pair`):
taken for every geared rotor whose inertia is symmetric about its axis, never for the
others, and equal to the generic cluster step and to the dense projection method."""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn.closed.embedding.algorithms import aba_with, efpa_with
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.closed.embedding.compiled import PackedClusters

from conftest import projection, random_state


def _packs(model):
    """(packed clusters as the kernels get them, the same with the pair step switched off)."""
    pairs = PackedClusters(cluster_tree(model))
    generic = PackedClusters(cluster_tree(model))
    generic.tables.rotor_offset[:] = -1
    return pairs, generic


def _symmetric_about_axis(body):
    """Whether a rotor's mass centre is on its axis a and its rotational inertia is
    α aaᵀ + β (E − aaᵀ) (JVRC-1's pitch and roll rotors are symmetric about z, not about
    their axes)."""
    a = np.asarray(body.joint.axis, dtype=float)
    a = a / np.linalg.norm(a)
    I = np.asarray(body.inertia_com, dtype=float)
    alpha = a @ I @ a
    beta = (np.trace(I) - alpha) / 2
    on_axis = np.allclose(np.cross(np.asarray(body.com, dtype=float), a), 0.0)
    return on_axis and np.allclose(I, alpha * np.outer(a, a) + beta * (np.eye(3) - np.outer(a, a)), rtol=1e-12,
                                   atol=1e-15)


def _pair_clusters(packed):
    return [k for k in range(len(packed.tree.clusters)) if packed.tables.rotor_offset[k] >= 0]


@pytest.mark.parametrize("name, frames", [("mini_cheetah", ["FR_foot", "HL_foot"]),
                                          ("jvrc1_humanoid", ["left-foot", "right-hand"]),
                                          ("geared_chain", ["tip"])])
def test_pair_step_equals_the_generic_step_and_the_projection_method(name, frames):
    model = getattr(sd.models, name)()
    pairs, generic = _packs(model)
    tree = pairs.tree
    geared = [cl.index for cl in tree.clusters if len(cl.bodies) == 2 and cl.joint.constrained
              and _symmetric_about_axis(model.bodies[cl.bodies[1]])]
    assert geared and _pair_clusters(pairs) == geared
    rng = np.random.default_rng(4)
    y, yd = random_state(model, rng)
    tau = rng.normal(size=len(yd))
    ydd = aba_with(model, pairs, y, yd, tau)
    assert np.allclose(ydd, aba_with(model, generic, y, yd, tau), rtol=0, atol=1e-11 * (1 + np.abs(ydd).max()))
    _, _, G, _, _, c, H = projection(model, y, yd)
    assert np.allclose(ydd, np.linalg.solve(H, tau - G.T @ c), rtol=0, atol=1e-9 * (1 + np.abs(ydd).max()))
    assert np.allclose(sd.cluster_aba(model, y, yd, tau), ydd, rtol=0, atol=1e-12 * (1 + np.abs(ydd).max()))
    omega = efpa_with(model, pairs, y, frames)  # C-EFPA runs the same backward pass
    assert np.allclose(omega, efpa_with(model, generic, y, frames), rtol=0, atol=1e-11 * (1 + np.abs(omega).max()))


def _motor(rotor_inertia, rotor_com=(0.0, 0.0, 0.0), rotor_on_link_parent=True):
    """A base on a revolute joint carrying a link driven by a rotor (axis z, ratio 7)."""
    m = sd.Model("motor")
    m.add_body("base", jt.Revolute((1.0, 0.0, 0.0)), None, (np.eye(3), np.zeros(3)), mass=2.0,
               com=(0.1, 0.0, 0.0), inertia=np.diag([0.02, 0.03, 0.04]))
    m.add_body("link", jt.Revolute((0.0, 0.0, 1.0)), "base", (sd.spatial.rotation_x(0.3), np.array([0.2, 0.0, 0.1])),
               mass=0.5, com=(0.1, 0.02, 0.0), inertia=np.diag([0.001, 0.004, 0.004]))
    rj = jt.Revolute((0.0, 0.0, 1.0))
    rj.independent = False
    m.add_body("rotor", rj, "base" if rotor_on_link_parent else "link",
               (sd.spatial.rotation_y(0.7), np.array([0.05, 0.03, -0.02])), mass=0.06, com=rotor_com,
               inertia=np.asarray(rotor_inertia, dtype=float))
    m.add_coupling("gear", "link", "rotor", 7.0)
    return m


@pytest.mark.parametrize("inertia, com, on_parent, is_pair", [
    (np.diag([3e-5, 3e-5, 5e-5]), (0.0, 0.0, 0.0), True, True),     # symmetric about its axis z
    (np.diag([3e-5, 3e-5, 5e-5]), (0.0, 0.0, 0.01), True, True),    # mass centre on the axis
    (np.diag([3e-5, 4e-5, 5e-5]), (0.0, 0.0, 0.0), True, False),    # transverse moments differ
    (np.diag([3e-5, 3e-5, 5e-5]), (0.01, 0.0, 0.0), True, False),   # mass centre off the axis
    (np.diag([3e-5, 3e-5, 5e-5]), (0.0, 0.0, 0.0), False, False),   # rotor on the link: not a pair
])
def test_pair_step_is_taken_only_where_it_applies(inertia, com, on_parent, is_pair):
    model = _motor(inertia, com, on_parent)
    pairs, generic = _packs(model)
    assert bool(_pair_clusters(pairs)) == is_pair
    rng = np.random.default_rng(5)
    for _ in range(3):
        y, yd = random_state(model, rng)
        tau = rng.normal(size=len(yd))
        ydd = sd.cluster_aba(model, y, yd, tau)
        _, _, G, _, _, c, H = projection(model, y, yd)
        assert np.allclose(ydd, np.linalg.solve(H, tau - G.T @ c), rtol=0, atol=1e-9 * (1 + np.abs(ydd).max()))
        assert np.allclose(ydd, aba_with(model, generic, y, yd, tau), rtol=0, atol=1e-11 * (1 + np.abs(ydd).max()))


def _motor_on_world():
    """A link and its rotor (ratio −5) both hinged to the world, a second link on the first."""
    m = sd.Model("motor on the world")
    m.add_body("link", jt.Revolute((0.0, 1.0, 0.0)), None, (sd.spatial.rotation_x(0.2), np.array([0.0, 0.0, 0.3])),
               mass=0.8, com=(0.15, 0.0, 0.01), inertia=np.diag([0.002, 0.006, 0.005]))
    rj = jt.Revolute((0.0, 1.0, 0.0))
    rj.independent = False
    m.add_body("rotor", rj, None, (sd.spatial.rotation_x(0.2), np.array([0.0, -0.05, 0.3])), mass=0.1,
               inertia=np.diag([4e-5, 7e-5, 4e-5]))
    m.add_coupling("gear", "link", "rotor", -5.0)
    m.add_body("forearm", jt.Revolute((0.0, 1.0, 0.0)), "link", (np.eye(3), np.array([0.3, 0.0, 0.0])), mass=0.4,
               com=(0.1, 0.0, 0.0), inertia=np.diag([0.001, 0.003, 0.003]))
    return m


@pytest.mark.parametrize("make", [lambda: _motor(np.diag([3e-5, 3e-5, 5e-5])), _motor_on_world,
                                  sd.models.mini_cheetah], ids=["on a moving body", "on the world", "mini_cheetah"])
def test_rnea_and_aba_take_pair_rotors_from_their_constants(make):
    # C-RNEA and C-ABA leave the pair rotors unplaced (their quantities from constants in the
    # frame of the body they sit on: kernels/cluster/rnea.py add_rotor_forces, aba.py pair_step)
    # unless an external force acts on one: both paths equal τ_ind = Gᵀ(M(Gÿ + g) + c) of the
    # spanning tree and Gᵀ RNEA(q, v, Gÿ + g, f_ext); C-ABA solves (GᵀMG) ÿ = τ − Gᵀ(Mg + c), and
    # with a force on a rotor it inverts C-RNEA
    model = make()
    pairs, _ = _packs(model)
    assert _pair_clusters(pairs)
    rotor = next(i for i, b in enumerate(model.bodies) if "rotor" in b.name)
    rng = np.random.default_rng(6)
    for _ in range(3):
        y, yd = random_state(model, rng)
        ydd = rng.normal(size=len(yd))
        q, v, G, g, M, c, _ = projection(model, y, yd)
        expected = G.T @ (M @ (G @ ydd + g) + c)
        tol = 1e-10 * (1 + np.abs(expected).max())
        assert np.allclose(sd.cluster_rnea(model, y, yd, ydd), expected, rtol=0, atol=tol)
        f_ext = np.zeros((model.nbodies, 6))
        f_ext[rotor] = rng.normal(size=6)
        expected = G.T @ sd.rnea(model.spanning_tree(), q, v, G @ ydd + g, f_ext)
        assert np.allclose(sd.cluster_rnea(model, y, yd, ydd, f_ext), expected, rtol=0, atol=tol)
        tau = rng.normal(size=len(yd))
        expected = np.linalg.solve(G.T @ M @ G, tau - G.T @ (M @ g + c))
        assert np.allclose(sd.cluster_aba(model, y, yd, tau), expected, rtol=0,
                           atol=1e-9 * (1 + np.abs(expected).max()))
        ydd_f = sd.cluster_aba(model, y, yd, tau, f_ext)
        assert np.allclose(sd.cluster_rnea(model, y, yd, ydd_f, f_ext), tau, rtol=0, atol=1e-9 * (1 + np.abs(tau).max()))
