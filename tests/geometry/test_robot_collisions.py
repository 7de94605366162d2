"""Detection on robots' URDF collision shapes (solo12: meshes; talos: meshes, cylinders and a
box), against coal on the same hulls at Pinocchio's world poses of the geometry objects
(updateGeometryPlacements; the poses equal soadyn's, tests/io/test_urdf_collisions.py):
the signed distance and normal of every allowed pair to 1e-8 (1e-9 by the optimality
certificate on cylinders, where coal is inexact) and witness points that are support points
of the two hulls along ±n; and on solo12 standing on the ground the pairs in contact are
those coal finds penetrating."""
import os
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.core.shapes import CYLINDER
from soadyn.interop import pinocchio as sdpin

from collision_scenes import certify, coal_distance
from conftest import peers, pinocchio


def _robot(name):
    pin = pinocchio()
    coal = pytest.importorskip("coal")
    if peers.robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    path = peers.robot_path(name)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(inertia|mimic|principal moments).*")
        model = sd.load_urdf(path, floating_base=True, mimic="ignore")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    share = os.path.dirname(os.path.dirname(peers.robots_dir()))
    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.COLLISION, package_dirs=[share])
    assert [g.name for g in gm.geometryObjects] == [o.name for o in model.collisions]
    return pin, coal, model, pm, gm


def _poses(pin, model, pm, gm, q):
    data, gdata = pm.createData(), gm.createData()
    pin.forwardKinematics(pm, data, sdpin.q_to_pinocchio(model, q, pm))
    pin.updateGeometryPlacements(pm, data, gm, gdata)
    return [(np.array(gdata.oMg[k].rotation), np.array(gdata.oMg[k].translation)) for k in range(gm.ngeoms)]


@pytest.mark.parametrize("name", ["solo12", "talos"])
def test_distances_of_every_allowed_pair_against_coal(name):
    pin, coal, model, pm, gm = _robot(name)
    shapes = [o.shape for o in model.collisions]
    pairs = model.collision_pairs()
    rng = np.random.default_rng(5)
    for _ in range(2):
        q = sd.random_configuration(model, rng)
        q[:3] = 0.0
        poses = _poses(pin, model, pm, gm, q)
        d = sd.collision_distances(model, q)
        np.testing.assert_array_equal(d.objects, pairs)
        for p, (i, j) in enumerate(pairs):
            curved = shapes[i].kind == CYLINDER or shapes[j].kind == CYLINDER
            cd, c1, c2, cn = coal_distance(coal, shapes[i], poses[i], shapes[j], poses[j], 1e-9 if curved else 1e-12)
            # the witness points: support points along ±n (parallel faces have a continuum of
            # them, so coal's may be others)
            assert certify(shapes[i], poses[i], shapes[j], poses[j], d.distance[p], *d.points[p], d.normal[p],
                           rng, others=[cn]) < 1e-9
            if not curved:
                assert abs(d.distance[p] - cd) < 1e-8, (model.collisions[i].name, model.collisions[j].name)
                np.testing.assert_allclose(d.normal[p], cn, atol=1e-8)


def test_solo12_standing_touches_where_coal_finds_penetration():
    """Standing on the ground with its feet 1 mm in: the pairs with contacts are the pairs
    coal finds penetrating (the four feet on the ground, and the hulls of the base and the
    upper legs, which overlap at the neutral pose), each contact within the pair's depth."""
    pin, coal, model, pm, gm = _robot("solo12")
    model.add_ground()
    q = sd.neutral(model)
    shapes = [o.shape for o in model.collisions]
    ground = len(model.collisions) - 1
    pairs = model.collision_pairs()
    on_ground = pairs[:, 1] == ground
    q[2] -= sd.collision_distances(model, q).distance[on_ground].min() + 1e-3
    contacts = sd.detect_contacts(model, q)
    poses = _poses(pin, model, pm, gm, q) + [(np.eye(3), np.zeros(3))]
    penetrating = {}
    for i, j in pairs:
        gap = coal_distance(coal, shapes[i], poses[i], shapes[j], poses[j], 1e-12)[0]
        if gap < 0:
            penetrating[(i, j)] = -gap
    feet = {(i, j) for i, j in penetrating if j == ground}
    assert len(feet) == 4 and all(penetrating[p] == pytest.approx(1e-3, abs=1e-9) for p in feet)
    assert {tuple(map(int, o)) for o in contacts.objects} == set(penetrating)
    for k, (i, j) in enumerate(map(tuple, contacts.objects)):
        assert 0 < contacts.depth[k] <= penetrating[(i, j)] + 1e-12
    np.testing.assert_allclose(contacts.normal[contacts.objects[:, 1] == ground], [[0.0, 0.0, -1.0]] * 16)
