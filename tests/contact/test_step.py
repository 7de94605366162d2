"""Time stepping with frictional contact on trees: ``sd.step`` and ``sd.rollout(contacts=True)``.

Truths: the semi-implicit Euler of a free fall in closed form (z_k = z_0 − g dt² k(k+1)/2);
the step rebuilt from the public pieces it is specified by (ABA, the Delassus operator, the
contact velocities and impulse response, the NCP residuals of [LeLidec24] evaluated here in
numpy); a body at rest carries its weight (Σλ_n = m g dt); rollouts equal repeated steps,
batches equal single calls, threads change nothing. The physics scenes (incline, rolling,
stacks, legged robots, MuJoCo) are in the contact-physics tests."""
import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import soadyn as sd
import soadyn.core.batch as batch_dispatch
from soadyn.core import joints as jt
from soadyn.geometry import Box, Sphere

DT = 1e-3
G = 9.81


def box_scene(friction=0.5, mass=1.0, size=0.1):
    m = sd.Model("box scene")
    m.add_body("box", jt.Free(), None, mass=mass, inertia=np.eye(3) * mass * size ** 2 / 6)
    m.add_collision("box", Box((size, size, size)), friction=friction)
    m.add_ground(friction=friction)
    return m


def legged_scene():
    """A box base on a free joint with two legs (hip and knee hinges) ending in sphere feet."""
    m = sd.Model("biped")
    m.add_body("base", jt.Free(), None, mass=2.0, inertia=np.diag([0.02, 0.03, 0.03]))
    m.add_collision("base", Box((0.3, 0.15, 0.06)), friction=0.8)
    for side, y in (("l", 0.1), ("r", -0.1)):
        m.add_body(f"{side}_thigh", jt.Revolute("y"), "base", (np.eye(3), [0.0, y, -0.03]), mass=0.3,
                   inertia=np.eye(3) * 1e-3, com=[0.0, 0.0, -0.1])
        m.add_body(f"{side}_shank", jt.Revolute("y"), f"{side}_thigh", (np.eye(3), [0.0, 0.0, -0.2]), mass=0.2,
                   inertia=np.eye(3) * 5e-4, com=[0.0, 0.0, -0.1])
        m.add_collision(f"{side}_shank", Sphere(0.02), (np.eye(3), [0.0, 0.0, -0.2]), friction=0.8)
    m.add_ground(friction=0.8)
    return m


def box_state(height, v=None):
    q = np.zeros(7)
    q[2], q[6] = height, 1.0
    return q, np.zeros(6) if v is None else np.asarray(v, dtype=float)


def legged_state(model, drop=0.0):
    q = sd.neutral(model)
    q[2] = 0.43 + drop  # feet 0.4 + 0.02 below the hips, hips 0.03 below the base
    return q


# --------------------------------------------------------------------------- NCP in numpy
def cone_distance(lam, mu):
    t = np.hypot(lam[0], lam[1])
    n = lam[2]
    if t <= mu * n:
        return 0.0
    if mu * t <= -n:
        return float(np.linalg.norm(lam))
    alpha = (mu * t + n) / (mu * mu + 1.0)
    proj = np.array([mu * alpha * lam[0] / t, mu * alpha * lam[1] / t, alpha])
    return float(np.linalg.norm(lam - proj))


def dual_cone_distance(s, mu):
    t = np.hypot(s[0], s[1])
    n = s[2]
    if mu * t <= n:
        return 0.0
    if t <= -mu * n:
        return float(np.linalg.norm(s))
    beta = (t + mu * n) / (mu * mu + 1.0)
    proj = np.array([beta * s[0] / t, beta * s[1] / t, mu * beta])
    return float(np.linalg.norm(s - proj))


def ncp_residuals(lam, sigma, mu):
    """(primal, dual, complementarity) of [LeLidec24] with De Saxcé's correction."""
    p = d = c = 0.0
    for li, si, mi in zip(lam, sigma, mu):
        hat = si + np.array([0.0, 0.0, mi * np.hypot(si[0], si[1])])
        p, d, c = max(p, cone_distance(li, mi)), max(d, dual_cone_distance(hat, mi)), max(c, abs(li @ hat))
    return p, d, c


