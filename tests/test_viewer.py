"""The browser viewer (soadyn.viewer) and the URDF visuals it draws.

The scene description is checked without a browser: the visual geometry's names, mesh
files and world poses against Pinocchio's visual GeometryModel (panda, ur5), the
four-bar URDF+ against its file (closed forms of the box placements) and against
``frame_placement``, the kinematic skeleton and the coupling markers against the joint
origins. A viser server is started on a free local port and its scene tree read back; a
headless Chromium (when installed) loads the page and the screenshot must show the model.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import soadyn as sd
from soadyn import cli
from soadyn.core.visuals import Visual
from soadyn.simulate import simulate

from conftest import pinocchio, robot_path, urdfplus, URDFPLUS

FOUR_BAR = os.path.join(URDFPLUS, "four_bar.urdf")


def _point(T, x):
    return T[:3, :3] @ x + T[:3, 3]


# =========================================================================== URDF visuals
#: scene nodes: meshes, body frames, and panda's finger mimic (a transmission: 2 joint markers, 1 segment)
MESH_ROBOTS = {"panda": (11, 9, 3), "ur5": (7, 6, 0)}


@pytest.mark.parametrize("robot", sorted(MESH_ROBOTS))
def test_urdf_visuals_match_pinocchio_visual_geometry(robot):
    """Names, resolved package:// mesh files, scales and world poses at random q equal
    Pinocchio's visual GeometryModel (buildGeomFromUrdf, updateGeometryPlacements)."""
    pin = pinocchio()
    path = robot_path(robot)
    model = sd.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    share = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path)))))
    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.VISUAL, package_dirs=[share])
    ours = {v.name: v for v in model.visuals}
    assert len(ours) == gm.ngeoms > 0
    scn = sd.viewer.scene(model)
    meshes, frames, couplings = MESH_ROBOTS[robot]
    assert not scn.skeleton and len(scn.names("/soadyn/visual/")) == gm.ngeoms == meshes
    assert (len(scn.names("/soadyn/frames/")), len(scn.names("/soadyn/couplings/"))) == (frames, couplings)
    assert len(scn.nodes) == meshes + frames + couplings
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = sd.random_configuration(model, rng)
        T = sd.viewer.placements(model, scn, q)
        data, gdata = pm.createData(), gm.createData()
        pin.forwardKinematics(pm, data, q)
        pin.updateGeometryPlacements(pm, data, gm, gdata)
        for k, g in enumerate(gm.geometryObjects):
            v = ours[g.name]
            assert v.kind == "mesh"
            assert os.path.samefile(v.filename, g.meshPath)
            np.testing.assert_allclose(v.size, g.meshScale, atol=0)
            np.testing.assert_allclose(T[f"/soadyn/visual/{g.name}"], gdata.oMg[k].homogeneous, atol=1e-12)


