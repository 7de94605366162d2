"""sd.detect_contacts against pin.computeCollisions (coal) and mujoco.mj_collision on the same
shapes, same run.

``python benchmarks/collision.py`` (needs ``pip install pin mujoco example-robot-data``)
writes ``benchmarks/results/collision.json`` and ``collision.md``.

Scenes: solo12 and talos with their URDF collision shapes (meshes as their convex hulls;
talos also has cylinders and a box) standing on a ground plane with the feet 1 mm in, and
20 primitives (4 each of spheres, capsules, cylinders, boxes, ellipsoids, on free bodies)
heaped over a ground plane. All three libraries get the same shapes (the hulls soadyn made,
as coal convex hulls and MuJoCo mesh geoms), the same world poses and the same candidate
pairs (soadyn's allowed pairs: Pinocchio's ``collisionPairs`` are set to them; MuJoCo's
bodies are free bodies at soadyn's body poses, with ``<exclude>`` for soadyn's parent–child
pairs, so that its filters allow the same pairs).

What each call does: ``sd.detect_contacts(model, q)``: forward kinematics from q, the
objects' world poses, broad phase (sort and sweep), narrow phase and the Contacts (points,
normals, depths, frames); ``pin.computeCollisions(model, data, geom_model, geom_data, q,
False)``: forward kinematics, ``updateGeometryPlacements`` and coal's ``collide`` on every
pair (contacts requested, up to 4 per pair; no broad phase); ``mujoco.mj_collision``: broad
phase (sweep and prune, bounding spheres) and narrow phase from the geom poses already in
``MjData`` (no kinematics: a lower bound of MuJoCo's cost from q). Medians of interleaved
rounds (benchmarks/timing.py).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import coal_geometry, robot_path  # noqa: E402
from timing import machine_description, time_interleaved  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.core import joints as jt  # noqa: E402
from soadyn.core.shapes import BOX, CAPSULE, CYLINDER, ELLIPSOID, PLANE, SPHERE  # noqa: E402
from soadyn.geometry import Box, Capsule, Cylinder, Ellipsoid, Sphere  # noqa: E402
from soadyn.interop import pinocchio as sdpin  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


# --------------------------------------------------------------------------- scenes
def robot_scene(name):
    """(model, q): the robot on the ground, its lowest collision shape 1 mm into it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_urdf(robot_path(name), floating_base=True, mimic="ignore")
    ground = model.add_ground()
    q = sd.neutral(model)
    d = sd.collision_distances(model, q)
    on_ground = (d.objects[:, 0] == ground) | (d.objects[:, 1] == ground)
    q[2] -= d.distance[on_ground].min() + 1e-3
    return model, q


def primitive_scene(count=20, seed=0):
    """(model, q): ``count`` primitives on free bodies heaped in a 1 m × 1 m × 0.6 m box over
    the ground (about a third of them touching another or the ground)."""
    rng = np.random.default_rng(seed)
    model = sd.Model("primitives")
    makers = (lambda: Sphere(rng.uniform(0.05, 0.12)), lambda: Capsule(rng.uniform(0.03, 0.08), rng.uniform(0.1, 0.3)),
              lambda: Cylinder(rng.uniform(0.05, 0.1), rng.uniform(0.1, 0.3)),
              lambda: Box(rng.uniform(0.08, 0.25, 3)), lambda: Ellipsoid(rng.uniform(0.05, 0.15, 3)))
    q = []
    for k in range(count):
        model.add_body(f"b{k}", jt.Free(), None, mass=1.0, inertia=np.eye(3))
        model.add_collision(f"b{k}", makers[k % len(makers)]())
        q.extend(rng.uniform([-0.5, -0.5, 0.02], [0.5, 0.5, 0.6]))
        quat = rng.normal(size=4)
        q.extend(quat / np.linalg.norm(quat))
    model.add_ground()
    return model, np.array(q)


