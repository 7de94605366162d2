"""Per-state time of soadyn's kernels called from a user's own Numba loop (soadyn.compiled)
against soadyn's public call and Pinocchio's Python call, interleaved medians; trees and
closed chains.

    PYTHONPATH=src python benchmarks/compiled_api.py [--output benchmarks/results]

For each robot and function: a ``numba.njit`` loop over B = 1000 states calling the kernel
(``soadyn.compiled``; time / B), the public function on one state, and Pinocchio's function
on one state (its Python binding: ``pin.rnea``, ``pin.aba``, ``pin.crba``,
``pin.computeMinverse``; the last two fill the upper triangle only). The ratios are
soadyn / Pinocchio per round, then the median over rounds.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

import soadyn as sd
from soadyn import compiled

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peers import load_pair  # noqa: E402
from timing import time_interleaved  # noqa: E402

ROBOTS = ("ur5", "panda", "talos")
FUNCTIONS = ("rnea", "aba", "mass_matrix", "mass_matrix_inverse", "frame_jacobian", "frame_placement")
B = 1000


@numba.njit
def rnea_loop(k, Q, V, A, OUT):
    for i in range(Q.shape[0]):
        compiled.rnea(k, Q[i], V[i], A[i], OUT[i])


@numba.njit
def aba_loop(k, Q, V, T, OUT):
    for i in range(Q.shape[0]):
        compiled.aba(k, Q[i], V[i], T[i], OUT[i])


@numba.njit
def mass_matrix_loop(k, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.mass_matrix(k, Q[i], OUT[i])


@numba.njit
def mass_matrix_inverse_loop(k, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.mass_matrix_inverse(k, Q[i], OUT[i])


@numba.njit
def frame_jacobian_loop(k, f, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.frame_jacobian(k, f, Q[i], OUT[i])


@numba.njit
def frame_placement_loop(k, f, Q, OUT):
    for i in range(Q.shape[0]):
        compiled.frame_placement(k, f, Q[i], OUT[i])


def cases(name, rounds):
    import pinocchio as pin
    pair = load_pair(name)
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(0)
    Q = np.array([sd.random_configuration(m, rng) for _ in range(B)])
    V, A = rng.normal(size=(2, B, m.nv))
    T = sd.rnea(m, Q, V, A)
    k = compiled.arguments(m)
    # state 0 in Pinocchio's conventions (its free-flyer velocity is [v; ω], ours [ω; v])
    qp = pair.q_to_pin(Q[0])
    vp, ap, tp = (pair.v_to_pin(x[0]) for x in (V, A, T))
    out_v, out_m = np.empty((B, m.nv)), np.empty((B, m.nv, m.nv))
    out_j, out_t = np.empty((B, 6, m.nv)), np.empty((B, 4, 4))
    frame = m.bodies[-1].name  # as soadyn bench
    f, fid = compiled.frame(m, frame), pm.getFrameId(frame)
    q0, v0, a0, t0 = Q[0], V[0], A[0], T[0]
    ns = dict(sd=sd, pin=pin, m=m, pm=pm, pd=pd, k=k, Q=Q, V=V, A=A, T=T, out_v=out_v, out_m=out_m, q0=q0, v0=v0,
              a0=a0, t0=t0, qp=qp, vp=vp, ap=ap, tp=tp, rnea_loop=rnea_loop, aba_loop=aba_loop,
              mass_matrix_loop=mass_matrix_loop, mass_matrix_inverse_loop=mass_matrix_inverse_loop,
              frame_jacobian_loop=frame_jacobian_loop, frame_placement_loop=frame_placement_loop, f=f, fid=fid,
              frame=frame, out_j=out_j, out_t=out_t)
    stmts = {
        "rnea": ("rnea_loop(k, Q, V, A, out_v)", "sd.rnea(m, q0, v0, a0)", "pin.rnea(pm, pd, qp, vp, ap)"),
        "aba": ("aba_loop(k, Q, V, T, out_v)", "sd.aba(m, q0, v0, t0)", "pin.aba(pm, pd, qp, vp, tp)"),
        "mass_matrix": ("mass_matrix_loop(k, Q, out_m)", "sd.mass_matrix(m, q0)", "pin.crba(pm, pd, qp)"),
        "mass_matrix_inverse": ("mass_matrix_inverse_loop(k, Q, out_m)", "sd.mass_matrix_inverse(m, q0)",
                                "pin.computeMinverse(pm, pd, qp)"),
        "frame_jacobian": ("frame_jacobian_loop(k, f, Q, out_j)", "sd.frame_jacobian(m, q0, frame)",
                           "pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)"),
        "frame_placement": ("frame_placement_loop(k, f, Q, out_t)", "sd.frame_placement(m, q0, frame)",
                            "pin.forwardKinematics(pm, pd, qp); pin.updateFramePlacement(pm, pd, fid)"),
    }
    rows = []
    for f in FUNCTIONS:
        loop, public, peer = stmts[f]
        times = time_interleaved({"loop": (loop, ns), "public": (public, ns), "pin": (peer, ns)}, rounds, 2e-3,
                                 np.random.default_rng(1))
        rows.append((name, m.nv, f, times["loop"][0] / B, times["public"][0], times["pin"][0]))
    return rows


@numba.njit
def constrained_loop(k, Q, V, T, OUT):
    for i in range(Q.shape[0]):
        compiled.constrained_forward_dynamics(k, Q[i], V[i], T[i], 1e-6, OUT[i])


MECHANISMS = {"four-bar linkage": lambda: sd.models.four_bar_linkage(),
              "planar four-bar leg": lambda: sd.models.planar_leg_linkage(),
              "8-loop chain": lambda: sd.models.four_bar_chain(8, 0)}
NC = 200  # closed states per loop


def closed_cases(name, rounds):
    """Per-state time of the compiled direct method from a njit loop over NC closed states,
    the public call (the default method) on one state, and Pinocchio's two loop solvers on
    it (set up as in closed_chain_methods.py; their q̈ checked against ours to 1e-8)."""
    import pinocchio as pin

    import peers
    model = MECHANISMS[name]()
    rng = np.random.default_rng(2)
    states = [sd.close_loops(model, sd.random_configuration(model, rng), rng.normal(size=model.nv))
              for _ in range(NC)]
    Q, V = (np.array(x) for x in zip(*states))
    T = rng.normal(size=V.shape)
    k = compiled.constrained_arguments(model)
    out = np.empty((NC, k.output_size))
    pair = peers.pinocchio_model(model)
    cmodels, cdatas = peers.pinocchio_loop_constraints(pair)
    qp, vp, tp = pair.q_to_pin(Q[0]), pair.v_to_pin(V[0]), pair.v_to_pin(T[0])
    lc_data = pair.pm.createData()
    pin.computeJointMinimalOrdering(pair.pm, lc_data, cmodels)
    lc_settings = pin.ProximalSettings(1e-12, 1e-3, 20)
    cd_datas = pin.StdVec_RigidConstraintData()
    for cm in cmodels:
        cd_datas.append(cm.createData())
    cd_data = pair.pm.createData()
    pin.initConstraintDynamics(pair.pm, cd_data, cmodels, cd_datas)
    cd_settings = pin.ProximalSettings(1e-12, 1e-8, 3)
    ns = dict(pin=pin, pm=pair.pm, qp=qp, vp=vp, tp=tp, cm=cmodels, cd=cdatas, cd2=cd_datas, lc_data=lc_data,
              cd_data=cd_data, lc_settings=lc_settings, cd_settings=cd_settings, sd=sd, model=model, q0=Q[0],
              v0=V[0], t0=T[0], k=k, Q=Q, V=V, T=T, out=out, constrained_loop=constrained_loop)
    constrained_loop(k, Q, V, T, out)
    ref = sd.constrained_forward_dynamics(model, Q[0], V[0], T[0], method="projection").qdd
    assert np.abs(out[0, :model.nv] - ref).max() < 1e-8 * (1 + np.abs(ref).max())
    peers_stmt = {"lcaba": "pin.lcaba(pm, lc_data, qp, vp, tp, cm, cd, lc_settings)",
                  "constraintDynamics": "pin.constraintDynamics(pm, cd_data, qp, vp, tp, cm, cd2, cd_settings)"}
    for stmt in peers_stmt.values():
        assert np.abs(pair.v_from_pin(eval(stmt, ns)) - ref).max() < 1e-8 * (1 + np.abs(ref).max())
    cases = {"loop": ("constrained_loop(k, Q, V, T, out)", ns),
             "public": ("sd.constrained_forward_dynamics(model, q0, v0, t0)", ns)}
    cases.update({key: (stmt, ns) for key, stmt in peers_stmt.items()})
    times = time_interleaved(cases, rounds, 2e-3, np.random.default_rng(1))
    return (name, model.nv, times["loop"][0] / NC, times["public"][0], times["lcaba"][0],
            times["constraintDynamics"][0])


def pin_version():
    import pinocchio as pin
    return pin.__version__


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args(argv)
    start = os.getloadavg()
    rows = [r for name in ROBOTS for r in cases(name, args.rounds)]
    lines = ["# Kernels from your own Numba loop (`soadyn.compiled`)", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} logical cores, Pinocchio {pin_version()}; load average at the start "
             f"{start[0]:.2f}, at the end {os.getloadavg()[0]:.2f}.", "",
             f"µs per state, interleaved medians of {args.rounds} rounds: a `numba.njit` loop over {B} states calling "
             "`soadyn.compiled` (time / B), the public function on one state, Pinocchio's Python call on one "
             "state (`crba` and `computeMinverse` fill the upper triangle only; `frame_jacobian`: "
             "`computeFrameJacobian` in local axes; `frame_placement`: `forwardKinematics` + "
             "`updateFramePlacement`; the frame of `soadyn bench`, the last body).", "",
             "| robot | nv | function | compiled loop | public call | Pinocchio | loop / Pinocchio | public / Pinocchio |",
             "|---|---|---|---|---|---|---|---|"]
    for name, nv, f, loop, public, peer in rows:
        lines.append(f"| {name} | {nv} | {f} | {loop * 1e6:.2f} | {public * 1e6:.2f} | {peer * 1e6:.2f} | "
                     f"{loop / peer:.2f} | {public / peer:.2f} |")
        print(lines[-1], flush=True)
    lines += ["", f"Closed chains: µs per state of `soadyn.compiled.constrained_forward_dynamics` (the compiled "
              f"direct method) from a `numba.njit` loop over {NC} closed states (time / {NC}), the public "
              "`constrained_forward_dynamics` (its default method) on one state, and Pinocchio's loop solvers "
              "on one state from Python (`lcaba` after `computeJointMinimalOrdering`, `constraintDynamics`; loops "
              "as CONTACT_3D anchors, q̈ checked against ours to 1e-8).", "",
              "| mechanism | nv | compiled loop | public call | pin.lcaba | pin.constraintDynamics | "
              "loop / fastest Pinocchio | public / fastest Pinocchio |", "|---|---|---|---|---|---|---|---|"]
    for name in MECHANISMS:
        name, nv, loop, public, lc, cd = closed_cases(name, args.rounds)
        best = min(lc, cd)
        lines.append(f"| {name} | {nv} | {loop * 1e6:.2f} | {public * 1e6:.2f} | {lc * 1e6:.2f} | {cd * 1e6:.2f} | "
                     f"{loop / best:.2f} | {public / best:.2f} |")
        print(lines[-1], flush=True)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "compiled_api.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    import results_json
    from timing import machine_description
    results_json.write_twin(os.path.join(args.output, "compiled_api.md"), machine_description())


if __name__ == "__main__":
    main()