def test_four_bar_scene_nodes_and_poses():
    """four_bar.urdf: 3 boxes (the file's sizes, colours and origins), 3 body frames, the
    loop's two frames and its gap segment — 9 nodes; poses are the link frames' composed
    with the box origins, and at a closed configuration the gap has zero length."""
    model = urdfplus("four_bar.urdf")
    scn = sd.viewer.scene(model)
    assert not scn.skeleton
    assert scn.names("/soadyn/visual/") == ["/soadyn/visual/link1_0", "/soadyn/visual/link2_0",
                                            "/soadyn/visual/link3_0"]
    assert scn.names("/soadyn/frames/") == ["/soadyn/frames/link1", "/soadyn/frames/link2", "/soadyn/frames/link3"]
    loop = model.loops[0].name
    assert scn.names("/soadyn/loops/") == [f"/soadyn/loops/{loop}/predecessor", f"/soadyn/loops/{loop}/successor",
                                           f"/soadyn/loops/{loop}/gap"]
    assert len(scn.nodes) == 9
    # the file: link1 box 0.5 x 0.05 x 0.05 at x = 0.25, red; link2 1.0 long at x = 0.5, green
    boxes = {"link1": (0.5, (0.8, 0.1, 0.1, 1.0)), "link2": (1.0, (0.1, 0.8, 0.0, 1.0)),
             "link3": (0.5, (0.1, 0.0, 0.8, 1.0))}
    rng = np.random.default_rng(0)
    q, _ = sd.close_loops(model, rng.normal(size=model.nq))
    T = sd.viewer.placements(model, scn, q)
    for link, (length, rgba) in boxes.items():
        n = scn.node(f"/soadyn/visual/{link}_0")
        assert (n.kind, n.size, n.rgba) == ("box", (length, 0.05, 0.05), rgba)
        F = sd.frame_placement(model, q, link)
        np.testing.assert_allclose(T[n.name][:3, :3], F[:3, :3], atol=1e-14)
        np.testing.assert_allclose(T[n.name][:3, 3], _point(F, [length / 2, 0, 0]), atol=1e-14)
    for end in ("predecessor", "successor"):
        frame = getattr(model.loops[0], end)
        np.testing.assert_allclose(T[f"/soadyn/loops/{loop}/{end}"], sd.frame_placement(model, q, frame), atol=1e-14)
    gap = sd.viewer.segment_points(model, scn, q)[f"/soadyn/loops/{loop}/gap"]
    assert np.linalg.norm(gap[1] - gap[0]) < 1e-9  # the loop is closed
    q_open = q + 0.3
    gap = sd.viewer.segment_points(model, scn, q_open)[f"/soadyn/loops/{loop}/gap"]
    np.testing.assert_allclose(gap, [sd.frame_placement(model, q_open, getattr(model.loops[0], e))[:3, 3]
                                     for e in ("predecessor", "successor")], atol=1e-14)
    assert np.linalg.norm(gap[1] - gap[0]) > 1e-3


def test_skeleton_of_a_model_without_visuals_joins_the_joint_origins():
    """four_bar_linkage (built in code, no visuals): a capsule from each parent origin to
    each joint origin and from each body origin to its other frames (the loop ends); the
    capsule's end caps' centres are those points in the world at any q."""
    model = sd.models.get("four_bar_linkage")
    scn = sd.viewer.scene(model)
    assert scn.skeleton and not scn.names("/soadyn/visual/")
    capsules = [n for n in scn.nodes if n.kind == "capsule"]
    # crank's joint is at the world origin: no capsule; coupler, rocker, the two loop frames
    assert sorted(n.name for n in capsules) == ["/soadyn/skeleton/coupler", "/soadyn/skeleton/loop_predecessor",
                                                "/soadyn/skeleton/loop_successor", "/soadyn/skeleton/rocker"]
    assert len(scn.names("/soadyn/com/")) == 3 and len(scn.names("/soadyn/frames/")) == 3
    assert len(scn.nodes) == 4 + 3 + 3 + 3  # capsules, centres of mass, body frames, loop (2 frames + gap)
    q = np.random.default_rng(1).normal(size=model.nq)
    T = sd.viewer.placements(model, scn, q)
    ends = {"/soadyn/skeleton/coupler": ("crank", "coupler"), "/soadyn/skeleton/rocker": (None, "rocker"),
            "/soadyn/skeleton/loop_predecessor": ("coupler", "loop_predecessor"),
            "/soadyn/skeleton/loop_successor": ("rocker", "loop_successor")}
    for n in capsules:
        a, b = ends[n.name]
        pa = np.zeros(3) if a is None else sd.frame_placement(model, q, a)[:3, 3]
        pb = sd.frame_placement(model, q, b)[:3, 3]  # a revolute joint's origin is its body's
        radius, length = n.size
        assert length == pytest.approx(np.linalg.norm(pb - pa), abs=1e-12)
        np.testing.assert_allclose([_point(T[n.name], [0, 0, -length / 2]), _point(T[n.name], [0, 0, length / 2])],
                                   [pa, pb], atol=1e-12)
    for b in model.bodies:
        np.testing.assert_allclose(T[f"/soadyn/com/{b.name}"][:3, 3], _point(sd.frame_placement(model, q, b.name), b.com),
                                   atol=1e-12)