# --------------------------------------------------------------------------- peers
def pinocchio_twin(model, pm):
    """(geometry model, geometry data): soadyn's collision objects as Pinocchio geometry
    objects on the joints of the matching bodies, soadyn's allowed pairs as its pairs,
    contacts requested (up to 4 per pair)."""
    import coal
    import pinocchio as pin
    gm = pin.GeometryModel()
    for o in model.collisions:
        joint = 0 if o.body < 0 else pm.getJointId(model.bodies[o.body].joint.name)
        placement = pin.SE3(np.array(o.body_placement[:3, :3]), np.array(o.body_placement[:3, 3]))
        gm.addGeometryObject(pin.GeometryObject(o.name, joint, placement, coal_geometry(coal, o.shape)))
    for i, j in model.collision_pairs():
        gm.addCollisionPair(pin.CollisionPair(int(i), int(j)))
    gd = gm.createData()
    for request in gd.collisionRequests:
        request.enable_contact = True
        request.num_max_contacts = 4
    return gm, gd


def _numbers(values):
    """Numbers as MJCF attribute text (full precision)."""
    return " ".join(repr(float(x)) for x in np.ravel(values))


def mujoco_twin(model, q):
    """(MjModel, MjData) with soadyn's collision objects as geoms: each soadyn body a free
    MuJoCo body at its world pose at q, the world's objects on the world; soadyn's
    parent–child pairs excluded, so that MuJoCo's filters allow soadyn's pairs."""
    import mujoco
    from scipy.spatial.transform import Rotation
    R, p = sd.body_placements(model, q)
    assets, bodies = [], {-1: []}
    for k, o in enumerate(model.collisions):
        s, T = o.shape, o.body_placement
        quat = Rotation.from_matrix(T[:3, :3]).as_quat()[[3, 0, 1, 2]]
        where = f'pos="{_numbers(T[:3, 3])}" quat="{_numbers(quat)}"'
        if s.kind == PLANE:
            geom = f'<geom type="plane" size="0 0 1" {where}/>'
        elif s.kind == SPHERE:
            geom = f'<geom type="sphere" size="{_numbers(s.radius)}" {where}/>'
        elif s.kind in (CAPSULE, CYLINDER):
            kind = "capsule" if s.kind == CAPSULE else "cylinder"
            geom = f'<geom type="{kind}" size="{_numbers([s.radius, 0.5 * s.length])}" {where}/>'
        elif s.kind == BOX:
            geom = f'<geom type="box" size="{_numbers(0.5 * s.size)}" {where}/>'
        elif s.kind == ELLIPSOID:
            geom = f'<geom type="ellipsoid" size="{_numbers(s.radii)}" {where}/>'
        else:
            assets.append(f'<mesh name="hull{k}" vertex="{_numbers(s.vertices)}"/>')
            geom = f'<geom type="mesh" mesh="hull{k}" {where}/>'
        bodies.setdefault(o.body, []).append(geom)
    xml = ["<mujoco><asset>", *assets, "</asset><worldbody>", *bodies[-1]]
    for b, geoms in bodies.items():
        if b < 0:
            continue
        quat = Rotation.from_matrix(R[b]).as_quat()[[3, 0, 1, 2]]
        xml.append(f'<body name="b{b}" pos="{_numbers(p[b])}" quat="{_numbers(quat)}">'
                   f'<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{"".join(geoms)}</body>')
    xml.append("</worldbody><contact>")
    for b, body in enumerate(model.bodies):
        if body.parent >= 0 and b in bodies and body.parent in bodies:
            xml.append(f'<exclude body1="b{body.parent}" body2="b{b}"/>')
    xml.append("</contact></mujoco>")
    m = mujoco.MjModel.from_xml_string("".join(xml))
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    return m, d


