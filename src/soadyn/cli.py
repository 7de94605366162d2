"""The ``soadyn`` command: ``soadyn demo``, ``soadyn info FILE``, ``soadyn precompile``,
``soadyn bench``."""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

import soadyn as sd

from . import models, precompile
from .closed.embedding.clusters import random_independent_state
from .simulate import simulate


def _demo(args):
    t0 = time.perf_counter()
    model = models.get(args.model)
    print(model.summary())
    rng = np.random.default_rng(0)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    tau = np.zeros(model.nv)
    np.set_printoptions(precision=4, suppress=True, linewidth=110)
    if model.has_constraints:  # a closed chain: a consistent state and the closed-chain functions
        y, yd = random_independent_state(model, rng)
        q, v = sd.spanning_state(model, y, yd)
        print(f"\nState: q = {q}\n       v = {v}")
        print(f"Mass matrix of the independent coordinates H(y) = GᵀMG:\n{sd.cluster_mass_matrix(model, y)}")
        res = sd.constrained_forward_dynamics(model, q, v, tau)
        print(f"Forward dynamics ({res.method} method), tau = 0: qdd = {res.qdd}")
        ydd = sd.cluster_aba(model, y, yd, np.zeros(yd.size))
        print(f"Constraint embedding check: |C-ABA - {res.method}| = "
              f"{np.abs(sd.independent_state(model, q, res.qdd)[1] - ydd).max():.2e}")
    else:
        print(f"\nState: q = {q}\n       v = {v}")
        print(f"Mass matrix M(q) (CRBA):\n{sd.mass_matrix(model, q)}")
        print(f"Bias forces C(q, v) = {sd.bias_forces(model, q, v)}")
        a = sd.aba(model, q, v, tau)
        print(f"Forward dynamics (ABA), tau = 0: qdd = {a}")
        print(f"Inverse dynamics check: |rnea(qdd) - tau| = {np.abs(sd.rnea(model, q, v, a) - tau).max():.2e}")
    print(f"Energy: kinetic {sd.kinetic_energy(model, q, v):.6f} J, potential {sd.potential_energy(model, q):.6f} J")
    print(f"(compile/cache load and evaluation: {time.perf_counter() - t0:.2f} s)")

    res = simulate(model, q, v, args.duration, dt=args.dt, progress=True)
    print(f"\nSimulated {args.duration} s with RK4 (dt = {args.dt} s, no torque): "
          f"energy drift {res.energy_drift:.3e} J of {abs(res.energy[0]):.3f} J")
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, f"{model.name}_energy.png")
    try:
        import matplotlib  # optional (extra 'plot'): imported only to draw
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (extra 'plot'): no plot written")
        return 0
    fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for k in range(min(model.nq, 4)):
        ax[0].plot(res.t, res.q[:, k], label=f"q[{k}]")
    ax[0].legend(loc="upper right")
    ax[0].set_ylabel("q")
    ax[0].set_title(f"{model.name}: free motion, RK4 dt = {args.dt} s")
    ax[1].plot(res.t, res.energy - res.energy[0])
    ax[1].set_ylabel("E(t) - E(0) [J]")
    ax[1].set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"Plot written to {os.path.abspath(path)}")
    return 0


def _info(args):
    model = sd.load_urdf(args.file, floating_base=args.floating)
    print(model.summary())
    return 0


def _bench_module():
    """The benchmark script of the source checkout (``benchmarks/bench.py``), which is not
    part of the installed package (it imports Pinocchio)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folder = os.path.join(root, "benchmarks")
    path = os.path.join(folder, "bench.py")
    if not os.path.isfile(path):
        raise SystemExit("soadyn bench: the benchmarks are not installed with the package; run it from a "
                         "source checkout (git clone, then pip install -e .)")
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its sibling peers.py
    spec = importlib.util.spec_from_file_location("soadyn_benchmarks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # subcommands with their own argument parsers: everything after the name is theirs
    if argv and argv[0] == "precompile":
        return precompile.main(argv[1:])
    if argv and argv[0] == "bench":
        return _bench_module().main(argv[1:])
    parser = argparse.ArgumentParser(prog="soadyn", description="SOA multibody dynamics",
                                     epilog="also: soadyn precompile [--jobs N], soadyn bench [--quick] "
                                            "(see their --help)")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="summary, dynamics and a short simulation of a built-in model")
    d.add_argument("--model", default="double_pendulum", help="built-in model name")
    d.add_argument("--duration", type=float, default=5.0, help="simulated time [s]")
    d.add_argument("--dt", type=float, default=1e-3, help="RK4 step [s]")
    d.add_argument("--output", default="demo_output", help="directory for the plot")
    d.set_defaults(func=_demo)
    i = sub.add_parser("info", help="load a URDF/URDF+ file and print its summary")
    i.add_argument("file")
    i.add_argument("--floating", action="store_true", help="add a floating base")
    i.set_defaults(func=_info)
    sub.add_parser("precompile", help="compile every kernel into the on-disk cache")
    sub.add_parser("bench", help="benchmarks against peer libraries")
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
