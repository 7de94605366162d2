"""Residual checks of the constrained functions, names of the independent coordinates,
forces on the independent coordinates (``tau_ind``) and lazily computed constraint forces."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed import METHODS, constraint_forces, evaluate_constraints
from soadyn.closed.embedding.clusters import cluster_tree, coordinate_names
from soadyn.core.constraints import ConstraintError

from conftest import random_state, urdfplus


def _four_bar(seed=0):
    model = sd.models.four_bar_linkage()
    rng = np.random.default_rng(seed)
    q, v = sd.close_loops(model, [0.4, 0.3, -0.2], rng.normal(size=3))
    return model, q, v, rng


def _from_independent(model, seed):
    rng = np.random.default_rng(seed)
    y, yd = random_state(model, rng)
    q, v = sd.spanning_state(model, y, yd)
    return model, q, v, rng


# =========================================================================== residual checks
def _open_loop(model, q, v):
    """q moved off the loop closure along one joint, and its position residual (max |𝔡|)."""
    q2 = q.copy()
    q2[1] += 0.05
    return q2, float(np.abs(sd.constraint_residual(model, q2)).max())


def test_forward_dynamics_refuses_a_configuration_off_the_loop():
    model, q, v, rng = _four_bar()
    tau = rng.normal(size=3)
    q2, r = _open_loop(model, q, v)
    assert r > 1e-3
    for method in METHODS:
        with pytest.raises(ConstraintError) as err:
            sd.constrained_forward_dynamics(model, q2, v, tau, method=method)
        msg = str(err.value)
        assert msg.startswith("q:") and repr(model.loops[0].name) in msg and "position residual" in msg
        assert f"{r:.3e}" in msg and "residual_tol = 1e-06" in msg and "close_loops" in msg
    # the tolerance is settable and the check can be skipped
    with pytest.raises(ConstraintError):
        sd.constrained_forward_dynamics(model, q2, v, tau, residual_tol=0.99 * r, check=True)
    rest = np.zeros(3)  # G_c v = 𝔘 = 0 at rest: the position residual alone
    for kw in ({"residual_tol": 1.01 * r, "check": True}, {"check": False}):
        assert np.all(np.isfinite(sd.constrained_forward_dynamics(model, q2, rest, tau, method="direct", **kw).qdd))


def test_forward_dynamics_refuses_velocities_that_violate_the_constraints():
    model, q, v, rng = _four_bar(1)
    v2 = v.copy()
    v2[2] += 0.3
    G = sd.constraint_jacobian(model, q)
    r = float(np.abs(G @ v2).max())  # 𝔘 = 0 for a loop joint
    with pytest.raises(ConstraintError) as err:
        sd.constrained_forward_dynamics(model, q, v2)
    msg = str(err.value)
    assert msg.startswith("v:") and "velocity residual" in msg and f"{r:.3e}" in msg
    assert repr(model.loops[0].name) in msg
    sd.constrained_forward_dynamics(model, q, v2, residual_tol=1.01 * r)
    sd.constrained_forward_dynamics(model, q, v2, check=False)


def test_inverse_dynamics_checks_the_state_too():
    model, q, v, rng = _four_bar(2)
    qdd = sd.constrained_forward_dynamics(model, q, v, rng.normal(size=3)).qdd
    q2, r = _open_loop(model, q, v)
    with pytest.raises(ConstraintError, match=repr(model.loops[0].name)):
        sd.constrained_inverse_dynamics(model, q2, v, qdd)
    with pytest.raises(ConstraintError, match="v:"):
        sd.constrained_inverse_dynamics(model, q, v + 0.3, qdd)
    sd.constrained_inverse_dynamics(model, q, v, qdd, check=True, residual_tol=1e-9)


def test_coupling_and_user_constraint_residuals_are_named():
    model = urdfplus("revolute_rotor_chain.urdf")
    q = np.zeros(model.nv)
    q[model.joint("joint2r").q_index] = 0.02  # the rotor should turn 6 × joint2 = 0
    with pytest.raises(ConstraintError, match=r"-?2\.000e-02 on coupling constraint 'transmission2'"):
        sd.constrained_forward_dynamics(model, q, np.zeros(model.nv))
    pend = sd.models.serial_chain(2, axes="y")
    pend.add_constraint(sd.HolonomicConstraint("hold", lambda q, t: np.array([q[0] - 0.2])))
    with pytest.raises(ConstraintError, match=r"-2\.000e-01 on holonomic constraint 'hold'"):
        sd.constrained_forward_dynamics(pend, np.zeros(2), np.zeros(2))


@pytest.mark.parametrize("bad", [0.0, -1e-6, np.nan, "1e-6", True])
def test_residual_tolerance_must_be_a_positive_number(bad):
    model, q, v, _ = _four_bar()
    with pytest.raises(ValueError, match="residual_tol: expected a positive number"):
        sd.constrained_forward_dynamics(model, q, v, residual_tol=bad)


# =========================================================================== coordinate names
_FREE_Q = {"x": 0, "y": 1, "z": 2, "qx": 3, "qy": 4, "qz": 5, "qw": 6}
_FREE_V = {"wx": 0, "wy": 1, "wz": 2, "vx": 3, "vy": 4, "vz": 5}
_BALL_Q = {"qx": 0, "qy": 1, "qz": 2, "qw": 3}
_BALL_V = {"wx": 0, "wy": 1, "wz": 2}


def _coordinate(model, name, velocity):
    """The spanning index a name stands for, by the coordinate order of docs/notation.md."""
    joint, _, part = name.partition(":")
    j = model.joint(joint)
    if not part:
        assert j.nq == j.nv == 1
        return j.v_index if velocity else j.q_index
    table = {"free": (_FREE_Q, _FREE_V), "spherical": (_BALL_Q, _BALL_V)}[j.kind][velocity]
    return (j.v_index if velocity else j.q_index) + table[part]


@pytest.mark.parametrize("name", ["mini_cheetah", "four_bar_linkage", "tello", "rssr_linkage"])
def test_names_of_the_independent_coordinates(name):
    """Entry k of ẏ moves the named spanning coordinate at unit rate (q̇ = G ẏ), and entry k
    of y is the named spanning coordinate."""
    model = getattr(sd.models, name)()
    tree = cluster_tree(model)
    _, q, v, _ = _from_independent(model, 3)
    assert len(tree.position_names) == tree.nyq and len(tree.velocity_names) == tree.nyv
    assert len(set(tree.velocity_names)) == tree.nyv and len(set(tree.position_names)) == tree.nyq
    G = tree.explicit_jacobian(q)
    y, _ = tree.independent_state(q, v)
    for k, n in enumerate(tree.velocity_names):
        assert G[_coordinate(model, n, True), k] == 1.0, n
    for k, n in enumerate(tree.position_names):
        assert q[_coordinate(model, n, False)] == y[k], n


def test_names_of_free_and_spherical_coordinates():
    """Free joint: q = [p; quaternion (x, y, z, w)], v = [ω; v] in the body frame; spherical:
    q = quaternion, v = ω. Checked against the neutral configuration (w = 1) and the body
    velocity the named rate produces."""
    model = sd.models.random_tree(4, rng=1, kinds=("spherical", "revolute"), floating_base=True)
    qn, vn = coordinate_names(model)
    assert len(qn) == model.nq and len(vn) == model.nv
    q0 = sd.neutral(model)
    for j in model.joints:
        if j.kind not in ("free", "spherical"):
            continue
        w = j.q_index + j.nq - 1
        assert qn[w] == f"{j.name}:qw" and q0[w] == 1.0
        for k in range(j.nv):
            v = np.zeros(model.nv)
            v[j.v_index + k] = 1.0
            V = sd.forward_kinematics(model, q0, v).velocities[j.body]
            if j.body == 0:  # relative = absolute velocity for the base
                axis = "xyz"[k % 3]
                assert vn[j.v_index + k] == (f"{j.name}:w{axis}" if k < 3 else f"{j.name}:v{axis}")
                assert V[k] == 1.0
            assert vn[j.v_index + k].startswith(f"{j.name}:")
    for j in model.joints:
        if j.nv == 1:
            assert qn[j.q_index] == vn[j.v_index] == j.name


# =========================================================================== tau_ind
@pytest.mark.parametrize("name", ["four_bar_linkage", "mini_cheetah", "urdf:six_bar"])
def test_forces_on_the_independent_coordinates(name):
    """τ_ind = Gᵀτ gives the τ route's accelerations (every method) and C-ABA's ÿ."""
    model = urdfplus(name[5:]) if name.startswith("urdf:") else getattr(sd.models, name)()
    model, q, v, rng = _from_independent(model, 4)
    tree = cluster_tree(model)
    tau = rng.normal(size=model.nv)
    G = tree.explicit_jacobian(q)
    tau_ind = G.T @ tau
    y, yd = tree.independent_state(q, v)
    ydd = sd.cluster_aba(model, y, yd, tau_ind)
    for method in METHODS:
        by_tau = sd.constrained_forward_dynamics(model, q, v, tau, method=method)
        by_ind = sd.constrained_forward_dynamics(model, q, v, method=method, tau_ind=tau_ind)
        scale = 1 + np.abs(by_tau.qdd).max()
        assert np.allclose(by_ind.qdd, by_tau.qdd, rtol=0, atol=1e-9 * scale), method
        assert np.allclose(tree.independent_state(q, by_ind.qdd)[1], ydd, rtol=0, atol=1e-9 * scale), method
    # generalized forces on independent coordinates do the same work as τ: ẏᵀτ_ind = q̇ᵀτ
    assert np.isclose(yd @ tau_ind, v @ tau)


def test_tau_and_tau_ind_errors():
    model, q, v, _ = _four_bar()
    with pytest.raises(ValueError, match="tau, tau_ind: expected one of them"):
        sd.constrained_forward_dynamics(model, q, v, np.zeros(3), tau_ind=np.zeros(1))
    with pytest.raises(ValueError, match=r"tau_ind: expected shape \(1,\), got \(3,\)"):
        sd.constrained_forward_dynamics(model, q, v, tau_ind=np.zeros(3))
    disk = sd.models.rolling_disk()  # its contact constraint cannot be embedded: no independent coordinates
    qd = sd.neutral(disk)
    with pytest.raises(ConstraintError, match="'contact'"):
        sd.constrained_forward_dynamics(disk, qd, np.zeros(disk.nv), tau_ind=np.zeros(3), check=False)


# =========================================================================== lazy constraint forces
@pytest.mark.parametrize("name", ["four_bar_linkage", "urdf:six_bar", "mini_cheetah"])
def test_constraint_forces_are_computed_on_first_read_and_equal_the_least_norm_solution(name):
    """λ is the least-norm solution of G_cᵀλ = M q̈ + C − τ (numpy's lstsq), whenever it is read
    and whatever the caller did to its arrays in between."""
    model = urdfplus(name[5:]) if name.startswith("urdf:") else getattr(sd.models, name)()
    model, q, v, rng = _from_independent(model, 5)
    tau = rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nbodies, 6))
    tree = model.spanning_tree()
    st = evaluate_constraints(model, q, v)
    for method in METHODS:
        qq, vv, tt, ff = q.copy(), v.copy(), tau.copy(), f_ext.copy()
        r = sd.constrained_forward_dynamics(model, qq, vv, tt, method=method, f_ext=ff)
        if method in ("embedding", "projection"):
            assert "multipliers" not in r.__dict__ and "constraint_forces" not in r.__dict__
        force = sd.mass_matrix(tree, q) @ r.qdd + sd.rnea(tree, q, v, None, f_ext) - tau
        lam = np.linalg.lstsq(st.G.T, force, rcond=1e-10)[0]
        qdd = r.qdd.copy()
        for a in (qq, vv, tt, ff, r.qdd):  # the caller reuses its buffers
            a[...] = 7.0
        scale = 1 + np.abs(lam).max()
        assert np.allclose(r.multipliers, lam, rtol=0, atol=1e-8 * scale), method
        assert np.allclose(r.generalized_constraint_force, st.G.T @ lam, rtol=0, atol=1e-8 * scale)
        ref = constraint_forces(st, lam)
        assert sorted(r.constraint_forces) == sorted(ref)
        for k in ref:
            assert np.allclose(r.constraint_forces[k], ref[k], rtol=0, atol=1e-8 * scale), (method, k)
        assert r.multipliers is r.multipliers  # computed once
        assert r.constraint_rank == np.linalg.matrix_rank(st.G)
        r.qdd[...] = qdd


# =========================================================================== None means zero
@pytest.mark.parametrize("method", METHODS)
def test_closed_chain_functions_take_none_for_zero_rates(method):
    """Every method of constrained_forward_dynamics, constrained_inverse_dynamics and the
    cluster / projected functions read v (ẏ, ÿ) = None as zero, like aba and rnea."""
    model = sd.models.four_bar_linkage()
    q, _ = sd.close_loops(model, [0.4, 0.3, -0.2], np.zeros(3))
    z, tau = np.zeros(model.nv), np.array([0.3, -0.2, 0.1])
    a = sd.constrained_forward_dynamics(model, q, None, tau, method=method).qdd
    assert np.allclose(a, sd.constrained_forward_dynamics(model, q, z, tau, method=method).qdd, atol=1e-12)
    if method == "direct":
        r0 = sd.constrained_inverse_dynamics(model, q, None, a)
        r1 = sd.constrained_inverse_dynamics(model, q, z, a)
        assert np.allclose(r0.tau, r1.tau, atol=1e-12)
        y, yd = sd.independent_state(model, q, None)
        assert np.array_equal(yd, np.zeros_like(yd))
        _, vs = sd.spanning_state(model, y, None)
        assert np.array_equal(vs, z)
        zy, t_ind = np.zeros(len(yd)), np.array([0.5])
        for absent, zeros in [(sd.cluster_aba(model, y, None, t_ind), sd.cluster_aba(model, y, zy, t_ind)),
                              (sd.cluster_rnea(model, y, None, None), sd.cluster_rnea(model, y, zy, zy)),
                              (sd.projected_rnea(model, y, None, None), sd.projected_rnea(model, y, zy, zy)),
                              (sd.projected_forward_dynamics(model, y, None, t_ind),
                               sd.projected_forward_dynamics(model, y, zy, t_ind))]:
            assert np.allclose(absent, zeros, atol=1e-12)
