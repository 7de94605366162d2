"""Random mechanisms for the fuzz suite, and the dense truths they are checked against.

A *chain* is built twice from one random description: as a tree ``tree`` (every joint a
tree joint; with geared rotors, a tree closed by transmissions only) and as ``closed``,
the same bodies where some joints are *opened*: the body hangs on a free joint from the
world and a loop joint of the same kind (weld, revolute, prismatic, spherical,
universal, cylindrical, planar) closes it onto its former parent at the former joint
frame. Both describe the same mechanism ([Jain24], "Single loop constraint": a cut joint
constrains exactly what the tree joint allowed), so the tree's dynamics mapped to the
closed model's coordinates is a truth for every closed-chain method, independent of the
constraint code. The other truth is the dense constrained dynamics of the closed model
from the specification (the spanning tree's M and Coriolis forces of ``soadyn.spec``) and
its constraint rows: least-norm multipliers, so that redundant rows (a loop given twice)
have one answer too.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.core import spatial as sp
from soadyn.models import random_rigid_inertia

#: joint kinds of the random chains: the tree joints of soadyn.models.random_tree and the
#: cylindrical pair (a prismatic slider without mass, a revolute joint on the same axis)
KINDS = ("revolute", "prismatic", "helical", "spherical", "free", "universal", "gimbal", "planar", "fixed",
         "cylindrical")
#: the loop joint that replaces an opened tree joint of each kind
LOOP_OF = {"fixed": "weld", "revolute": "revolute", "prismatic": "prismatic", "spherical": "spherical",
           "universal": "universal", "planar": "planar", "cylindrical": "cylindrical"}
ONE_DOF = ("revolute", "prismatic", "helical")


def unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def _joint_factory(kind, rng):
    """A function making fresh, identical joints of ``kind`` (a joint belongs to one body);
    and the loop's (axis, axis2)."""
    axis = unit(rng)
    axis2 = np.cross(axis, unit(rng))
    axis2 /= np.linalg.norm(axis2)  # perpendicular: a universal loop's second axis
    pitch = rng.uniform(-0.2, 0.2)
    axes = [unit(rng) for _ in range(3)]
    make = {"revolute": lambda: jt.Revolute(axis), "prismatic": lambda: jt.Prismatic(axis),
            "helical": lambda: jt.Helical(axis, pitch=pitch), "spherical": jt.Spherical, "free": jt.Free,
            "universal": lambda: jt.Universal(axis, axis2), "gimbal": lambda: jt.Gimbal(axes),
            "planar": lambda: jt.Planar(axis), "fixed": jt.Fixed}[kind]
    return make, axis, axis2


@dataclass
class Chain:
    recipe: tuple  # the arguments of build_chain that make it again (a reproducer)
    tree: sd.Model
    closed: sd.Model
    opened: dict = field(default_factory=dict)  # body name -> loop kind
    rotors: list = field(default_factory=list)  # (rotor joint, driven joint, ratio)
    sliders: set = field(default_factory=set)  # the mass-less bodies of opened cylindrical pairs (tree only)
    redundant: bool = False  # a loop given twice


def build_chain(seed, n, kinds, open_mask, n_rotors=0, redundant=False, gravity=(0.0, 0.0, -9.81)):
    """The :class:`Chain` of ``n`` bodies of ``kinds`` (cycled), opening the bodies where
    ``open_mask`` is true and whose kind has a loop joint (with ``redundant``, the first
    opened loop twice), with ``n_rotors`` geared rotors on 1-dof joints that stay tree
    joints."""
    rng = np.random.default_rng(seed)
    tree, closed = sd.Model("tree", gravity=gravity), sd.Model("closed", gravity=gravity)
    chain = Chain((seed, n, tuple(kinds), tuple(bool(x) for x in open_mask), n_rotors, redundant, gravity), tree,
                  closed)
    names = []
    for k in range(n):
        kind = kinds[k % len(kinds)]
        parent = names[int(rng.integers(-1, len(names)))] if names and rng.random() < 0.8 else None
        placement = (sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.3)
        mass, com, inertia = random_rigid_inertia(rng)
        body = f"b{k}"
        opened = bool(open_mask[k % len(open_mask)]) and kind in LOOP_OF
        make, axis, axis2 = _joint_factory("revolute" if kind == "cylindrical" else kind, rng)
        for model in (tree, closed):
            if model is closed and opened:
                model.add_body(body, jt.Free(), None, mass=mass, com=com, inertia=inertia)
                for copy in range(2 if redundant and not chain.opened else 1):
                    model.add_loop(f"{body}_loop{copy}", LOOP_OF[kind], parent or "world", body, axis,
                                   predecessor_placement=placement,
                                   axis2=axis2 if kind == "universal" else None)
            elif kind == "cylindrical":
                model.add_body(f"{body}_slider", jt.Prismatic(axis), parent, placement)
                model.add_body(body, jt.Revolute(axis), f"{body}_slider", mass=mass, com=com, inertia=inertia)
            else:
                model.add_body(body, make(), parent, placement, mass=mass, com=com, inertia=inertia)
        if opened:
            chain.opened[body] = LOOP_OF[kind]
            chain.redundant = chain.redundant or redundant
            if kind == "cylindrical":
                chain.sliders.add(f"{body}_slider")
        names.append(body)
    drivable = [b.name for b in tree.bodies if b.joint.kind in ONE_DOF and b.name not in chain.opened
                and b.name in closed.body_names]  # (an opened cylindrical pair's slider is the tree's only)
    for link in drivable[:n_rotors]:
        _add_rotor(chain, link, float(rng.choice([-1.0, 1.0]) * rng.uniform(2, 10)), rng)
    return chain


