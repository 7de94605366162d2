"""soadyn's MJCF loader against MuJoCo on the same files: ``python benchmarks/mjcf_agreement.py``
(needs ``pip install mujoco``; the dm_control suite robots need the ``dm_control`` package's
files, e.g. ``pip install --no-deps dm_control``) writes ``benchmarks/results/mjcf.md``.

Two comparisons, on models that ``sd.load_mjcf`` and ``mujoco.MjModel`` read from the same
XML:

* **Tree dynamics** (every model): at random states, soadyn's inverse dynamics
  ``sd.rnea`` against MuJoCo's ``mj_rne`` (``flg_acc=1``, ``qacc`` set, after ``mj_forward``)
  and ``sd.mass_matrix`` against ``mj_fullM``, with MuJoCo's armature set to zero (MuJoCo
  adds it to the diagonal of its mass matrix; ``mj_rne`` leaves it out) and contacts
  disabled. States, accelerations and forces are converted with
  ``soadyn.io.mjcf`` (free joints: MuJoCo's world-frame linear velocity); the mass matrix is
  compared as Tᵀ M_MuJoCo T with T = ∂qvel/∂v. Largest relative difference
  (max |Δ| / max |MuJoCo|) over the states. Models with equalities are compared on their
  spanning tree (MuJoCo's ``mj_rne`` and ``mj_fullM`` leave constraints out too).
* **A four-bar closed by ``<equality><connect>``**: soadyn's exact loop
  (``sd.constrained_forward_dynamics`` at states closed by ``sd.close_loops``) against
  MuJoCo's soft constraint (``qacc`` of ``mj_forward``, with the given ``solimp``). MuJoCo
  solves (J M⁻¹ Jᵀ + R) λ = a_ref − J a₀ with the regularizer R = (1 − d)/d · Ã (d the
  impedance, 0.9 at zero violation with the default ``solimp``; Ã MuJoCo's diagonal
  approximation of J M⁻¹ Jᵀ), so its constraint forces are smaller than the exact ones by
  about the factor 1/(1 + (1 − d)/d) = d: the difference is about (1 − d) times the
  constraint's effect |q̈_exact − a₀| (a₀ the unconstrained acceleration), and it vanishes as
  d → 1 (MuJoCo caps d at 0.9999).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import warnings

import numpy as np

import soadyn as sd
from soadyn.io import mjcf as mx

HERE = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------- models
#: small MJCF robots written for the comparison (no geoms: nothing collides)
PENDULUM = """<mujoco model="pendulum"><compiler angle="radian"/>
<worldbody><body name="rod" pos="0 0 2" euler="0.2 0 0">
  <joint name="swing" type="hinge" axis="0 1 0" pos="0 0 0.5" ref="0.4"/>
  <inertial pos="0 0 -0.3" mass="1.3" fullinertia="0.04 0.05 0.02 0.002 -0.001 0.003"/>
  <site name="tip" pos="0 0 -0.6"/>
