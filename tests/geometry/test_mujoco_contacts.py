"""detect_contacts against MuJoCo's own contact generation (mj_collision, data.contact) on
MJCF scenes of primitives loaded by load_mjcf: a box on a plane, a capsule lying on a plane,
a sphere in the corner of two walls and a floor, two boxes stacked, a cylinder standing —
at rest and slightly moved (1 mm, 0.02 rad). The same pairs, the same number of contacts per
pair, depths and normals to 1e-6, and the same points (both put a point midway between the
surfaces, at the corners of a face manifold, at the ends of a capsule, on the rim of a
cylinder)."""
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.io.mjcf import q_from_mujoco

mujoco = pytest.importorskip("mujoco")

SCENES = {
    "box on a plane": """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0.1 0.2 0.099" euler="0 0 30"><freejoint/><geom type="box" size=".2 .3 .1"/></body>
        </worldbody></mujoco>""",
    "capsule lying on a plane": """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0 0 0.0995" euler="0 90 20"><freejoint/><geom type="capsule" size=".1 .4"/></body>
        </worldbody></mujoco>""",
    "sphere in a box corner": """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <geom type="box" pos="0.6 0 0.5" size=".1 1 .5"/><geom type="box" pos="0 0.6 0.5" size="1 .1 .5"/>
        <body pos="0.201 0.2005 0.1995"><freejoint/><geom type="sphere" size=".3"/></body>
        </worldbody></mujoco>""",
    "two boxes stacked": """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0 0 0.0995"><freejoint/><geom type="box" size=".5 .5 .1"/></body>
        <body pos="0.05 0.02 0.299" euler="0 0 20"><freejoint/><geom type="box" size=".2 .15 .1"/></body>
        </worldbody></mujoco>""",
    "cylinder standing": """<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
        <body pos="0 0 0.199" euler="0 0 10"><freejoint/><geom type="cylinder" size=".1 .2"/></body>
        </worldbody></mujoco>""",
}


def _mujoco_contacts(m, d, objects):
    """{(i, j): [(depth, normal from i into j, point)]} of data.contact, geoms mapped to
    collision objects."""
    out = {}
    for c in d.contact[:d.ncon]:
        i, j = objects[c.geom1], objects[c.geom2]
        normal = np.array(c.frame[:3])
        if i > j:
            i, j, normal = j, i, -normal
        out.setdefault((i, j), []).append((-c.dist, normal, np.array(c.pos)))
    return out


@pytest.mark.parametrize("name", sorted(SCENES))
def test_contacts_equal_mujoco_mj_collision(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_mjcf(SCENES[name])
    m = mujoco.MjModel.from_xml_string(SCENES[name])
    d = mujoco.MjData(m)
    objects = model.mjcf.geom_collisions
    rng = np.random.default_rng(len(name))
    qpos0 = d.qpos.copy()
    for trial in range(6):
        d.qpos[:] = qpos0
        if trial:  # move every free body by up to 1 mm and 0.02 rad
            for b in range(m.nbody):
                j = m.body_jntadr[b]
                if j >= 0 and m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                    a = m.jnt_qposadr[j]
                    d.qpos[a:a + 3] += rng.uniform(-1e-3, 1e-3, 3)
                    quat = d.qpos[a + 3:a + 7].copy()
                    mujoco.mju_quatIntegrate(quat, rng.uniform(-0.02, 0.02, 3), 1.0)
                    d.qpos[a + 3:a + 7] = quat
        mujoco.mj_kinematics(m, d)
        mujoco.mj_collision(m, d)
        theirs = _mujoco_contacts(m, d, objects)
        c = sd.detect_contacts(model, q_from_mujoco(model, d.qpos))
        ours = {}
        for k in range(len(c)):
            ours.setdefault(tuple(c.objects[k]), []).append((c.depth[k], c.normal[k], c.point[k]))
        assert sorted(ours) == sorted(theirs), (trial, sorted(ours), sorted(theirs))
        for pair, points in theirs.items():
            mine = ours[pair]
            assert len(mine) == len(points), (trial, pair)
            for depth, normal, point in points:  # each of MuJoCo's points is one of ours
                k = int(np.argmin([np.linalg.norm(p - point) for _, _, p in mine]))
                assert np.linalg.norm(mine[k][2] - point) < 1e-6, (trial, pair, mine[k][2], point)
                assert abs(mine[k][0] - depth) < 1e-6 and np.abs(mine[k][1] - normal).max() < 1e-6
