"""Closed-chain forward and inverse dynamics (cut-joint method, [Jain24]; [Chignoli23, §II-C]/D)."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import models
from soadyn import spatial as sp
from soadyn.closed import METHODS, correction_accelerations, evaluate_constraints, node_body_forces

from conftest import CLOSED_CHAINS, KINDS, cut_joint_pair, leaf_joint_force, map_state, urdfplus


def _disk_state(rng):
    model = models.rolling_disk()
    q = np.concatenate([[0.1, -0.2, 0.3], sp.matrix_to_quaternion(sp.rotation_x(-1.2) @ sp.rotation_z(0.4))])
    return model, q


CASES = dict(CLOSED_CHAINS, rolling_disk=_disk_state)
CUT_JOINT_METHODS = ("augmented", "direct", "projection")
RANKS = {"four_bar.urdf": 2, "six_bar.urdf": 2, "revolute_rotor_chain.urdf": 3, "rssr": 3, "rolling_disk": 3,
         "four_bar_chain": 6}


def consistent_state(case, seed=0):
    rng = np.random.default_rng(seed)
    model, guess = CASES[case](rng)
    q, v = sd.close_loops(model, guess, rng.normal(size=model.nv))
    return model, q, v, rng


@pytest.mark.parametrize("case", sorted(CASES))
def test_methods_agree_and_satisfy_the_equations_of_motion(case):
    model, q, v, rng = consistent_state(case)
    tau = rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nbodies, 6))
    # constraint embedding needs holonomic constraints: the rolling disk is for the cut-joint methods
    methods = CUT_JOINT_METHODS if case == "rolling_disk" else METHODS
    res = {m: sd.constrained_forward_dynamics(model, q, v, tau, method=m, f_ext=f_ext) for m in methods}
    ref = res["direct"]
    scale = 1 + np.abs(ref.qdd).max()
    for r in res.values():
        assert r.constraint_rank == RANKS[case] and r.n_constraints == sd.constraint_jacobian(model, q).shape[0]
        assert np.allclose(r.qdd, ref.qdd, rtol=0, atol=1e-9 * scale)
        assert np.allclose(r.multipliers, ref.multipliers, rtol=0, atol=1e-9 * (1 + np.abs(ref.multipliers).max()))
        for name, f in ref.constraint_forces.items():
            assert np.allclose(r.constraint_forces[name], f, rtol=0, atol=1e-9 * (1 + np.abs(f).max()))
    st = evaluate_constraints(model, q, v)
    # G_c q̈ = 𝔘̊ and M q̈ + C − G_c*λ = T ([Jain24], closed-chain equations of motion)
    assert np.abs(st.G @ ref.qdd - st.acceleration_bias).max() < 1e-9 * scale
    M = sd.mass_matrix(model.spanning_tree(), q, out=np.zeros((model.nv, model.nv)))
    C = sd.rnea(model.spanning_tree(), q, v, np.zeros(model.nv), f_ext)
    assert np.allclose(M @ ref.qdd + C - st.G.T @ ref.multipliers, tau, atol=1e-9 * (1 + np.abs(C).max()))
    # least-norm multipliers: no component along dependent (redundant) row combinations
    U, s, _ = np.linalg.svd(st.G)
    assert np.abs(U[:, ref.constraint_rank:].T @ ref.multipliers).max(initial=0.0) < 1e-9 * (1 + np.abs(ref.multipliers).max())


@pytest.mark.parametrize("kind", KINDS)
def test_cutting_a_tree_joint_gives_the_tree_dynamics_and_the_joint_force(kind):
    """A loop joint of each kind replaces a tree joint of that kind: same motion (ABA), and
    the loop's force on the successor is the force the tree joint transmits."""
    rng = np.random.default_rng(7)
    tree, closed = cut_joint_pair(kind, rng)
    q = sd.random_configuration(tree, rng)
    v = rng.normal(size=tree.nv)
    tau = np.zeros(tree.nv)
    tau[0] = rng.normal()  # the cut joint itself is passive
    qdd = sd.aba(tree, q, v, tau)
    qc, vc = map_state(tree, closed, q, v)
    b2 = tree.body_index("link2")
    alpha_tree = sd.forward_kinematics(tree, q, v, qdd).accelerations[b2]
    force = leaf_joint_force(tree, q, v, qdd, b2)
    for method in METHODS:
        r = sd.constrained_forward_dynamics(closed, qc, vc, np.concatenate([tau[:1], np.zeros(6)]), method=method)
        assert r.constraint_rank == 6 - {"weld": 0, "revolute": 1, "prismatic": 1, "spherical": 3, "universal": 2,
                                        "cylindrical": 2, "planar": 3}[kind]
        assert np.isclose(r.qdd[0], qdd[0], rtol=1e-9, atol=1e-9)
        assert np.allclose(r.qdd[1:], alpha_tree, atol=1e-9 * (1 + np.abs(alpha_tree).max()))
        assert np.allclose(r.constraint_forces["cut"], force, atol=1e-9 * (1 + np.abs(force).max()))


