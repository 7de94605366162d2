"""MJCF loading (``sd.load_mjcf``) against MuJoCo itself on the same files.

The truths are MuJoCo's: ``mj_rne`` and ``mj_fullM`` for the tree dynamics, ``xpos``/``xmat``
and ``site_xpos``/``site_xmat`` for the frames, ``mj_integratePos`` for the meaning of a
velocity, ``efc_pos``/``efc_J`` for the equality constraints, ``mj_forward``'s ``qacc`` for the
closed chain (MuJoCo's constraint is soft: compared through its regularizer, see
:func:`test_four_bar_exact_loop_vs_mujoco_soft_constraint`). The models are the small robots
of ``benchmarks/mjcf_agreement.py`` (shared with the results table
``benchmarks/results/mjcf.md``) and, when the files are installed, the dm_control suite.
"""
import importlib.util
import os
import pickle
import sys
import warnings

import numpy as np
import pytest

import soadyn as sd
from conftest import HERE, assert_close, robot_path

mujoco = pytest.importorskip("mujoco")
from soadyn.io import mjcf as mx  # noqa: E402

_spec = importlib.util.spec_from_file_location("soadyn_mjcf_agreement",
                                               os.path.join(HERE, "..", "benchmarks", "mjcf_agreement.py"))
agreement = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agreement)
MODELS, load, four_bar = agreement.MODELS, agreement.load, agreement.four_bar

TOL = 1e-9  # relative, for everything that is exact on both sides


def quiet(source, **kw):
    """``sd.load_mjcf`` without its warning about what it left out."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*soadyn left out")
        return sd.load_mjcf(source, **kw)


def mj_data(m, qpos, qvel=None):
    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    if qvel is not None:
        d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    return d


# ----------------------------------------------------------------------------- tree dynamics
@pytest.mark.parametrize("name", [*MODELS, "four_bar"])
def test_inverse_dynamics_and_mass_matrix_agree_with_mujoco(name):
    """sd.rnea = mj_rne and sd.mass_matrix = Tᵀ mj_fullM T on the robots written for the
    tests: a pendulum on an offset hinge with a ``ref``, a hinge–slide–hinge arm, a free body
    with a ball-jointed child, bodies with two joints each, and a four-bar's spanning tree."""
    model, m = load(four_bar() if name == "four_bar" else MODELS[name])
    e_id, e_m = agreement.tree_agreement(model, m, np.random.default_rng(7))
    assert e_id <= TOL and e_m <= TOL, (e_id, e_m)


def _suite_or_skip(name):
    suite = agreement.dm_control_suite()
    if suite is None:
        pytest.skip("dm_control's suite files are not installed (pip install --no-deps dm_control)")
    return os.path.join(suite, f"{name}.xml")


@pytest.mark.parametrize("name", agreement.SUITE)
def test_dm_control_suite_robots_agree_with_mujoco(name, tmp_path, monkeypatch):
    """The published MJCF robots of dm_control's suite (free-floating humanoids, the
    quadruped and dog, planar walkers on slide–slide–hinge roots, arms with tendons): the
    tree dynamics equal MuJoCo's."""
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its compiler warnings to ./MUJOCO_LOG.TXT
    model, m = load(_suite_or_skip(name))
    assert (model.nq, model.nv) == (m.nq, m.nv)
    e_id, e_m = agreement.tree_agreement(model, m, np.random.default_rng(11), states=3)
    assert e_id <= TOL and e_m <= TOL, (e_id, e_m)


def test_armature_and_damping_are_what_mujoco_adds():
    """MuJoCo's mass matrix is soadyn's + diag(model.mjcf.armature) and its inverse
    dynamics (``mj_inverse``, no contacts or limits) are sd.rnea + armature·v̇ + damping·v;
    both kept per velocity coordinate of the joints that declare them."""
    model = quiet(agreement.ARM3)
    m = mujoco.MjModel.from_xml_string(agreement.ARM3)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    names = [j.name for j in model.joints]
    assert dict(zip(names, model.mjcf.armature)) == {"shoulder": 0.05, "extend": 0.2, "elbow": 0.0}
    assert dict(zip(names, model.mjcf.damping)) == {"shoulder": 0.3, "extend": 0.0, "elbow": 0.1}
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a = agreement.random_state(model, rng)
        d = mj_data(m, q, v)
        d.qacc[:] = a
        mujoco.mj_inverse(m, d)
        assert_close(d.qfrc_inverse, sd.rnea(model, q, v, a) + model.mjcf.armature * a + model.mjcf.damping * v,
                     TOL, "mj_inverse")
        assert_close(agreement.full_mass_matrix(m, d), sd.mass_matrix(model, q) + np.diag(model.mjcf.armature),
                     TOL, "mj_fullM")


