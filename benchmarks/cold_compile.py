"""Cold compilation: the first call of each public function in a fresh process with an
empty Numba cache, and ``soadyn precompile --jobs 2`` from an empty cache.

Run from a source checkout: ``python benchmarks/cold_compile.py [--output DIR]``; writes
``cold_compile.md`` (default ``benchmarks/results/``). Each first call runs in its own
process with its own empty cache, so it includes everything that call compiles (the
kernel, its helpers and Numba's own start-up), not what an earlier call left behind. The
state a closed-chain call needs (``close_loops``) is made before the timer starts. Each
time is given as wall time and as the CPU time of the process (``time.process_time``):
on a shared machine the wall time grows with the load, the CPU time is what compiling
costs. ``benchmarks/compile_profile.py`` splits a first call by Numba dispatcher.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

#: setup (not timed) and the timed first call, per public function
CALLS = {
    "rnea": ("tree", "sd.rnea(tree, q, v, v)"),
    "aba": ("tree", "sd.aba(tree, q, v, v)"),
    "mass_matrix": ("tree", "sd.mass_matrix(tree, q)"),
    "forward_kinematics": ("tree", "sd.forward_kinematics(tree, q, v)"),
    "frame_jacobian": ("tree", "sd.frame_jacobian(tree, q, tree.frames[-1].name)"),
    "kinetic_energy": ("tree", "sd.kinetic_energy(tree, q, v)"),
    "mass_matrix_inverse": ("tree", "sd.mass_matrix_inverse(tree, q)"),
    "operational_space_compliance": ("tree", "sd.operational_space_compliance(tree, q, [tree.frames[-1].name])"),
    "aba (batch of 2)": ("tree", "sd.aba(tree, np.stack([q, q]), np.stack([v, v]), np.stack([v, v]))"),
    # a kernel that evaluates the states one after another serves batches too (soadyn.core.batch.stacked_block)
    "kinetic_energy (batch of 2)": ("tree", "sd.kinetic_energy(tree, np.stack([q, q]), np.stack([v, v]))"),
    "close_loops": ("closed", "sd.close_loops(fb, sd.neutral(fb) + 0.1, None)"),
    "constrained_forward_dynamics (default)": ("closed_state", "sd.constrained_forward_dynamics(fb, qc, vc, vc)"),
    "constrained_forward_dynamics (augmented)": ("closed_state",
                                                 "sd.constrained_forward_dynamics(fb, qc, vc, vc, method='augmented')"),
    "constrained_forward_dynamics (embedding)": ("closed_state",
                                                 "sd.constrained_forward_dynamics(fb, qc, vc, vc, method='embedding')"),
    "cluster_aba": ("cluster", "sd.cluster_aba(robot, y, yd, yd)"),
    "cluster_rnea": ("cluster", "sd.cluster_rnea(robot, y, yd, yd)"),
    "cluster_mass_matrix": ("cluster", "sd.cluster_mass_matrix(robot, y)"),
    "cluster_efpa": ("cluster", "sd.cluster_efpa(robot, y, ['FR_foot'])"),
    "cluster_efpa (implicit)": ("implicit", "sd.cluster_efpa(fb1, y1, ['l0_coupler'])"),
    "cluster_aba (implicit, q=)": ("implicit", "sd.cluster_aba(fb1, y1, yd1, yd1, q=q1)"),
    "cluster_aba (implicit, batch of 2)": ("implicit", "sd.cluster_aba(fb1, np.stack([y1, y1]), np.stack([yd1, yd1]), "
                                                       "np.stack([yd1, yd1]))"),
    "constrained_forward_dynamics (embedding, implicit, batch of 2)": (
        "implicit", "sd.constrained_forward_dynamics(fb1, np.stack([q1, q1]), np.stack([v1, v1]), "
                    "np.zeros((2, fb1.nv)), method='embedding')"),
    "spanning_state": ("implicit", "sd.spanning_state(fb1, y1, yd1)"),
    "rnea_derivatives": ("tree", "sd.rnea_derivatives(tree, q, v, v)"),
    "aba_derivatives": ("tree", "sd.aba_derivatives(tree, q, v, v)"),
    "rollout": ("tree", "sd.rollout(tree, q, v, np.zeros((10, tree.nv)), 1e-3)"),
    "constrained_forward_dynamics_derivatives": ("closed_state",
                                                 "sd.constrained_forward_dynamics_derivatives(fb, qc, vc, vc)"),
    "cluster_aba_derivatives": ("cluster", "sd.cluster_aba_derivatives(robot, y, yd, yd)"),
    "cluster_rnea_derivatives (implicit)": ("implicit", "sd.cluster_rnea_derivatives(fb1, y1, yd1, yd1)"),
    "cluster_aba_derivatives (implicit)": ("implicit", "sd.cluster_aba_derivatives(fb1, y1, yd1, yd1)"),
    "centroidal_momentum_matrix": ("tree", "sd.centroidal_momentum_matrix(tree, q)"),
    "coriolis_matrix": ("tree", "sd.coriolis_matrix(tree, q, v)"),
    "joint_torque_regressor": ("tree", "sd.joint_torque_regressor(tree, q, v, v)"),
    "detect_contacts": ("scene", "sd.detect_contacts(scene, qs)"),
    "delassus": ("tree_contacts", "sd.delassus(tree, q, contacts)"),
    "solve_contacts": ("tree", "sd.solve_contacts(np.eye(6), -np.ones(6), [0.5, 0.5])"),
    "step": ("scene", "sd.step(scene, qs, np.zeros(6), None, 1e-3)"),
    "step (pd=)": ("scene", "sd.step(scene, qs, np.zeros(6), None, 1e-3, pd=(1.0, 0.1, qs))"),
    "rollout (contacts=True)": ("scene", "sd.rollout(scene, qs, None, np.zeros((2, 6)), 1e-3, contacts=True)"),
    "step (Mini Cheetah, rotors)": ("cheetah_ground", "sd.step(robot, qc, np.zeros(robot.nv), None, 1e-3)"),
}

SETUP = {
    "tree": "tree = sd.models.random_tree(8, 1, floating_base=True)\n"
            "q = sd.random_configuration(tree, rng); v = rng.normal(size=tree.nv)",
    "closed": "fb = sd.models.four_bar_chain(2, 1)",
    "closed_state": "fb = sd.models.four_bar_chain(2, 1)\n"
                    "qc, vc = sd.close_loops(fb, sd.neutral(fb) + 0.1 * rng.normal(size=fb.nq), rng.normal(size=fb.nv))",
    "implicit": "fb1 = sd.models.four_bar_chain(1, 0)\n"
                "q1, v1 = sd.close_loops(fb1, sd.neutral(fb1) + 0.1, np.ones(fb1.nv))\n"
                "y1, yd1 = sd.independent_state(fb1, q1, v1)",
    "cluster": "robot = sd.models.mini_cheetah()\n"
               "y, yd = sd.independent_state(robot, sd.neutral(robot), np.zeros(robot.nv))",
    "tree_contacts": "tree = sd.models.random_tree(8, 1, floating_base=True)\n"
                     "q = sd.random_configuration(tree, rng)\n"
                     "contacts = sd.Contacts.from_points(tree, [('world', 7), (2, 5)], [[0.0, 0.0, 0.0], [0.1, 0.0, 0.2]], "
                     "[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])",
    # a box resting on the ground (a free body, a collision box, the ground plane)
    "scene": "from soadyn.core import joints\nfrom soadyn.geometry import Box\n"
             "scene = sd.Model('box')\n"
             "scene.add_body('box', joints.Free(), None, mass=1.0, inertia=np.eye(3) * 0.01)\n"
             "scene.add_collision('box', Box((0.1, 0.1, 0.1)))\nscene.add_ground()\n"
             "qs = sd.neutral(scene); qs[2] = 0.0499",
    "cheetah_ground": "robot = sd.models.mini_cheetah()\nsd.models.add_foot_spheres(robot)\nrobot.add_ground()\n"
                      "qc = sd.neutral(robot)",
}

#: the targets of a first call and of ``soadyn precompile --jobs 2`` on 2 cores [s]
FIRST_CALL_TARGET, PRECOMPILE_TARGET = 10.0, 45.0

SCRIPT = """
import time
import numpy as np
import soadyn as sd
rng = np.random.default_rng(0)
{setup}
t0, c0 = time.perf_counter(), time.process_time()
{call}
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def first_call(name, env):
    kind, call = CALLS[name]
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", SCRIPT.format(setup=SETUP[kind], call=call)],
                             env=dict(env, NUMBA_CACHE_DIR=cache), capture_output=True, text=True, check=True)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def precompile_time(env):
    """Wall time, CPU time of its processes and report of ``soadyn precompile --jobs 2``."""
    with tempfile.TemporaryDirectory() as cache:
        t0, c0 = time.perf_counter(), os.times()
        out = subprocess.run([sys.executable, "-m", "soadyn", "precompile", "--jobs", "2"],
                             env=dict(env, NUMBA_CACHE_DIR=cache), capture_output=True, text=True, check=True)
        c1 = os.times()
        cpu = c1.children_user + c1.children_system - c0.children_user - c0.children_system
        return time.perf_counter() - t0, cpu, out.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""), SOADYN_COMPILE_NOTICE="0")
    rows = []
    for name in CALLS:
        wall, cpu = first_call(name, env)
        rows.append((name, wall, cpu))
        print(f"{name:42s} {wall:6.1f} s wall {cpu:6.1f} s CPU", flush=True)
    total, cpu_total, report = precompile_time(env)
    print(report)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    lines = ["# Cold compilation", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} logical cores"
             + (f", load average at the end {load[0]:.2f}" if load else "") + ".", "",
             "First call of each public function in a fresh process with an empty Numba cache "
             f"(target: {FIRST_CALL_TARGET:g} s):", "", "| function | first call, wall [s] | CPU [s] |", "|---|---|---|"]
    lines += [f"| {n} | {w:.1f}{'' if w <= FIRST_CALL_TARGET else ' ✗'} | {c:.1f} |" for n, w, c in rows]
    lines += ["", f"`soadyn precompile --jobs 2` from an empty cache: {total:.1f} s (target: {PRECOMPILE_TARGET:g} s), "
              f"{cpu_total:.1f} s CPU in its processes", "", "```",
              report.rstrip(), "```", ""]
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "cold_compile.md"), "w") as f:
        f.write("\n".join(lines))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import results_json
    from timing import machine_description
    results_json.write_twin(os.path.join(args.output, "cold_compile.md"), machine_description())


if __name__ == "__main__":
    main()
