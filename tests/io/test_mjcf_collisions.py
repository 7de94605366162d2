"""MJCF geoms as collision objects, against MuJoCo: the shapes from ``geom_size`` (half-lengths
to full lengths), the world poses against ``geom_xpos``/``geom_xmat``, and the allowed pairs
against MuJoCo's own filters — on a scene where every pair overlaps, the geom pairs of
``mj_collision``'s contacts are exactly the pairs MuJoCo allows."""
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere
from soadyn.io.mjcf import q_to_mujoco

mujoco = pytest.importorskip("mujoco")

#: every geom overlaps every other near the origin (and the floor), so that mj_collision
#: reports a contact for each pair its filters allow: the same body (b and its welded bw),
#: parent–child (a–b across b's two joints, b–c, c–d), the world exempt (a, f), bitmasks
#: (e only with itself; f_box's contype 4), <exclude> (a–f, bw–c)
SCENE = """<mujoco model="filters">
  <asset><mesh name="tet" vertex="-0.3 -0.3 -0.3  0.4 -0.3 -0.3  -0.3 0.4 -0.3  -0.3 -0.3 0.4"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" friction="0.8 0.01 0.001"/>
    <geom name="wall" type="box" size="0.3 0.3 0.3" pos="0 0 0.1"/>
    <geom name="picture" type="box" size="0.3 0.3 0.3" contype="0" conaffinity="0"/>
    <body name="a">
      <joint name="ja" type="hinge" axis="0 0 1"/>
      <geom name="a_sphere" type="sphere" size="0.4"/>
      <geom name="a_box" type="box" size="0.2 0.3 0.4" euler="10 20 30"/>
      <body name="b" pos="0.05 0 0">
        <joint name="jb1" type="hinge" axis="1 0 0" pos="0 0.1 0"/>
        <joint name="jb2" type="slide" axis="0 1 0"/>
        <geom name="b_capsule" type="capsule" fromto="-0.3 0 0 0.3 0 0.1" size="0.1"/>
        <body name="bw" pos="0 0.05 0">
          <geom name="bw_cylinder" type="cylinder" size="0.2 0.3" euler="0 90 0"/>
        </body>
        <body name="c">
          <joint name="jc" type="ball"/>
          <geom name="c_ellipsoid" type="ellipsoid" size="0.3 0.2 0.25"/>
          <body name="d">
            <joint name="jd" type="hinge" pos="0.1 0 0" axis="0 1 0"/>
            <geom name="d_mesh" type="mesh" mesh="tet" pos="0 0 0.05"/>
          </body>
        </body>
      </body>
      <body name="e">
        <joint name="je" type="slide" axis="0 0 1"/>
        <geom name="e_sphere" size="0.3" contype="2" conaffinity="2"/>
        <geom name="e_sphere2" size="0.2" pos="0.05 0 0" contype="2" conaffinity="2"/>
      </body>
    </body>
    <body name="f">
      <freejoint name="jf"/>
      <geom name="f_box" type="box" size="0.3 0.3 0.3" contype="4" conaffinity="1"/>
      <geom size="0.35" friction="0.3"/>
    </body>
    <body name="g"><geom name="g_sphere" size="0.3"/></body>
  </worldbody>
  <contact><exclude body1="a" body2="f"/><exclude body1="bw" body2="c"/></contact>
</mujoco>"""