def test_coupling_markers_sit_at_the_coupled_joints():
    """revolute_rotor_chain.urdf (three gear couplings, no visuals): a sphere at each
    coupled joint's origin and a segment joining them per coupling."""
    model = urdfplus("revolute_rotor_chain.urdf")
    scn = sd.viewer.scene(model)
    q = np.random.default_rng(2).normal(size=model.nq)
    T, P = sd.viewer.placements(model, scn, q), sd.viewer.segment_points(model, scn, q)
    assert len(model.couplings) == 3
    for c in model.couplings:
        joints = c.joint_rows(model)[0]
        assert len(joints) == 2
        bodies = [b.name for j in joints for b in model.bodies if b.joint is j]
        for j, body in zip(joints, bodies):
            np.testing.assert_allclose(T[f"/soadyn/couplings/{c.name}/{j.name}"], sd.frame_placement(model, q, body),
                                       atol=1e-14)
        np.testing.assert_allclose(P[f"/soadyn/couplings/{c.name}/link0"],
                                   [sd.frame_placement(model, q, b)[:3, 3] for b in bodies], atol=1e-14)
    assert len(scn.names("/soadyn/couplings/")) == 3 * 3


def test_urdf_visual_elements_and_package_resolution(tmp_path):
    """Box, cylinder, sphere, mesh (package:// through package_dirs, a relative path),
    material colours inline and by reference, on a merged (fixed) link too; an unsupported
    shape is a warning, a malformed size an error naming the element."""
    pkg = tmp_path / "pkgs" / "my_robot" / "meshes"
    pkg.mkdir(parents=True)
    (pkg / "part.stl").write_text("solid x\nendsolid x\n")
    (tmp_path / "local.obj").write_text("v 0 0 0\n")
    xml = """<robot name="r">
      <material name="blue"><color rgba="0 0 1 1"/></material>
      <link name="base"><visual><geometry><box size="1 2 3"/></geometry><material name="blue"/></visual></link>
      <link name="arm">
        <visual><origin xyz="0 0 0.5" rpy="0 1.5707963267948966 0"/>
          <geometry><cylinder radius="0.1" length="1"/></geometry>
          <material name="m"><color rgba="0.5 0.5 0.5 1"/></material></visual>
        <visual><geometry><mesh filename="package://my_robot/meshes/part.stl" scale="2 2 2"/></geometry></visual>
        <visual><geometry><mesh filename="local.obj"/></geometry></visual>
        <visual><geometry><mesh filename="package://nowhere/x.stl"/></geometry></visual>
      </link>
      <link name="tip"><visual><geometry><sphere radius="0.2"/></geometry></visual>
                       <visual><geometry><capsule radius="0.1" length="1"/></geometry></visual></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
      <joint name="f" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0 0 1"/></joint>
    </robot>"""
    path = tmp_path / "r.urdf"
    path.write_text(xml)
    with pytest.warns(UserWarning, match=r"tip.*visual\[1\].*unsupported shape <capsule>"):
        model = sd.load_urdf(str(path), package_dirs=[str(tmp_path / "pkgs")])
    v = {x.name: x for x in model.visuals}
    assert sorted(v) == ["arm_0", "arm_1", "arm_2", "arm_3", "base_0", "tip_0"]
    assert (v["base_0"].kind, v["base_0"].size, v["base_0"].rgba, v["base_0"].frame) == \
        ("box", (1.0, 2.0, 3.0), (0.0, 0.0, 1.0, 1.0), "base")
    assert (v["arm_0"].kind, v["arm_0"].size, v["arm_0"].rgba) == ("cylinder", (0.1, 1.0), (0.5, 0.5, 0.5, 1.0))
    np.testing.assert_allclose(v["arm_0"].placement[:3, 2], [1, 0, 0], atol=1e-12)  # pitch 90°: z -> x
    np.testing.assert_allclose(v["arm_0"].placement[:3, 3], [0, 0, 0.5])
    assert v["arm_1"].filename == str(pkg / "part.stl") and v["arm_1"].size == (2.0, 2.0, 2.0)
    assert v["arm_2"].filename == str(tmp_path / "local.obj")
    assert v["arm_3"].filename is None and v["arm_3"].uri == "package://nowhere/x.stl"
    assert (v["tip_0"].kind, v["tip_0"].size, v["tip_0"].frame) == ("sphere", (0.2,), "tip")
    q = np.array([0.7])
    T = sd.viewer.placements(model, sd.viewer.scene(model), q)
    c, s = np.cos(0.7), np.sin(0.7)
    np.testing.assert_allclose(T["/soadyn/visual/tip_0"][:3, 3], [0, 0, 1], atol=1e-14)  # on the joint axis
    np.testing.assert_allclose(T["/soadyn/visual/arm_0"][:3, 2], [c, s, 0], atol=1e-14)
    # the dynamics do not see the visuals
    assert model.nbodies == 1 and model.spanning_tree() is model
    with pytest.raises(sd.URDFError, match=r"<link name='base'>/visual\[0\]/box@size"):
        sd.load_urdf(xml.replace('size="1 2 3"', 'size="1 2"'))
    with pytest.raises(ValueError, match="kind: expected one of"):
        Visual("v", "base", "cone", (1.0,))


