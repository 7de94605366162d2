"""Closed chains in contact (issue 41, item 4): ``soadyn.step`` on models with rotors, belts
and differentials, by constraint embedding in the independent coordinates.

The truths: the step against the dense embedding method (H = GᵀMG, the contact Jacobian
J G, [Chignoli23, eq. 3]) — the free velocity, the impulse response and the NCP of the
solution; the robots' loops and couplings exact at every step (position and velocity
residuals at round-off); a robot at rest on the ground carries its weight (Σλ_n = m g dt).
"""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.closed.kinematics import evaluate_constraints

DT = 1e-3
G0 = 9.81


def _robot(name):
    m = getattr(sd.models, name)()
    sd.models.add_foot_spheres(m)
    m.add_ground()
    return m


def _legs(name, tree):
    """The reference posture of the independent joints after the base (nyq − 7,)."""
    ref = np.zeros(tree.nyq - 7)
    if name == "mini_cheetah":
        ref[:] = [0.0, -0.8, 1.6] * 4  # (abduction, hip, knee) per leg: a crouched stand
    return ref


def _dropped(m, name, clearance=0.02):
    """The spanning state at rest with the feet ``clearance`` [m] above the ground."""
    tree = cluster_tree(m)
    y = np.zeros(tree.nyq)
    y[6] = 1.0
    y[7:] = _legs(name, tree)
    q, _ = sd.spanning_state(m, y, None)
    y[2] = clearance - sd.collision_distances(m, q).distance.min()
    return sd.spanning_state(m, y, None)


def _pd(tree, nv, ref, q, v, kp, kd):
    """Joint PD on the independent joints after the base, as spanning-tree forces τ (nv,)."""
    iq, iv = tree.independent_q_index[7:], tree.independent_v_index[6:]
    tau = np.zeros(nv)
    tau[iv] = kp * (ref - q[iq]) - kd * v[iv]
    return tau


def _residuals(m, q, v):
    st = evaluate_constraints(m, q, v, bias=False)
    return float(np.abs(st.residual).max()), float(np.abs(st.velocity_residual(v)).max())


# --------------------------------------------------------------------------- one step
def _dense_check(m, q, v, tau, r):
    """The step r from (q, v, τ) against the dense embedding method."""
    tree = cluster_tree(m)
    iq, iv = tree.independent_q_index, tree.independent_v_index
    G = tree.explicit_jacobian(q)
    tree_model = m.spanning_tree()  # the open spanning tree: M and C of the spanning coordinates
    M = sd.mass_matrix(tree_model, q)
    H = G.T @ M @ G
    C = sd.rnea(tree_model, q, v, np.zeros(m.nv))  # C(q, v) + gravity
    gb = tree.explicit_bias(q, v)  # q̈ = G ÿ + g(q, q̇)
    yd = v[iv]
    yd_free = yd + DT * np.linalg.solve(H, G.T @ (tau - C - M @ gb))
    k = len(r.contacts)
    assert k > 0
    J = np.stack([sd.contact.contact_velocities(m, q, e, r.contacts).reshape(-1) for e in np.eye(m.nv)], axis=1)
    JG = J @ G
    yd_next = yd_free + np.linalg.solve(H, JG.T @ r.impulses.reshape(-1))
    np.testing.assert_allclose(r.v, sd.spanning_state(m, r.q[iq], yd_next, r.q)[1], atol=1e-9)
    np.testing.assert_allclose(r.v[iv], yd_next, atol=1e-9)
    # the NCP was the closed chain's: σ = (J G) H⁻¹ (J G)ᵀ λ + J G ẏ_free − b
    b = np.zeros(3 * k)
    s = sd.ContactSettings()
    d = np.asarray(r.contacts.depth)
    b[2::3] = np.where(d < 0, d / DT, s.stabilization * np.maximum(d - s.slop, 0.0) / DT)
    np.testing.assert_allclose(r.solution.velocities.reshape(-1), JG @ yd_next - b, atol=1e-8)
    # y⁺ = y ⊕ ẏ⁺ dt on the independent joints, on the constraint manifold
    np.testing.assert_allclose(r.q[iq], sd.integrate(m, q, G @ yd_next, DT)[iq], atol=1e-12)
    assert max(_residuals(m, r.q, r.v)) <= 1e-10


