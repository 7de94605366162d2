"""The contact scenes of the physics tests and of ``benchmarks/contact_physics.py``, with
the closed forms they are held to.

Every scene but the quadruped is a small MJCF string, loaded by :func:`soadyn.load_mjcf`
and, for the MuJoCo comparison, by ``mujoco.MjModel.from_xml_string``: the same bodies,
geoms, friction and gravity in both. A :class:`Scene` carries the soadyn model, the MJCF
text, the initial state in soadyn's coordinates and the time step.

* :func:`incline` — a box (4 corner contacts) on a plane, gravity tilted by θ about y: it
  sticks for tan θ ≤ μ and otherwise slides down +x with a = g (sin θ − μ cos θ).
* :func:`rolling_sphere` — a solid sphere launched sliding at v₀ with ω₀ = 0: friction
  μ m g decelerates it and spins it up until v = ω r, at t* = 2 v₀ / (7 μ g), after which
  it rolls at v = 5/7 v₀ (linear momentum change −μ m g t, angular (2/5) m r² ω̇ = μ m g r).
* :func:`drop` — a sphere or a box released at rest with its lowest point 0.5 m above the
  ground.
* :func:`stack` — five boxes resting on each other on the ground.
* :func:`quadruped` — solo12 (example-robot-data) with a sphere collision object on each
  foot frame, on the ground, in its SRDF ``standing`` configuration, with PD gains.

    PYTHONPATH=src python benchmarks/contact_physics.py   # the table of these scenes
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import soadyn as sd  # noqa: E402
from soadyn.io.mjcf import q_from_mujoco  # noqa: E402

#: gravity [m/s²] of every scene (tilted on the incline)
G = 9.81
#: the time step [s] of every scene
DT = 1e-3


@dataclass
class Scene:
    """A contact scene: ``model`` (soadyn), ``xml`` (its MJCF text; None for the quadruped),
    ``q0`` (nq,), ``v0`` (nv,) in soadyn's coordinates, ``dt`` [s] and ``params`` (the
    physical constants the closed forms use)."""

    name: str
    model: object
    xml: str | None
    q0: np.ndarray
    v0: np.ndarray
    dt: float = DT
    params: dict = field(default_factory=dict)


def _mjcf(name, gravity, bodies, friction, timestep=DT, cone="elliptic"):
    """An MJCF document: a ground plane of friction μ, ``bodies`` (XML), the gravity vector,
    MuJoCo's elliptic friction cones (the Coulomb cone soadyn solves) and its ``torsional``
    and ``rolling`` friction set to zero (soadyn has neither)."""
    gx, gy, gz = gravity
    return f"""<mujoco model="{name}">
  <option timestep="{timestep}" gravity="{gx:.17g} {gy:.17g} {gz:.17g}" cone="{cone}" integrator="implicitfast"/>
  <default><geom friction="{friction} 0 0" condim="3"/></default>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1"/>
{bodies}
  </worldbody>
