"""Time stepping with frictional contact (``sd.step``) held to closed forms and conservation
laws, scene by scene (the scenes and their closed forms: ``benchmarks/contact_scenes.py``):

* a box on an incline, 4 corner contacts, μ = 0.3: it sticks for tan θ < μ (drift below
  1e-6 m in 1 s) and above slides with a = g (sin θ − μ cos θ) (1 % at dt = 1 ms);
* a solid sphere launched sliding (v₀, ω₀ = 0) ends rolling at 5/7 v₀ (0.5 %), its contact
  point at rest, its energy never increasing;
* a sphere and a box dropped from 0.5 m come to rest, penetrate less than the documented
  tolerance, do not rebound (inelastic contact) and never gain energy;
* five stacked boxes stay stacked for 2 s (each moves less than 1 mm);
* solo12 with sphere feet standing under joint PD: the normal impulses sum to m g dt (1 %)
  and the feet do not slip;
* every step's NCP residuals are below the tolerance when the solve converged, and a solve
  that did not converge says so (a warning and ``converged=False``);
* against MuJoCo on the same MJCF scenes: the rest heights agree within MuJoCo's own
  penetration, the slide distances on the incline within 2 %.
"""
from __future__ import annotations

import functools
import importlib.util
import math
import os
import sys
import warnings

import numpy as np
import pytest

import soadyn as sd
from conftest import HERE, robot_path
from soadyn.contact import ContactSolverWarning

_spec = importlib.util.spec_from_file_location("soadyn_contact_scenes",
                                               os.path.join(HERE, "..", "benchmarks", "contact_scenes.py"))
scenes = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = scenes  # its dataclasses look their module up
_spec.loader.exec_module(scenes)

MU = 0.3  # the incline's friction coefficient


class Run:
    """A trajectory of ``sd.step`` from a scene's (q0, v0): ``q`` (n + 1, nq), ``v``
    (n + 1, nv), ``steps`` the n StepResults (step i goes from state i to state i + 1)."""

    def __init__(self, scene, duration, settings=None, controller=None):
        model, dt = scene.model, scene.dt
        settings = sd.ContactSettings(**SETTINGS) if settings is None else settings
        n = int(round(duration / dt))
        q, v = scene.q0.copy(), scene.v0.copy()
        self.scene, self.dt = scene, dt
        self.q, self.v = np.empty((n + 1, model.nq)), np.empty((n + 1, model.nv))
        self.q[0], self.v[0] = q, v
        self.steps = []
        for i in range(n):
            tau = np.zeros(model.nv) if controller is None else controller(q, v)
            r = sd.step(model, q, v, tau, dt, settings=settings)
            q, v = r.q, r.v
            self.q[i + 1], self.v[i + 1] = q, v
            self.steps.append(r)

    @property
    def t(self):
        return self.dt * np.arange(len(self.q))

    def world_velocity(self, body=0):
        """(n + 1, 6) [ω; v] of a free body in world coordinates (its v is in its own frame)."""
        out = np.empty((len(self.q), 6))
        for i, (q, v) in enumerate(zip(self.q, self.v)):
            R = sd.body_placements(self.scene.model, q)[0][body]
            out[i, :3], out[i, 3:] = R @ v[6 * body:6 * body + 3], R @ v[6 * body + 3:6 * body + 6]
        return out

    def energy(self):
        m = self.scene.model
        return np.array([sd.kinetic_energy(m, q, v) + sd.potential_energy(m, q) for q, v in zip(self.q, self.v)])

    def max_depth(self):
        """The largest penetration depth [m] of every step's contacts (0 without contacts)."""
        return np.array([max(0.0, float(r.contacts.depth.max())) if len(r.contacts) else 0.0 for r in self.steps])


@functools.lru_cache(maxsize=None)
def incline_run(theta, duration=1.0):
    return Run(scenes.incline(theta, mu=MU), duration)


#: The settings of every scene: contacts are detected within a margin of 5 mm. A resting
#: contact then stays a contact when round-off opens a gap of 1e-14 m (with ``margin=0`` a
#: box resting exactly on its four corners loses two of them in its first step and rocks,
#: moving 1e-5 m), and a body falling at the drops' impact speed √(2 g h) = 3.1 m/s, which
#: covers 3.1 mm in a step, stops at the surface instead of inside it.
SETTINGS = dict(margin=5e-3)


