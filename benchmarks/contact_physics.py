"""The physics table of time stepping with contact: each scene of
``benchmarks/contact_scenes.py`` stepped by ``sd.step`` (dt = 1 ms, contacts detected within
a 5 mm margin, the other ContactSettings at their defaults), the quantity its closed form
or conservation law fixes, the value measured and the tolerance of its test in
``tests/contact/test_physics.py``; and the same MJCF scenes in MuJoCo (elliptic cones,
implicitfast, dt = 1 ms): rest heights and slide distances. Values, not timings.

Writes ``benchmarks/results/contact_physics.json`` and ``.md``.

    PYTHONPATH=src python benchmarks/contact_physics.py
"""
from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import contact_scenes as scenes  # noqa: E402
from timing import machine_description  # noqa: E402

import soadyn as sd  # noqa: E402

RESULTS = os.path.join(HERE, "results")
SETTINGS = sd.ContactSettings(margin=5e-3)
MU = 0.3


def run(scene, duration, controller=None, settings=SETTINGS):
    """(q (n + 1, nq), v (n + 1, nv), the n StepResults) from the scene's initial state."""
    model = scene.model
    q, v = scene.q0.copy(), scene.v0.copy()
    Q, V, steps = [q], [v], []
    for _ in range(int(round(duration / scene.dt))):
        tau = np.zeros(model.nv) if controller is None else controller(q, v)
        r = sd.step(model, q, v, tau, scene.dt, settings=settings)
        q, v = r.q, r.v
        Q.append(q)
        V.append(v)
        steps.append(r)
    return np.array(Q), np.array(V), steps


def world_linear_velocity(model, q, v):
    return sd.body_placements(model, q)[0][0] @ v[3:6]


def energy(model, Q, V):
    return np.array([sd.kinetic_energy(model, q, v) + sd.potential_energy(model, q) for q, v in zip(Q, V)])


def tangential_slip(model, Q, V, steps):
    """max over the steps and contacts of ‖σ_T‖ [m/s], each step's contact velocity (its
    contacts, its initial q, its v⁺)."""
    return max((float(np.linalg.norm(sd.contact.contact_velocities(model, Q[i], V[i + 1], r.contacts)[:, :2],
                                     axis=1).max()) for i, r in enumerate(steps) if len(r.contacts)), default=0.0)


def mujoco_final(xml, steps):
    import mujoco
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    q0 = d.qpos.copy()
    for _ in range(steps):
        mujoco.mj_step(m, d)
    return q0, d.qpos.copy(), max([-d.contact[i].dist for i in range(d.ncon)], default=0.0)


def pyramidal(xml):
    """The scene with MuJoCo's pyramidal friction cones (its default) instead of elliptic ones."""
    return xml.replace('cone="elliptic"', 'cone="pyramidal"')


def row(test, closed_form, measured, tolerance, passed, unit=""):
    return dict(test=test, closed_form=closed_form, measured=measured, tolerance=tolerance, passed=bool(passed),
                unit=unit)


