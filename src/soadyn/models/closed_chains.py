"""Closed-chain models written in code: four-bar linkages, chains of four-bar loops, an
RSSR spatial linkage, a disk rolling without slipping and random closed chains."""
from __future__ import annotations

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core.configuration import random_configuration
from ..core.constraints import LOOP_KINDS, HolonomicConstraint, NonholonomicConstraint
from ..core.model import Model
from ..dynamics.kinematics import forward_kinematics
from .trees import random_tree

__all__ = ["four_bar_linkage", "four_bar_chain", "planar_leg_linkage", "rssr_linkage", "rolling_disk",
           "random_closed_chain"]


def _rod(mass, length, radius=0.02):
    """(com, inertia about the com) of a uniform rod along the local x axis from the origin."""
    ixx = 0.5 * mass * radius**2
    iyy = mass * (3 * radius**2 + length**2) / 12.0
    return np.array([length / 2, 0.0, 0.0]), np.diag([ixx, iyy, iyy])


def _add_four_bar(m, prefix, base, placement, lengths, masses, axis):
    """A crank–coupler–rocker loop on ``base``; returns the coupler's body index."""
    crank, coupler, rocker, ground = lengths
    R, p = placement
    ex = R @ np.array([1.0, 0.0, 0.0])
    bodies = {}
    # (name, parent, joint placement, length, mass); the coupler hangs on the crank's tip
    for name, parent, place, length, mass in (
            ("crank", base, (R, p), crank, masses[0]),
            ("coupler", "crank", (np.eye(3), np.array([crank, 0.0, 0.0])), coupler, masses[1]),
            ("rocker", base, (R, p + ground * ex), rocker, masses[2])):
        com, inertia = _rod(mass, length)
        joint = jt.Revolute(axis)
        joint.independent = name == "crank"
        bodies[name] = m.add_body(f"{prefix}{name}", joint, bodies.get(parent, parent), place, mass=mass,
                                  com=com, inertia=inertia, joint_name=f"{prefix}{name}_joint")
    m.add_loop(f"{prefix}loop", "revolute", bodies["coupler"], bodies["rocker"], axis,
               predecessor_placement=(np.eye(3), np.array([coupler, 0.0, 0.0])),
               successor_placement=(np.eye(3), np.array([rocker, 0.0, 0.0])))
    return bodies["coupler"]


def four_bar_linkage(crank=0.3, coupler=0.5, rocker=0.45, ground=0.5, masses=(1.0, 1.5, 1.2), *,
                     gravity=(0.0, 0.0, -9.81)):
    """A planar crank–rocker four-bar in the x–z plane (joint axes along y, so gravity acts
    in the plane).

    Bodies ``crank`` (hinge at the origin), ``coupler`` (hinge at the crank tip) and
    ``rocker`` (hinge at (ground, 0, 0)) are uniform rods along their local x axes of the
    given lengths [m] and ``masses`` [kg]; the revolute loop joint ``loop`` joins the
    coupler's tip to the rocker's tip. The crank is the independent coordinate (the
    others are marked dependent, as URDF+ ``independent="false"``). The default lengths
    satisfy Grashof's condition with the crank shortest: the crank turns fully.
    """
    m = Model("four_bar_linkage", gravity=gravity)
    _add_four_bar(m, "", None, (np.eye(3), np.zeros(3)), (crank, coupler, rocker, ground), masses, "y")
    return m


def four_bar_chain(k, tail=0, *, gravity=(0.0, 0.0, -9.81)):
    """A chain of ``k`` four-bar loops followed by ``tail`` serial links.

    Loop 0 is :func:`four_bar_linkage`'s crank–rocker on the world; loop i > 0 is the same
    linkage mounted at the middle of loop i−1's coupler, its plane turned by 90° about
    the coupler's axis, so the chain is spatial. The tail is a serial chain of revolute
    rods (axes alternating y, z) hanging from the last coupler. Tree: 3k + tail bodies,
    k revolute cut joints (5 rows each, rank 2 each: planar loops closed by spatial
    revolute joints), k + tail degrees of freedom. Used by the closed-chain benchmark.
    """
    if int(k) < 1 or int(tail) < 0:
        raise ValueError(f"k, tail: expected k >= 1 and tail >= 0, got {k!r}, {tail!r}")
    m = Model(f"four_bar_chain{k}_{tail}", gravity=gravity)
    base, placement = None, (np.eye(3), np.zeros(3))
    for i in range(int(k)):
        base = _add_four_bar(m, f"l{i}_", base, placement, (0.3, 0.5, 0.45, 0.5), (1.0, 1.5, 1.2), "y")
        placement = (sp.rotation_x(np.pi / 2), np.array([0.25, 0.0, 0.0]))
    parent = base
    for j in range(int(tail)):
        com, inertia = _rod(0.5, 0.2)
        pos = np.array([0.25 if j == 0 else 0.2, 0.0, 0.0])
        parent = m.add_body(f"tail{j}", jt.Revolute("yz"[j % 2]), parent, (np.eye(3), pos), mass=0.5,
                            com=com, inertia=inertia)
    return m