</body></worldbody></mujoco>"""

ARM3 = """<mujoco model="arm3"><compiler angle="radian"/><option gravity="0.5 -0.3 -9.7"/>
<worldbody><body name="base" pos="0.1 0 0.3" quat="0.9 0.1 0.3 -0.2">
  <inertial pos="0 0 0" mass="4" diaginertia="0.1 0.1 0.1"/>
  <body name="upper" pos="0 0 0.1">
    <joint name="shoulder" type="hinge" axis="0 0.6 0.8" pos="0.02 0 0" range="-2 2" armature="0.05" damping="0.3"/>
    <inertial pos="0.2 0.01 0" mass="2" fullinertia="0.01 0.06 0.06 0.001 0.002 -0.001"/>
    <body name="slider" pos="0.4 0 0" euler="0.3 -0.2 0.1">
      <joint name="extend" type="slide" axis="1 0 0.2" pos="0.1 0.2 0.3" ref="0.05" range="-0.3 0.3" armature="0.2"/>
      <inertial pos="0.1 0 0.02" mass="1" fullinertia="0.004 0.02 0.02 0 0.001 0"/>
      <body name="forearm" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="1 0 0" pos="0 0.03 0" ref="-0.3" damping="0.1"/>
        <inertial pos="0.15 0 0" mass="0.7" fullinertia="0.002 0.01 0.011 0.0005 0 0.0002"/>
        <site name="hand" pos="0.3 0 0" euler="0 1.2 0"/>
      </body></body></body></body></worldbody></mujoco>"""

FLOATING = """<mujoco model="floating"><compiler angle="radian"/>
<worldbody><body name="trunk" pos="0.3 -0.2 1.0" quat="0.8 0.2 -0.1 0.3">
  <freejoint name="root"/>
  <inertial pos="0.02 -0.01 0.03" mass="5" fullinertia="0.2 0.3 0.25 0.01 -0.02 0.03"/>
  <body name="head" pos="0 0.1 0.4" euler="0.1 0.2 -0.3">
    <joint name="neck" type="ball" pos="0.02 -0.01 -0.05"/>
    <inertial pos="0.01 0.02 0.1" mass="1.2" fullinertia="0.02 0.03 0.025 0.001 0.002 0.003"/>
    <body name="visor" pos="0.1 0 0.1">
      <joint name="visor" type="hinge" axis="0 1 0" pos="0 0 0.02"/>
      <inertial pos="0.05 0 0" mass="0.2" diaginertia="0.001 0.002 0.002"/>
      <site name="visor_tip" pos="0.1 0 0"/>
    </body></body></body></worldbody></mujoco>"""

TWO_HINGES = """<mujoco model="two_hinges"><compiler angle="radian"/>
<worldbody><body name="link" pos="0 0 1" euler="0 0.3 0">
  <joint name="yaw" type="hinge" axis="0 0 1" pos="0.05 0 0" ref="0.2"/>
  <joint name="pitch" type="hinge" axis="0 1 0" pos="0 0.04 -0.1" ref="-0.5"/>
  <inertial pos="0.3 0.02 -0.01" mass="2.5" fullinertia="0.03 0.08 0.085 0.002 -0.003 0.001"/>
  <body name="tip" pos="0.6 0 0">
    <joint name="roll" type="hinge" axis="1 0 0"/>
    <joint name="push" type="slide" axis="0 0 1" pos="0.3 0.1 0"/>
    <inertial pos="0.1 0 0" mass="0.5" diaginertia="0.001 0.004 0.004"/>
    <site name="end" pos="0.2 0.01 0"/>
  </body></body></worldbody></mujoco>"""

#: the robots written here, by name
MODELS = {"pendulum": PENDULUM, "arm3": ARM3, "floating": FLOATING, "two_hinges": TWO_HINGES}


#: the bodies of a planar four-bar: crank, coupler, rocker on hinges about y, ground link 1 m
FOUR_BAR_BODIES = """
<body name="crank"><joint name="crank" axis="0 1 0"/>
  <inertial pos="0 0 0.2" mass="1" diaginertia="0.02 0.02 0.001"/>
  <body name="coupler" pos="0 0 0.4"><joint name="coupler" axis="0 1 0"/>
    <inertial pos="0.5 0 0.1" mass="1.5" diaginertia="0.003 0.15 0.15"/></body></body>
<body name="rocker" pos="1 0 0"><joint name="rocker" axis="0 1 0"/>
  <inertial pos="0 0 0.3" mass="0.8" diaginertia="0.03 0.03 0.001"/></body>
"""


def four_bar(solimp=None):
    """The four-bar (:data:`FOUR_BAR_BODIES`) closed by ``<connect>`` between the coupler's
    tip and the rocker's tip, drawn closed at qpos0."""
    extra = f' solimp="{solimp}"' if solimp else ""
    return f"""<mujoco model="four_bar"><compiler angle="radian"/><worldbody>{FOUR_BAR_BODIES}</worldbody>
<equality><connect name="close" body1="coupler" body2="rocker" anchor="1 0 0.2"{extra}/></equality></mujoco>"""