def test_four_bar_urdf_single_dof_lagrange():
    """four_bar.urdf is a parallelogram (links 1, 3: 0.5 m; link 2 = ground = 1 m). On the
    branch q2 = −q1, q3 = q1 link 2 translates, all masses sit on their joint axes except
    link 2's (at link 1's tip), so with gravity −g ŷ in the plane
        (I₁ + I₃ + m₂ l₁²) θ̈ + m₂ g l₁ cos θ = τ₁ − τ₂ + τ₃."""
    model = urdfplus("four_bar.urdf", gravity=(0.0, -9.81, 0.0))
    I, m2, l1, g = 0.042673, 3.3, 0.5, 9.81
    rng = np.random.default_rng(2)
    for theta, thetadot in [(0.7, 1.3), (-2.0, -0.4), (2.9, 3.0)]:
        q, v = sd.close_loops(model, [theta, -theta + 0.05, theta - 0.05], [thetadot, 0.0, 0.0])
        assert np.allclose(q, [theta, -theta, theta]) and np.allclose(v, [thetadot, -thetadot, thetadot])
        tau = rng.normal(size=3)
        expected = (tau[0] - tau[1] + tau[2] - m2 * g * l1 * np.cos(theta)) / (2 * I + m2 * l1**2)
        for method in METHODS:
            qdd = sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd
            assert np.allclose(qdd, [expected, -expected, expected], rtol=1e-10, atol=1e-10)