</mujoco>"""


def _load(xml):
    model = sd.load_mjcf(xml)
    return model, q_from_mujoco(model, model.mjcf.qpos0)


def incline(theta, mu=0.3, size=0.2, mass=1.0):
    """A cube of edge ``size`` [m] and ``mass`` [kg] resting on the ground plane (its 4
    bottom corners in contact), friction ``mu``, gravity g (sin θ, 0, −cos θ): the plane is
    tilted by θ [rad] about y, down-slope +x. params: theta, mu, g, and ``accel`` = the
    closed-form down-slope acceleration, max(0, g (sin θ − μ cos θ)) [m/s²]."""
    h = size / 2
    body = (f'    <body name="box" pos="0 0 {h:.17g}"><freejoint/>'
            f'<geom type="box" size="{h} {h} {h}" mass="{mass}"/></body>')
    gravity = (G * math.sin(theta), 0.0, -G * math.cos(theta))
    xml = _mjcf("incline", gravity, body, mu)
    model, q0 = _load(xml)
    accel = max(0.0, G * (math.sin(theta) - mu * math.cos(theta)))
    return Scene("incline", model, xml, q0, np.zeros(model.nv),
                 params=dict(theta=theta, mu=mu, g=G, accel=accel, size=size, mass=mass))


def rolling_sphere(v0=1.0, radius=0.1, mu=0.5, mass=1.0):
    """A solid sphere of ``radius`` [m] and ``mass`` [kg] (inertia 2/5 m r²) on the ground,
    launched along +x at ``v0`` [m/s] with no spin. params: v0, radius, mu, g, ``v_roll`` =
    5/7 v₀ and ``t_roll`` = 2 v₀ / (7 μ g) [s], when sliding stops."""
    body = (f'    <body name="ball" pos="0 0 {radius:.17g}"><freejoint/>'
            f'<geom type="sphere" size="{radius}" mass="{mass}"/></body>')
    xml = _mjcf("rolling_sphere", (0.0, 0.0, -G), body, mu)
    model, q0 = _load(xml)
    v = np.zeros(model.nv)
    v[3] = v0  # v = [ω; v] in the body frame, which is the world's at the identity quaternion
    return Scene("rolling sphere", model, xml, q0, v,
                 params=dict(v0=v0, radius=radius, mu=mu, g=G, v_roll=5.0 / 7.0 * v0,
                             t_roll=2.0 * v0 / (7.0 * mu * G)))


def drop(shape, height=0.5, size=0.1, mu=0.5, mass=1.0):
    """A ``shape`` ("sphere" of radius ``size``, or "box": a cube of half edge ``size``) of
    ``mass`` released at rest, its lowest point ``height`` [m] above the ground; the box is
    turned about x by a small angle so that its corners do not land at once.
    params: height, size (the rest height of the centre is ``size``), mass, g."""
    if shape == "sphere":
        geom, quat = f'<geom type="sphere" size="{size}" mass="{mass}"/>', "1 0 0 0"
    elif shape == "box":
        geom, quat = f'<geom type="box" size="{size} {size} {size}" mass="{mass}"/>', "1 0 0 0"
    else:
        raise ValueError(f"shape: expected 'sphere' or 'box', got {shape!r}")
    body = f'    <body name="{shape}" pos="0 0 {height + size:.17g}" quat="{quat}"><freejoint/>{geom}</body>'
    xml = _mjcf(f"drop_{shape}", (0.0, 0.0, -G), body, mu)
    model, q0 = _load(xml)
    return Scene(f"drop ({shape})", model, xml, q0, np.zeros(model.nv),
                 params=dict(height=height, size=size, mass=mass, g=G, shape=shape))


def stack(n=5, size=0.2, mu=0.5, mass=1.0):
    """``n`` cubes of edge ``size`` [m] and ``mass`` [kg] stacked on the ground, each
    resting on the one below (faces touching, no gap)."""
    h = size / 2
    bodies = "\n".join(f'    <body name="box{i}" pos="0 0 {h + i * size:.17g}"><freejoint/>'
                       f'<geom type="box" size="{h} {h} {h}" mass="{mass}"/></body>' for i in range(n))
    xml = _mjcf("stack", (0.0, 0.0, -G), bodies, mu)
    model, q0 = _load(xml)
    return Scene(f"stack of {n} boxes", model, xml, q0, np.zeros(model.nv),
                 params=dict(n=n, size=size, mass=mass, g=G))


#: solo12's foot frames and the radius [m] of the sphere on each (the PEERS.md anchor's)
SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
SOLO_FOOT_RADIUS = 0.016
#: solo12's SRDF ``standing`` joint angles (HAA, HFE, KFE per leg, in the URDF's order FL, FR, HL, HR)
SOLO_STANDING = {"FL": (0.1, 0.8, -1.6), "FR": (-0.1, 0.8, -1.6), "HL": (0.1, -0.8, 1.6), "HR": (-0.1, -0.8, 1.6)}


def quadruped(kp=6.0, kd=0.3, mu=0.8):
    """solo12 (example-robot-data, floating base, no URDF collision meshes) with a sphere
    of radius :data:`SOLO_FOOT_RADIUS` on each foot frame and the ground, friction ``mu``;
    q0 the SRDF ``standing`` joint angles with the base lowered until the lowest foot sphere
    touches the ground, v0 = 0. params: kp [N m/rad], kd [N m s/rad], q_ref (nq,) = q0
    (the PD target), mass (the total mass [kg]), g."""
    import peers

    model = sd.load_urdf(peers.robot_path("solo12"), floating_base=True, collisions=False)
    for foot in SOLO_FEET:
        model.add_collision(foot, sd.geometry.Sphere(SOLO_FOOT_RADIUS), friction=mu)
    model.add_ground(0.0, friction=mu)
    q = sd.neutral(model)
    for leg, angles in SOLO_STANDING.items():
        for joint, a in zip(("HAA", "HFE", "KFE"), angles):
            q[model.joint(f"{leg}_{joint}").q_index] = a
    R, p = sd.body_placements(model, q)
    lowest = min((R[f.body] @ f.translation + p[f.body])[2] for f in map(model.frame, SOLO_FEET))
    q[2] = -lowest + SOLO_FOOT_RADIUS  # the free joint's z [m]: the lowest sphere touching the ground
    mass = sum(b.mass for b in model.bodies)
    return Scene("solo12 standing", model, None, q, np.zeros(model.nv),
                 params=dict(kp=kp, kd=kd, q_ref=q.copy(), mass=mass, g=G, mu=mu))


def pd_torque(model, q, v, q_ref, kp, kd):
    """Joint PD torques τ (nv,) = kp (q_ref − q) − kd v on the actuated joints (all but the
    free joint, whose six entries are 0): the controller of :func:`quadruped`."""
    tau = -kd * v
    e = sd.difference(model, q, q_ref)
    tau = kp * e + tau
    tau[:6] = 0.0
    return tau