def penetration_tolerance(settings):
    """The documented depth of a resting contact (ContactSettings: "the documented
    penetration tolerance is slop + g dt²/stabilization")."""
    return settings.slop + scenes.G * scenes.DT ** 2 / settings.stabilization


@functools.lru_cache(maxsize=None)
def drop_run(shape):
    return Run(scenes.drop(shape), 1.0)


@functools.lru_cache(maxsize=None)
def mujoco_run(xml, steps):
    """MuJoCo's free body (the first joint) after ``steps`` steps of the same MJCF: (qpos
    history (steps + 1, nq_mujoco), the penetration −min dist of the last state's contacts)."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    qpos = [d.qpos.copy()]
    for _ in range(steps):
        mujoco.mj_step(m, d)
        qpos.append(d.qpos.copy())
    penetration = max([-d.contact[i].dist for i in range(d.ncon)], default=0.0)
    return np.array(qpos), penetration


# ============================================================================ the incline
@pytest.mark.parametrize("theta", [0.2, math.atan(0.9 * MU)], ids=["tan0.20", "tan0.27"])
def test_box_on_an_incline_below_the_friction_angle_sticks(theta):
    """tan θ < μ: the static friction holds the box; its centre drifts less than 1e-6 m in 1 s."""
    assert math.tan(theta) < MU
    run = incline_run(theta)
    drift = np.linalg.norm(run.q[:, :3] - run.q[0, :3], axis=1).max()
    assert drift < 1e-6, f"θ = {theta:.4f}: drift {drift:.3g} m in 1 s"
    assert all(len(r.contacts) == 4 for r in run.steps)  # the four bottom corners, all the time


@pytest.mark.parametrize("theta", [0.4, 0.5])
def test_box_on_an_incline_above_the_friction_angle_slides_at_the_coulomb_acceleration(theta):
    """tan θ > μ: kinetic friction μ m g cos θ opposes the slide, a = g (sin θ − μ cos θ)
    along the slope (world +x) within 1 %; the box stays on the plane (no lift, no turn)."""
    assert math.tan(theta) > MU
    run = incline_run(theta)
    a = scenes.G * (math.sin(theta) - MU * math.cos(theta))
    vw = run.world_velocity()
    measured = vw[-1, 3] / run.t[-1]  # from rest: v(T) = a T
    assert measured == pytest.approx(a, rel=0.01)
    distance = run.q[-1, 0] - run.q[0, 0]
    assert distance == pytest.approx(0.5 * a * run.t[-1] ** 2, rel=0.01)
    assert np.abs(run.q[:, 2] - run.q[0, 2]).max() < 1e-4  # the centre stays at its height
    assert np.abs(vw[:, :3]).max() < 1e-3  # no tumbling


# ============================================================================ the rolling sphere
def test_sphere_launched_sliding_ends_rolling_at_five_sevenths_of_its_speed():
    """v₀ = 1 m/s, ω₀ = 0, μ = 0.5: sliding friction stops the slip at t* = 2 v₀ / (7 μ g)
    (58 ms); from then on the sphere rolls at 5/7 v₀ (within 0.5 %, checked at 8 t*) with
    its contact point at rest (the tangential contact velocity of every step below 1e-6 v₀),
    and its energy never increases."""
    scene = scenes.rolling_sphere(v0=1.0, radius=0.1, mu=0.5)
    p = scene.params
    run = Run(scene, 8 * p["t_roll"])
    vw = run.world_velocity()
    speed = np.linalg.norm(vw[:, 3:], axis=1)
    assert speed[-1] == pytest.approx(p["v_roll"], rel=0.005)
    # the contact velocity of every step (its contacts, at its initial q, with its v⁺)
    slip = np.array([np.linalg.norm(sd.contact.contact_velocities(scene.model, run.q[i], run.v[i + 1],
                                                                   r.contacts)[0, :2]) for i, r in enumerate(run.steps)])
    t = run.t[1:]
    assert slip[t >= 1.05 * p["t_roll"]].max() < 1e-6 * p["v0"]  # rolling: the contact point at rest
    assert slip[t < 0.9 * p["t_roll"]].min() > 0.05 * p["v0"]  # it slid first
    assert all(len(r.contacts) == 1 for r in run.steps)
    E = run.energy()
    assert np.diff(E).max() <= 1e-9 * E[0]


# ============================================================================ drops
@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_dropped_body_comes_to_rest_without_rebound_or_energy_gain(shape):
    """Released 0.5 m above the ground (impact at √(2 h / g) = 0.32 s): after 1 s the body is
    at rest at its rest height (the centre ``size`` above the ground, within the documented
    penetration tolerance), it never penetrated more than that tolerance, never left the
    ground again after touching it (inelastic contact: no rebound), and its energy never
    exceeded its initial value."""
    run = drop_run(shape)
    p, tol = run.scene.params, penetration_tolerance(sd.ContactSettings(**SETTINGS))
    assert np.abs(run.v[-1]).max() < 1e-6
    assert run.q[-1, 2] == pytest.approx(p["size"], abs=tol)
    assert run.max_depth().max() <= tol
    touched = int(np.argmax([len(r.contacts) > 0 and r.contacts.depth.max() >= 0 for r in run.steps]))
    t_impact = math.sqrt(2 * p["height"] / p["g"])
    assert run.t[touched] == pytest.approx(t_impact, abs=2 * run.dt)
    assert run.q[touched:, 2].max() <= p["size"] + tol  # no flight after the impact
    assert all(len(r.contacts) > 0 for r in run.steps[touched:])
    E = run.energy()
    assert E.max() <= E[0] + 1e-9 * abs(E[0])


# ============================================================================ the stack
@pytest.mark.slow
def test_five_stacked_boxes_stay_stacked_for_two_seconds():
    """Five 0.2 m cubes resting on each other: after 2 s every box has moved less than 1 mm
    (and turned less than 1 mrad) from where it started."""
    scene = scenes.stack(5)
    run = Run(scene, 2.0)
    for b in range(5):
        moved = np.linalg.norm(run.q[:, 7 * b:7 * b + 3] - run.q[0, 7 * b:7 * b + 3], axis=1).max()
        assert moved < 1e-3, f"box {b} moved {moved:.3g} m"
        turned = 2 * np.arcsin(np.linalg.norm(run.q[:, 7 * b + 3:7 * b + 6], axis=1)).max()
        assert turned < 1e-3, f"box {b} turned {turned:.3g} rad"


# ============================================================================ the quadruped
@pytest.mark.slow
def test_quadruped_standing_under_pd_carries_its_weight_without_slipping():
    """solo12 with sphere feet, joint PD (kp 6 N m/rad, kd 0.3 N m s/rad) to its standing
    pose, 1 s: over the last 0.5 s (at rest) the normal impulses of every step sum to
    m g dt within 1 % (momentum balance on flat ground, all normals vertical), each foot has
    all the time one contact with the ground, and the feet do not slip: at every step their
    material points at the contacts have no tangential velocity (below 1e-6 m/s; the
    spheres roll a little as the legs settle) and the friction impulses are strictly inside
    the cones."""
    robot_path("solo12")  # skips without example-robot-data
    scene = scenes.quadruped()
    model, p = scene.model, scene.params
    run = Run(scene, 1.0, controller=lambda q, v: scenes.pd_torque(model, q, v, p["q_ref"], p["kp"], p["kd"]))
    weight = p["mass"] * p["g"] * scene.dt
    late = run.steps[len(run.steps) // 2:]
    for r in late:
        np.testing.assert_allclose(np.abs(r.contacts.normal), np.tile([0.0, 0.0, 1.0], (len(r.contacts), 1)), atol=1e-12)
        assert r.impulses[:, 2].sum() == pytest.approx(weight, rel=0.01)
    feet = [model.frame(f) for f in scenes.SOLO_FEET]
    foot_bodies = sorted(f.body for f in feet)
    assert all(sorted(r.contacts.bodies.max(axis=1)) == foot_bodies for r in run.steps)  # one per foot (the ground: −1)

    for i, r in enumerate(run.steps):  # sticking: the feet's material points at the contacts do not move
        sigma = sd.contact.contact_velocities(model, run.q[i], run.v[i + 1], r.contacts)
        assert np.linalg.norm(sigma[:, :2], axis=1).max() < 1e-6, f"step {i}: slip {sigma[:, :2]}"
        lam = r.impulses
        assert (np.linalg.norm(lam[:, :2], axis=1) < r.contacts.friction * lam[:, 2]).all()  # inside the cone


# ============================================================================ the solver's report
def _cone_distance(x, mu):
    """Distance of x = (x_t1, x_t2, x_n) to the cone ‖x_T‖ ≤ μ x_n (a projection in the
    plane of x_T and the axis)."""
    t, n = math.hypot(x[0], x[1]), x[2]
    if t <= mu * n:
        return 0.0
    if mu * t <= -n:
        return float(np.linalg.norm(x))
    return abs(t - mu * n) / math.sqrt(1.0 + mu * mu)  # to the cone's boundary line in that plane


def ncp_residuals(lam, sigma, mu):
    """(primal, dual, complementarity) of the Coulomb NCP with De Saxcé's correction
    [LeLidec24]: λ ∈ K_μ, σ̂ = σ + (0, 0, μ‖σ_T‖) ∈ K_μ* = K_{1/μ}, λ · σ̂ = 0."""
    worst = np.zeros(3)
    for l, sg, m in zip(lam, sigma, mu):
        hat = sg + np.array([0.0, 0.0, m * math.hypot(sg[0], sg[1])])
        dual = _cone_distance(hat, 1.0 / m) if m > 0 else max(0.0, -hat[2])
        worst = np.maximum(worst, [_cone_distance(l, m), dual, abs(l @ hat)])
    return worst


def test_every_step_reports_ncp_residuals_below_the_tolerance_when_converged():
    """The stack (20 contacts, redundant: a singular Delassus operator), 100 steps: every
    solve converged, and the NCP residuals recomputed here from the returned impulses and
    the contact velocities of v⁺ (σ = J v⁺ − b, b the documented bias of ContactSettings:
    β max(d − slop, 0)/dt on a penetration d ≥ 0, d/dt on a gap) are at most the tolerance,
    as are those the step reports."""
    scene = scenes.stack(5)
    settings = sd.ContactSettings(**SETTINGS)
    run = Run(scene, 0.1, settings=settings)
    for i, r in enumerate(run.steps):
        s, c = r.solution, r.contacts
        assert s.converged and max(s.primal, s.dual, s.complementarity) <= settings.tol
        sigma = sd.contact.contact_velocities(scene.model, run.q[i], run.v[i + 1], c).copy()
        bias = np.where(c.depth < 0, c.depth, settings.stabilization * np.maximum(c.depth - settings.slop, 0.0))
        sigma[:, 2] -= bias / scene.dt
        residuals = ncp_residuals(r.impulses, sigma, c.friction)
        assert residuals.max() <= 1.01 * settings.tol + 1e-12, f"step {i}: {residuals}"


def test_a_solve_that_does_not_converge_says_so():
    """One ADMM iteration on the stack cannot reach the tolerance: the step warns
    (ContactSolverWarning) and its solution says converged=False, with the residuals."""
    scene = scenes.stack(5)
    settings = sd.ContactSettings(max_iter=1, **SETTINGS)
    with pytest.warns(ContactSolverWarning):
        r = sd.step(scene.model, scene.q0, scene.v0, np.zeros(scene.model.nv), scene.dt, settings=settings)
    assert r.solution.converged is False or r.solution.converged == 0
    assert max(r.solution.primal, r.solution.dual, r.solution.complementarity) > settings.tol
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a converged step is silent
        r = sd.step(scene.model, scene.q0, scene.v0, np.zeros(scene.model.nv), scene.dt)
    assert r.solution.converged


# ============================================================================ against MuJoCo
@pytest.mark.parametrize("shape", ["sphere", "box"])
def test_rest_height_agrees_with_mujoco_within_its_penetration(shape):
    """The same MJCF in MuJoCo (elliptic cones, dt = 1 ms): after 1 s both bodies rest; the
    centre heights differ by at most MuJoCo's penetration (its soft contacts sink by ~0.1 mm)
    plus ours."""
    run = drop_run(shape)
    qpos, penetration = mujoco_run(run.scene.xml, len(run.steps))
    ours = max(0.0, float(run.steps[-1].contacts.depth.max()))
    assert penetration > 0  # MuJoCo's soft contact sinks: the bound is not zero
    assert abs(run.q[-1, 2] - qpos[-1, 2]) <= penetration + ours + 1e-9


@pytest.mark.parametrize("theta", [0.4, 0.5])
def test_slide_distance_on_the_incline_agrees_with_mujoco(theta):
    """The sliding box of the incline in MuJoCo: the distances slid in 1 s agree within 2 %."""
    run = incline_run(theta)
    qpos, _ = mujoco_run(run.scene.xml, len(run.steps))
    ours, theirs = run.q[-1, 0] - run.q[0, 0], qpos[-1, 0] - qpos[0, 0]
    assert ours == pytest.approx(theirs, rel=0.02)