def test_crank_rocker_single_dof_lagrange():
    """A generic four-bar against Lagrange's equation in its crank angle θ, with the loop
    solved in closed form (circle intersection) and the Lagrangian differentiated by sympy:
        m(θ) θ̈ + ½ m'(θ) θ̇² + V'(θ) = Q(θ),  m = Σ m_i |c_i'|² + I_i φ_i'²."""
    sy = pytest.importorskip("sympy")
    l1, l2, l3, lg = 0.3, 0.5, 0.45, 0.5
    masses, r, g = (1.0, 1.5, 1.2), 0.02, 9.81
    model = models.four_bar_linkage(l1, l2, l3, lg, masses)
    th, s = sy.symbols("theta s")

    def u(phi):  # the body x axis after a rotation phi about y, as (x, z) components
        return sy.Matrix([sy.cos(phi), -sy.sin(phi)])

    def angle(d):
        return sy.atan2(-d[1], d[0])

    A, O3 = l1 * u(th), sy.Matrix([lg, 0])
    d = O3 - A
    dist = sy.sqrt(d.dot(d))
    a = (l2**2 - l3**2 + dist**2) / (2 * dist)
    B = A + a * d / dist + s * sy.sqrt(l2**2 - a**2) * sy.Matrix([-d[1], d[0]]) / dist
    phis = [th, angle(B - A), angle(B - O3)]
    coms = [l1 / 2 * u(th), A + l2 / 2 * u(phis[1]), O3 + l3 / 2 * u(phis[2])]
    lengths = (l1, l2, l3)
    mass = sum(mi * c.diff(th).dot(c.diff(th)) + mi * (3 * r**2 + li**2) / 12 * phi.diff(th) ** 2
               for mi, c, phi, li in zip(masses, coms, phis, lengths))
    V = g * sum(mi * c[1] for mi, c in zip(masses, coms))
    qs = [phis[0], phis[1] - phis[0], phis[2]]  # the joint coordinates as functions of θ
    f = sy.lambdify((th, s), [mass, mass.diff(th), V.diff(th), B[0], B[1]]
                    + [x.diff(th) for x in qs] + [x.diff(th, 2) for x in qs], cse=True)
    rng = np.random.default_rng(4)
    for theta, thetadot in [(0.3, 2.0), (2.5, -1.0), (-1.9, 0.5)]:
        q, v = sd.close_loops(model, [theta, 1.2, 1.6], [thetadot, 0, 0])
        tip = sd.frame_placement(model, q, "loop_predecessor")[:3, 3]
        for branch in (1.0, -1.0):
            vals = f(theta, branch)
            if np.allclose(vals[3:5], tip[[0, 2]], atol=1e-9):
                break
        else:
            raise AssertionError("the library's closure matches neither closed-form branch")
        m, dm, dV = vals[:3]
        dq, ddq = np.array(vals[5:8]), np.array(vals[8:11])
        tau = rng.normal(size=3)
        thdd = (tau @ dq - 0.5 * dm * thetadot**2 - dV) / m
        expected = dq * thdd + ddq * thetadot**2
        assert np.allclose(v, dq * thetadot, atol=1e-9)
        for method in METHODS:
            qdd = sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd
            assert np.allclose(qdd, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", ["six_bar.urdf", "revolute_rotor_chain.urdf", "four_bar_chain", "rolling_disk"])
def test_augmented_building_blocks(case):
    """[Jain24]: θ̈ = θ̈_f + θ̈_δ with θ̈_f = M⁻¹(T − C) (ABA) and θ̈_δ = M⁻¹G_c*λ (a second ABA
    sweep with the node forces f_nd = Q*λ as f_ext)."""
    model, q, v, rng = consistent_state(case, 3)
    tau = rng.normal(size=model.nv)
    r = sd.constrained_forward_dynamics(model, q, v, tau)
    st = r.state
    lam = rng.normal(size=r.n_constraints)  # the identities hold for any λ
    M = sd.mass_matrix(model.spanning_tree(), q, out=np.zeros((model.nv, model.nv)))
    corr = correction_accelerations(model, q, st, lam)
    assert np.allclose(M @ corr, st.G.T @ lam, atol=1e-10 * (1 + np.abs(st.G.T @ lam).max()))
    # the node forces reproduce the loop rows' generalized force: Σ J_bᵀ f_b = G_loop* λ
    f = node_body_forces(model, st, lam)
    m_loop = st.constraints.m_loop
    lam_loop = np.concatenate([lam[:m_loop], np.zeros(r.n_constraints - m_loop)])
    assert np.allclose(-sd.rnea(model.spanning_tree(), q, np.zeros(model.nv), np.zeros(model.nv), f, gravity=False),
                       st.G.T @ lam_loop, atol=1e-10 * (1 + np.abs(lam).max()))
    assert np.allclose(sd.aba(model.spanning_tree(), q, v, tau) + correction_accelerations(model, q, st, r.multipliers), r.qdd,
                       atol=1e-9 * (1 + np.abs(r.qdd).max()))


def test_loop_forces_are_equal_and_opposite_and_do_no_work_along_the_joint():
    model, q, v, rng = consistent_state("rssr")
    r = sd.constrained_forward_dynamics(model, q, v, rng.normal(size=model.nv))
    f = r.constraint_forces["loop"]
    assert np.allclose(f[:3], 0.0, atol=1e-12)  # a spherical joint transmits no torque about its centre
    # the predecessor receives −f (same point, both frames' axes in the world)
    fw = node_body_forces(model, r.state, r.multipliers)
    Ts = sd.frame_placement(model, q, "loop_successor")
    Tp = sd.frame_placement(model, q, "loop_predecessor")
    cs = r.state.constraints
    sel = r.state.node_selection
    f_pred = sel[cs.block("loop").rows, :6].T @ r.multipliers[cs.block("loop").rows]
    assert np.allclose(Tp[:3, :3] @ f_pred[3:], -(Ts[:3, :3] @ f[3:]), atol=1e-12)
    assert fw.shape == (model.nbodies, 6)


def _pendulum_pair():
    return models.serial_chain(2, axes="y")


@pytest.mark.parametrize("analytic", [True, False])
def test_time_varying_holonomic_constraint_prescribes_the_motion(analytic):
    """𝔡 = q₀ − A sin ωt: q̈₀ = −Aω² sin ωt, 𝔘 = Aω cos ωt, and λ is the torque that drives
    joint 0 along the prescribed motion (the RNEA torque, sign of G_c*λ = −that torque)."""
    A, w = 0.4, 3.0
    model = _pendulum_pair()
    jac = (lambda q, t: np.array([[1.0, 0.0]])) if analytic else None
    model.add_constraint(sd.HolonomicConstraint("prescribed", lambda q, t: np.array([q[0] - A * np.sin(w * t)]),
                                                jac, time_dependent=True))
    t = 0.7
    q, v = sd.close_loops(model, [0.0, 0.3], [0.0, -1.0], t=t)
    assert np.isclose(q[0], A * np.sin(w * t), atol=1e-10) and np.isclose(v[0], A * w * np.cos(w * t), atol=1e-8)
    assert q[1] == 0.3 and v[1] == -1.0
    tau = np.array([0.0, 0.5])
    for method in CUT_JOINT_METHODS:
        r = sd.constrained_forward_dynamics(model, q, v, tau, method=method, t=t)
        assert np.isclose(r.qdd[0], -A * w**2 * np.sin(w * t), rtol=1e-7)
        drive = sd.rnea(model.spanning_tree(), q, v, r.qdd)
        assert np.isclose(drive[1], tau[1], atol=1e-9)
        assert np.isclose(r.constraint_forces["prescribed"][0], drive[0], rtol=1e-7)


def test_time_varying_nonholonomic_constraint():
    """G v = 𝔘(t) = cos t on joint 1 prescribes its rate: q̈₁ = −sin t."""
    model = _pendulum_pair()
    model.add_constraint(sd.NonholonomicConstraint("rate", lambda q, t: np.array([[0.0, 1.0]]),
                                                   lambda t: np.array([np.cos(t)])))
    q, v = sd.close_loops(model, [0.2, 0.1], [1.0, 0.0], t=1.1)
    assert np.isclose(v[1], np.cos(1.1))
    r = sd.constrained_forward_dynamics(model, q, v, np.zeros(2), t=1.1)
    assert np.isclose(r.qdd[1], -np.sin(1.1), rtol=1e-8)


def test_numerical_and_analytic_user_jacobians_agree():
    """A distance constraint between the tip of a chain and a fixed point, given with and
    without its Jacobian (central differences on the manifold, Richardson bias)."""
    p0 = np.array([0.2, 0.1, 0.5])

    def build(with_jac):
        model = models.serial_chain(3, axes="zyx", floating_base=True)

        def d(q, t):
            return np.array([np.sum((sd.frame_placement(model, q, "tip")[:3, 3] - p0) ** 2) - 0.3])

        def jac(q, t):
            T = sd.frame_placement(model, q, "tip")
            Jw = sd.frame_jacobian(model, q, "tip", "local_world_aligned")[3:]
            return (2 * (T[:3, 3] - p0) @ Jw)[None, :]
        model.add_constraint(sd.HolonomicConstraint("distance", d, jac if with_jac else None))
        return model

    a, b = build(True), build(False)
    rng = np.random.default_rng(8)
    q = sd.random_configuration(a, rng)
    v = rng.normal(size=a.nv)
    sa, sb = evaluate_constraints(a, q, v), evaluate_constraints(b, q, v)
    assert np.allclose(sa.G, sb.G, atol=1e-8)
    assert np.allclose(sa.acceleration_bias, sb.acceleration_bias, rtol=1e-6, atol=1e-7)


def test_rolling_disk_rolls_straight_when_upright():
    """An upright disk rolling along its heading at speed s keeps going: the centre's
    classical acceleration is zero and the spin stays ω = s/r about the axle."""
    model = models.rolling_disk(radius=0.3)
    R = sp.rotation_x(-np.pi / 2)  # disk axis along world y
    q = np.concatenate([[0.0, 0.0, 0.3], sp.matrix_to_quaternion(R)])
    s = 1.5
    # ω about the axle (body z) and centre velocity along world x, in the body frame
    v_guess = np.concatenate([[0.0, 0.0, s / 0.3], R.T @ [s, 0.0, 0.0]])
    q, v = sd.close_loops(model, q, v_guess)
    assert np.allclose(v, v_guess, atol=1e-12)  # already consistent
    for method in CUT_JOINT_METHODS:
        qdd = sd.constrained_forward_dynamics(model, q, v, method=method).qdd
        centre = R @ (qdd[3:] + np.cross(v[:3], v[3:]))
        assert np.allclose(centre, 0.0, atol=1e-8) and np.allclose(qdd[:3], 0.0, atol=1e-8)


# --------------------------------------------------------------------------- inverse dynamics
@pytest.mark.parametrize("case", ["four_bar.urdf", "six_bar.urdf", "revolute_rotor_chain.urdf", "rssr"])
def test_inverse_dynamics_round_trip(case):
    model, q, v, rng = consistent_state(case, 5)
    tau_true = np.zeros(model.nv)
    act = sd.closed.independent_velocity_indices(model)
    tau_true[act] = rng.normal(size=act.size)
    fd = sd.constrained_forward_dynamics(model, q, v, tau_true)
    inv = sd.constrained_inverse_dynamics(model, q, v, fd.qdd)
    assert np.array_equal(inv.actuated, act)
    assert np.allclose(inv.tau, tau_true, atol=1e-9)
    assert np.allclose(inv.multipliers, fd.multipliers, atol=1e-9 * (1 + np.abs(fd.multipliers).max()))
    if case == "rssr":  # the crank alone does not fix the coupler's spin about its axis
        with pytest.raises(ValueError, match="do not determine the dependent accelerations"):
            sd.constrained_inverse_dynamics(model, q, v, qdd_independent=fd.qdd[act])
        return
    inv2 = sd.constrained_inverse_dynamics(model, q, v, qdd_independent=fd.qdd[act])
    assert np.allclose(inv2.qdd, fd.qdd, atol=1e-9 * (1 + np.abs(fd.qdd).max()))
    assert np.allclose(inv2.tau, tau_true, atol=1e-9)


def test_rotor_chain_projected_rnea_of_seed_004():
    """Explicit constraints q = γ(y), q̇ = G y˙ (rotor = 6 × link): τ_ind = Gᵀ RNEA(q, q̇, q̈)
    ([Chignoli23, §II-C]) and ÿ = (GᵀHG)⁻¹Gᵀ(τ − c) (§II-D, g = 0 for constant G)."""
    model = urdfplus("revolute_rotor_chain.urdf", gravity=(0.0, -9.81, 0.0))
    idx = {j.name: j.v_index for j in model.joints}
    Ge = np.zeros((model.nv, 3))
    for k, (link, rotor) in enumerate([("joint1", "joint1r"), ("joint2", "joint2r"), ("joint3", "joint3r")]):
        Ge[idx[link], k], Ge[idx[rotor], k] = 1.0, 6.0
    rng = np.random.default_rng(1)
    y, yd, ydd = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    q, v, qdd = Ge @ y, Ge @ yd, Ge @ ydd
    inv = sd.constrained_inverse_dynamics(model, q, v, qdd)
    links = [idx["joint1"], idx["joint2"], idx["joint3"]]
    assert np.allclose(inv.tau_actuated, Ge.T @ sd.rnea(model.spanning_tree(), q, v, qdd), atol=1e-10)
    tau = np.zeros(model.nv)
    tau[links] = rng.normal(size=3)
    H = sd.mass_matrix(model.spanning_tree(), q, out=np.zeros((model.nv, model.nv)))
    yddot = np.linalg.solve(Ge.T @ H @ Ge, Ge.T @ (tau - sd.bias_forces(model.spanning_tree(), q, v)))
    for method in METHODS:
        assert np.allclose(sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd, Ge @ yddot,
                           atol=1e-10)


def test_redundant_actuation_least_norm_and_weighted():
    model, q, v, rng = consistent_state("four_bar.urdf", 6)
    qdd = sd.constrained_forward_dynamics(model, q, v, rng.normal(size=3)).qdd
    both = ["joint1", "joint3"]
    ln = sd.constrained_inverse_dynamics(model, q, v, qdd, actuated=both)
    wt = sd.constrained_inverse_dynamics(model, q, v, qdd, actuated=both, weights=[1.0, 9.0])
    for r in (ln, wt):  # both reproduce the motion
        assert np.allclose(sd.constrained_forward_dynamics(model, q, v, r.tau).qdd, qdd, atol=1e-9)
    # one dof, null-space direction x: minimising τᵀWτ subject to xᵀS_A τ = r gives τ ∝ W⁻¹S_Aᵀx
    x = np.linalg.svd(sd.constraint_jacobian(model, q))[2][-1]
    bvec = x[[0, 2]]
    assert np.isclose(abs(bvec @ ln.tau_actuated), np.linalg.norm(bvec) * np.linalg.norm(ln.tau_actuated))
    wb = bvec / [1.0, 9.0]
    assert np.isclose(abs(wb @ wt.tau_actuated), np.linalg.norm(wb) * np.linalg.norm(wt.tau_actuated))
    assert np.linalg.norm(ln.tau_actuated) < np.linalg.norm(wt.tau_actuated)
    assert np.sum([1.0, 9.0] * wt.tau_actuated**2) < np.sum([1.0, 9.0] * ln.tau_actuated**2)


def test_inverse_dynamics_errors():
    model, q, v, rng = consistent_state("six_bar.urdf")
    with pytest.raises(ValueError, match="violate the constraints"):
        sd.constrained_inverse_dynamics(model, q, v, rng.normal(size=model.nv))
    qdd = sd.constrained_forward_dynamics(model, q, v, rng.normal(size=model.nv)).qdd
    with pytest.raises(ValueError, match="cannot produce this motion"):
        sd.constrained_inverse_dynamics(model, q, v, qdd, actuated=["joint1"])
    with pytest.raises(ValueError, match="give exactly one"):
        sd.constrained_inverse_dynamics(model, q, v)


def test_forward_dynamics_errors():
    model, q, v, _ = consistent_state("four_bar.urdf")
    with pytest.raises(ValueError, match=r"method: expected one of \['augmented', 'direct', 'embedding', 'projection'\], "
                                         r"got 'magic'"):
        sd.constrained_forward_dynamics(model, q, v, method="magic")
    with pytest.raises(ValueError, match=r"tau: expected shape \(3,\) or \(B, 3\), got \(2,\)"):
        sd.constrained_forward_dynamics(model, q, v, np.zeros(2))


def test_tree_without_constraints_reduces_to_aba():
    model = models.serial_chain(4)
    rng = np.random.default_rng(0)
    q, v, tau = sd.random_configuration(model, rng), rng.normal(size=4), rng.normal(size=4)
    for method in METHODS:
        r = sd.constrained_forward_dynamics(model, q, v, tau, method=method)
        assert r.n_constraints == 0 and np.allclose(r.qdd, sd.aba(model, q, v, tau), atol=1e-10)