def main():
    rows, mj = [], []
    tol_pen = SETTINGS.slop + scenes.G * scenes.DT ** 2 / SETTINGS.stabilization

    for theta in (0.2, math.atan(0.9 * MU)):
        s = scenes.incline(theta, mu=MU)
        Q, _, _ = run(s, 1.0)
        drift = float(np.linalg.norm(Q[:, :3] - Q[0, :3], axis=1).max())
        rows.append(row(f"incline θ = {theta:.4f} (tan θ = {math.tan(theta):.3f} < μ = {MU}): sticks",
                        "drift 0 [m] in 1 s", drift, "< 1e-6 m", drift < 1e-6, "m"))
    for theta in (0.4, 0.5):
        s = scenes.incline(theta, mu=MU)
        Q, V, _ = run(s, 1.0)
        a = scenes.G * (math.sin(theta) - MU * math.cos(theta))
        measured = float(world_linear_velocity(s.model, Q[-1], V[-1])[0] / 1.0)
        err = measured / a - 1
        rows.append(row(f"incline θ = {theta} (tan θ = {math.tan(theta):.3f} > μ): slides",
                        f"a = g (sin θ − μ cos θ) = {a:.5f} m/s²", measured, "1 %", abs(err) < 0.01, "m/s²")
                    | dict(relative_error=err))
        q0, q1, _ = mujoco_final(s.xml, len(Q) - 1)
        _, qp, _ = mujoco_final(pyramidal(s.xml), len(Q) - 1)
        ours, theirs = float(Q[-1, 0] - Q[0, 0]), float(q1[0] - q0[0])
        mj.append(dict(test=f"incline θ = {theta}: distance slid in 1 s", soadyn=ours, mujoco=theirs,
                       mujoco_pyramidal=float(qp[0] - q0[0]),
                       closed_form=0.5 * a, relative_difference=ours / theirs - 1, tolerance="2 %",
                       passed=abs(ours / theirs - 1) < 0.02, unit="m"))

    s = scenes.rolling_sphere(v0=1.0, radius=0.1, mu=0.5)
    p = s.params
    Q, V, steps = run(s, 8 * p["t_roll"])
    speed = float(np.linalg.norm(world_linear_velocity(s.model, Q[-1], V[-1])))
    err = speed / p["v_roll"] - 1
    rows.append(row("sphere launched sliding (v₀ = 1 m/s, ω₀ = 0, μ = 0.5): speed at 8 t*",
                    "5/7 v₀ = 0.714286 m/s", speed, "0.5 %", abs(err) < 0.005, "m/s") | dict(relative_error=err))
    t = s.dt * np.arange(1, len(Q))
    late = [r for r, ti in zip(steps, t) if ti >= 1.05 * p["t_roll"]]
    first = len(steps) - len(late)
    slip = tangential_slip(s.model, Q[first:], V[first:], late)
    rows.append(row("rolling sphere: contact point at rest after t* = 2 v₀/(7 μ g)", "‖σ_T‖ = 0", slip,
                    "< 1e-6 m/s", slip < 1e-6, "m/s"))
    E = energy(s.model, Q, V)
    rows.append(row("rolling sphere: energy never increases", "max ΔE per step ≤ 0", float(np.diff(E).max()),
                    "≤ 1e-9 E₀", np.diff(E).max() <= 1e-9 * E[0], "J"))

    for shape in ("sphere", "box"):
        s = scenes.drop(shape)
        p = s.params
        Q, V, steps = run(s, 1.0)
        depth = max(max(0.0, float(r.contacts.depth.max())) if len(r.contacts) else 0.0 for r in steps)
        rows.append(row(f"drop ({shape}) from 0.5 m: largest penetration", f"≤ slop + g dt²/β = {tol_pen:.3g} m",
                        depth, f"{tol_pen:.3g} m", depth <= tol_pen, "m"))
        touched = next(i for i, r in enumerate(steps) if len(r.contacts) and r.contacts.depth.max() >= 0)
        rise = float(Q[touched:, 2].max() - p["size"])
        rows.append(row(f"drop ({shape}): no rebound (highest centre after impact − rest height)", "≤ 0 (inelastic)",
                        rise, f"{tol_pen:.3g} m", rise <= tol_pen, "m"))
        E = energy(s.model, Q, V)
        rows.append(row(f"drop ({shape}): energy never above its initial value", "max E(t) − E(0) ≤ 0",
                        float(E.max() - E[0]), "≤ 1e-9 abs(E₀)", E.max() <= E[0] + 1e-9 * abs(E[0]), "J"))
        rest = float(Q[-1, 2])
        rows.append(row(f"drop ({shape}): rest height of the centre", f"{p['size']} m", rest, f"{tol_pen:.3g} m",
                        abs(rest - p["size"]) <= tol_pen and np.abs(V[-1]).max() < 1e-6, "m"))
        _, q1, pen = mujoco_final(s.xml, len(Q) - 1)
        _, qp, _ = mujoco_final(pyramidal(s.xml), len(Q) - 1)
        ours_pen = max(0.0, float(steps[-1].contacts.depth.max()))
        mj.append(dict(test=f"drop ({shape}): rest height of the centre", soadyn=rest, mujoco=float(q1[2]),
                       mujoco_pyramidal=float(qp[2]),
                       closed_form=p["size"], mujoco_penetration=pen, soadyn_penetration=ours_pen,
                       tolerance="MuJoCo's penetration + ours", passed=abs(rest - q1[2]) <= pen + ours_pen + 1e-9,
                       unit="m"))

    s = scenes.stack(5)
    Q, _, steps = run(s, 2.0)
    moved = max(float(np.linalg.norm(Q[:, 7 * b:7 * b + 3] - Q[0, 7 * b:7 * b + 3], axis=1).max()) for b in range(5))
    rows.append(row("five stacked boxes, 2 s: largest displacement of a box", "0 m", moved, "< 1 mm", moved < 1e-3,
                    "m"))
    converged = [r.solution for r in steps if len(r.contacts)]
    worst = max(max(x.primal, x.dual, x.complementarity) for x in converged)
    rows.append(row(f"stack: NCP residuals of every step ({len(converged)} solves, 20 contacts)",
                    f"≤ tol = {SETTINGS.tol:g}", worst, f"{SETTINGS.tol:g}",
                    worst <= SETTINGS.tol and all(x.converged for x in converged), ""))

    s = scenes.quadruped()
    p = s.params
    Q, V, steps = run(s, 1.0, controller=lambda q, v: scenes.pd_torque(s.model, q, v, p["q_ref"], p["kp"], p["kd"]))
    weight = p["mass"] * p["g"] * s.dt
    ratios = np.array([r.impulses[:, 2].sum() / weight for r in steps[len(steps) // 2:]])
    worst = float(np.abs(ratios - 1).max())
    rows.append(row(f"solo12 standing under PD (kp {p['kp']}, kd {p['kd']}): Σ λ_n / (m g dt), last 0.5 s",
                    "1", float(ratios[np.argmax(np.abs(ratios - 1))]), "1 %", worst < 0.01, "")
                | dict(relative_error=worst))
    slip = tangential_slip(s.model, Q, V, steps)
    rows.append(row("solo12: feet do not slip (tangential contact velocity)", "‖σ_T‖ = 0", slip, "< 1e-6 m/s",
                    slip < 1e-6, "m/s"))
    base = float(Q[-1, 2])

    # the same checks at the default settings (margin 0): what the 5 mm margin above is for
    defaults, default_rows = sd.ContactSettings(), []
    s = scenes.incline(0.2, mu=MU)
    Q, _, steps = run(s, 1.0, settings=defaults)
    default_rows.append(dict(test="incline θ = 0.2 sticks: drift in 1 s", measured=float(
        np.linalg.norm(Q[:, :3] - Q[0, :3], axis=1).max()), tolerance="< 1e-6 m", unit="m",
        note=f"contacts in the first steps: {[len(r.contacts) for r in steps[:4]]} (round-off gaps of the "
             "resting corners are not contacts at margin 0: the box rocks)"))
    for shape in ("sphere", "box"):
        s = scenes.drop(shape)
        Q, _, steps = run(s, 1.0, settings=defaults)
        depth = max(max(0.0, float(r.contacts.depth.max())) if len(r.contacts) else 0.0 for r in steps)
        default_rows.append(dict(test=f"drop ({shape}) from 0.5 m: largest penetration", measured=depth,
                                 tolerance=f"{defaults.slop + scenes.G * scenes.DT ** 2 / defaults.stabilization:.3g} m",
                                 unit="m", note="no contact until the surfaces overlap: the last step of the "
                                 "fall (3.1 m/s) moves the body up to 3.1 mm into the ground"))

    import mujoco
    out = dict(machine=machine_description(), mujoco=mujoco.__version__, settings=dict(
        margin=SETTINGS.margin, slop=SETTINGS.slop, stabilization=SETTINGS.stabilization, tol=SETTINGS.tol,
        max_iter=SETTINGS.max_iter, friction_solver=SETTINGS.friction_solver), dt=scenes.DT, physics=rows,
        mujoco_comparison=mj, solo12_base_height=base, default_settings=default_rows)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "contact_physics.json"), "w") as f:
        json.dump(out, f, indent=1, default=float)
    md = ["# Contact physics: closed forms and MuJoCo", "",
          "`benchmarks/contact_physics.py`: the scenes of `benchmarks/contact_scenes.py` stepped by `sd.step` at "
          f"dt = {scenes.DT * 1e3:g} ms, ContactSettings(margin = {SETTINGS.margin * 1e3:g} mm; slop "
          f"{SETTINGS.slop * 1e3:g} mm, stabilization {SETTINGS.stabilization:g}, tol {SETTINGS.tol:g}, "
          f"{SETTINGS.friction_solver}). The tests of `tests/contact/test_physics.py` hold the same quantities to the "
          "same tolerances. Values, not timings.", "",
          "| test | closed form | measured | tolerance | pass |", "|---|---|---|---|---|"]
    for r in rows:
        rel = f" ({r['relative_error'] * 100:+.2g} %)" if "relative_error" in r else ""
        md.append(f"| {r['test']} | {r['closed_form']} | {r['measured']:.6g} {r['unit']}{rel} | {r['tolerance']} | "
                  f"{'yes' if r['passed'] else '**no**'} |")
    md += ["", f"## Against MuJoCo {mujoco.__version__} (same MJCF: elliptic cones, implicitfast, dt = 1 ms, "
           "default solref/solimp)", "",
           "| scene | soadyn | MuJoCo | closed form | difference | tolerance | pass | MuJoCo, pyramidal cones |",
           "|---|---|---|---|---|---|---|---|"]
    for r in mj:
        diff = (f"{r['relative_difference'] * 100:+.3f} %" if "relative_difference" in r else
                f"{(r['soadyn'] - r['mujoco']) * 1e3:+.4f} mm (MuJoCo sinks {r['mujoco_penetration'] * 1e3:.4f} mm, "
                f"soadyn {r['soadyn_penetration'] * 1e3:.4f} mm)")
        md.append(f"| {r['test']} | {r['soadyn']:.6g} {r['unit']} | {r['mujoco']:.6g} {r['unit']} | "
                  f"{r['closed_form']:.6g} {r['unit']} | {diff} | {r['tolerance']} | "
                  f"{'yes' if r['passed'] else '**no**'} | {r['mujoco_pyramidal']:.6g} {r['unit']} |")
    md += ["", f"solo12's base height after 1 s standing: {base:.4f} m.", "",
           "## At the default ContactSettings() (margin 0)", "",
           "| check | measured | tolerance of the test | why |", "|---|---|---|---|"]
    md += [f"| {r['test']} | {r['measured']:.4g} {r['unit']} | {r['tolerance']} | {r['note']} |" for r in default_rows]
    md += ["", "```", out["machine"], "```", ""]
    with open(os.path.join(RESULTS, "contact_physics.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