def planar_leg_linkage(*, gravity=(0.0, 0.0, -9.81)):
    """The planar leg linkage of [Chignoli23]'s benchmarks (generalized_rbda's
    PlanarLegLinkage): a thigh on a revolute joint to the world and, on the thigh, a
    parallelogram four-bar driving the foot; all joint axes along z.

    Bodies (joint placement on the parent along x [m]; mass [kg]; centre of mass along
    x [m]; I_zz about it [kg m²]): ``thigh`` (0 on the world; 0.23; 0.0364; 45.389e-6),
    ``shank_driver`` (0.011 on the thigh; 0.004; 0.048; 3.257e-6), ``shank_support``
    (0.042 on the thigh; 0.225; 0.04; 22.918e-6), ``foot`` (0.096 on the driver; 0.017;
    0.0635; 22.176e-6). The published inertias have only I_zz; here I_xx = I_yy = I_zz / 2
    (a physical inertia with the same planar dynamics). The revolute loop joint ``loop``
    (axis z) joins the foot at 0.031 m along its x axis to the support at 0.096 m along
    its x axis; ``thigh_joint`` and ``shank_driver_joint`` are the independent
    coordinates, y = [thigh, driver].

    Links 0.096 / 0.031 / 0.096 / 0.031 m: a parallelogram. It assembles on two branches
    for every driver angle θ: the parallelogram (support = θ, foot = −θ, relative to the
    driver) and the crossed (anti-parallelogram) branch; they meet at θ = 0 (every link
    along x), a singular configuration. Each of the lower-leg joints carries an
    ``assembly_guess`` on the parallelogram branch at θ = 0.5 rad (driver 0.5, support
    0.5, foot −0.5): the cluster's reference configuration, from which γ(y) is solved
    when no spanning configuration is given, lies on the parallelogram branch, as
    generalized_rbda's states do.
    """
    m = Model("planar_leg_linkage", gravity=gravity)

    def add(name, parent, x, mass, com, izz, independent=True, guess=None):
        j = jt.Revolute("z")
        j.independent = independent
        if guess is not None:
            j.assembly_guess = guess
        return m.add_body(name, j, parent, (np.eye(3), np.array([x, 0.0, 0.0])), mass=mass,
                          com=np.array([com, 0.0, 0.0]), inertia=np.diag([izz / 2, izz / 2, izz]),
                          joint_name=f"{name}_joint")

    add("thigh", None, 0.0, 0.23, 0.0364, 45.389e-6)
    add("shank_driver", "thigh", 0.011, 0.004, 0.048, 3.257e-6, guess=0.5)
    add("shank_support", "thigh", 0.042, 0.225, 0.04, 22.918e-6, independent=False, guess=0.5)
    add("foot", "shank_driver", 0.096, 0.017, 0.0635, 22.176e-6, independent=False, guess=-0.5)
    m.add_loop("loop", "revolute", "foot", "shank_support", "z",
               predecessor_placement=(np.eye(3), np.array([0.031, 0.0, 0.0])),
               successor_placement=(np.eye(3), np.array([0.096, 0.0, 0.0])))
    m.add_frame("end_effector", "foot", (np.eye(3), np.array([0.031 + 0.096, 0.0, 0.0])))
    return m


def rssr_linkage(*, gravity=(0.0, 0.0, -9.81)):
    """An RSSR spatial linkage (non-planar, one degree of freedom plus the coupler's idle
    spin about its own axis).

    ``crank``: revolute about z at the origin, length 0.2 m along x; ``coupler``: rod of
    length 0.229 m on a spherical joint at the crank tip; ``rocker``: revolute about x at
    (0.3, 0.4, 0.2), arm 0.35 m along its −y axis. The spherical loop joint ``loop``
    joins the coupler's tip to the rocker's tip; at crank angle 0 the rocker's tip is at
    (0.3, 0.05, 0.2), which fixes the coupler length.
    """
    m = Model("rssr", gravity=gravity)
    L = float(np.linalg.norm([0.1, 0.05, 0.2]))
    com, inertia = _rod(0.5, 0.2)
    crank = m.add_body("crank", jt.Revolute("z"), None, mass=0.5, com=com, inertia=inertia)
    com, inertia = _rod(0.8, L, 0.015)
    coupler = m.add_body("coupler", jt.Spherical(), crank, (np.eye(3), np.array([0.2, 0.0, 0.0])),
                         mass=0.8, com=com, inertia=inertia)
    rocker = m.add_body("rocker", jt.Revolute("x"), None, (np.eye(3), np.array([0.3, 0.4, 0.2])),
                        mass=0.6, com=np.array([0.0, -0.175, 0.0]),
                        inertia=np.diag([0.6 * 0.35**2 / 12, 1e-4, 0.6 * 0.35**2 / 12]))
    m.add_loop("loop", "spherical", coupler, rocker,
               predecessor_placement=(np.eye(3), np.array([L, 0.0, 0.0])),
               successor_placement=(np.eye(3), np.array([0.0, -0.35, 0.0])))
    m.joint("coupler").independent = False
    m.joint("rocker").independent = False
    return m