def test_trajectory_frames_accepts_simulate_rollout_and_arrays():
    model = sd.models.get("double_pendulum")
    q0, v0 = np.array([0.3, -0.2]), np.zeros(2)
    res = simulate(model, q0, v0, 0.05, dt=0.01)
    t, qs = sd.viewer.trajectory_frames(model, res)
    np.testing.assert_array_equal(t, res.t)
    np.testing.assert_array_equal(qs, res.q)
    qs_r, vs_r = sd.rollout(model, q0, v0, np.zeros((5, 2)), 0.01)
    t, qs = sd.viewer.trajectory_frames(model, (qs_r, vs_r), times=0.01)
    np.testing.assert_allclose(t, 0.01 * np.arange(6))
    np.testing.assert_array_equal(qs, qs_r)
    t, qs = sd.viewer.trajectory_frames(model, (res.t, res.q))
    np.testing.assert_array_equal(t, res.t)
    t, _ = sd.viewer.trajectory_frames(model, res.q)
    np.testing.assert_array_equal(t, np.arange(len(res.t)))
    with pytest.raises(ValueError, match=r"trajectory: expected finite configurations of shape \(K, 2\)"):
        sd.viewer.trajectory_frames(model, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="times: expected 6 finite non-decreasing times"):
        sd.viewer.trajectory_frames(model, res.q, times=np.arange(5.0))
    with pytest.raises(ValueError, match=r"q: expected shape \(2,\)"):
        sd.viewer.placements(model, sd.viewer.scene(model), np.zeros(3))
    with pytest.raises(TypeError, match="model: expected a soadyn Model"):
        sd.viewer.scene("double_pendulum")


def test_import_soadyn_does_not_import_viser():
    code = "import sys, soadyn; soadyn.viewer.scene; print('viser' in sys.modules, 'trimesh' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.split() == ["False", "False"]


# =========================================================================== the viser server
def _wxyz(R):
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def _check_server_scene(viewer, q):
    """Every node of the scene is a viser node at its world pose (or with its end points),
    and no drawn node is the parent of another (viser poses children relative to parents)."""
    model, scn, server = viewer.model, viewer.scene, viewer.server
    T = sd.viewer.placements(model, scn, q)
    P = sd.viewer.segment_points(model, scn, q)
    names = {n.name for n in scn.nodes}
    for n in scn.nodes:
        h = server.scene.get_handle_by_name(n.name)
        assert h is not None, n.name
        parent = n.name.rsplit("/", 1)[0]
        assert parent not in names
        if n.kind == "segment":
            np.testing.assert_allclose(np.asarray(h.points)[0], P[n.name], atol=1e-6)
        else:
            np.testing.assert_allclose(h.position, T[n.name][:3, 3], atol=1e-6)
            w = _wxyz(T[n.name][:3, :3])
            assert min(np.abs(h.wxyz - w).max(), np.abs(h.wxyz + w).max()) < 1e-6, n.name


def test_server_scene_tree_holds_the_nodes_at_their_poses():
    pytest.importorskip("viser")
    model = urdfplus("four_bar.urdf")
    q, _ = sd.close_loops(model, np.random.default_rng(4).normal(size=model.nq))
    viewer = sd.viewer.show(model, q, port=0, block=False, verbose=False)
    with viewer:
        assert len(viewer.handles) == 9 and viewer.slider is None
        assert viewer.url.startswith("http://127.0.0.1:")
        _check_server_scene(viewer, q)
        q2 = q + 0.2
        viewer.set_configuration(q2)
        _check_server_scene(viewer, q2)


