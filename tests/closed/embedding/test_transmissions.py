"""Transmissions and rotors (``Model.add_transmission``, ``Model.add_rotor``): constant
linear relations between joint rates are constant-G (LINEAR) clusters of constraint
embedding ([Chignoli23, eq. 2–3] with constant K), and they give the same dynamics as the
same mechanism written as a general user constraint, as URDF+-style couplings with
hand-built rotor bodies, as the cut-joint methods, and as closed forms."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt
from soadyn.closed import constraint_set, evaluate_constraints
from soadyn.closed.embedding import cluster_aba, cluster_mass_matrix, cluster_rnea
from soadyn.closed.embedding.clusters import cluster_tree, random_independent_state
from soadyn.closed.embedding.compiled import packed_clusters
from soadyn.core.constraints import symbolic_constraint
from soadyn.kernels.cluster.layout import LINEAR, NONLINEAR

from conftest import tree_mass_matrix

LINK_I = np.diag([0.5, 0.5, 1.0])  # kg m², about the centre of mass
ROTOR_I = np.diag([0.5e-4, 0.5e-4, 1e-4])
N = 6.0
STAGES = (1.5, 0.7)  # per-stage pulley ratios of rotor B's two-stage belt


def _link(m, name, parent, x):
    m.add_body(name, jt.Revolute("z"), parent, (np.eye(3), np.array([x, 0.0, 0.0])), mass=1.0,
               com=(0.5, 0.0, 0.0), inertia=LINK_I)


def _rotor_body(m, name, parent, x):
    j = jt.Revolute("z")
    j.independent = False
    m.add_body(name, j, parent, (np.eye(3), np.array([x, 0.0, 0.0])), mass=0.1, inertia=ROTOR_I)


def per_stage_belt_chain(n=12, how="transmission", stages=STAGES, ratio=N):
    """n planar links in pairs A–B (as [Chignoli23, Fig. 8f]); both rotors of a pair sit on
    the pair's parent: q̇_rA = N q̇_A and, through a two-stage belt with per-stage ratios
    (r_A, r_B), q̇_rB = N (r_A q̇_A + r_B q̇_B). ``how``: "transmission" (add_rotor and
    add_transmission), "user" (the same rows as sympy user constraints on declared joints)."""
    import sympy
    m = sd.Model(f"per_stage_belt_{how}", gravity=(9.81, 0.0, 0.0))
    parent = None
    rA, rB = stages
    for k in range(n // 2):
        x = 0.0 if k == 0 else 1.0
        a, b = f"A{k}", f"B{k}"
        _link(m, a, parent, x)
        if how == "transmission":
            m.add_rotor(f"rA{k}", parent, "z", ROTOR_I, ratio, drives=a, mass=0.1,
                        placement=(np.eye(3), np.array([x, 0.0, 0.0])))
            m.add_body(f"rB{k}", jt.Revolute("z"), parent, (np.eye(3), np.array([x, 0.0, 0.0])), mass=0.1,
                       inertia=ROTOR_I)
        else:
            _rotor_body(m, f"rA{k}", parent, x)
            _rotor_body(m, f"rB{k}", parent, x)
        _link(m, b, a, 1.0)
        if how == "transmission":
            m.add_transmission(f"belt{k}", [f"rB{k}", a, b], [1.0, -ratio * rA, -ratio * rB])
        else:
            s = sympy.symbols("r a b")
            m.add_constraint(symbolic_constraint(f"gear{k}", [f"rA{k}", a], [s[0] - ratio * s[1]], s[:2]))
            m.add_constraint(symbolic_constraint(f"belt{k}", [f"rB{k}", a, b],
                                                 [s[0] - ratio * (rA * s[1] + rB * s[2])], s))
        parent = b
    m.add_frame("tip", parent, (np.eye(3), np.array([1.0, 0.0, 0.0])))
    return m


def hand_G(model, rows):
    """q̇ = G ẏ written out by hand: the links' rates are ẏ (body order) and each rotor's
    rate is the given combination of them; ``rows`` maps rotor joint → {link joint: coef}."""
    links = [j.name for j in model.joints if j.name not in rows]
    G = np.zeros((model.nv, len(links)))
    for c, name in enumerate(links):
        G[model.joint(name).v_index, c] = 1.0
    for rotor, coefs in rows.items():
        for link, coef in coefs.items():
            G[model.joint(rotor).v_index, links.index(link)] = coef
    return G


def belt_rows(n, stages=STAGES, ratio=N):
    rows = {}
    for k in range(n // 2):
        rows[f"rA{k}"] = {f"A{k}": ratio}
        rows[f"rB{k}"] = {f"A{k}": ratio * stages[0], f"B{k}": ratio * stages[1]}
    return rows


def projected_accelerations(model, G, q, v, tau):
    """ÿ = (GᵀMG)⁻¹ Gᵀ(τ − c) from the spanning tree's M and bias forces (g = 0: G is
    constant) — the projection method with a G that is not produced by the code under test."""
    M = tree_mass_matrix(model, q)
    c = sd.bias_forces(model.spanning_tree(), q, v)
    return np.linalg.solve(G.T @ M @ G, G.T @ (tau - c)), G.T @ M @ G


# --------------------------------------------------------------------------- constant G
def test_per_stage_belt_chain_is_a_constant_G_cluster():
    model = per_stage_belt_chain(6)
    tree = cluster_tree(model)
    assert len(tree) == 3 and all(len(c.bodies) == 4 for c in tree)
    packed = packed_clusters(model)
    assert list(packed.tables.kind) == [LINEAR] * 3 and not packed.nonlinear
    G = hand_G(model, belt_rows(6))
    assert np.array_equal(tree.explicit_jacobian(sd.neutral(model)), G)
    # γ(y) = G y: no solve (the rotors' angles are the ratio combinations of the links')
    y = np.arange(1.0, 7.0) * 0.1
    assert np.allclose(tree.spanning_positions(y), G @ y, atol=1e-15)
    # the user-constraint form of the same mechanism is solved per call
    user = per_stage_belt_chain(6, "user")
    assert list(packed_clusters(user).tables.kind) == [NONLINEAR] * 3
    assert [c.independent_joints for c in cluster_tree(user)] == [c.independent_joints for c in tree]


def test_cut_joint_rows_of_a_transmission_are_its_ratios():
    model = per_stage_belt_chain(4)
    cs = constraint_set(model)
    blk = cs.block("belt1")
    assert blk.kind == "transmission"
    Gc = sd.constraint_jacobian(model, sd.random_configuration(model, np.random.default_rng(0)))
    row = np.zeros(model.nv)
    for name, coef in (("rB1", 1.0), ("A1", -N * STAGES[0]), ("B1", -N * STAGES[1])):
        row[model.joint(name).v_index] = coef
    assert np.array_equal(Gc[blk.rows][0], row)
    # residual Σ ratios·q = 0 at q = γ(y), and not elsewhere
    y = np.linspace(-0.4, 0.5, 4)
    q = cluster_tree(model).spanning_positions(y)
    assert np.abs(sd.constraint_residual(model, q)).max() < 1e-14
    q[model.joint("rB1").q_index] += 0.01
    assert sd.constraint_residual(model, q)[blk.rows][0] == pytest.approx(0.01, abs=1e-14)


# --------------------------------------------------------------------------- same dynamics
@pytest.mark.parametrize("seed", [0, 1])
def test_per_stage_belt_chain_equals_the_user_constraint_form_and_the_cut_joint_methods(seed):
    n = 6
    model, user = per_stage_belt_chain(n), per_stage_belt_chain(n, "user")
    rng = np.random.default_rng(seed)
    y, yd = random_independent_state(model, rng, scale=1.0)
    tau_ind = rng.normal(size=len(yd))
    fext = rng.normal(size=(model.nbodies, 6))
    q, v = sd.spanning_state(model, y, yd)
    G = hand_G(model, belt_rows(n))
    assert np.allclose(q, G @ y, atol=1e-14) and np.allclose(v, G @ yd, atol=1e-14)
    # spanning τ whose projection is τ_ind (least-norm): the same forces for every method
    tau = np.linalg.pinv(G.T) @ tau_ind
    ydd_ref, H = projected_accelerations(model, G, q, v, tau)
    ydd = cluster_aba(model, y, yd, tau_ind)
    scale = 1.0 + np.abs(ydd_ref).max()
    assert np.allclose(ydd, ydd_ref, atol=1e-10 * scale, rtol=0)
    assert np.allclose(cluster_mass_matrix(model, y), H, atol=1e-12 * np.abs(H).max(), rtol=0)
    assert np.allclose(cluster_rnea(model, y, yd, ydd), tau_ind, atol=1e-9 * scale)
    ydd_user = cluster_aba(user, y, yd, tau_ind)
    assert np.allclose(ydd, ydd_user, atol=1e-8 * scale, rtol=0)
    assert np.allclose(cluster_aba(model, y, yd, tau_ind, fext), cluster_aba(user, y, yd, tau_ind, fext),
                       atol=1e-8 * scale, rtol=0)
    for method in ("augmented", "direct", "projection", "embedding"):
        qdd = sd.constrained_forward_dynamics(model, q, v, tau, method).qdd
        qdd_user = sd.constrained_forward_dynamics(user, q, v, tau, method).qdd
        assert np.allclose(qdd, G @ ydd_ref, atol=1e-8 * scale, rtol=0), method
        assert np.allclose(qdd_user, qdd, atol=1e-7 * scale, rtol=0), method


def test_unit_stage_ratios_equal_the_urdf_plus_belt_coupling():
    """With r_A = r_B = 1 the two-stage belt is the URDF+ belt rule ratio × (q̇_A + q̇_B) =
    q̇_rB of :func:`soadyn.models.belt_chain` (couplings and hand-marked rotor joints)."""
    model = sd.Model("belt", gravity=(9.81, 0.0, 0.0))
    ref = sd.models.belt_chain(4)
    for b in ref.bodies:  # the same bodies, in the same order; transmissions instead of couplings
        joint = jt.Revolute("z")
        model.add_body(b.name, joint, None if b.parent < 0 else b.parent, b.placement, mass=b.mass, com=b.com,
                       inertia=b.inertia_com, joint_name=b.joint.name, strict_inertia=False)
    for c in ref.couplings:
        pred, succ = c.paths(ref)
        links = [ref.bodies[i].joint.name for i in pred]
        model.add_transmission(c.name, [ref.bodies[succ[0]].joint.name] + links, [1.0] + [-c.ratio] * len(links))
    rng = np.random.default_rng(3)
    y, yd = random_independent_state(ref, rng)
    tau = rng.normal(size=len(yd))
    assert np.allclose(cluster_mass_matrix(model, y), cluster_mass_matrix(ref, y), rtol=0, atol=1e-13)
    assert np.allclose(cluster_aba(model, y, yd, tau), cluster_aba(ref, y, yd, tau), rtol=0, atol=1e-11)
    # the same rows, with the opposite sign convention (URDF+: ratio·Σ pred − Σ succ)
    assert np.array_equal(sd.constraint_jacobian(model, sd.neutral(model)),
                          -sd.constraint_jacobian(ref, sd.neutral(ref)))


def geared_chain_with_add_rotor(n=5, ratio=6.0):
    """:func:`soadyn.models.geared_chain` rebuilt with ``add_rotor``."""
    ref = sd.models.geared_chain(n, ratio)
    m = sd.Model("geared", gravity=ref.gravity)
    for b in ref.bodies:
        parent = None if b.parent < 0 else ref.body_name(b.parent)
        if b.name.startswith("rotor"):
            link = b.name.replace("rotor", "link")
            m.add_rotor(b.name, parent, "z", b.inertia_com, ratio, drives=ref.bodies[ref.body_index(link)].joint.name,
                        placement=b.placement, joint_name=b.joint.name, mass=b.mass)
        else:
            m.add_body(b.name, jt.Revolute("z"), parent, b.placement, mass=b.mass, com=b.com, inertia=b.inertia_com,
                       joint_name=b.joint.name)
    return m, ref


def test_add_rotor_equals_hand_built_rotor_bodies_and_couplings():
    model, ref = geared_chain_with_add_rotor()
    assert [b.name for b in model.bodies] == [b.name for b in ref.bodies]
    assert [j.independent for j in model.joints] == [j.independent for j in ref.joints]
    assert [c.kind for c in cluster_tree(model)] == ["geared rotor"] * 5
    assert list(packed_clusters(model).tables.kind) == [LINEAR] * 5
    rng = np.random.default_rng(11)
    for _ in range(3):
        y, yd = random_independent_state(ref, rng, scale=1.5)
        tau = rng.normal(size=len(yd))
        fext = rng.normal(size=(model.nbodies, 6))
        assert np.allclose(cluster_mass_matrix(model, y), cluster_mass_matrix(ref, y), rtol=0, atol=1e-13)
        assert np.allclose(cluster_aba(model, y, yd, tau, fext), cluster_aba(ref, y, yd, tau, fext), rtol=0,
                           atol=1e-10)
        q, v = sd.spanning_state(ref, y, yd)
        tq = rng.normal(size=model.nv)
        for method in ("augmented", "direct", "embedding"):
            assert np.allclose(sd.constrained_forward_dynamics(model, q, v, tq, method).qdd,
                               sd.constrained_forward_dynamics(ref, q, v, tq, method).qdd, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_add_rotor_on_random_spatial_trees(seed):
    """Random spatial trees (random axes, placements and inertias: gyroscopic rotor effects)
    with a rotor on every link's parent: add_rotor equals rotor bodies + URDF+ couplings,
    and C-ABA equals the projection with G written by hand (q̇_rotor = N q̇_link)."""
    rng = np.random.default_rng(seed)
    models = sd.Model("add_rotor", gravity=(0.3, -1.0, -9.81)), sd.Model("coupling", gravity=(0.3, -1.0, -9.81))
    rows = {}
    for k in range(4):
        parent = None if k == 0 else f"l{int(rng.integers(0, k))}"
        axis, R, p = rng.normal(size=3), sd.spatial.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.2
        mass, com, I = sd.models.random_rigid_inertia(rng)
        raxis, rR, rp = rng.normal(size=3), sd.spatial.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.1
        rmass, rcom, rI = sd.models.random_rigid_inertia(rng, mass_range=(0.01, 0.1), size=0.05)
        ratio = float(rng.uniform(-10, 10))
        for how, m in zip(("rotor", "coupling"), models):
            m.add_body(f"l{k}", jt.Revolute(axis), parent, (R, p), mass=mass, com=com, inertia=I)
            if how == "rotor":
                m.add_rotor(f"r{k}", "world" if parent is None else parent, raxis, (rmass, rcom, rI), ratio,
                            drives=f"l{k}", placement=(rR, rp))
            else:
                rj = jt.Revolute(raxis)
                rj.independent = False
                m.add_body(f"r{k}", rj, parent, (rR, rp), mass=rmass, com=rcom, inertia=rI)
                m.add_coupling(f"c{k}", f"l{k}", f"r{k}", ratio)
        rows[f"r{k}"] = {f"l{k}": ratio}
    model, ref = models
    G = hand_G(model, rows)
    y, yd = random_independent_state(model, rng)
    q, v = G @ y, G @ yd
    tau_ind = rng.normal(size=len(yd))
    ydd_ref, H = projected_accelerations(model, G, q, v, np.linalg.pinv(G.T) @ tau_ind)
    scale = 1.0 + np.abs(ydd_ref).max()
    for m in (model, ref):
        assert np.allclose(cluster_mass_matrix(m, y), H, rtol=0, atol=1e-11 * np.abs(H).max())
        assert np.allclose(cluster_aba(m, y, yd, tau_ind), ydd_ref, rtol=0, atol=1e-9 * scale)
        assert np.allclose(cluster_rnea(m, y, yd, ydd_ref), tau_ind, rtol=0, atol=1e-9 * scale)
        qdd = sd.constrained_forward_dynamics(m, q, v, np.linalg.pinv(G.T) @ tau_ind, "direct").qdd
        assert np.allclose(qdd, G @ ydd_ref, rtol=0, atol=1e-8 * scale)


# --------------------------------------------------------------------------- closed forms
def test_single_geared_rotor_reflects_N_squared_rotor_inertia():
    """One link on a revolute z joint driven by a rotor with gear ratio N on the same parent:
    the joint sees H = I_link + N² I_rotor (I about the joint axis), the approximation of
    [Chignoli23, §II-C] that is exact here (fixed base, gravity along the axis)."""
    I_link_c, m_link, c_link = 0.02, 1.3, 0.4  # kg m², kg, m
    I_rot = 3e-5
    model = sd.Model("rotor", gravity=(0.0, 0.0, -9.81))
    model.add_body("link", jt.Revolute("z"), None, mass=m_link, com=(c_link, 0.0, 0.0),
                   inertia=np.diag([0.01, 0.01, I_link_c]))
    model.add_rotor("rotor", None, "z", np.diag([2e-5, 2e-5, I_rot]), 9.33, drives="link")
    H_exact = I_link_c + m_link * c_link**2 + 9.33**2 * I_rot
    y, yd = np.array([0.7]), np.array([2.0])
    assert cluster_mass_matrix(model, y)[0, 0] == pytest.approx(H_exact, rel=1e-13)
    assert cluster_aba(model, y, yd, np.array([1.5]))[0] == pytest.approx(1.5 / H_exact, rel=1e-12)
    q, v = sd.spanning_state(model, y, yd)
    assert q.tolist() == pytest.approx([0.7, 9.33 * 0.7], rel=1e-15)
    res = sd.constrained_forward_dynamics(model, q, v, np.array([1.5, 0.0]), "direct")
    assert res.qdd == pytest.approx([1.5 / H_exact, 9.33 * 1.5 / H_exact], rel=1e-10)


def test_rack_and_pinion_on_a_prismatic_joint():
    """A slider (mass m) driven by a pinion rotor q̇_p = ḋ/ρ: H = m + I_p/ρ² [kg]."""
    mass, rho, I_p = 2.0, 0.02, 4e-5  # kg, m/rad, kg m²
    model = sd.Model("rack", gravity=(-9.81, 0.0, 0.0))
    model.add_body("slider", jt.Prismatic("x"), None, mass=mass)
    model.add_rotor("pinion", "world", "z", (0.0, (0.0, 0.0, 0.0), np.diag([2e-5, 2e-5, I_p])), 1.0 / rho,
                    drives="slider")
    H = mass + I_p / rho**2
    assert cluster_mass_matrix(model, np.zeros(1))[0, 0] == pytest.approx(H, rel=1e-13)
    # gravity −9.81 m/s² along the slide, no force: ÿ = −9.81 m / H
    assert cluster_aba(model, np.zeros(1), np.zeros(1), np.zeros(1))[0] == pytest.approx(-9.81 * mass / H, rel=1e-12)


def test_constant_differential_two_inputs_one_output():
    """q̇_out = (q̇_a + q̇_b)/2 with rotors a, b and the output all on the world, coaxial:
    H = diag(I_a, I_b) + I_out/4 [[1, 1], [1, 1]]."""
    Ia, Ib, Io = 0.3, 0.5, 0.8
    model = sd.Model("diff", gravity=(0.0, 0.0, -9.81))
    for name, I in (("a", Ia), ("b", Ib), ("out", Io)):
        model.add_body(name, jt.Revolute("z"), None, inertia=np.diag([I, I, I]))
    t = model.add_transmission("diff", ["out", "a", "b"], [1.0, -0.5, -0.5])
    assert not model.joint("out").independent and model.joint("a").independent
    assert t.ratios.shape == (1, 3)
    H = np.diag([Ia, Ib]) + Io / 4 * np.ones((2, 2))
    assert np.allclose(cluster_mass_matrix(model, np.zeros(2)), H, rtol=1e-14, atol=0)
    tau = np.array([0.2, -0.7])
    assert np.allclose(cluster_aba(model, np.zeros(2), np.ones(2), tau), np.linalg.solve(H, tau), rtol=1e-12)
    # two rows on four joints: two gears a→b and a→c; a is the only independent coordinate
    m2 = sd.Model("two_rows")
    for name in "abc":
        m2.add_body(name, jt.Revolute("z"), None, inertia=np.eye(3))
    m2.add_transmission("gears", ["b", "c", "a"], [[1.0, 0.0, -2.0], [0.0, 1.0, 3.0]])
    assert cluster_mass_matrix(m2, np.zeros(1))[0, 0] == pytest.approx(1 + 4 + 9, rel=1e-14)


def test_offset_is_kept_at_the_position_level():
    model = sd.Model("offset")
    model.add_body("link", jt.Revolute("z"), None, mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    model.add_body("rotor", jt.Revolute("z"), None, inertia=np.eye(3) * 1e-4)
    model.add_transmission("gear", ["rotor", "link"], [1.0, -5.0], offset=0.25)
    q, _ = sd.spanning_state(model, np.array([0.1]), np.array([0.0]))
    assert q[1] == pytest.approx(5 * 0.1 + 0.25, abs=1e-10)
    assert sd.constraint_residual(model, q) == pytest.approx([0.0], abs=1e-10)


def test_couplings_and_transmissions_together_in_one_model():
    model = sd.Model("mixed")
    model.add_body("link", jt.Revolute("z"), None, mass=1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    rj = jt.Revolute("z")
    rj.independent = False
    model.add_body("rotor1", rj, None, inertia=np.eye(3) * 1e-4)
    model.add_coupling("c", "link", "rotor1", 4.0)
    model.add_rotor("rotor2", None, "z", np.eye(3) * 2e-4, 7.0, drives="link")
    st = evaluate_constraints(model, sd.neutral(model), np.zeros(model.nv), 0.0)
    assert np.array_equal(st.G, [[4.0, -1.0, 0.0], [-7.0, 0.0, 1.0]])
    H = 0.01 + 0.09 + 16 * 1e-4 + 49 * 2e-4
    assert cluster_mass_matrix(model, np.zeros(1))[0, 0] == pytest.approx(H, rel=1e-13)


def test_a_cluster_of_more_than_six_freedoms():
    """A differential-like transmission that ties one rotor to all eight links of a planar
    chain makes one cluster of eight freedoms: its joint inertia D_k (8 × 8) is inverted
    in place, the kernels having no scratch of that size. C-ABA and C-RNEA against the
    projection with the hand-written G."""
    ratios = [0.5, -1.0, 1.5, 2.0, -0.5, 1.0, 0.25, 3.0]
    m = sd.Model("eight_link_transmission", gravity=(9.81, 0.0, 0.0))
    parent = None
    for k in range(8):
        _link(m, f"L{k}", parent, 0.0 if k == 0 else 1.0)
        parent = f"L{k}"
    m.add_body("r", jt.Revolute("z"), None, (np.eye(3), np.zeros(3)), mass=0.1, inertia=ROTOR_I)
    m.add_transmission("t", ["r"] + [f"L{k}" for k in range(8)], [1.0] + [-c for c in ratios])
    tree = cluster_tree(m)
    assert [len(c.bodies) for c in tree] == [9] and len(tree[0].independent_joints) == 8
    G = hand_G(m, {"r": {f"L{k}": c for k, c in enumerate(ratios)}})
    rng = np.random.default_rng(3)
    y, yd = rng.normal(size=8) * 0.5, rng.normal(size=8)
    tau_ind = rng.normal(size=8)
    q, v = G @ y, G @ yd
    ydd_ref, H = projected_accelerations(m, G, q, v, np.linalg.pinv(G.T) @ tau_ind)
    ydd = cluster_aba(m, y, yd, tau_ind)
    assert np.allclose(ydd, ydd_ref, rtol=1e-9, atol=1e-9 * np.abs(ydd_ref).max())
    assert np.allclose(cluster_rnea(m, y, yd, ydd_ref), tau_ind, rtol=1e-9, atol=1e-9)
    assert np.allclose(cluster_mass_matrix(m, y), H, rtol=1e-10, atol=1e-12 * np.abs(H).max())