#: dm_control suite robots (``dm_control/suite/*.xml``) compared when the files are found
SUITE = ("acrobot", "cartpole", "pendulum", "reacher", "finger", "ball_in_cup", "point_mass", "swimmer",
         "hopper", "walker", "cheetah", "fish", "manipulator", "stacker", "quadruped", "humanoid",
         "humanoid_CMU", "dog")


def dm_control_suite():
    """The ``dm_control/suite`` directory of an installed dm_control (found without importing
    it: only its XML files are read), or None."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = os.path.join(list(spec.submodule_search_locations)[0], "suite")
    return d if os.path.isdir(d) else None


def load(source):
    """(soadyn model, MjModel) of an XML string or path; the MjModel without armature and
    contacts, the loader's warning about what it left out silenced."""
    import mujoco
    is_xml = source.lstrip().startswith("<")
    m = mujoco.MjModel.from_xml_string(source) if is_xml else mujoco.MjModel.from_xml_path(source)
    m.dof_armature[:] = 0.0
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*soadyn left out")
        model = sd.load_mjcf(source)
    return model, m


def full_mass_matrix(m, d):
    """MuJoCo's dense mass matrix (``mj_fullM``; its signature changed in MuJoCo 4)."""
    import mujoco
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)
    except TypeError:
        mujoco.mj_fullM(m, M, d.qM)
    return M


def mujoco_rne_and_mass_matrix(m, qpos, qvel, qacc):
    """MuJoCo's ``mj_rne`` (flg_acc = 1) at (qpos, qvel, qacc) and its mass matrix."""
    import mujoco
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = qpos, qvel
    mujoco.mj_forward(m, d)
    d.qacc[:] = qacc
    rne = np.zeros(m.nv)
    mujoco.mj_rne(m, d, 1, rne)
    return rne, full_mass_matrix(m, d)


def velocity_map(model, q):
    """T = ∂qvel/∂v (MuJoCo's velocity from soadyn's, linear in v) at q, (nv_mujoco, nv)."""
    return mx.v_to_mujoco(model, q, np.eye(model.nv)).T if model.nv else np.zeros((0, 0))


def random_state(model, rng):
    """(q, v, v̇) at random; closed by ``sd.close_loops`` when the model has constraints."""
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    if model.has_constraints:
        q, v = sd.close_loops(model, q, v)
    return q, v, rng.normal(size=model.nv)