def test_server_with_meshes_and_trajectory_playback():
    """ur5: the 7 meshes are read (pycollada for .dae) and drawn; a simulate result is
    played back: moving the time slider poses the scene at the recorded configuration."""
    pytest.importorskip("viser")
    pytest.importorskip("collada")
    model = sd.load_urdf(robot_path("ur5"))
    rng = np.random.default_rng(5)
    q0 = sd.random_configuration(model, rng)
    res = simulate(model, q0, np.zeros(model.nv), 0.02, dt=0.005)
    viewer = sd.viewer.show(model, trajectory=res, port=0, block=False, verbose=False)
    with viewer:
        assert len(viewer.scene.names("/soadyn/visual/")) == 7
        assert len(viewer.handles) == len(viewer.scene.nodes) == 7 + model.nbodies == 13  # meshes, body frames
        assert type(viewer.server.scene.get_handle_by_name("/soadyn/visual/base_link_0")).__name__ != "FrameHandle"
        _check_server_scene(viewer, res.q[0])
        assert (viewer.slider.min, viewer.slider.max) == (pytest.approx(0.0), pytest.approx(res.t[-1]))
        viewer.slider.value = float(res.t[3])  # its on_update callback poses the scene (a worker thread)
        name = "/soadyn/visual/wrist_3_link_0"
        expected = sd.viewer.placements(model, viewer.scene, res.q[3])[name][:3, 3]
        deadline = time.monotonic() + 10
        while np.abs(viewer.handles[name].position - expected).max() > 1e-6 and time.monotonic() < deadline:
            time.sleep(0.01)
        _check_server_scene(viewer, res.q[3])
        viewer.playing.value = True  # the play box advances the slider in real time (and wraps around)
        deadline = time.monotonic() + 10
        while viewer.slider.value == pytest.approx(res.t[3]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert viewer.slider.value != pytest.approx(res.t[3])


# =========================================================================== collision shapes and contacts
def test_collision_shapes_are_drawn_at_pinocchios_geometry_placements():
    """ur5 with collisions=True: one node per collision object (its hull for a mesh, a box),
    posed at Pinocchio's collision GeometryModel placements (updateGeometryPlacements)."""
    pin = pinocchio()
    path = robot_path("ur5")
    model = sd.load_urdf(path)
    pm = pin.buildModelFromUrdf(path)
    share = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path)))))
    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.COLLISION, package_dirs=[share])
    scn = sd.viewer.scene(model, collisions=True)
    assert len(scn.names("/soadyn/collision/")) == gm.ngeoms == 8
    assert len(scn.nodes) == len(sd.viewer.scene(model).nodes) + 8
    for o in model.collisions:
        n = scn.node(f"/soadyn/collision/{o.name}")
        if n.kind == "convex":
            assert n.hull[0] is o.shape.vertices and n.hull[1] is o.shape.faces
        else:
            assert (n.kind, n.size) == ("box", tuple(o.shape.size))
    rng = np.random.default_rng(8)
    data, gdata = pm.createData(), gm.createData()
    for _ in range(2):
        q = sd.random_configuration(model, rng)
        T = sd.viewer.placements(model, scn, q)
        pin.forwardKinematics(pm, data, q)
        pin.updateGeometryPlacements(pm, data, gm, gdata)
        for k, g in enumerate(gm.geometryObjects):
            np.testing.assert_allclose(T[f"/soadyn/collision/{g.name}"], gdata.oMg[k].homogeneous, atol=1e-12)