# --------------------------------------------------------------------------- run
def run(rounds, sample_seconds, seed):
    import mujoco
    import pinocchio as pin
    rng = np.random.default_rng(seed)
    scenes = {"solo12": robot_scene("solo12"), "talos": robot_scene("talos"), "20 primitives": primitive_scene()}
    out = {}
    for name, (model, q) in scenes.items():
        if name == "20 primitives":
            pm = sdpin.to_pinocchio(model)
        else:
            pm = pin.buildModelFromUrdf(robot_path(name), pin.JointModelFreeFlyer())
        pd = pm.createData()
        gm, gd = pinocchio_twin(model, pm)
        qp = sdpin.q_to_pinocchio(model, q, pm)
        m, d = mujoco_twin(model, q)
        contacts = sd.detect_contacts(model, q)
        pin.computeCollisions(pm, pd, gm, gd, qp, False)
        mujoco.mj_collision(m, d)
        # the same geometry in the same places: the same pairs in contact
        ours = {tuple(map(int, o)) for o in contacts.objects}
        theirs_pin = {tuple(map(int, (cp.first, cp.second))) for cp, r in zip(gm.collisionPairs, gd.collisionResults)
                      if r.isCollision()}
        geom_object = np.empty(m.ngeom, dtype=int)  # MuJoCo geoms were written body by body
        order = [k for k, o in enumerate(model.collisions) if o.body < 0]
        order += [k for b in sorted({o.body for o in model.collisions if o.body >= 0})
                  for k, o in enumerate(model.collisions) if o.body == b]
        geom_object[:] = order
        theirs_mj = {tuple(sorted((int(geom_object[c.geom1]), int(geom_object[c.geom2])))) for c in d.contact[:d.ncon]}
        cases = {"soadyn": ("detect_contacts(model, q)",
                            {"detect_contacts": sd.detect_contacts, "model": model, "q": q}),
                 "pinocchio": ("computeCollisions(pm, pd, gm, gd, qp, False)",
                               {"computeCollisions": pin.computeCollisions, "pm": pm, "pd": pd, "gm": gm, "gd": gd,
                                "qp": qp}),
                 "mujoco": ("mj_collision(m, d)", {"mj_collision": mujoco.mj_collision, "m": m, "d": d})}
        times = time_interleaved(cases, rounds, sample_seconds, rng)
        out[name] = {
            "objects": len(model.collisions), "pairs": int(len(model.collision_pairs())),
            "contacts": len(contacts), "pairs in contact": {"soadyn": sorted(ours), "pinocchio": sorted(theirs_pin),
                                                          "mujoco": sorted(theirs_mj)},
            "us": {k: [1e6 * t for t in v] for k, v in times.items()},
            "ratio vs pinocchio": times["soadyn"][0] / times["pinocchio"][0],
            "ratio vs mujoco": times["soadyn"][0] / times["mujoco"][0]}
        print(f"{name}: soadyn {1e6 * times['soadyn'][0]:.2f} us, pinocchio {1e6 * times['pinocchio'][0]:.2f} us, "
              f"mujoco {1e6 * times['mujoco'][0]:.2f} us; ratios {out[name]['ratio vs pinocchio']:.2f}, "
              f"{out[name]['ratio vs mujoco']:.2f}; pairs in contact {len(ours)}/{len(theirs_pin)}/{len(theirs_mj)}")
    return out


def _peer_versions():
    import coal
    import mujoco
    return f"peers: mujoco {mujoco.__version__}, coal {coal.__version__}"


def write(out, rounds, sample_seconds):
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "collision.json"), "w") as f:
        json.dump({"machine": machine_description(), "peers": _peer_versions(), "rounds": rounds, "sample_seconds": sample_seconds,
                   "scenes": out}, f, indent=1)
    lines = ["# Contact detection: sd.detect_contacts against pin.computeCollisions and mujoco.mj_collision", "",
             "`python benchmarks/collision.py` (the module docstring says what each call does). Medians of "
             f"{rounds} interleaved rounds of {sample_seconds} s samples, µs per call; ratio = soadyn / peer "
             "(target ≤ 1.0); the ratio of the fastest samples too (on a loaded machine the least disturbed "
             "measure).", "", "```", machine_description().rstrip(), _peer_versions(), "```", "",
             "| scene | objects | pairs | contacts | soadyn µs | pinocchio µs | mujoco µs | ratio vs pinocchio | "
             "ratio vs mujoco | ratio vs mujoco, fastest samples | pairs in contact (soadyn / pinocchio / mujoco) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in out.items():
        us = r["us"]
        pc = r["pairs in contact"]
        lines.append(f"| {name} | {r['objects']} | {r['pairs']} | {r['contacts']} | {us['soadyn'][0]:.2f} | "
                     f"{us['pinocchio'][0]:.2f} | {us['mujoco'][0]:.2f} | {r['ratio vs pinocchio']:.2f} | "
                     f"{r['ratio vs mujoco']:.2f} | {us['soadyn'][1] / us['mujoco'][1]:.2f} | "
                     f"{len(pc['soadyn'])} / {len(pc['pinocchio'])} / "
                     f"{len(pc['mujoco'])} |")
    with open(os.path.join(RESULTS, "collision.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sample-seconds", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = run(args.rounds, args.sample_seconds, args.seed)
    write(out, args.rounds, args.sample_seconds)


if __name__ == "__main__":
    main()