def rolling_disk(radius=0.3, mass=2.0, *, gravity=(0.0, 0.0, -9.81)):
    """A thin disk rolling without slipping on the plane z = 0.

    A free body (the disk, axis along body z, I = m r²/4 about diameters, m r²/2 about
    the axis) with two constraints at the contact point c, the lowest point of the rim:

    * ``contact``: holonomic, the height of the centre equals r·|e_z − (e_z·n)n|
      (n: disk axis in world), with its analytic Jacobian;
    * ``rolling``: non-holonomic, the horizontal velocity of the material point at c is
      zero: [e_x; e_y]ᵀ(R v − [d]× R ω) = 0 with d = c − centre.
    """
    m = Model("rolling_disk", gravity=gravity)
    inertia = mass * radius**2 * np.diag([0.25, 0.25, 0.5])
    m.add_body("disk", jt.Free(), None, mass=mass, inertia=inertia)

    def geometry(q):
        R = sp.quaternion_to_matrix(q[3:7] / np.linalg.norm(q[3:7]))
        n = R[:, 2]
        u = np.array([0.0, 0.0, 1.0]) - n[2] * n
        return R, u, np.linalg.norm(u)

    def contact_velocity_rows(q):
        R, u, nu = geometry(q)
        d = -radius * u / nu
        return np.hstack([-sp.skew(d) @ R, R])  # world velocity of the contact material point

    m.add_constraint(HolonomicConstraint(
        "contact", lambda q, t: np.array([q[2] - radius * geometry(q)[2]]),
        jacobian=lambda q, t: contact_velocity_rows(q)[2:3]))
    m.add_constraint(NonholonomicConstraint("rolling", lambda q, t: contact_velocity_rows(q)[:2]))
    return m


#: the tree joints of :func:`random_closed_chain` by default: those that loops close
#: (a free joint under a loop only adds six coordinates the loop removes again)
CLOSED_CHAIN_JOINTS = ("revolute", "prismatic", "helical", "spherical", "universal", "planar")


def random_closed_chain(n, rng=None, *, loops=1, kinds=CLOSED_CHAIN_JOINTS, loop_kinds=LOOP_KINDS,
                        gravity=(0.0, 0.0, -9.81)):
    """A random closed chain and a configuration at which it is closed: ``(model, q)``.

    The tree is :func:`~soadyn.models.random_tree` of ``n`` bodies with joints drawn from
    ``kinds``; ``loops`` loop joints, each of a kind drawn from ``loop_kinds``, join two
    distinct random bodies (or a body and the world) with the loop frames placed at one
    random world pose at the random configuration q (nq,): every loop is closed at q
    (position residuals at rounding level). Velocities consistent with the loops follow
    from ``soadyn.close_loops(model, q, v)``. ``rng``: numpy Generator or seed. Used to
    test the closed-chain methods on arbitrary topologies and loop kinds."""
    rng = np.random.default_rng(rng)
    model = random_tree(n, rng, kinds=kinds, gravity=gravity)
    model.name = f"random_closed{n}"
    q = random_configuration(model, rng)
    kin = forward_kinematics(model, q)
    for k in range(loops):
        a, b = sorted(int(i) for i in rng.choice(np.arange(-1, n), 2, replace=False))
        kind = loop_kinds[int(rng.integers(len(loop_kinds)))]
        R, p = sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.3  # the loop joint's world pose at q

        def placement(body):
            if body < 0:
                return R, p
            Rb, pb = kin.rotations[body], kin.positions[body]
            return Rb.T @ R, Rb.T @ (p - pb)

        axis = rng.normal(size=3)
        # the loop frames coincide at q: a universal loop's second axis (successor frame) ⊥ its first
        axis2 = np.cross(axis, rng.normal(size=3)) if kind == "universal" else None
        model.add_loop(f"loop{k}", kind, "world" if a < 0 else f"b{a}", f"b{b}", axis,
                       predecessor_placement=placement(a), successor_placement=placement(b), axis2=axis2)
    return model, q
