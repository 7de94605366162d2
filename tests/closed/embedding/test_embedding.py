"""Constraint embedding ([Chignoli23]): C-ABA, C-RNEA, C-EFPA and the cluster mass matrix
against the projection method on the spanning tree, and physical laws."""
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import soadyn as sd
from soadyn import joints as jt
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.closed import METHODS, evaluate_constraints
from soadyn.closed.embedding import cluster_aba, cluster_efpa, cluster_mass_matrix, cluster_rnea

from conftest import MECHANISMS, mechanism, projection, random_state, tree_mass_matrix

FRAMES = {"urdf:revolute_rotor_chain": ["link-2"], "urdf:four_bar": ["loop1_predecessor"],
          "crank_rocker": ["coupler", "rocker"], "four_bar_chain": ["l2_coupler", "tail1"],
          "rssr": ["coupler", "loop_successor"],
          "urdf:six_bar": ["constraint1_successor", "link2"], "mini_cheetah": ["FR_foot", "HL_foot"],
          "mit_humanoid": ["right_foot", "left_hand"], "tello": ["left-toe", "right-heel"],
          "jvrc1_humanoid": ["left-foot", "right-hand"], "geared_chain": ["tip"], "belt_chain": ["tip", "link-A-1"],
          "mit_humanoid_leg": ["foot"], "planar_leg_linkage": ["end_effector", "shank_support"]}