@pytest.mark.parametrize("name", ["mini_cheetah", "tello"])
def test_step_is_the_dense_embedding_step(name):
    m = _robot(name)
    tree = cluster_tree(m)
    q, v = _dropped(m, name, clearance=-1e-3)  # feet 1 mm in the ground: contacts at q
    rng = np.random.default_rng(3)
    v = sd.spanning_state(m, q[tree.independent_q_index], 0.2 * rng.normal(size=tree.nyv), q)[1]
    v[tree.independent_v_index[3:6]] += (0.0, 0.0, -0.3)  # base falling (its own axes ≈ world)
    v = sd.spanning_state(m, q[tree.independent_q_index], v[tree.independent_v_index], q)[1]
    tau = rng.normal(size=m.nv)
    r = sd.step(m, q, v, tau, DT)
    assert r.solution.converged and len(r.contacts) == 4
    assert r.impulses[:, 2].min() > 0.0
    _dense_check(m, q, v, tau, r)


# --------------------------------------------------------------------------- stand and drop
ROBOTS = {  # name: (kp [N m/rad], kd [N m s/rad], seconds)
    "mini_cheetah": (80.0, 4.0, 1.0),
    "mit_humanoid": (300.0, 10.0, 1.5),
    "tello": (200.0, 10.0, 1.5),
}


@pytest.mark.parametrize("name", list(ROBOTS))
def test_robot_drops_and_stands_with_exact_loops(name):
    kp, kd, seconds = ROBOTS[name]
    m = _robot(name)
    tree = cluster_tree(m)
    ref = _legs(name, tree)
    q, v = _dropped(m, name)
    mass = sum(b.mass for b in m.bodies)
    worst = 0.0
    r = None
    for _ in range(int(round(seconds / DT))):
        r = sd.step(m, q, v, _pd(tree, m.nv, ref, q, v, kp, kd), DT, warm_start=r)
        assert r.solution.converged
        q, v = r.q, r.v
        worst = max(worst, *_residuals(m, q, v))
    assert worst <= 1e-10  # loops, couplings and differentials exact throughout
    assert len(r.contacts) == len(sd.models.FOOT_SPHERES[name])  # every foot down
    assert np.abs(v[tree.independent_v_index]).max() < 1e-2  # at rest [rad/s, m/s]
    np.testing.assert_allclose(r.impulses[:, 2].sum(), mass * G0 * DT, rtol=1e-2)  # it carries its weight
    assert np.asarray(r.contacts.depth).max() < sd.ContactSettings().slop + 1e-3


# --------------------------------------------------------------------------- bad input
def test_bad_input_names_the_argument():
    m = _robot("mini_cheetah")
    q, v = _dropped(m, "mini_cheetah")
    with pytest.raises(ValueError, match="dt"):
        sd.step(m, q, v, None, 0.0)
    bad = q.copy()
    bad[cluster_tree(m).clusters[1].joint.q_index[-1]] += 0.1  # a rotor off its gear ratio
    with pytest.raises(sd.ConstraintError, match="q, v"):
        sd.step(m, bad, v, None, DT)
    with pytest.raises(ValueError, match="tau"):
        sd.step(m, q, v, np.zeros(3), DT)


