"""sd.rollout against MuJoCo's ``mujoco.rollout`` on the same robots, same run.

``python benchmarks/rollout.py`` (needs ``pip install mujoco example-robot-data``) writes
``benchmarks/results/rollout.md``.

The robot (panda, ur5 from example-robot-data) is loaded by both libraries from the same
URDF. MuJoCo gets the URDF without its visual and collision geometry (the inertias come
from the ``<inertial>`` elements), without ``<dynamics>`` (no damping or friction; armature
is zero), with every constraint disabled (contacts, joint limits, the fingers' mimic
equality: ``mjDSBL_CONSTRAINT``) and the same gravity and timestep. The controls are joint
forces (``qfrc_applied``, MuJoCo's ``mjSTATE_QFRC_APPLIED`` control spec), one row per
step, for B random initial states and random control sequences of T steps. Integrators:
MuJoCo's ``Euler`` (semi-implicit: v first, then q with the new v; no damping, so no
implicit term) against ``"semi-implicit-euler"``, and MuJoCo's ``RK4`` against ``"rk4"``.

Throughput in steps per second (B·T / time), medians of interleaved rounds:

* 1 thread: MuJoCo ``Rollout(nthread=0)`` (the calling thread) on the B rollouts against a
  Python loop of B single ``sd.rollout`` calls (each runs on the calling thread);
* 2 threads: MuJoCo ``Rollout(nthread=2)`` with 2 ``MjData`` against one batched
  ``sd.rollout`` call (``NUMBA_NUM_THREADS`` threads, 2 on this machine).

Agreement: the largest differences of q and v between the two libraries after one step
and over the whole horizon, next to how far soadyn's own trajectories move when q0 is
perturbed by 1e-12 (the sensitivity of these random motions, which bounds the agreement
that any two correct implementations can reach over the horizon).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import machine_description, time_interleaved  # noqa: E402
from peers import robot_path  # noqa: E402

import soadyn as sd  # noqa: E402

INTEGRATORS = ("semi-implicit-euler", "rk4")


def mujoco_model(path, dt):
    """The URDF at ``path`` as an MjModel without geometry, damping or constraints."""
    import mujoco
    with open(path) as f:
        xml = f.read()
    xml = re.sub(r"<visual>.*?</visual>", "", xml, flags=re.S)
    xml = re.sub(r"<collision>.*?</collision>", "", xml, flags=re.S)
    xml = re.sub(r"<dynamics[^>]*/>", "", xml)
    xml = re.sub(r"(<robot[^>]*>)", r'\1<mujoco><compiler discardvisual="true" balanceinertia="false"/></mujoco>',
                 xml, count=1)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.timestep = dt
    assert not m.dof_damping.any() and not m.dof_armature.any() and not m.dof_frictionloss.any()
    return m


def setup(robot, batch, steps, dt, seed):
    import mujoco
    path = robot_path(robot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_urdf(path, floating_base=False, mimic="ignore")  # the fingers' mimic disabled
    mm = mujoco_model(path, dt)
    names = [mm.joint(i).name for i in range(mm.njnt)]
    assert names == [j.name for j in model.joints if j.nv], (names, model.joints)
    assert np.allclose(mm.opt.gravity, model.gravity)
    rng = np.random.default_rng(seed)
    q0 = np.stack([sd.random_configuration(model, rng) for _ in range(batch)])
    v0 = rng.normal(size=(batch, model.nv))
    tau = rng.normal(size=(batch, steps, model.nv))
    data = mujoco.MjData(mm)
    kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
    states = np.zeros((batch, mujoco.mj_stateSize(mm, kind)))
    for b in range(batch):
        mujoco.mj_resetData(mm, data)
        data.qpos[:], data.qvel[:] = q0[b], v0[b]
        mujoco.mj_getState(mm, data, states[b], kind)
    return model, mm, q0, v0, tau, states


def measure(robot, integrator, batch, steps, dt, rounds, seed=0):
    import mujoco
    from mujoco import rollout as mjr
    model, mm, q0, v0, tau, S0 = setup(robot, batch, steps, dt, seed)
    mm.opt.integrator = {"semi-implicit-euler": mujoco.mjtIntegrator.mjINT_EULER,
                         "rk4": mujoco.mjtIntegrator.mjINT_RK4}[integrator]
    spec = mujoco.mjtState.mjSTATE_QFRC_APPLIED.value
    datas = [mujoco.MjData(mm) for _ in range(2)]
    Q1, V1 = np.empty((batch, steps + 1, model.nq)), np.empty((batch, steps + 1, model.nv))
    with mjr.Rollout(nthread=0) as serial, mjr.Rollout(nthread=2) as pool:
        cases = {
            ("mujoco", 1): lambda: serial.rollout(mm, datas[0], S0, tau, control_spec=spec),
            ("soadyn", 1): lambda: [sd.rollout(model, q0[b], v0[b], tau[b], dt, integrator, out=(Q1[b], V1[b]))
                                    for b in range(batch)],
            ("mujoco", 2): lambda: pool.rollout(mm, datas, S0, tau, control_spec=spec),
            ("soadyn", 2): lambda: sd.rollout(model, q0, v0, tau, dt, integrator),
        }
        # one call per sample (each takes 0.1-1 s), the four in a new random order each round
        times = time_interleaved({k: ("f()", {"f": f}) for k, f in cases.items()}, rounds, 1e-3,
                                 np.random.default_rng(seed))
        state, _ = serial.rollout(mm, datas[0], S0, tau, control_spec=spec)
    Q, V = sd.rollout(model, q0, v0, tau, dt, integrator)
    Qp, Vp = sd.rollout(model, q0 + 1e-12, v0, tau, dt, integrator)
    qm, vm = state[:, :, 1:1 + mm.nq], state[:, :, 1 + mm.nq:1 + mm.nq + mm.nv]  # (time, qpos, qvel, ...)
    sps = {k: batch * steps / t[0] for k, t in times.items()}
    return {
        "robot": robot, "nv": model.nv, "integrator": integrator, "batch": batch, "steps": steps, "dt": dt,
        "rounds": rounds, "sps": sps,
        "ratio1": sps[("soadyn", 1)] / sps[("mujoco", 1)], "ratio2": sps[("soadyn", 2)] / sps[("mujoco", 2)],
        "q_step1": np.abs(qm[:, 0] - Q[:, 1]).max(), "v_step1": np.abs(vm[:, 0] - V[:, 1]).max(),
        "q_all": np.abs(qm - Q[:, 1:]).max(), "v_all": np.abs(vm - V[:, 1:]).max(),
        "q_sens": np.abs(Qp - Q).max(), "v_sens": np.abs(Vp - V).max(),
        "batch_equals_loop": bool(np.array_equal(Q, Q1) and np.array_equal(V, V1)),
    }


def report(rows, header):
    lines = ["# sd.rollout against mujoco.rollout", "", "```", header, "```", "",
             "Steps per second (B rollouts × T steps / median time over interleaved rounds); ratio = soadyn / "
             "MuJoCo (≥ 1: soadyn is faster). 1 thread: MuJoCo `Rollout(nthread=0)` against a loop of single "
             "`sd.rollout` calls; 2 threads: MuJoCo `Rollout(nthread=2)` against one batched `sd.rollout` call.", "",
             "| robot | nv | integrator | B × T | dt [s] | MuJoCo 1 thr [steps/s] | soadyn 1 thr | ratio 1 thr | "
             "MuJoCo 2 thr | soadyn 2 thr | ratio 2 thr |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["sps"]
        lines.append(f"| {r['robot']} | {r['nv']} | {r['integrator']} | {r['batch']} × {r['steps']} | {r['dt']} | "
                     f"{s[('mujoco', 1)]:.3g} | {s[('soadyn', 1)]:.3g} | {r['ratio1']:.2f} | "
                     f"{s[('mujoco', 2)]:.3g} | {s[('soadyn', 2)]:.3g} | {r['ratio2']:.2f} |")
    lines += ["", "## Agreement of the trajectories (max over the B rollouts and the joints)", "",
              "After one step the two libraries agree to rounding; over the whole horizon the difference grows "
              "as the motion's own sensitivity does (last two columns: soadyn against itself from q0 + 1e-12).", "",
              "| robot | integrator | max Δq step 1 [rad, m] | max Δv step 1 | max Δq all T | max Δv all T | "
              "soadyn(q0 + 1e-12) Δq all T | Δv all T | batch = loop |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['robot']} | {r['integrator']} | {r['q_step1']:.1e} | {r['v_step1']:.1e} | "
                     f"{r['q_all']:.1e} | {r['v_all']:.1e} | {r['q_sens']:.1e} | {r['v_sens']:.1e} | "
                     f"{'yes' if r['batch_equals_loop'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["panda", "ur5"])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                     "rollout.md"))
    args = ap.parse_args(argv)
    import mujoco
    header = machine_description() + f"\nmujoco {mujoco.__version__}"
    rows = []
    for robot in args.robots:
        for integrator in INTEGRATORS:
            r = measure(robot, integrator, args.batch, args.steps, args.dt, args.rounds)
            print(f"{robot:6s} {integrator:20s} ratio 1 thread {r['ratio1']:.2f}, 2 threads {r['ratio2']:.2f}",
                  flush=True)
            rows.append(r)
    text = report(rows, header)
    with open(args.output, "w") as f:
        f.write(text)
    import results_json
    results_json.write_twin(args.output)  # the machine block is in the text
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