@pytest.mark.parametrize("name", MECHANISMS)
def test_cluster_algorithms_match_the_projection_method(name):
    """C-ABA = (GᵀMG)⁻¹Gᵀ(τ − C − M g) with external forces; C-RNEA(C-ABA(τ)) = τ;
    cluster mass matrix = GᵀMG; C-EFPA = J (GᵀMG)⁻¹ Jᵀ ([Chignoli23, §II], VI–VIII)."""
    model = mechanism(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # hash(str) varies per process
    y, yd = random_state(model, rng)
    q, v, G, g, M, c, H = projection(model, y, yd)
    tau = rng.normal(size=len(yd))
    fext = rng.normal(size=(model.nbodies, 6))
    Jf = sum(sd.frame_jacobian(model, q, b.name, "local").T @ fext[b.index] for b in model.bodies)
    ydd_ref = np.linalg.solve(H, tau - G.T @ (c + M @ g - Jf))
    ydd = cluster_aba(model, y, yd, tau, fext)
    scale = 1.0 + np.abs(ydd_ref).max()
    assert np.allclose(ydd, ydd_ref, atol=1e-9 * scale, rtol=0)
    tau_back = cluster_rnea(model, y, yd, ydd, fext)
    assert np.allclose(tau_back, tau, atol=1e-9 * (1 + np.abs(tau).max()) * scale)
    assert np.allclose(cluster_mass_matrix(model, y), H, atol=1e-10 * np.abs(H).max(), rtol=0)
    frames = FRAMES[name]
    J = np.vstack([sd.frame_jacobian(model, q, f, "local") for f in frames]) @ G
    Om = J @ np.linalg.solve(H, J.T)
    assert np.allclose(cluster_efpa(model, y, frames), Om, atol=1e-9 * np.abs(Om).max(), rtol=0)


@pytest.mark.parametrize("name", MECHANISMS)
def test_explicit_constraints(name):
    """φ(γ(y)) = 0, K G = 0 and q̈ = G ÿ + g equals the finite-difference derivative of
    q̇ = G ẏ along q(t) = γ(y(t)) ([Chignoli23, eq. 2–3])."""
    model = mechanism(name)
    tree = cluster_tree(model)
    rng = np.random.default_rng(7)
    y, yd = random_state(model, rng, scale=0.4)
    ydd = rng.normal(size=len(yd))
    q = tree.spanning_positions(y.copy())
    assert np.abs(tree.constraint_residual(q)).max() < 1e-10
    for c in tree:
        if c.constraints:
            K = c.joint.constraint_jacobian(q)
            assert np.abs(K @ c.joint.jacobian(q)).max() < 1e-10
    G, g = tree.explicit_jacobian(q), tree.explicit_bias(q, tree.explicit_jacobian(q) @ yd)
    if tree.nyq != tree.nyv:
        return  # y holding a quaternion is not a vector space: the analytic check above suffices
    h = 1e-5

    def qdot(t):
        yt = y + yd * t + 0.5 * ydd * t * t
        qt = tree.spanning_positions(yt)
        return tree.explicit_jacobian(qt) @ (yd + ydd * t)

    fd = (qdot(h) - qdot(-h)) / (2 * h)
    assert np.allclose(fd, G @ ydd + g, atol=1e-6 * (1 + np.abs(fd).max()))


@pytest.mark.parametrize("name", ["crank_rocker", "mit_humanoid_leg", "belt_chain"])
def test_energy_is_conserved_without_forces(name):
    """Physical law: with τ = 0 the total energy of a conservative closed-chain system stays
    constant along C-ABA trajectories (RK4 in y, ẏ)."""
    model = mechanism.__wrapped__(name)  # a fresh model: the assembly branch must not depend on earlier tests
    tree = cluster_tree(model)
    rng = np.random.default_rng(3)
    y, yd = random_state(model, rng, scale=0.5)
    zero = np.zeros(len(yd))

    def energy(y, yd):
        q = tree.spanning_positions(y.copy())
        H = cluster_mass_matrix(model, y)
        return 0.5 * yd @ H @ yd + sd.potential_energy(model, q)

    def f(s):
        n = len(y)
        return np.concatenate([s[n:], cluster_aba(model, s[:n], s[n:], zero)])

    s = np.concatenate([y, yd])
    e0 = energy(y, yd)
    dt = 2e-3
    for _ in range(150):
        k1 = f(s)
        k2 = f(s + 0.5 * dt * k1)
        k3 = f(s + 0.5 * dt * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    n = len(y)
    scale = abs(e0) + 0.5 * yd @ cluster_mass_matrix(model, y) @ yd + 1.0
    assert abs(energy(s[:n], s[n:]) - e0) < 1e-7 * scale


@pytest.mark.parametrize("name", MECHANISMS)
def test_embedding_agrees_with_the_cut_joint_methods(name):
    """Constraint embedding (C-ABA, q̈ = G ÿ + g) and the augmented, direct and projection
    cut-joint methods give the same q̈ and the same least-norm multipliers λ to 1e-9
    (the library's strongest check); the embedding's q̈ satisfies the cluster
    constraints K q̈ = k, and its constraint forces do no work on allowed motions."""
    model = mechanism(name)
    tree = cluster_tree(model)
    rng = np.random.default_rng(11)
    y, yd = random_state(model, rng)
    q, v = tree.spanning_state(y, yd)
    st = evaluate_constraints(model, q, v)
    assert np.abs(st.residual).max(initial=0.0) < 1e-10 and np.abs(st.velocity_residual(v)).max(initial=0.0) < 1e-10
    tau = rng.normal(size=model.nv)
    fext = rng.normal(size=(model.nbodies, 6))
    res = {m: sd.constrained_forward_dynamics(model, q, v, tau, method=m, f_ext=fext) for m in METHODS}
    emb, ref = res["embedding"], res["direct"]
    for r in res.values():
        assert np.allclose(r.qdd, ref.qdd, rtol=0, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
        assert np.allclose(r.multipliers, ref.multipliers, rtol=0, atol=1e-9 * (1 + np.abs(ref.multipliers).max()))
    for c in tree:
        if c.constraints:
            j = c.joint
            K = j.constraint_jacobian(q)
            k = j.constraint_acceleration_bias(q, v)
            assert np.abs(K @ emb.qdd[j.v_index] - k).max() < 1e-8 * (1 + np.abs(emb.qdd).max())
    M = tree_mass_matrix(model, q)
    C = sd.rnea(model.spanning_tree(), q, v, np.zeros(model.nv), fext)
    assert np.allclose(emb.generalized_constraint_force, M @ emb.qdd + C - tau, atol=1e-9 * (1 + np.abs(C).max()))
    G = tree.explicit_jacobian(q)
    f = emb.generalized_constraint_force
    assert np.abs(G.T @ f).max() < 1e-9 * (1 + np.abs(f).max())


def test_tree_without_constraints_reduces_to_aba_and_rnea():
    """[Chignoli23, §VI-C]: with single-body clusters the cluster algorithms are ABA and RNEA."""
    model = sd.models.random_tree(8, rng=5, kinds=("revolute", "prismatic", "spherical", "universal"),
                                  floating_base=True)
    rng = np.random.default_rng(2)
    q = sd.random_configuration(model, rng)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    tree = cluster_tree(model)
    assert len(tree) == model.nbodies
    y, yd = tree.independent_state(q, v)
    assert np.allclose(cluster_aba(model, y, yd, tau), sd.aba(model, q, v, tau), atol=1e-9)
    assert np.allclose(cluster_rnea(model, y, yd, tau), sd.rnea(model, q, v, tau), atol=1e-9)


@st.composite
def geared_trees(draw):
    """Random trees of 1-dof links, some links driven by rotors on their parent (geared
    transmissions) and some pairs by a belt (q̇_rotor = N (q̇_A + q̇_B))."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n = draw(st.integers(1, 5))
    m = sd.Model("geared")
    for k in range(n):
        parent = None if k == 0 else int(rng.integers(-1, k))
        parent = None if parent is not None and parent < 0 else parent
        mass, com, I = sd.models.random_rigid_inertia(rng)
        R = sd.spatial.exp3(rng.normal(size=3))
        m.add_body(f"l{k}", jt.Revolute(rng.normal(size=3)), parent, (R, rng.normal(size=3) * 0.2), mass=mass,
                   com=com, inertia=I)
        kind = draw(st.sampled_from(["none", "gear", "belt"]))
        if kind == "none" or (kind == "belt" and parent is None):
            continue
        drive_parent = (-1 if parent is None else parent) if kind == "gear" else m.bodies[parent].parent
        rj = jt.Revolute(rng.normal(size=3))
        rj.independent = False
        rmass, rcom, rI = sd.models.random_rigid_inertia(rng, mass_range=(0.01, 0.1), size=0.05)
        m.add_body(f"r{k}", rj, None if drive_parent < 0 else drive_parent,
                   (sd.spatial.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.1), mass=rmass, com=rcom, inertia=rI)
        m.add_coupling(f"c{k}", f"l{k}", f"r{k}", float(rng.uniform(2, 10)))
    return m


@settings(max_examples=15, deadline=None)
@given(geared_trees(), st.integers(0, 2**31 - 1))
def test_random_geared_trees(model, seed):
    rng = np.random.default_rng(seed)
    y, yd = random_state(model, rng)
    q, v, G, g, M, c, H = projection(model, y, yd)
    tau = rng.normal(size=len(yd))
    ydd = cluster_aba(model, y, yd, tau)
    assert np.allclose(ydd, np.linalg.solve(H, tau - G.T @ c), atol=1e-8 * (1 + np.abs(ydd).max()))
    assert np.allclose(cluster_rnea(model, y, yd, ydd), tau, atol=1e-8 * (1 + np.abs(ydd).max()))
    assert np.allclose(cluster_mass_matrix(model, y), H, atol=1e-10 * (1 + np.abs(H).max()))