def _add_rotor(chain, link, ratio, rng):
    """A geared rotor on the parent of ``link`` driving its joint (q̇_rotor = ratio q̇_link,
    [Chignoli23, Fig. 3a]), on both models."""
    body = chain.tree.bodies[chain.tree.body_index(link)]
    parent = None if body.parent < 0 else chain.tree.body_name(body.parent)
    axis = unit(rng)
    placement = (sp.exp3(rng.normal(size=3)), rng.normal(size=3) * 0.1)
    inertia = random_rigid_inertia(rng, mass_range=(0.01, 0.1), size=0.05)
    for model in (chain.tree, chain.closed):
        model.add_rotor(f"{link}_rotor", parent, axis, inertia, ratio, drives=link, placement=placement)
    chain.rotors.append((f"{link}_rotor", link, ratio))


def tree_state(chain, rng, scale=1.0):
    """A random state (q, v, τ) of the tree: the rotors' coordinates follow their links
    (the transmissions hold), the opened joints and the sliders of opened cylindrical
    pairs carry no force (the closed model has no actuator there)."""
    tree = chain.tree
    q = sd.random_configuration(tree, rng)
    v = rng.normal(size=tree.nv) * scale
    tau = rng.normal(size=tree.nv)
    for rotor, link, ratio in chain.rotors:
        r, j = tree.joint(rotor), tree.joint(link)
        q[r.q_index] = ratio * q[j.q_index]
        v[r.v_index] = ratio * v[j.v_index]
    for name in (*chain.opened, *chain.sliders):
        j = tree.bodies[tree.body_index(name)].joint
        tau[j.v_index:j.v_index + j.nv] = 0.0
    return q, v, tau


def closed_state(chain, q, v, x=None, qdd=None):
    """The closed model's (q, v, x) for the tree's (q, v, x) (x: forces, or None), and its
    accelerations for the tree's ``qdd`` when given: an opened body's free joint takes the
    body's pose in the world, its velocity and acceleration in its own frame."""
    tree = chain.tree.spanning_tree()
    kin = sd.forward_kinematics(tree, q, v, qdd) if qdd is not None else sd.forward_kinematics(tree, q, v)
    closed = chain.closed
    qc, vc = np.zeros(closed.nq), np.zeros(closed.nv)
    xc = None if x is None else np.zeros(closed.nv)
    ac = None if qdd is None else np.zeros(closed.nv)
    for b in closed.bodies:
        j = b.joint
        qs, vs = slice(j.q_index, j.q_index + j.nq), slice(j.v_index, j.v_index + j.nv)
        if b.name in chain.opened:
            k = tree.body_index(b.name)
            qc[qs] = np.concatenate([kin.positions[k], sp.matrix_to_quaternion(kin.rotations[k])])
            vc[vs] = kin.velocities[k]
            if ac is not None:
                ac[vs] = kin.accelerations[k]
            continue
        tj = tree.joint(j.name)
        tq, tv = slice(tj.q_index, tj.q_index + tj.nq), slice(tj.v_index, tj.v_index + tj.nv)
        qc[qs], vc[vs] = q[tq], v[tv]
        if xc is not None:
            xc[vs] = x[tv]
        if ac is not None:
            ac[vs] = qdd[tv]
    return qc, vc, xc, ac


def dense_constrained_dynamics(model, q, v, tau):
    """θ̈ of a closed-chain model from the specification: M and the Coriolis forces of the
    spanning tree's dense operators (``soadyn.spec``, [Jain12, eq. 17]), gravity as the
    generalized gravity, and the constraint rows G_c θ̈ = 𝔘̊ with least-norm multipliers:
    θ̈ = M⁻¹(τ − C + G_cᵀλ), (G_c M⁻¹ G_cᵀ) λ = 𝔘̊ − G_c M⁻¹(τ − C), λ by least squares
    (redundant rows have one θ̈ too). Returns (θ̈, cond(M))."""
    tree = model.spanning_tree()
    ops = sd.operators.sko(tree, q, v)
    M = ops.mass_matrix
    C = ops.coriolis + sd.generalized_gravity(tree, q)
    G = sd.constraint_jacobian(model, q)
    bias = sd.constraint_acceleration_bias(model, q, v)
    free = np.linalg.solve(M, tau - C)
    MiGt = np.linalg.solve(M, G.T)
    lam = np.linalg.lstsq(G @ MiGt, bias - G @ free, rcond=1e-10)[0]
    return free + MiGt @ lam, np.linalg.cond(M)