def _load(xml, **kw):
    m = mujoco.MjModel.from_xml_string(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out
        return sd.load_mjcf(xml, **kw), m


def _geom_names(m):
    return [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(m.ngeom)]


def test_geoms_become_objects_with_mujocos_sizes_friction_and_masks():
    model, m = _load(SCENE)
    names = _geom_names(m)
    index = model.mjcf.geom_collisions
    assert index[names.index("picture")] == -1  # a visual geom: collides with nothing
    loaded = [g for g in range(m.ngeom) if index[g] >= 0]
    assert [index[g] for g in loaded] == list(range(len(model.collisions))) and len(loaded) == m.ngeom - 1
    expected_type = {0: Plane, 2: Sphere, 3: Capsule, 4: Ellipsoid, 5: Cylinder, 6: Box, 7: ConvexMesh}
    for g in loaded:
        o, size = model.collisions[index[g]], m.geom_size[g]
        assert o.name == (names[g] or f"geom{g}")
        assert type(o.shape) is expected_type[int(m.geom_type[g])]
        if isinstance(o.shape, Sphere):
            assert o.shape.radius == size[0]
        elif isinstance(o.shape, (Capsule, Cylinder)):
            assert (o.shape.radius, o.shape.length) == (size[0], 2 * size[1])  # half-length → length
        elif isinstance(o.shape, Box):
            np.testing.assert_array_equal(o.shape.size, 2 * size)  # half-sizes → edge lengths
        elif isinstance(o.shape, Ellipsoid):
            np.testing.assert_array_equal(o.shape.radii, size)
        elif isinstance(o.shape, ConvexMesh):
            mesh = m.geom_dataid[g]
            vertices = m.mesh_vert[m.mesh_vertadr[mesh]:m.mesh_vertadr[mesh] + m.mesh_vertnum[mesh]]
            assert sorted(map(tuple, o.shape.vertices)) == sorted(map(tuple, vertices))  # all 4 on the hull
        assert (o.friction, o.contype, o.conaffinity) == (m.geom_friction[g, 0], m.geom_contype[g],
                                                          m.geom_conaffinity[g])
    assert model.collisions[index[names.index("floor")]].friction == 0.8


def test_world_poses_equal_mujocos_geom_poses():
    model, m = _load(SCENE)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    index = model.mjcf.geom_collisions
    for _ in range(3):
        q = sd.random_configuration(model, rng)
        d.qpos[:] = q_to_mujoco(model, q)
        mujoco.mj_kinematics(m, d)
        T = sd.collision_placements(model, q)
        for g in range(m.ngeom):
            if index[g] >= 0:
                np.testing.assert_allclose(T[index[g], :3, :3], d.geom_xmat[g].reshape(3, 3), atol=1e-12)
                np.testing.assert_allclose(T[index[g], :3, 3], d.geom_xpos[g], atol=1e-12)


def _mujoco_pairs(m):
    """The geom pairs of mj_collision's contacts at qpos0."""
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    return {tuple(sorted(map(int, c.geom))) for c in d.contact[:d.ncon]}


def _our_pairs(model):
    geom_of = {k: g for g, k in enumerate(model.mjcf.geom_collisions) if k >= 0}
    return {tuple(sorted((geom_of[int(i)], geom_of[int(j)]))) for i, j in model.collision_pairs()}


def test_allowed_pairs_are_those_mujocos_filters_allow():
    model, m = _load(SCENE)
    names = _geom_names(m)
    theirs = _mujoco_pairs(m)
    assert _our_pairs(model) == theirs
    named = {tuple(sorted((str(names[a]), str(names[b])))) for a, b in theirs}
    # the scene exercises every filter: each of these overlapping pairs is dropped, for its reason
    for dropped in [("b_capsule", "bw_cylinder"),  # one MuJoCo weld body
                    ("a_sphere", "b_capsule"), ("a_box", "bw_cylinder"),  # parent–child across b's two joints
                    ("b_capsule", "c_ellipsoid"), ("c_ellipsoid", "d_mesh"),  # parent–child
                    ("a_sphere", "e_sphere"), ("e_sphere", "floor"),  # bitmasks
                    ("a_sphere", "f_box"), ("a_box", "None"),  # <exclude body1="a" body2="f">
                    ("bw_cylinder", "c_ellipsoid"),  # <exclude body1="bw" body2="c">
                    ("floor", "wall"), ("floor", "g_sphere")]:  # both on the world
        assert dropped not in named, dropped
    for kept in [("a_sphere", "floor"), ("a_box", "wall"),  # a child of the world touches the world
                 ("a_sphere", "c_ellipsoid"), ("b_capsule", "d_mesh"), ("c_ellipsoid", "f_box"), ("f_box", "floor"),
                 ("None", "d_mesh")]:
        assert kept in named, kept
    assert len(theirs) == len(model.collision_pairs())


def test_a_base_fixed_by_floating_base_false_no_longer_touches_the_world():
    """floating_base=False welds f to the world: soadyn then keeps f's geoms off the world's
    (one rigid body), MuJoCo's free f still touches them; every other pair is MuJoCo's."""
    model, m = _load(SCENE, floating_base=False)
    world = {g for g in range(m.ngeom) if m.body_weldid[m.geom_bodyid[g]] == 0}  # floor, wall, g_sphere
    f = {g for g in range(m.ngeom) if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) == "f"}
    theirs = _mujoco_pairs(m)
    assert theirs - _our_pairs(model) == {p for p in theirs if (p[0] in world and p[1] in f) or
                                          (p[1] in world and p[0] in f)} != set()
    assert _our_pairs(model) <= theirs


def test_what_soadyn_cannot_collide_is_named_in_the_one_warning():
    xml = """<mujoco><asset><hfield name="terrain" nrow="3" ncol="3" size="1 1 0.1 0.1"/></asset>
      <option><flag filterparent="disable"/></option>
      <worldbody><geom name="hills" type="hfield" hfield="terrain"/><geom name="floor" type="plane" size="1 1 1"/>
        <body name="a"><freejoint/><geom name="ball" size="0.1"/></body></worldbody>
      <contact><pair geom1="ball" geom2="floor"/></contact></mujoco>"""
    with pytest.warns(UserWarning) as record:
        model = sd.load_mjcf(xml)
    (message,) = [str(w.message) for w in record if "soadyn left out" in str(w.message)]
    for part in ("1 geoms that soadyn cannot collide: hills (a hfield geom)", "1 explicit contact pairs",
                 "filterparent='disable'"):
        assert part in message, (part, message)
    assert [o.name for o in model.collisions] == ["floor", "ball"] and model.mjcf.geom_collisions == (-1, 0, 1)
    off = xml.replace('filterparent="disable"', 'contact="disable"')
    with pytest.warns(UserWarning, match=r"the 3 geoms \(the file disables contacts\)"):
        assert sd.load_mjcf(off).collisions == ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = sd.load_mjcf(xml, collisions=False)
    assert bare.collisions == () and bare.mjcf.geom_collisions == (-1, -1, -1)