def bias(depth, settings, dt):
    return np.where(depth < 0, depth / dt, settings.stabilization * np.maximum(depth - settings.slop, 0.0) / dt)


# --------------------------------------------------------------------------- the step
def assert_composed_step(m, q, v_free, contacts, settings, dt, r):
    """The step ``r`` from (q, v_free) is the specified composition of the public pieces: σ =
    G λ + g − b (the Delassus operator, the contact velocities of v_free, the bias), λ meets
    the NCP in numpy's residuals, v⁺ = v_free + M⁻¹ Jᵀ λ (the impulse response) and q⁺ =
    integrate(q, v⁺, dt)."""
    Gm = sd.delassus(m, q, contacts)
    g = sd.contact.contact_velocities(m, q, v_free, contacts)
    g[:, 2] -= bias(contacts.depth, settings, dt)
    sigma = (Gm @ r.impulses.reshape(-1) + g.reshape(-1)).reshape(-1, 3)
    np.testing.assert_allclose(r.solution.velocities, sigma, atol=1e-11)
    res = ncp_residuals(r.impulses, sigma, contacts.friction)
    assert max(res) <= settings.tol * 1.0001
    np.testing.assert_allclose((r.solution.primal, r.solution.dual, r.solution.complementarity), res, atol=1e-13)
    v_plus = v_free + sd.contact.impulse_response(m, q, contacts, r.impulses)
    np.testing.assert_allclose(r.v, v_plus, atol=1e-12)
    np.testing.assert_allclose(r.q, sd.integrate(m, q, v_plus, dt), atol=1e-12)


def test_step_is_the_specified_composition():
    """q⁺, v⁺ and λ from the public pieces: v_free = v + dt·aba (the floating base's
    −ω × u term turned exactly, see the comment), G = delassus, g = J v_free − b,
    λ satisfies the NCP (residuals evaluated here) and v⁺ = v_free + impulse_response(λ)."""
    m = legged_scene()
    settings = sd.ContactSettings(tol=1e-10, max_iter=500)
    q = legged_state(m, drop=-0.003)  # the feet 3 mm into the ground
    rng = np.random.default_rng(1)
    v = rng.normal(scale=0.2, size=m.nv)
    tau = rng.normal(scale=0.5, size=m.nv)
    tau[:6] = 0.0
    r = sd.step(m, q, v, tau, DT, settings=settings)
    assert len(r.contacts) == 2 and r.converged
    contacts = sd.detect_contacts(m, q)
    np.testing.assert_allclose(r.contacts.point, contacts.point, atol=1e-15)
    v_free = v + DT * sd.aba(m, q, v, tau)
    # the floating base's rotating-frame term −ω × u integrated exactly over the step: its
    # body-frame linear velocity u turned by exp(−[ω] dt) (kernels/contact/step.py free_joint_rotation)
    w, u = v[:3], v[3:6]
    v_free[3:6] += Rotation.from_rotvec(-DT * w).apply(u) - u + DT * np.cross(w, u)
    assert_composed_step(m, q, v_free, contacts, settings, DT, r)
    assert r.impulses[:, 2].min() > 0  # the feet are pushed out of the ground