# --------------------------------------------------------------------------- the two paths
def test_compiled_step_is_the_staged_step():
    """The one-kernel step of explicit cluster models equals the step stage by stage."""
    from soadyn.contact.cluster_step import compiled_cluster_step, staged_cluster_step
    from soadyn.core.compile import snapshot
    m = _robot("mini_cheetah")
    tree = cluster_tree(m)
    q, v = _dropped(m, "mini_cheetah", clearance=-1e-3)
    rng = np.random.default_rng(5)
    v = sd.spanning_state(m, q[tree.independent_q_index], 0.3 * rng.normal(size=tree.nyv), q)[1]
    tau = rng.normal(size=m.nv)
    settings = sd.ContactSettings()
    # without forces on the rotors C-ABA takes them from their constants (and C-EFPA runs
    # on that backward pass); with them, the general cluster path
    for f_ext in (None, rng.normal(size=(m.nbodies, 6))):
        a = compiled_cluster_step(m, snapshot(m), q, v, tau, DT, f_ext, settings)
        b = staged_cluster_step(m, snapshot(m), q, v, tau, DT, f_ext, settings)
        assert len(a.contacts) == len(b.contacts) == 4
        np.testing.assert_allclose(a.q, b.q, atol=1e-12)
        np.testing.assert_allclose(a.v, b.v, atol=1e-9)
        np.testing.assert_allclose(a.impulses, b.impulses, atol=1e-9)
        assert a.solution.converged and b.solution.converged


def test_four_bar_steps_with_its_loop_closed():
    """A loop cluster (G(q) and γ solved: the staged step): without contacts the step is
    the semi-implicit Euler step of C-ABA in y, and the loop stays closed."""
    m = sd.models.four_bar_linkage()
    tree = cluster_tree(m)
    q, v = sd.spanning_state(m, np.array([0.3]), np.array([1.0]))
    for _ in range(200):
        y, yd = q[tree.independent_q_index], v[tree.independent_v_index]
        r = sd.step(m, q, v, None, DT)
        assert len(r.contacts) == 0 and r.solution.converged
        np.testing.assert_allclose(r.v[tree.independent_v_index], yd + DT * sd.cluster_aba(m, y, yd, np.zeros(1), q=q),
                                   atol=1e-12)
        q, v = r.q, r.v
        assert max(_residuals(m, q, v)) <= 1e-10


def test_compiled_step_results_are_fresh_pure_and_thread_safe():
    """Every array of a step's result is its own (nothing aliases another call's result or a
    scratch), a warm start is the only thing carried from step to step (the same result
    from a StepResult rebuilt field by field), and threads stepping at once get the
    results of one thread stepping alone, bit for bit."""
    import dataclasses
    import threading
    m = _robot("mini_cheetah")
    tree = cluster_tree(m)
    q, v = _dropped(m, "mini_cheetah", clearance=-1e-3)
    tau = _pd(tree, m.nv, _legs("mini_cheetah", tree), q, v, 80.0, 4.0)

    def arrays(r):
        c = r.contacts
        return [r.q, r.v, r.impulses, r.solution.velocities, r.solver_scale, c.objects, c.bodies, c.point, c.normal,
                c.depth, c.friction, c.frame]

    r1 = sd.step(m, q, v, tau, DT)
    kept = [a.copy() for a in arrays(r1)]
    r2 = sd.step(m, q, v, tau, DT, warm_start=r1)
    assert len(r1.contacts) == len(r2.contacts) == 4 and r1.converged and r2.converged
    for a in arrays(r1):
        for b in arrays(r2):
            assert not np.shares_memory(a, b)
    for a, b in zip(arrays(r1), kept):
        np.testing.assert_array_equal(a, b)  # the second call left the first result alone
    for a in arrays(r1)[2:]:
        assert not a.flags.writeable  # λ, σ, the scale and the contacts, as the tree step's
    r1.q[0] += 0.0  # q⁺ and v⁺ are the caller's to modify
    # the warm start: the same from a StepResult rebuilt from the fields (the validated path)
    r3 = sd.step(m, q, v, tau, DT, warm_start=dataclasses.replace(r1))
    for a, b in zip(arrays(r2), arrays(r3)):
        np.testing.assert_array_equal(a, b)
    assert "StepResult" in repr(r2)
    with pytest.raises(TypeError, match="warm_start"):
        sd.step(m, q, v, tau, DT, warm_start="previous")

    def roll(n):
        out, r, qq, vv = [], None, q, v
        for _ in range(n):
            r = sd.step(m, qq, vv, _pd(tree, m.nv, _legs("mini_cheetah", tree), qq, vv, 80.0, 4.0), DT,
                        warm_start=r)
            qq, vv = r.q, r.v
            out.append(np.concatenate([r.q, r.v, r.impulses.reshape(-1)]))
        return out

    alone = roll(30)
    results = [None] * 4

    def worker(i):
        results[i] = roll(30)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for res in results:
        for a, b in zip(res, alone):
            np.testing.assert_array_equal(a, b)


