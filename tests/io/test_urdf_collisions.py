"""URDF ``<collision>`` elements as collision objects, against Pinocchio's collision
GeometryModel (``buildGeomFromUrdf``) on the example-robot-data robots: the same objects in
the same order with the same names, shape types and sizes, hulls of the same mesh vertices
(coal's reader against trimesh), and the same world poses (``updateGeometryPlacements``) at
random configurations; and a file written here for what Pinocchio cannot read."""
import os
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.geometry import Box, Capsule, Cylinder, Mesh, Sphere
from soadyn.interop import pinocchio as sdpin

from conftest import peers, pinocchio

#: example-robot-data files with collision geometry (path under robots/, floating base)
COLLISION_ROBOTS = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "panda_collision": ("panda_description/urdf/panda_collision.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True),
    "a1": ("a1_description/urdf/a1.urdf", True),
    "simple_humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", True),  # <collision_checking>
}


def _support(points, directions):
    """max_v d·v over the points, for each direction (a convex hull's support function)."""
    return (directions @ np.asarray(points).T).max(axis=1)


@pytest.mark.parametrize("robot", sorted(COLLISION_ROBOTS))
def test_collision_objects_match_pinocchio_geometry_model(robot):
    pin = pinocchio()
    robots = peers.robots_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    rel, floating = COLLISION_ROBOTS[robot]
    path = os.path.join(robots, rel)
    share = os.path.dirname(os.path.dirname(robots))  # holds the package example-robot-data
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(inertia|mimic|principal moments).*")
        model = sd.load_urdf(path, floating_base=floating, mimic="ignore")  # no warning about collisions
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.COLLISION, package_dirs=[share])
    assert len(model.collisions) == gm.ngeoms > 0
    assert [o.name for o in model.collisions] == [g.name for g in gm.geometryObjects]
    directions = np.random.default_rng(7).normal(size=(64, 3))
    for o, g in zip(model.collisions, gm.geometryObjects):
        geometry, kind = g.geometry, type(g.geometry).__name__
        if kind == "Box":
            assert isinstance(o.shape, Box)
            np.testing.assert_allclose(o.shape.size, 2 * geometry.halfSide, rtol=1e-15)
        elif kind in ("Cylinder", "Capsule"):
            assert type(o.shape) is {"Cylinder": Cylinder, "Capsule": Capsule}[kind]
            assert (o.shape.radius, o.shape.length) == pytest.approx((geometry.radius, 2 * geometry.halfLength),
                                                                     rel=1e-15)
        elif kind == "Sphere":
            assert isinstance(o.shape, Sphere) and o.shape.radius == pytest.approx(geometry.radius, rel=1e-15)
        else:  # the mesh file's triangles read by coal (assimp) and scaled: a BVH, or its hull (<convex>)
            assert isinstance(o.shape, Mesh) and (kind.startswith("BVHModel") or kind == "Convex")
            assert os.path.samefile(o.shape.filename, g.meshPath)
            np.testing.assert_array_equal(o.shape.scale, g.meshScale)
            points = geometry.points() if kind == "Convex" else geometry.vertices()
            np.testing.assert_allclose(_support(o.shape.vertices, directions), _support(points, directions),
                                       atol=1e-6)
    rng = np.random.default_rng(11)
    data, gdata = pm.createData(), gm.createData()
    for _ in range(3):
        q = sd.random_configuration(model, rng)
        T = sd.collision_placements(model, q)
        pin.forwardKinematics(pm, data, sdpin.q_to_pinocchio(model, q, pm))
        pin.updateGeometryPlacements(pm, data, gm, gdata)
        for k in range(gm.ngeoms):
            np.testing.assert_allclose(T[k], gdata.oMg[k].homogeneous, atol=1e-12, rtol=0)


def _write(tmp_path, body):
    (tmp_path / "pkgs" / "my_robot" / "meshes").mkdir(parents=True)
    corners = [(x, y, z) for x in (-1, 1) for y in (-2, 2) for z in (-3, 3)]
    facets = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6),
              (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]
    with open(tmp_path / "pkgs" / "my_robot" / "meshes" / "block.obj", "w") as f:
        f.writelines(f"v {x} {y} {z}\n" for x, y, z in corners)
        f.writelines(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in facets)
    path = tmp_path / "r.urdf"
    path.write_text(f"""<robot name="r">
      <link name="base">
        <collision name="post"><origin xyz="0 0 0.5"/><geometry><box size="0.1 0.2 1"/></geometry></collision>
      </link>
      {body}
      <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0 0 1" rpy="0 0.5 0"/></joint>
    </robot>""")
    return str(path)