def test_free_fall_is_the_closed_form():
    """Far from the ground no contact: z_k = z_0 − g dt² k(k+1)/2 (semi-implicit Euler), and
    the contact rollout equals the contact-free one."""
    m = box_scene()
    q, v = box_state(10.0)
    T = 200
    qs, vs, rec = sd.rollout(m, q, v, np.zeros((T, 6)), DT, contacts=True, record=True)
    k = np.arange(T + 1)
    np.testing.assert_allclose(qs[:, 2], 10.0 - G * DT ** 2 * k * (k + 1) / 2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(vs[:, 5], -G * DT * k, rtol=0, atol=1e-12)
    assert np.all(rec.count == 0) and np.all(rec.converged)
    q0, v0 = sd.rollout(m, q, v, np.zeros((T, 6)), DT)
    np.testing.assert_allclose(qs, q0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(vs, v0, rtol=0, atol=1e-12)


def test_box_comes_to_rest_and_carries_its_weight():
    """A box dropped 2 cm comes to rest on its four corners: no rebound, the penetration
    within the documented tolerance, Σλ_n = m g dt at rest."""
    m = box_scene(mass=2.0)
    settings = sd.ContactSettings()
    q, v = box_state(0.07)
    T = 600
    qs, vs, rec = sd.rollout(m, q, v, np.zeros((T, 6)), DT, contacts=True, record=True, settings=settings)
    first = int(np.argmax(rec.count > 0))
    assert np.all(vs[first + 2:, 5] <= 1e-6)  # no rebound after the impact
    assert rec.count[-1] == 4
    np.testing.assert_allclose(vs[-1], 0.0, atol=1e-5)
    depth = 0.05 - qs[-1, 2]
    assert 0 <= depth <= settings.slop + G * DT ** 2 / settings.stabilization
    np.testing.assert_allclose(rec.normal_impulse[-1], 2.0 * G * DT, rtol=1e-6)
    assert np.all(rec.converged)


def test_penetration_is_pushed_out_to_the_slop_band():
    """A box started 5 mm deep is pushed out at the rate `stabilization` per step; it leaves
    with at most the bias velocity stabilization·(d − slop)/dt and comes to rest within the
    slop band."""
    m = box_scene()
    settings = sd.ContactSettings(stabilization=0.2, slop=5e-4)
    q, v = box_state(0.05 - 5e-3)
    qs, vs, rec = sd.rollout(m, q, v, np.zeros((1500, 6)), DT, contacts=True, record=True, settings=settings)
    depth = 0.05 - qs[:, 2]
    np.testing.assert_allclose(depth[1] - settings.slop, 0.8 * (depth[0] - settings.slop), rtol=1e-6)
    assert vs[:, 5].max() <= settings.stabilization * (5e-3 - settings.slop) / DT * (1 + 1e-9)
    assert 0 <= depth[-1] <= settings.slop + G * DT ** 2 / settings.stabilization
    assert rec.count[-1] == 4
    np.testing.assert_allclose(vs[-1], 0.0, atol=1e-5)


# --------------------------------------------------------------------------- rollouts
def pd_torques(m, q, v, kp, kd, qref):
    tau = np.zeros(m.nv)
    tau[6:] = kp * (qref[7:] - q[7:]) - kd * v[6:]
    return tau


def test_rollout_equals_repeated_steps_with_pd():
    m = legged_scene()
    q0 = legged_state(m, drop=0.01)
    q0[7:] = [0.2, -0.4, 0.1, -0.3]
    v0 = np.zeros(m.nv)
    T = 150
    qref = np.tile(legged_state(m), (T, 1))
    kp, kd = 20.0, 0.5
    tau = np.zeros((T, m.nv))
    tau[:, 6] = 0.05
    qs, vs, rec = sd.rollout(m, q0, v0, tau, DT, contacts=True, pd=(kp, kd, qref), record=True)
    assert rec.count.max() >= 2
    q, v, r = q0, v0, None
    for k in range(T):
        r = sd.step(m, q, v, tau[k] + pd_torques(m, q, v, kp, kd, qref[k]), DT, warm_start=r)
        q, v = r.q, r.v
        np.testing.assert_allclose(q, qs[k + 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(v, vs[k + 1], rtol=0, atol=1e-12)
        assert len(r.contacts) == rec.count[k]
        assert r.solution.iterations == rec.iterations[k]


def test_pd_gains_per_dof():
    """(nv,) gains equal the scalar ones; a gain on the floating base is refused."""
    m = legged_scene()
    q0 = legged_state(m, drop=0.01)
    T = 20
    qref = np.tile(legged_state(m), (T, 1))
    kp = np.zeros(m.nv)
    kp[6:] = 15.0
    a = sd.rollout(m, q0, None, np.zeros((T, m.nv)), DT, contacts=True, pd=(15.0, 0.3, qref))
    b = sd.rollout(m, q0, None, np.zeros((T, m.nv)), DT, contacts=True, pd=(kp, 0.3, qref))
    np.testing.assert_array_equal(a[0], b[0])
    kp[2] = 1.0
    with pytest.raises(ValueError, match=r"pd\[0\] \(kp\).*dof 2"):
        sd.rollout(m, q0, None, np.zeros((T, m.nv)), DT, contacts=True, pd=(kp, 0.3, qref))
    with pytest.raises(ValueError, match=r"pd\[2\] \(q_ref\)"):
        sd.rollout(m, q0, None, np.zeros((T, m.nv)), DT, contacts=True, pd=(1.0, 0.3, qref[:-1]))


def test_step_with_a_servo_equals_the_step_with_its_torques():
    """sd.step(pd=(kp, kd, q_ref)) is the step under τ + K_p (q_ref − q) − K_d v on the leg
    dofs (computed in NumPy), and a loop of such steps is the rollout with the same servo;
    scalar and per-dof gains alike."""
    m = legged_scene()
    q0 = legged_state(m, drop=0.01)
    q0[7:] = [0.2, -0.4, 0.1, -0.3]
    T = 120
    qref = legged_state(m)
    kp, kd = 20.0, 0.5
    kp_dofs = np.zeros(m.nv)
    kp_dofs[6:] = kp
    kd_dofs = np.zeros(m.nv)
    kd_dofs[6:] = kd
    tau = np.zeros(m.nv)
    tau[6] = 0.05
    qs, vs = sd.rollout(m, q0, None, np.tile(tau, (T, 1)), DT, contacts=True, pd=(kp, kd, np.tile(qref, (T, 1))))
    q, v, r = q0, np.zeros(m.nv), None
    for k in range(T):
        by_numpy = sd.step(m, q, v, tau + pd_torques(m, q, v, kp, kd, qref), DT, warm_start=r)
        scalar = sd.step(m, q, v, tau, DT, warm_start=r, pd=(kp, kd, qref))
        r = sd.step(m, q, v, tau, DT, warm_start=r, pd=(kp_dofs, kd_dofs, qref))  # (the fast path's types)
        for other in (by_numpy, scalar):
            np.testing.assert_allclose(r.q, other.q, rtol=0, atol=1e-13)
            np.testing.assert_allclose(r.v, other.v, rtol=0, atol=1e-12)
        q, v = r.q, r.v
        np.testing.assert_allclose(q, qs[k + 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(v, vs[k + 1], rtol=0, atol=1e-12)


def test_a_bad_servo_is_named():
    m = legged_scene()
    q, v = legged_state(m), np.zeros(m.nv)
    kp = np.zeros(m.nv)
    kp[6:] = 5.0
    kp[2] = 1.0  # the floating base's dof
    with pytest.raises(ValueError, match=r"pd\[0\] \(kp\).*dof 2"):
        sd.step(m, q, v, None, DT, pd=(kp, 0.1, q))
    with pytest.raises(ValueError, match=r"pd\[1\] \(kd\).*≥ 0"):
        sd.step(m, q, v, None, DT, pd=(1.0, -0.1, q))
    with pytest.raises(ValueError, match=r"pd\[2\] \(q_ref\).*shape"):
        sd.step(m, q, v, None, DT, pd=(1.0, 0.1, q[:-1]))
    bad = q.copy()
    bad[8] = np.nan
    with pytest.raises(ValueError, match=r"pd\[2\] \(q_ref\).*finite"):
        sd.step(m, q, v, None, DT, pd=(1.0, 0.1, bad))
    with pytest.raises(TypeError, match=r"pd: expected a tuple"):
        sd.step(m, q, v, None, DT, pd=[1.0, 0.1])
    r = sd.step(m, q, v, None, DT)  # the fast path's arrays of the wrong kind: still named
    kp[2] = 1.0
    with pytest.raises(ValueError, match=r"pd\[0\] \(kp\).*dof 2"):
        sd.step(m, q, v, None, DT, warm_start=r, pd=(kp, np.zeros(m.nv), q))


def batch_inputs(m, B, T):
    rng = np.random.default_rng(5)
    q0 = np.tile(legged_state(m, drop=0.005), (B, 1))
    q0[:, 7:] += rng.normal(scale=0.1, size=(B, 4))
    v0 = rng.normal(scale=0.1, size=(B, m.nv))
    tau = np.zeros((B, T, m.nv))
    qref = np.tile(legged_state(m), (B, T, 1))
    return q0, v0, tau, qref


def test_batch_equals_single_calls():
    m = legged_scene()
    B, T = 3, 60
    q0, v0, tau, qref = batch_inputs(m, B, T)
    qs, vs, rec = sd.rollout(m, q0, v0, tau, DT, contacts=True, pd=(20.0, 0.5, qref), record=True)
    for b in range(B):
        q1, v1, r1 = sd.rollout(m, q0[b], v0[b], tau[b], DT, contacts=True, pd=(20.0, 0.5, qref[b]), record=True)
        np.testing.assert_array_equal(qs[b], q1)
        np.testing.assert_array_equal(vs[b], v1)
        np.testing.assert_array_equal(rec.iterations[b], r1.iterations)


def test_threads_give_bit_identical_results(monkeypatch):
    m = legged_scene()
    B, T = 40, 40  # more than one block of 16 states
    q0, v0, tau, qref = batch_inputs(m, B, T)
    many = sd.rollout(m, q0, v0, tau, DT, contacts=True, pd=(20.0, 0.5, qref))
    monkeypatch.setattr(batch_dispatch, "batch_threads", lambda: 1)
    one = sd.rollout(m, q0, v0, tau, DT, contacts=True, pd=(20.0, 0.5, qref))
    np.testing.assert_array_equal(many[0], one[0])
    np.testing.assert_array_equal(many[1], one[1])


def test_capacity_grows_without_dropping_contacts():
    """More contacts than the first capacity: the step calls again with room for all."""
    m = sd.Model("many boxes")
    n = 40  # 160 corner contacts, more than the first capacity of 128
    for i in range(n):
        m.add_body(f"b{i}", jt.Free(), None, mass=1.0, inertia=np.eye(3) * 0.01)
        m.add_collision(f"b{i}", Box((0.1, 0.1, 0.1)), friction=0.5, contype=2, conaffinity=1)
    m.add_ground(friction=0.5)
    q = sd.neutral(m)
    for i in range(n):
        q[7 * i:7 * i + 3] = [0.3 * i, 0.0, 0.0499]
    r = sd.step(m, q, np.zeros(m.nv), None, DT)
    assert len(r.contacts) == 4 * n == len(sd.detect_contacts(m, q))
    qs, vs, rec = sd.rollout(m, q, None, np.zeros((3, m.nv)), DT, contacts=True, record=True)
    np.testing.assert_array_equal(rec.count, 4 * n)
    np.testing.assert_allclose(qs[1], r.q, rtol=0, atol=0)


# --------------------------------------------------------------------------- convergence
def test_residuals_below_tol_when_converged():
    m = legged_scene()
    q0, v0, tau, qref = batch_inputs(m, 4, 80)
    _, _, rec = sd.rollout(m, q0, v0, tau, DT, contacts=True, pd=(20.0, 0.5, qref), record=True)
    tol = sd.ContactSettings().tol
    assert rec.converged.all()
    assert np.nanmax(rec.residual) <= tol


def test_non_convergence_is_reported():
    m = box_scene()
    q, v = box_state(0.0495, [0.0, 0.0, 0.0, 0.5, 0.0, -0.3])
    settings = sd.ContactSettings(max_iter=1, tol=1e-15)
    with pytest.warns(sd.ContactSolverWarning, match="did not converge"):
        r = sd.step(m, q, v, None, DT, settings=settings)
    assert not r.converged and not r.solution.converged and r.solution.iterations == 1
    assert r.solution.residual > 1e-15
    with pytest.warns(sd.ContactSolverWarning, match="did not converge in [1-5] of 5 steps"):
        _, _, rec = sd.rollout(m, q, v, np.zeros((5, 6)), DT, contacts=True, settings=settings, record=True)
    assert rec.count[0] == 4 and not rec.converged[0]
    np.testing.assert_array_equal(rec.converged, rec.residual <= 1e-15)  # each step says whether it met tol
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sd.step(m, q, v, None, DT).converged


@pytest.mark.parametrize("solver", ["admm", "pgs"])
def test_both_solvers_agree_on_a_compliant_step(solver):
    """With R > 0 the NCP has one solution: ADMM and PGS give it to their tolerance."""
    m = box_scene()
    q, v = box_state(0.0495, [0.0, 0.1, 0.0, 0.01, 0.0, -0.1])
    settings = sd.ContactSettings(friction_solver=solver, compliance=1e-2, tol=1e-10, max_iter=20000)
    r = sd.step(m, q, v, None, DT, settings=settings)
    ref = sd.step(m, q, v, None, DT, settings=sd.ContactSettings(compliance=1e-2, tol=1e-13, max_iter=5000))
    assert r.converged and ref.converged and r.solution.method == solver
    # a residual tol leaves λ within about tol / R of the solution (R the smallest eigenvalue of G + R)
    np.testing.assert_allclose(r.impulses, ref.impulses, atol=10 * settings.tol / settings.compliance)


# --------------------------------------------------------------------------- bad input
def test_settings_are_validated():
    for field, value, error in (("friction_solver", "lcp", ValueError), ("stabilization", 1.5, ValueError),
                                ("stabilization", "0.2", TypeError), ("slop", -1e-3, ValueError),
                                ("compliance", -1.0, ValueError), ("compliance", np.nan, ValueError),
                                ("tol", 0.0, ValueError), ("max_iter", 0, ValueError), ("max_iter", 2.5, ValueError),
                                ("margin", -0.1, ValueError), ("warm_start", "yes", TypeError)):
        with pytest.raises(error, match=f"ContactSettings.{field}"):
            sd.ContactSettings(**{field: value})
    s = sd.ContactSettings()
    with pytest.raises(AttributeError):
        s.tol = 1.0  # frozen


def test_bad_step_inputs_name_the_argument():
    m = box_scene()
    q, v = box_state(0.06)
    for dt, error in ((0.0, ValueError), (-1e-3, ValueError), (np.inf, ValueError), (np.nan, ValueError),
                      ("0.001", TypeError), (None, TypeError)):
        with pytest.raises(error, match="dt"):
            sd.step(m, q, v, None, dt)
    with pytest.raises(ValueError, match="q: expected shape"):
        sd.step(m, q[:6], v, None, DT)
    with pytest.raises(ValueError, match="v: expected shape"):
        sd.step(m, q, v[:5], None, DT)
    with pytest.raises(ValueError, match="tau: expected shape"):
        sd.step(m, q, v, np.zeros(7), DT)
    with pytest.raises(ValueError, match="f_ext: expected shape"):
        sd.step(m, q, v, None, DT, f_ext=np.zeros((2, 6)))
    for bad, name in ((np.r_[np.nan, q[1:]], "q"), (np.r_[v[:5], np.nan], "v"), (np.r_[np.zeros(5), np.inf], "tau")):
        args = {"q": q, "v": v, "tau": np.zeros(6), name: bad}
        with pytest.raises(ValueError, match=name):
            sd.step(m, args["q"], args["v"], args["tau"], DT)
    with pytest.raises(TypeError, match="settings"):
        sd.step(m, q, v, None, DT, settings={"tol": 1e-8})
    with pytest.raises(TypeError, match="model"):
        sd.step("box", q, v, None, DT)


def test_warm_start_of_another_model_or_version_is_refused():
    m = box_scene()
    q, v = box_state(0.0499)
    r = sd.step(m, q, v, None, DT)
    other = box_scene()
    with pytest.raises(ValueError, match="warm_start: these contacts were made for another model"):
        sd.step(other, q, v, None, DT, warm_start=r)
    m.add_collision("box", Sphere(0.01))
    with pytest.raises(ValueError, match="warm_start: these contacts were made for version"):
        sd.step(m, q, v, None, DT, warm_start=r)
    with pytest.raises(TypeError, match="warm_start"):
        sd.step(other, q, v, None, DT, warm_start=r.impulses)


def test_negative_friction_is_refused():
    m = sd.Model("m")
    m.add_body("b", jt.Free(), None, mass=1.0, inertia=np.eye(3))
    with pytest.raises(ValueError, match="friction"):
        m.add_collision("b", Sphere(0.1), friction=-0.1)


def test_nan_state_never_propagates():
    """A state that leaves the finite numbers raises (or, on request, becomes NaN rows from
    that step): never a silently wrong trajectory."""
    m = box_scene()
    q, v = box_state(0.06, [0.0, 0.0, 0.0, 0.0, 0.0, 1e300])
    with pytest.raises(OverflowError):
        sd.step(m, q, v, np.array([0, 0, 0, 0, 0, 1e308]), 1e10)
    tau = np.zeros((5, 6))
    tau[:, 5] = 1e308
    with pytest.raises(OverflowError, match="left the finite numbers"):
        sd.rollout(m, q, v, tau, 1e10, contacts=True)
    qs, vs = sd.rollout(m, q, v, tau, 1e10, contacts=True, on_divergence="nan")
    assert np.isnan(qs[-1]).all() and np.isfinite(qs[0]).all()


def test_rollout_argument_checks():
    m = box_scene()
    q, v = box_state(0.06)
    with pytest.raises(ValueError, match="integrator"):
        sd.rollout(m, q, v, np.zeros((3, 6)), DT, "rk4", contacts=True)
    with pytest.raises(ValueError, match="pd, settings, record"):
        sd.rollout(m, q, v, np.zeros((3, 6)), DT, settings=sd.ContactSettings())
    with pytest.raises(ValueError, match="dt"):
        sd.rollout(m, q, v, np.zeros((3, 6)), 0.0, contacts=True)
    with pytest.raises(ValueError, match="batch sizes differ"):
        sd.rollout(m, np.tile(q, (2, 1)), v, np.zeros((3, 3, 6)), DT, contacts=True)


def test_closed_chain_rollout_raises_naming_the_model():
    # (sd.step steps closed chains by embedding: tests/test_contact_loops.py)
    m = sd.models.four_bar_linkage()
    q = sd.neutral(m)
    with pytest.raises(sd.ClosedChainError, match=repr(m.name)):
        sd.rollout(m, q, None, np.zeros((2, m.nv)), DT, contacts=True)


# --------------------------------------------------------------------------- simulate
def test_simulate_with_contacts_is_the_stepper():
    """simulate(contacts=True) takes the steps of sd.step (the rollout's, warm started the
    same), records their contacts, and reaches t_final with a shortened last step."""
    m = box_scene(mass=2.0)
    q, v = box_state(0.06, [0.0, 0.0, 0.0, 0.2, 0.0, 0.0])
    res = sd.simulate(m, q, v, 0.3, DT, contacts=True)
    qs, vs, rec = sd.rollout(m, q, v, np.zeros((300, 6)), DT, contacts=True, record=True)
    np.testing.assert_allclose(res.q, qs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.v, vs, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.contacts.count, rec.count)
    np.testing.assert_allclose(res.contacts.normal_impulse, rec.normal_impulse, rtol=0, atol=1e-15)
    last = res.contact_points[-1]
    assert last.shape == (4, 6)
    # at rest the box (the first object, added before the ground) pushes the ground with m g
    np.testing.assert_allclose(last[:, 5].sum(), -2.0 * G, rtol=1e-6)
    assert res.info["contacts"] and res.t[-1] == 0.3
    short = sd.simulate(m, q, v, 0.0105, DT, contacts=True, record_every=5)
    assert short.t[-1] == 0.0105 and len(short.contact_points) == len(short.t) - 1
    with pytest.raises(ValueError, match="method"):
        sd.simulate(m, q, v, 0.01, DT, method="RK45", contacts=True)
    with pytest.raises(ValueError, match="contact_settings"):
        sd.simulate(m, q, v, 0.01, DT, contact_settings=sd.ContactSettings())