def _shapes_and_contacts():
    """A two-body model with every shape kind, and two contacts given by hand."""
    from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Sphere

    model = sd.models.get("double_pendulum")
    model.add_ground(-2.0)
    arm, tip = model.body_names
    model.add_collision(arm, Box((0.1, 0.2, 0.3)), (np.eye(3), [0.0, 0.0, -0.5]))
    model.add_collision(arm, Capsule(0.05, 0.4))
    model.add_collision(tip, Cylinder(0.05, 0.2), (sd.spatial.rpy_to_matrix([0.3, 0.2, 0.1]), [0.1, 0.0, 0.0]))
    model.add_collision(tip, Sphere(0.1))
    model.add_collision(tip, Ellipsoid((0.1, 0.2, 0.05)))
    model.add_collision("world", ConvexMesh(np.eye(4, 3) - 0.25), (np.eye(3), [1.0, 0.0, 0.0]), name="wedge")
    normals = np.array([[0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
    contacts = sd.Contacts.from_points(model, [("world", tip), (arm, tip)], [[0.0, 0.0, -2.0], [0.1, 0.2, 0.3]],
                                       normals, depth=0.01)
    return model, contacts


def test_every_shape_kind_and_the_contacts_are_scene_nodes():
    model, contacts = _shapes_and_contacts()
    scn = sd.viewer.scene(model, collisions=True, contacts=contacts)
    kinds = {n.name.rsplit("/", 1)[1]: (n.kind, n.size) for n in scn.nodes
             if n.name.startswith("/soadyn/collision/")}
    arm, tip = model.body_names
    assert kinds == {"ground": ("plane", (20.0 * scn.length,)), f"{arm}_0": ("box", (0.1, 0.2, 0.3)),
                     f"{arm}_1": ("capsule", (0.05, 0.4)), f"{tip}_0": ("cylinder", (0.05, 0.2)),
                     f"{tip}_1": ("sphere", (0.1,)), f"{tip}_2": ("ellipsoid", (0.1, 0.2, 0.05)),
                     "wedge": ("convex", ())}
    q = np.array([0.4, -1.1])
    T = sd.viewer.placements(model, scn, q)
    for o, To in zip(model.collisions, sd.collision_placements(model, q)):
        np.testing.assert_allclose(T[f"/soadyn/collision/{o.name}"], To, atol=1e-14)
    for k in range(2):
        p, n = contacts.point[k], contacts.normal[k]
        np.testing.assert_allclose(T[f"/soadyn/contacts/{k}/point"][:3, 3], p, atol=1e-15)
        normal = scn.node(f"/soadyn/contacts/{k}/normal")
        radius, length = normal.size
        ends = [_point(T[normal.name], [0, 0, -length / 2]), _point(T[normal.name], [0, 0, length / 2])]
        np.testing.assert_allclose(ends, [p, p + length * n], atol=1e-14)  # from the point along the normal
    assert scn.names("/soadyn/contacts/") == [f"/soadyn/contacts/{k}/{x}" for k in range(2)
                                              for x in ("point", "normal")]
    assert not sd.viewer.scene(model).names("/soadyn/collision/")  # collisions=False by default
    with pytest.raises(TypeError, match="collisions: expected True or False"):
        sd.viewer.scene(model, collisions="yes")
    other, _ = _shapes_and_contacts()
    with pytest.raises(ValueError, match="contacts: these contacts were made for another model"):
        sd.viewer.scene(other, contacts=contacts)
    model.add_ground(-3.0)
    with pytest.raises(ValueError, match="contacts: these contacts were made for version"):
        sd.viewer.scene(model, contacts=contacts)


def test_server_draws_collision_shapes_and_contacts_and_toggles_the_shapes():
    pytest.importorskip("viser")
    model, contacts = _shapes_and_contacts()
    q = np.array([0.4, -1.1])
    viewer = sd.viewer.show(model, q, collisions=True, contacts=contacts, port=0, block=False, verbose=False)
    with viewer:
        assert len(viewer.handles) == len(viewer.scene.nodes)
        _check_server_scene(viewer, q)
        shapes = viewer.scene.names("/soadyn/collision/")
        assert len(shapes) == 7 and all(viewer.handles[n].visible for n in shapes)
        assert viewer.collision_toggle.value is True
        viewer.collision_toggle.value = False  # its on_update callback hides them (a worker thread)
        deadline = time.monotonic() + 10
        while any(viewer.handles[n].visible for n in shapes) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(viewer.handles[n].visible for n in shapes)
        assert viewer.handles["/soadyn/contacts/0/point"].visible
        viewer.show_collisions(True)
        assert all(viewer.handles[n].visible for n in shapes)
    with sd.viewer.show(model, q, port=0, block=False, verbose=False) as plain:  # collisions=False: no box
        assert plain.collision_toggle is None and not plain.scene.names("/soadyn/collision/")


def test_cli_view_loads_the_file_and_serves_it(monkeypatch, capsys, tmp_path):
    calls = []
    monkeypatch.setattr(sd.viewer, "show", lambda model, **kw: calls.append((model, kw)))
    if os.path.isfile(FOUR_BAR):
        assert cli.main(["view", FOUR_BAR, "--port", "0"]) == 0
        assert calls[-1][0].name == "four_bar" and calls[-1][1]["port"] == 0
    assert cli.main(["view", "four_bar_linkage"]) == 0
    model, kw = calls[-1]
    assert model.name == sd.models.get("four_bar_linkage").name and kw["block"] and kw["port"] == 8080
    assert kw["collisions"] is False
    assert cli.main(["view", "four_bar_linkage", "--collisions"]) == 0 and calls[-1][1]["collisions"] is True
    capsys.readouterr()
    assert cli.main(["view", str(tmp_path / "nope.urdf")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("soadyn view: error: ") and "nope.urdf: cannot read" in err[0]


# =========================================================================== a real browser
def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _magenta_pixels(png):
    """Pixels of the test box's colour (rgba 0.9 0.1 0.9, shaded) in a PNG screenshot."""
    import io

    Image = pytest.importorskip("PIL.Image")  # with matplotlib
    im = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    r, g, b = im[..., 0], im[..., 1], im[..., 2]
    return int(np.sum((r > 90) & (b > 90) & (g < 0.6 * np.minimum(r, b))))


class _DevTools:
    """Headless Chromium driven through its DevTools protocol (a websocket): navigate,
    take screenshots. Started in its own process group, which ``close`` ends."""

    def __init__(self, browser, folder):
        from websockets.sync.client import connect  # a dependency of viser

        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-unsafe-swiftshader",
               f"--user-data-dir={os.path.join(folder, 'profile')}", "--window-size=800,600",
               "--remote-debugging-port=0", "about:blank"]
        # output to a file, not pipes: chromium's helper processes keep inherited pipes open
        self._log = open(os.path.join(folder, "chromium.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                     start_new_session=True)
        try:
            port_file = os.path.join(folder, "profile", "DevToolsActivePort")
            deadline = time.monotonic() + 60
            while not (os.path.isfile(port_file) and open(port_file).read().strip()):
                assert self.proc.poll() is None and time.monotonic() < deadline, "chromium did not start"
                time.sleep(0.1)
            port = int(open(port_file).read().split()[0])
            import json
            import urllib.request

            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as f:
                page = next(t for t in json.load(f) if t["type"] == "page")
            self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
            self._json, self._id = json, 0
        except BaseException:
            self.close()
            raise

    def call(self, method, **params):
        self._id += 1
        self.ws.send(self._json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            reply = self._json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == self._id:
                assert "error" not in reply, reply
                return reply["result"]

    def screenshot(self):
        import base64

        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self):
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # chromium and its helper processes
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._log.close()


def _wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_page_loads_and_renders_in_headless_chromium():
    """Headless Chromium (software WebGL) opens the viewer's page: its client connects over
    the websocket, the screenshot shows the model's colour (a magenta box), and when the
    server hides the box the browser's picture loses it."""
    pytest.importorskip("viser")
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium found (apt-get install chromium)")
    xml = """<robot name="magenta"><link name="base"/><link name="arm"><visual><origin xyz="0 0 0.3"/>
      <geometry><box size="0.3 0.3 0.6"/></geometry><material name="m"><color rgba="0.9 0.1 0.9 1"/></material>
      </visual></link><joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
      <axis xyz="0 0 1"/></joint></robot>"""
    model = sd.load_urdf(xml)
    connected = []
    with sd.viewer.show(model, np.zeros(1), port=0, block=False, verbose=False, frames=False) as viewer, \
            tempfile.TemporaryDirectory() as folder:
        viewer.server.on_client_connect(lambda client: connected.append(client.client_id))
        chrome = _DevTools(browser, folder)
        try:
            chrome.call("Page.navigate", url=viewer.url)
            assert _wait_for(lambda: connected, 120), "the page's client never connected to the server"
            def box_drawn():
                n = _magenta_pixels(chrome.screenshot())
                return n if n > 500 else 0  # the box covers thousands of pixels; the page has no magenta

            assert _wait_for(box_drawn, 120), "the box was not rendered"
            viewer.handles["/soadyn/visual/arm_0"].visible = False
            assert _wait_for(lambda: _magenta_pixels(chrome.screenshot()) == 0, 60), "the hidden box is still drawn"
        finally:
            chrome.close()