def test_free_joint_armature_in_soadyn_coordinates():
    """A free joint's armature (one value for its six coordinates) is the same after the
    change to body-frame velocities: Tᵀ (M_MuJoCo) T = M + diag(armature)."""
    xml = agreement.FLOATING.replace('<freejoint name="root"/>', '<joint name="root" type="free" armature="0.3"/>')
    model = quiet(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    q, v, a = agreement.random_state(model, np.random.default_rng(5))
    d = mj_data(m, mx.q_to_mujoco(model, q))
    T = agreement.velocity_map(model, q)
    assert_close(T.T @ agreement.full_mass_matrix(m, d) @ T, sd.mass_matrix(model, q) + np.diag(model.mjcf.armature),
                 TOL, "M + armature")
    assert np.allclose(model.mjcf.armature[:6], 0.3)


# ----------------------------------------------------------------------------- frames and states
@pytest.mark.parametrize("name", MODELS)
def test_body_and_site_frames_are_mujocos(name):
    """Every MuJoCo body and named site is a frame of the model, at MuJoCo's ``xpos``/``xmat``
    and ``site_xpos``/``site_xmat``, at qpos0 and at random configurations."""
    model, m = load(MODELS[name])
    rng = np.random.default_rng(2)
    for k in range(4):
        q = mx.q_from_mujoco(model, m.qpos0) if k == 0 else sd.random_configuration(model, rng)
        d = mj_data(m, mx.q_to_mujoco(model, q))
        for kind, n, pos, mat in (("body", m.nbody, d.xpos, d.xmat), ("site", m.nsite, d.site_xpos, d.site_xmat)):
            obj = mujoco.mjtObj.mjOBJ_BODY if kind == "body" else mujoco.mjtObj.mjOBJ_SITE
            for i in range(1 if kind == "body" else 0, n):
                X = sd.frame_placement(model, q, mujoco.mj_id2name(m, obj, i))
                assert_close(X[:3, 3], pos[i], TOL, f"{kind} {i} position")
                assert_close(X[:3, :3], mat[i].reshape(3, 3), TOL, f"{kind} {i} rotation")


def test_velocity_convention_against_mujoco_integration():
    """v_from_mujoco means what MuJoCo's qvel means: a short step of ``mj_integratePos``
    and of ``sd.integrate`` from the same state reach the same configuration (to the
    second order in the step: MuJoCo moves a free body's position along the world-frame
    velocity, soadyn along the screw motion)."""
    model, m = load(agreement.FLOATING)
    rng = np.random.default_rng(4)
    dt = 1e-6
    for _ in range(3):
        q, v, _ = agreement.random_state(model, rng)
        qpos, qvel = mx.q_to_mujoco(model, q), mx.v_to_mujoco(model, q, v)
        stepped = qpos.copy()
        mujoco.mj_integratePos(m, stepped, qvel, dt)
        moved = sd.difference(model, q, mx.q_from_mujoco(model, stepped))
        assert_close(moved / dt, v, 1e-5, "displacement / dt")


def test_converters_round_trip_batches_and_power():
    """q, v, v̇ and τ survive the trip to MuJoCo and back, batches equal single states, and
    the converted forces do the same power on the converted velocities (τ·v = qfrc·qvel)."""
    model = quiet(agreement.FLOATING)
    rng = np.random.default_rng(8)
    states = [agreement.random_state(model, rng) for _ in range(4)]
    Q, V, A = (np.array(x) for x in zip(*states))
    tau = rng.normal(size=V.shape)
    qpos, qvel = mx.q_to_mujoco(model, Q), mx.v_to_mujoco(model, Q, V)
    qacc, qfrc = mx.a_to_mujoco(model, Q, V, A), mx.tau_to_mujoco(model, Q, tau)
    assert_close(mx.q_from_mujoco(model, qpos), Q, 1e-14)
    assert_close(mx.v_from_mujoco(model, qpos, qvel), V, 1e-14)
    assert_close(mx.a_from_mujoco(model, qpos, qvel, qacc), A, 1e-14)
    assert_close(mx.tau_from_mujoco(model, qpos, qfrc), tau, 1e-14)
    assert_close(np.sum(tau * V, axis=1), np.sum(qfrc * qvel, axis=1), 1e-14, "power")
    for b, (q, v, a) in enumerate(states):
        assert_close(mx.q_to_mujoco(model, q), qpos[b], 0.0)
        assert_close(mx.v_to_mujoco(model, q, v), qvel[b], 0.0)
        assert_close(mx.a_to_mujoco(model, q, v, a), qacc[b], 0.0)
    # MuJoCo's quaternions are (w, x, y, z): the identity is [1, 0, 0, 0]
    assert_close(mx.q_to_mujoco(model, sd.neutral(model))[3:7], [1.0, 0.0, 0.0, 0.0], 0.0)


def test_converters_refuse_bad_input():
    model = quiet(agreement.FLOATING)
    with pytest.raises(ValueError, match=r"qpos: expected shape \(12,\) or \(B, 12\), got \(11,\)"):
        mx.q_from_mujoco(model, np.zeros(11))
    with pytest.raises(ValueError, match="qvel: expected 2 rows, one per configuration"):
        mx.v_from_mujoco(model, np.zeros((2, 12)), np.zeros((3, 10)))
    with pytest.raises(ValueError, match="was not loaded by soadyn.load_mjcf"):
        mx.q_from_mujoco(sd.models.serial_chain(2), np.zeros(2))
    edited = quiet(agreement.PENDULUM)
    edited.add_body("extra", sd.joints.Revolute(), 0)
    with pytest.raises(ValueError, match="edited after load_mjcf"):
        mx.q_to_mujoco(edited, np.zeros(2))


def test_joint_coordinates_are_qpos_with_ref_and_limits():
    """Hinge and slide coordinates are MuJoCo's qpos (the ``ref`` is in the placement), and
    ``range`` gives the joint limits."""
    model = quiet(agreement.ARM3)
    m = mujoco.MjModel.from_xml_string(agreement.ARM3)
    assert_close(mx.q_from_mujoco(model, m.qpos0), m.qpos0, 0.0)
    assert m.qpos0[1] == 0.05 and m.qpos0[2] == -0.3  # refs of the slide and the elbow
    shoulder, extend = model.joint("shoulder"), model.joint("extend")
    assert (shoulder.lower[0], shoulder.upper[0], extend.lower[0], extend.upper[0]) == (-2, 2, -0.3, 0.3)
    assert np.isinf(model.joint("elbow").upper[0])


# ----------------------------------------------------------------------------- floating base
def test_floating_base_false_fixes_the_free_root():
    """Without the free joint the model is MuJoCo's with the root held at qpos0: mass
    matrix and inverse dynamics are the rows and columns of the other joints."""
    model = quiet(agreement.FLOATING, floating_base=False)
    m = mujoco.MjModel.from_xml_string(agreement.FLOATING)
    assert [j.name for j in model.joints] == ["neck", "visor"] and model.nv == m.nv - 6
    q, v, a = agreement.random_state(model, np.random.default_rng(1))
    qpos = mx.q_to_mujoco(model, q)
    assert_close(qpos[:7], m.qpos0[:7], 0.0)
    rne, M = agreement.mujoco_rne_and_mass_matrix(m, qpos, mx.v_to_mujoco(model, q, v), mx.a_to_mujoco(model, q, v, a))
    assert_close(sd.rnea(model, q, v, a), rne[6:], TOL)
    assert_close(sd.mass_matrix(model, q), M[6:, 6:], TOL)


def test_floating_base_true_adds_a_root_joint():
    """A fixed-base arm gets a free joint "root_joint" at its base's pose in the file; its
    joints' block of the mass matrix is MuJoCo's at that pose."""
    model = quiet(agreement.ARM3, floating_base=True)
    m = mujoco.MjModel.from_xml_string(agreement.ARM3)
    assert model.joints[0].name == "root_joint" and model.joints[0].kind == "free" and model.nv == 9
    q = mx.q_from_mujoco(model, m.qpos0 + [0.3, 0.02, -0.1])
    d = mj_data(m, mx.q_to_mujoco(model, q))
    base = sd.frame_placement(model, q, "base")
    assert_close(base[:3, 3], d.xpos[1], TOL) and assert_close(base[:3, :3], d.xmat[1].reshape(3, 3), TOL)
    M = agreement.full_mass_matrix(m, d) - np.diag(m.dof_armature)
    assert_close(sd.mass_matrix(model, q)[6:, 6:], M, TOL)
    assert_close(mx.v_to_mujoco(model, q, np.arange(9.0)), [6.0, 7.0, 8.0], 0.0)
    with pytest.raises(sd.MJCFError, match="floating_base=True"):
        quiet(agreement.FLOATING, floating_base=True)
    with pytest.raises(ValueError, match="floating_base: expected None, True or False"):
        sd.load_mjcf(agreement.PENDULUM, floating_base="yes")


# ----------------------------------------------------------------------------- equalities
EQUALITIES = """<mujoco model="equalities"><compiler angle="radian"/>
<default><equality solimp="0.9999 0.9999 0.001"/></default>
<worldbody>""" + agreement.FOUR_BAR_BODIES + """
  <body name="left" pos="0 1 1"><freejoint/><inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>
    <site name="left_site" pos="0.2 0.1 0" euler="0.3 0.2 0.1"/></body>
  <body name="right" pos="0.5 1 1.2" euler="0 0.4 0"><freejoint/>
    <inertial pos="0 0.1 0" mass="2" diaginertia="0.03 0.02 0.02"/>
    <site name="right_site" pos="0 0 0.1"/></body>
  <body name="block" pos="0 -1 1"><freejoint/><inertial pos="0 0 0" mass="1.5" diaginertia="0.02 0.03 0.04"/></body>
  <body name="wheel_a" pos="0 -2 0"><joint name="wheel_a" axis="1 0 0" ref="0.2"/>
    <inertial pos="0 0 0.1" mass="0.5" diaginertia="0.002 0.002 0.001"/>
    <body name="wheel_b" pos="0 0 0.3"><joint name="wheel_b" axis="0 1 0" ref="-0.1"/>
      <inertial pos="0.1 0 0" mass="0.4" diaginertia="0.001 0.002 0.002"/>
      <body name="wheel_c" pos="0.2 0 0"><joint name="wheel_c" axis="0 0 1"/>
        <inertial pos="0.1 0 0" mass="0.3" diaginertia="0.001 0.002 0.002"/>
        <body name="wheel_d" pos="0.2 0 0"><joint name="wheel_d" axis="0 1 0"/>
          <inertial pos="0.1 0 0" mass="0.2" diaginertia="0.001 0.002 0.002"/></body></body></body></body>
</worldbody>
<equality>
  <connect name="close" body1="coupler" body2="rocker" anchor="1 0 0.2"/>
  <weld name="sites" site1="left_site" site2="right_site"/>
  <weld name="glue" body1="block" body2="left" relpose="0.3 0.2 0.1 0.9 0.1 0.3 0.2"/>
  <joint name="gear" joint1="wheel_b" joint2="wheel_a" polycoef="0.1 -2 0 0 0"/>
  <joint name="cam" joint1="wheel_c" joint2="wheel_a" polycoef="0.05 0.5 0.3 -0.2 0"/>
  <joint name="lock" joint1="wheel_d" polycoef="0.2 0 0 0 0"/>
  <connect name="spare" body1="crank" body2="rocker" anchor="0 0 0" active="false"/>
</equality></mujoco>"""


def test_equalities_become_loops_transmissions_and_constraints():
    """connect → spherical loop, weld (bodies or sites) → weld loop, a linear joint
    equality → a transmission with MuJoCo's reference offsets, other joint equalities →
    holonomic constraints; an inactive equality is left out (and named in the warning)."""
    with pytest.warns(UserWarning, match="equality 'spare' \\(inactive at start\\)"):
        model = sd.load_mjcf(EQUALITIES)
    assert [(lp.name, lp.kind) for lp in model.loops] == [("close", "spherical"), ("sites", "weld"),
                                                         ("glue", "weld")]
    (gear,) = model.couplings
    assert gear.name == "gear" and list(gear.joints) == ["wheel_b", "wheel_a"]
    assert_close(gear.ratios, [[1.0, 2.0]], 0.0)
    assert_close(gear.offset, [0.1 - 0.1 + 2 * 0.2], 1e-15)  # c0 + ref_b − c1 ref_a
    assert [c.name for c in model.user_constraints] == ["cam", "lock"]
    assert not model.joint("wheel_b").independent and model.joint("wheel_a").independent


def _closed_states(model, rng, n):
    """n states closed by sd.close_loops from random guesses, the crank, the left body and the
    first wheel kept (the others follow from the equalities)."""
    out = []
    for _ in range(10 * n):
        guess = sd.random_configuration(model, rng)
        try:
            out.append(sd.close_loops(model, guess, rng.normal(size=model.nv),
                                      independent=["crank", "left_joint0", "wheel_a"]))
        except sd.LoopClosureError:
            continue
        if len(out) == n:
            return out
    raise AssertionError(f"close_loops closed only {len(out)} of {10 * n} random guesses")


def test_equalities_mean_what_mujoco_means():
    """At states closed by sd.close_loops, MuJoCo's equality residuals (``efc_pos``) vanish
    and its constraint Jacobian (``efc_J``, mapped to soadyn's velocities) spans the rows of
    sd.constraint_jacobian: both libraries constrain the same motions."""
    model = quiet(EQUALITIES)
    m = mujoco.MjModel.from_xml_string(EQUALITIES)
    for q, v in _closed_states(model, np.random.default_rng(9), 3):
        d = mj_data(m, mx.q_to_mujoco(model, q), mx.v_to_mujoco(model, q, v))
        assert d.nefc == 3 + 6 + 6 + 3  # connect, two welds, three joint equalities
        assert np.abs(d.efc_pos).max() <= 1e-9, d.efc_pos
        J = d.efc_J.reshape(d.nefc, m.nv) @ agreement.velocity_map(model, q)
        G = sd.constraint_jacobian(model, q)
        rank = np.linalg.matrix_rank
        # the planar four-bar's connect has rank 2 (no motion along the hinge axes)
        assert rank(G, 1e-9) == rank(J, 1e-9) == rank(np.vstack([G, J]), 1e-9) == 17
        assert np.abs(J @ v).max() <= 1e-9


def _mujoco_accelerations(m, model, q, v, tau):
    """MuJoCo's q̈ (mj_forward, soft constraints) in soadyn's coordinates."""
    qpos = mx.q_to_mujoco(model, q)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, mx.v_to_mujoco(model, q, v)
    d.qfrc_applied[:] = mx.tau_to_mujoco(model, q, tau)
    mujoco.mj_forward(m, d)
    return mx.a_from_mujoco(model, qpos, d.qvel, d.qacc)


def test_equalities_dynamics_approach_mujocos_stiffest_constraint():
    """With MuJoCo's stiffest impedance (d = 0.9999, the file's default class) its soft
    constraints give soadyn's exact accelerations up to about (1 − d) = 1e-4 of the
    constraints' effect on them (see the four-bar test for why): on every equality kind at
    rest, and for the loops (connect, both welds; three free bodies, through the converters)
    in motion. In motion MuJoCo's joint equality leaves out the polynomial's curvature term:
    its q̈ keeps q̈₁ = P′(d) q̈₂ (to the softness), where the exact constraint is
    q̈₁ = P′(d) q̈₂ + P″(d) q̇₂² (measured: the cam's q̈ differs by P″ q̇₂², e.g. 0.467 rad/s²)."""
    model = quiet(EQUALITIES)
    m = mujoco.MjModel.from_xml_string(EQUALITIES)
    rng = np.random.default_rng(12)
    tree = model.spanning_tree()
    loops = [j.v_index + k for j in model.joints if j.name in ("crank", "coupler", "rocker", "left_joint0",
                                                                "right_joint0", "block_joint0") for k in range(j.nv)]
    ia, ic = model.joint("wheel_a").v_index, model.joint("wheel_c").v_index
    for k, (q, v) in enumerate(_closed_states(model, rng, 4)):
        if k % 2 == 0:
            v = np.zeros(model.nv)  # at rest
        tau = rng.normal(size=model.nv)
        exact = sd.constrained_forward_dynamics(model, q, v, tau).qdd
        soft = _mujoco_accelerations(m, model, q, v, tau)
        effect = np.abs(exact - sd.aba(tree, q, v, tau)).max()
        at = slice(None) if k % 2 == 0 else loops
        assert np.abs(soft - exact)[at].max() <= 1e-3 * effect, (k, np.abs(soft - exact).max(), effect)
        # the cam: (q_c − 0) = 0.05 + 0.5 x + 0.3 x² − 0.2 x³, x = q_a − ref_a
        x = q[model.joint("wheel_a").q_index] - 0.2
        slope, curvature = 0.5 + 0.6 * x - 0.6 * x**2, 0.6 - 1.2 * x
        assert abs(exact[ic] - slope * exact[ia] - curvature * v[ia] ** 2) <= TOL * effect
        assert abs(soft[ic] - slope * soft[ia]) <= 1e-3 * effect


def test_four_bar_exact_loop_vs_mujoco_soft_constraint():
    """A four-bar closed by ``<equality><connect>``: soadyn's exact loop against MuJoCo's
    soft constraint with the default solref/solimp.

    MuJoCo's q̈ is the regularized solution q̈ = a₀ + M⁻¹Jᵀλ, (J M⁻¹ Jᵀ + R) λ = a_ref − J a₀
    (its ``efc_R``, ``efc_aref``, ``efc_J``): that expression, evaluated with soadyn's M and
    open-tree a₀, reproduces MuJoCo's q̈ to 1e-9, so the whole difference to the exact loop is
    MuJoCo's regularizer R = (1 − d)/d · Ã (impedance d = 0.9 at zero violation; Ã its
    diagonal approximation of J M⁻¹ Jᵀ). Were Ã exact, λ would shrink by the factor d and the
    difference would be (1 − d) = 0.1 of the constraint's effect |q̈_exact − a₀|; measured on
    20 states (benchmarks/results/mjcf.md): 0.039 median, 0.070 max (as a share of |q̈_exact|:
    7.5 % median); with d = 0.99: 0.0036 / 0.0068; with d = 0.9999 (MuJoCo's cap):
    3.6e-5 / 6.8e-5. Asserted loosely: below 0.15 (1.5 × the ideal 1 − d, since Ã is only
    approximate) for the default, below 1.5e-4 for d = 0.9999, so that MuJoCo converges to the
    exact loop as its constraint stiffens.
    """
    model = sd.load_mjcf(four_bar())
    tree = model.spanning_tree()
    rng = np.random.default_rng(21)
    states = agreement.four_bar_states(model, rng, 6)
    m = mujoco.MjModel.from_xml_string(four_bar())
    for q, v, tau in states:
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
        mujoco.mj_forward(m, d)
        a0, M = sd.aba(tree, q, v, tau), sd.mass_matrix(tree, q)
        J = d.efc_J.reshape(d.nefc, m.nv)
        MiJt = np.linalg.solve(M, J.T)
        lam = np.linalg.solve(J @ MiJt + np.diag(d.efc_R), d.efc_aref - J @ a0)
        assert_close(a0 + MiJt @ lam, d.qacc, TOL, "MuJoCo's regularized solution")
    default = np.array(agreement.four_bar_difference(None, states))
    stiff = np.array(agreement.four_bar_difference("0.9999 0.9999 0.001", states))
    assert default[:, 1].max() <= 0.15 and stiff[:, 1].max() <= 1.5e-4, (default, stiff)
    assert default[:, 1].min() > 1e-3  # a soft constraint, not the exact one


# ----------------------------------------------------------------------------- peers' files
@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_urdf_compiled_by_mujoco_equals_load_urdf(robot):
    """load_mjcf accepts a compiled MjModel: an example-robot-data URDF compiled by MuJoCo
    (geometry discarded) gives the dynamics of sd.load_urdf on the same file (joints matched
    by name; MuJoCo turns panda's finger ``<mimic>`` into a joint equality, a transmission
    here, so the spanning trees are compared)."""
    path = robot_path(robot)
    urdf = _load_urdf_quietly(path)
    m = mujoco_urdf_model(path)
    model = quiet(m)
    order = [model.joint(j.name).v_index for j in urdf.joints if j.nv]
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = sd.random_configuration(urdf, rng)
        v, a = rng.normal(size=urdf.nv), rng.normal(size=urdf.nv)
        qm, vm, am = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
        qm[order], vm[order], am[order] = q, v, a
        tree = model.spanning_tree()
        assert_close(sd.rnea(tree, qm, vm, am)[order], sd.rnea(urdf, q, v, a), TOL, "rnea")
        assert_close(sd.mass_matrix(tree, qm)[np.ix_(order, order)], sd.mass_matrix(urdf, q), TOL, "M")


def _load_urdf_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # panda's <mimic> is loaded as an independent joint
        return sd.load_urdf(path, mimic="ignore")


def mujoco_urdf_model(path):
    """MuJoCo's compile of a URDF without visual or collision geometry (the inertias from the
    ``<inertial>`` elements, not rebalanced)."""
    import re
    with open(path) as f:
        xml = f.read()
    xml = re.sub(r"<visual>.*?</visual>", "", xml, flags=re.S)
    xml = re.sub(r"<collision>.*?</collision>", "", xml, flags=re.S)
    xml = re.sub(r"(<robot[^>]*>)", r'\1<mujoco><compiler discardvisual="true" balanceinertia="false" '
                 r'fusestatic="false"/></mujoco>', xml, count=1)
    return mujoco.MjModel.from_xml_string(xml)


# ----------------------------------------------------------------------------- what is left out
def test_one_warning_names_what_was_left_out():
    xml = """<mujoco model="busy"><worldbody>
      <geom type="plane" size="1 1 0.1"/>
      <body name="a"><joint name="j" axis="0 1 0" armature="0.1" damping="0.2" stiffness="3"/>
        <geom type="capsule" fromto="0 0 0 0 0 1" size="0.05"/><site name="s1" pos="0 0 0"/>
        <body name="b" pos="0 0 1"><joint name="k" axis="0 1 0"/><geom size="0.1"/><site name="s2"/></body>
      </body></worldbody>
      <tendon><spatial name="t"><site site="s1"/><site site="s2"/></spatial></tendon>
      <actuator><motor joint="j"/></actuator></mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = sd.load_mjcf(xml)
    (w,) = [c for c in caught if "soadyn left out" in str(c.message)]
    text = str(w.message)
    for part in ("1 actuators", "1 tendons", "joint springs (stiffness)",
                 "armature on 1 velocity coordinates (kept in model.mjcf.armature)",
                 "damping on 1 velocity coordinates (kept in model.mjcf.damping)"):
        assert part in text, (part, text)
    assert model.mjcf.ignored and len(model.mjcf.ignored) == 5
    assert len(model.collisions) == 3  # the geoms are read
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not sd.load_mjcf(xml, collisions=False).collisions
    assert any("contacts of 3 colliding geoms (collisions=False)" in str(c.message) for c in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left out: no warning
        sd.load_mjcf(agreement.PENDULUM)


def test_bad_input_raises_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(sd.MJCFError, match="MuJoCo cannot compile it"):
        sd.load_mjcf("<mujoco><worldbody><body><joint type='twist'/></body></worldbody></mujoco>")
    with pytest.raises(sd.MJCFError, match="no such file"):
        sd.load_mjcf(str(tmp_path / "missing.xml"))
    with pytest.raises(TypeError, match="path_or_xml: expected a file path"):
        sd.load_mjcf(42)
    path = tmp_path / "pendulum.xml"
    path.write_text(agreement.PENDULUM)
    assert sd.load_mjcf(path).nv == 1 and sd.load_mjcf(mujoco.MjModel.from_xml_string(agreement.PENDULUM)).nv == 1
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ImportError, match="pip install mujoco"):
        sd.load_mjcf(agreement.PENDULUM)


def test_model_with_polynomial_equality_pickles():
    """The polynomial joint equality is a module-level callable: the model pickles and its
    constraints evaluate the same."""
    model = quiet(EQUALITIES)
    q, _ = _closed_states(model, np.random.default_rng(2), 1)[0]
    copy = pickle.loads(pickle.dumps(model))
    assert_close(sd.constraint_residual(copy, q), sd.constraint_residual(model, q), 0.0)
    assert copy.mjcf.nq_mujoco == model.mjcf.nq_mujoco
