"""Centroidal dynamics, the Coriolis matrix and the dynamic-parameter regressors against
Pinocchio (issue 42): agreement and speed, in one run.

    PYTHONPATH=src python benchmarks/control_ident.py [--output DIR] [--rounds 15]

* **agreement**: the largest relative error max |ours − Pinocchio's| / max(1, max |Pinocchio's|)
  over random states, per function and robot (every example-robot-data robot of
  ``peers.ROBOTS``, fixed and floating base), Pinocchio's results mapped by
  ``soadyn.interop.pinocchio`` (angular-first rows, soadyn's velocity order, regressor
  columns matched to bodies by joint name);
* **speed**: per-call time of the public functions against Pinocchio's Python calls on
  talos, g1 and solo12 (their default bases: floating), interleaved in one run, medians;
  the ratio soadyn / Pinocchio, target ≤ 1.0 for the centroidal momentum matrix, the CoM
  Jacobian, the Coriolis matrix and the joint-torque regressor (``TARGETS``). soadyn's
  calls allocate their output; Pinocchio's return arrays of its ``Data``.

Writes ``control_ident.{json,md}`` to ``--output`` (default ``benchmarks/results``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peers  # noqa: E402
from timing import machine_description, time_interleaved  # noqa: E402

#: (function, soadyn call, Pinocchio call) timed per robot
CALLS = (
    ("centroidal_momentum_matrix", "sd.centroidal_momentum_matrix(m, q)", "pin.computeCentroidalMap(pm, pd, qp)"),
    ("center_of_mass_jacobian", "sd.center_of_mass_jacobian(m, q)", "pin.jacobianCenterOfMass(pm, pd, qp)"),
    ("coriolis_matrix", "sd.coriolis_matrix(m, q, v)", "pin.computeCoriolisMatrix(pm, pd, qp, vp)"),
    ("joint_torque_regressor", "sd.joint_torque_regressor(m, q, v, a)",
     "pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)"),
    ("centroidal_momentum", "sd.centroidal_momentum(m, q, v)", "pin.computeCentroidalMomentum(pm, pd, qp, vp)"),
    ("centroidal_momentum_rate", "sd.centroidal_momentum_rate(m, q, v, a)",
     "pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)"),
    ("kinetic_energy_regressor", "sd.kinetic_energy_regressor(m, q, v)",
     "pin.computeKineticEnergyRegressor(pm, pd, qp, vp)"),
)
#: the issue's targets: ratio soadyn / Pinocchio ≤ 1.0 on these robots for these functions
TARGETS = {robot: {f: 1.0 for f in ("centroidal_momentum_matrix", "center_of_mass_jacobian", "coriolis_matrix",
                                      "joint_torque_regressor")} for robot in ("talos", "g1", "solo12")}
SPEED_ROBOTS = ("talos", "g1", "solo12")


def rel(x, y):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return float(np.abs(x - y).max() / max(1.0, np.abs(y).max()))


def agreement(pair, states, seed=0):
    """{function: largest relative error} over ``states`` random states of ``pair``."""
    import pinocchio as pin

    import soadyn as sd
    from soadyn.interop import pinocchio as sdpin
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()
    cols = pair.parameter_columns()
    swap = [3, 4, 5, 0, 1, 2]
    errors = {}

    def note(name, e):
        errors[name] = max(errors.get(name, 0.0), e)

    ref = np.concatenate([pm.inertias[j].toDynamicParameters() for j in range(1, pm.njoints)])
    note("dynamic_parameters", rel(sd.dynamic_parameters(m), ref[cols]))
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q = sd.random_configuration(m, rng)
        v, a = rng.normal(size=(2, m.nv))
        qp, vp, ap = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a)
        note("centroidal_momentum_matrix",
             rel(sd.centroidal_momentum_matrix(m, q), sdpin.jacobian_from_pinocchio(m, pin.computeCentroidalMap(pm, pd, qp), pm)))
        pin.ccrba(pm, pd, qp, vp)
        note("centroidal_inertia", rel(sd.centroidal_inertia(m, q), pd.Ig.matrix()[np.ix_(swap, swap)]))
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        note("centroidal_momentum", rel(sd.centroidal_momentum(m, q, v), sdpin.force_from_pinocchio(pd.hg.vector)))
        pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
        note("centroidal_momentum_rate",
             rel(sd.centroidal_momentum_rate(m, q, v, a), sdpin.force_from_pinocchio(pd.dhg.vector)))
        note("center_of_mass_jacobian",
             rel(sd.center_of_mass_jacobian(m, q), sdpin.v_from_pinocchio(m, pin.jacobianCenterOfMass(pm, pd, qp), pm)))
        pin.centerOfMass(pm, pd, qp, vp, ap)
        note("center_of_mass (c, ċ, c̈)", max(rel(x, y) for x, y in zip(sd.center_of_mass(m, q, v, a),
                                                                          (pd.com[0], pd.vcom[0], pd.acom[0]))))
        note("coriolis_matrix", rel(sd.coriolis_matrix(m, q, v), T.T @ pin.computeCoriolisMatrix(pm, pd, qp, vp) @ T))
        note("joint_torque_regressor",
             rel(sd.joint_torque_regressor(m, q, v, a), T.T @ pin.computeJointTorqueRegressor(pm, pd, qp, vp, ap)[:, cols]))
        note("kinetic_energy_regressor",
             rel(sd.kinetic_energy_regressor(m, q, v), pin.computeKineticEnergyRegressor(pm, pd, qp, vp)[cols]))
        note("potential_energy_regressor",
             rel(sd.potential_energy_regressor(m, q), pin.computePotentialEnergyRegressor(pm, pd, qp)[cols]))
    return errors


def speed(pair, rounds, sample_seconds, rng):
    """{function: {"soadyn_us", "pinocchio_us", "ratio", ...}} (medians of interleaved samples)."""
    import pinocchio as pin

    import soadyn as sd
    m = pair.sd
    state_rng = np.random.default_rng(1)
    q = sd.random_configuration(m, state_rng)
    v, a = state_rng.normal(size=(2, m.nv))
    ns = dict(sd=sd, pin=pin, m=m, pm=pair.pm, pd=pair.pd, q=q, v=v, a=a, qp=pair.q_to_pin(q), vp=pair.v_to_pin(v),
              ap=pair.v_to_pin(a))
    cases = {}
    for name, ours, theirs in CALLS:
        cases[(name, "soadyn")] = (ours, ns)
        cases[(name, "pinocchio")] = (theirs, ns)
    times = time_interleaved(cases, rounds, sample_seconds, rng)
    out = {}
    for name, _, _ in CALLS:
        s, p = times[(name, "soadyn")], times[(name, "pinocchio")]
        out[name] = {"soadyn_us": s[0] * 1e6, "pinocchio_us": p[0] * 1e6, "ratio": s[0] / p[0],
                     "soadyn_range_us": [s[1] * 1e6, s[2] * 1e6], "pinocchio_range_us": [p[1] * 1e6, p[2] * 1e6]}
    return out


def markdown(res):
    lines = ["# Centroidal dynamics, Coriolis matrix, regressors against Pinocchio (issue 42)", "",
             "Produced by `benchmarks/control_ident.py`; machine and versions at the end.", "",
             "## Agreement", "",
             f"Largest relative error max |soadyn − Pinocchio| / max(1, max |Pinocchio|) over {res['states']} random "
             "states per robot (fixed and floating base), Pinocchio's results mapped by soadyn.interop.pinocchio.", ""]
    robots = list(res["agreement"])
    functions = list(next(iter(res["agreement"].values())))
    lines.append("| function | " + " | ".join(robots) + " |")
    lines.append("|---|" + "---|" * len(robots))
    for f in functions:
        lines.append(f"| {f} | " + " | ".join(f"{res['agreement'][r][f]:.1e}" for r in robots) + " |")
    worst = max(e for r in robots for e in res["agreement"][r].values())
    lines += ["", f"Worst: {worst:.1e} (the tests require 1e-10).", "",
              "## Speed", "",
              f"Median per-call time over {res['rounds']} interleaved rounds (µs), public calls on one state "
              "(soadyn's allocate their output), robots with their floating base; ratio soadyn / Pinocchio "
              "(target ≤ 1.0 where marked).", "",
              "| robot | function | soadyn µs | Pinocchio µs | ratio | target |", "|---|---|---|---|---|---|"]
    for robot, rows in res["speed"].items():
        for f, r in rows.items():
            goal = TARGETS.get(robot, {}).get(f)
            mark = "" if goal is None else (f"≤ {goal:g} " + ("met" if r["ratio"] <= goal else "**not met**"))
            lines.append(f"| {robot} | {f} | {r['soadyn_us']:.2f} | {r['pinocchio_us']:.2f} | {r['ratio']:.2f} | {mark} |")
    lines += ["", "## Machine", "", "```", res["machine"].rstrip(), "```", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sample-seconds", type=float, default=0.02)
    ap.add_argument("--states", type=int, default=5)
    args = ap.parse_args(argv)
    res = {"machine": machine_description(), "rounds": args.rounds, "states": args.states, "agreement": {},
           "speed": {}}
    for name in peers.ROBOTS:
        for floating in (False, True):
            pair = peers.load_pair(name, floating)
            res["agreement"][f"{name} {'floating' if floating else 'fixed'}"] = agreement(pair, args.states)
    rng = np.random.default_rng(0)
    for name in SPEED_ROBOTS:
        res["speed"][name] = speed(peers.load_pair(name), args.rounds, args.sample_seconds, rng)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "control_ident.json"), "w") as f:
        json.dump(res, f, indent=1)
    text = markdown(res)
    with open(os.path.join(args.output, "control_ident.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