def test_contact_on_a_rotor_is_the_staged_step():
    """A contact on a rotor of a link–rotor pair: the compiled step takes its backward pass
    again with the rotors placed (the free stage took them from their constants) for the
    Delassus and the impulse response; the same step as the staged one."""
    from soadyn.contact.cluster_step import compiled_cluster_step, staged_cluster_step
    from soadyn.core.compile import snapshot
    from soadyn.geometry import Sphere
    m = _robot("mini_cheetah")
    q, v = _dropped(m, "mini_cheetah", clearance=-1e-3)
    sm = snapshot(m)
    rotor = sm.bodies[sm.body_index(sm.couplings[0].successor)]
    R, p = sd.body_placements(m, q)
    height = p[rotor.index][2] - sm.collisions[-1].body_placement[2, 3]  # the rotor's origin above the ground
    m.add_collision(rotor.name, Sphere(height + 1e-3), contype=2, conaffinity=1)  # 1 mm into the ground
    tree = cluster_tree(m)
    rng = np.random.default_rng(7)
    v = sd.spanning_state(m, q[tree.independent_q_index], 0.3 * rng.normal(size=tree.nyv), q)[1]
    tau = rng.normal(size=m.nv)
    settings = sd.ContactSettings()
    a = compiled_cluster_step(m, snapshot(m), q, v, tau, DT, None, settings)
    b = staged_cluster_step(m, snapshot(m), q, v, tau, DT, None, settings)
    assert len(a.contacts) == len(b.contacts) == 5
    assert rotor.index in np.asarray(a.contacts.bodies)
    np.testing.assert_allclose(a.q, b.q, atol=1e-12)
    np.testing.assert_allclose(a.v, b.v, atol=1e-9)
    np.testing.assert_allclose(a.impulses, b.impulses, atol=1e-9)
    assert a.solution.converged and b.solution.converged
    _dense_check(m, q, v, tau, a)


def test_a_servo_on_a_closed_chain_is_its_torques():
    """sd.step(pd=...) on the Mini Cheetah (rotors: a closed chain) is the step under the
    same PD torques given as τ: gains on the independent leg joints only, q_ref the
    spanning configuration of the crouched stand."""
    m = _robot("mini_cheetah")
    tree = cluster_tree(m)
    ref = _legs("mini_cheetah", tree)
    q, v = _dropped(m, "mini_cheetah")
    iq, iv = tree.independent_q_index[7:], tree.independent_v_index[6:]
    kp, kd = np.zeros(m.nv), np.zeros(m.nv)
    kp[iv], kd[iv] = 80.0, 4.0
    qref = q.copy()
    qref[iq] = ref
    r_tau = r_pd = None
    for _ in range(20):
        r_tau = sd.step(m, q, v, _pd(tree, m.nv, ref, q, v, 80.0, 4.0), DT, warm_start=r_tau)
        r_pd = sd.step(m, q, v, None, DT, warm_start=r_pd, pd=(kp, kd, qref))
        np.testing.assert_allclose(r_pd.q, r_tau.q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r_pd.v, r_tau.v, rtol=0, atol=1e-10)
        q, v = r_tau.q, r_tau.v