def relative(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def tree_agreement(model, m, rng, states=5):
    """Largest relative differences (inverse dynamics, mass matrix) between soadyn's tree
    dynamics and MuJoCo's ``mj_rne`` / ``mj_fullM`` over random states."""
    tree = model.spanning_tree()
    worst_id = worst_m = 0.0
    for _ in range(states):
        q, v, a = random_state(model, rng)
        qpos = mx.q_to_mujoco(model, q)
        rne, M = mujoco_rne_and_mass_matrix(m, qpos, mx.v_to_mujoco(model, q, v), mx.a_to_mujoco(model, q, v, a))
        T = velocity_map(model, q)
        worst_id = max(worst_id, relative(sd.rnea(tree, q, v, a), mx.tau_from_mujoco(model, qpos, rne)))
        worst_m = max(worst_m, relative(sd.mass_matrix(tree, q), T.T @ M @ T))
    return worst_id, worst_m


def four_bar_states(model, rng, n):
    """n closed states of the four-bar: crank angle, all velocities and torques at random."""
    out = []
    for _ in range(n):
        guess = np.array([rng.uniform(-1.0, 1.0), 0.0, 0.0])
        q, v = sd.close_loops(model, guess, np.array([rng.normal(), 0.0, 0.0]), independent=["crank"])
        out.append((q, v, rng.normal(size=3)))
    return out


def four_bar_difference(solimp=None, states=None):
    """Per state: (max |q̈_MuJoCo − q̈_exact| / max |q̈_exact|, the same over the
    constraint's effect max |q̈_exact − a₀|) for the four-bar with MuJoCo's ``solimp``."""
    import mujoco
    model = sd.load_mjcf(four_bar())
    m = mujoco.MjModel.from_xml_string(four_bar(solimp))
    d = mujoco.MjData(m)
    tree = model.spanning_tree()
    out = []
    for q, v, tau in states:
        exact = sd.constrained_forward_dynamics(model, q, v, tau).qdd
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
        mujoco.mj_forward(m, d)
        effect = np.abs(exact - sd.aba(tree, q, v, tau)).max()
        diff = np.abs(d.qacc - exact).max()
        out.append((diff / np.abs(exact).max(), diff / effect))
    return out


def main(argv=None):
    import mujoco
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(HERE, "results", "mjcf.md"))
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    from timing import machine_description
    rng = np.random.default_rng(0)
    rows = []
    sources = [(name, xml, "written for the tests") for name, xml in MODELS.items()]
    sources.append(("four_bar", four_bar(), "written for the tests (spanning tree)"))
    suite = dm_control_suite()
    if suite is not None:
        sources += [(f"dm_control {n}", os.path.join(suite, f"{n}.xml"), "dm_control suite") for n in SUITE]
    for name, src, origin in sources:
        model, m = load(src)
        e_id, e_m = tree_agreement(model, m, rng)
        rows.append(f"| {name} | {origin} | {model.nbodies} | {model.nv} | {e_id:.1e} | {e_m:.1e} |")
    model = sd.load_mjcf(four_bar())
    states = four_bar_states(model, rng, 20)
    fb = []
    for solimp, label in ((None, "default (d = 0.9)"), ("0.99 0.99 0.001", "0.99"), ("0.9999 0.9999 0.001", "0.9999")):
        diffs = np.array(four_bar_difference(solimp, states))
        fb.append(f"| {label} | {np.median(diffs[:, 0]):.2e} | {diffs[:, 0].max():.2e} | "
                  f"{np.median(diffs[:, 1]):.2e} | {diffs[:, 1].max():.2e} |")
    text = [
        "# MJCF: soadyn against MuJoCo on the same files", "", "```", machine_description().rstrip(),
        f"mujoco {mujoco.__version__}" + ("" if suite else "; dm_control suite files not found"), "```", "",
        "Written by `python benchmarks/mjcf_agreement.py` (its docstring says how). Tree dynamics: largest "
        "relative difference (max |Δ| / max |MuJoCo|) over 5 random states, MuJoCo's armature set to zero.",
        "", "| model | from | soadyn bodies | nv | inverse dynamics vs mj_rne | mass matrix vs mj_fullM |",
        "|---|---|---|---|---|---|", *rows, "",
        "## Four-bar closed by `<equality><connect>`: exact loop vs MuJoCo's soft constraint", "",
        "20 closed states (random crank angle and velocity, random joint torques). Relative difference "
        "max |q̈_MuJoCo − q̈_exact| / max |q̈_exact|, and the same difference over the constraint's effect "
        "max |q̈_exact − a₀| (a₀: the open tree's acceleration), which the docstring expects near 1 − d. The "
        "relative difference is large where q̈_exact is small (the constraint force nearly balances gravity and "
        "τ); the share of the constraint's effect is the stable measure.", "",
        "| MuJoCo solimp (impedance d) | median rel. diff. | max rel. diff. | median diff. / effect | "
        "max diff. / effect |", "|---|---|---|---|---|", *fb, ""]
    with open(args.output, "w") as f:
        f.write("\n".join(text))
    import results_json
    results_json.write_twin(args.output)  # the machine block is in the text
    print("\n".join(text))


if __name__ == "__main__":
    main()