ARM = """
      <link name="arm">
        <collision name="rod"><origin xyz="0 0 0.5" rpy="1.5707963267948966 0 0"/>
          <geometry><cylinder radius="0.05" length="1"/></geometry></collision>
        <collision name="sleeve"><geometry><cylinder radius="0.07" length="0.3"/></geometry></collision>
        <collision><geometry><mesh filename="package://my_robot/meshes/block.obj" scale="0.1 0.1 0.1"/></geometry>
        </collision>
        <collision_checking><capsule name="sleeve"/></collision_checking>
      </link>
      <link name="tip">
        <collision><origin xyz="0.1 0 0"/><geometry><sphere radius="0.02"/></geometry></collision>
      </link>"""


def test_shapes_placements_and_pinocchio_capsule_extension(tmp_path):
    """Box, cylinder, a cylinder marked <collision_checking><capsule>, a package:// mesh, and
    a sphere on a link merged through a fixed joint: Pinocchio's objects and poses."""
    pin = pinocchio()
    path = _write(tmp_path, ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing skipped
        model = sd.load_urdf(path, package_dirs=[str(tmp_path / "pkgs")])
    assert [(o.name, o.frame, o.body, type(o.shape).__name__) for o in model.collisions] == [
        ("base_0", "base", -1, "Box"), ("arm_0", "arm", 0, "Cylinder"), ("arm_1", "arm", 0, "Capsule"),
        ("arm_2", "arm", 0, "Mesh"), ("tip_0", "tip", 0, "Sphere")]
    block = model.collisions[3].shape
    corners = sorted((x, y, z) for x in (-0.1, 0.1) for y in (-0.2, 0.2) for z in (-0.3, 0.3))
    np.testing.assert_allclose(sorted(map(tuple, block.vertices)), corners, atol=1e-15)  # the block, scaled
    assert model.collisions[2].shape.radius == 0.07 and model.collisions[2].shape.length == 0.3
    pm = pin.buildModelFromUrdf(path)
    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.COLLISION, package_dirs=[str(tmp_path / "pkgs")])
    assert [g.name for g in gm.geometryObjects] == [o.name for o in model.collisions]
    assert [type(g.geometry).__name__ for g in gm.geometryObjects][:3] == ["Box", "Cylinder", "Capsule"]
    data, gdata = pm.createData(), gm.createData()
    for q in ([0.0], [0.7], [-0.3]):
        pin.forwardKinematics(pm, data, np.array(q))
        pin.updateGeometryPlacements(pm, data, gm, gdata)
        T = sd.collision_placements(model, q)
        for k in range(gm.ngeoms):
            np.testing.assert_allclose(T[k], gdata.oMg[k].homogeneous, atol=1e-14)
    assert not sd.load_urdf(path, package_dirs=[str(tmp_path / "pkgs")], collisions=False).collisions


def test_what_cannot_be_read_is_named_in_one_warning_and_skipped(tmp_path):
    """A missing mesh, an unknown shape, a non-positive radius and a malformed size are
    skipped with one warning naming each; a <capsule> element (rejected by urdfdom) is read."""
    arm = """
      <link name="arm">
        <collision><geometry><mesh filename="package://my_robot/meshes/absent.stl"/></geometry></collision>
        <collision><geometry><capsule radius="0.05" length="0.4"/></geometry></collision>
        <collision><geometry><heightfield/></geometry></collision>
        <collision><geometry><sphere radius="-1"/></geometry></collision>
        <collision><geometry><box size="1 2"/></geometry></collision>
        <collision><geometry><mesh filename="package://my_robot/meshes/block.obj"/></geometry></collision>
      </link>
      <link name="tip"/>"""
    path = _write(tmp_path, arm)
    with pytest.warns(UserWarning) as record:
        model = sd.load_urdf(path, package_dirs=[str(tmp_path / "pkgs")])
    messages = [str(w.message) for w in record if "<collision>" in str(w.message)]
    assert len(messages) == 1
    message = messages[0]
    assert "4 <collision> element(s) skipped" in message
    for expected in ("arm_0 (mesh 'package://my_robot/meshes/absent.stl' not found",
                     "arm_2 (unsupported shape <heightfield>", "arm_3 (Sphere: radius",
                     "arm_4 (<link name='arm'>/collision[4]/box@size: expected 3"):
        assert expected in message
    assert [o.name for o in model.collisions] == ["base_0", "arm_1", "arm_5"]
    capsule = model.collisions[1].shape
    assert isinstance(capsule, Capsule) and (capsule.radius, capsule.length) == (0.05, 0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sd.load_urdf(path, package_dirs=[str(tmp_path / "pkgs")], collisions=False).collisions == ()
