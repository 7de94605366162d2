"""The ``soadyn`` command: ``soadyn demo``, ``soadyn models``, ``soadyn info FILE``,
``soadyn view FILE``, ``soadyn precompile``, ``soadyn bench``.

Errors in what the user typed (an unknown model, a file that cannot be loaded) are one line
on stderr, ``soadyn <command>: error: ...``, with exit status 2 (bad argument) or 1 (the
file could not be loaded or the output not written); no traceback.
"""
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

#: the demo's stabilization of the closed-chain simulation: Baumgarte gains (α, β) [1/s]
DEMO_BAUMGARTE = (10.0, 10.0)


def _error(command, message, status):
    """Print ``soadyn <command>: error: <message>`` on stderr and return the exit status."""
    print(f"soadyn {command}: error: {message}", file=sys.stderr)
    return status


def _positive_seconds(text):
    """argparse type of --duration and --dt: a positive, finite number of seconds."""
    try:
        x = float(text)
    except ValueError:
        x = np.nan
    if not (np.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return x


def _builtin_names():
    return ", ".join(models.BUILTIN)


def _demo(args):
    if args.model not in models.BUILTIN:
        return _error("demo", f"--model: unknown built-in model {args.model!r}; expected one of: "
                              f"{_builtin_names()} (soadyn models describes them)", 2)
    t0 = time.perf_counter()
    try:
        model = models.get(args.model)
    except ImportError as e:  # tello needs sympy (extra 'symbolic')
        hint = " (pip install 'soadyn[symbolic]')" if e.name == "sympy" else ""
        return _error("demo", f"--model {args.model}: needs an optional package that cannot be imported{hint}: "
                              f"{e}", 1)
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        return _error("demo", f"--output: cannot create the directory {args.output!r} ({e.strerror})", 1)
    print(model.summary())
    rng = np.random.default_rng(0)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    tau = np.zeros(model.nv)
    np.set_printoptions(precision=4, suppress=True, linewidth=110)
    closed = model.has_constraints
    if closed:
        # a closed chain: close the loops (a consistent state from random independent
        # coordinates), then the closed-chain functions; the tree functions refuse the model
        y, yd = random_independent_state(model, rng)
        q, v = sd.spanning_state(model, y, yd)
        print(f"\nState on the constraint manifold (loops closed from random independent coordinates):"
              f"\n       q = {q}\n       v = {v}")
        print(f"Mass matrix of the independent coordinates H(y) = GᵀMG:\n{sd.cluster_mass_matrix(model, y)}")
        res = sd.constrained_forward_dynamics(model, q, v, tau)
        print(f"Constraints: {res.n_constraints} rows of G_c, constraint_rank {res.constraint_rank}, "
              f"degrees_of_freedom {res.degrees_of_freedom}")
        print(f"Constrained forward dynamics ({res.method} method), tau = 0: qdd = {res.qdd}")
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

    if closed:
        res = simulate(model, q, v, args.duration, dt=args.dt, progress=True, stabilization="baumgarte",
                       baumgarte=DEMO_BAUMGARTE)
        alpha, beta = DEMO_BAUMGARTE
        how = (f"constrained forward dynamics ({res.info['constraint_method']} method) with Baumgarte "
               f"stabilization (alpha = {alpha:g}/s, beta = {beta:g}/s)")
    else:
        res = simulate(model, q, v, args.duration, dt=args.dt, progress=True)
        how = "forward dynamics (ABA)"
    print(f"\nSimulated {args.duration:g} s with RK4 (dt = {args.dt:g} s, no torque), {how}:")
    print(f"  energy {'of the closed system ' if closed else ''}E(0) = {res.energy[0]:.6f} J, "
          f"energy drift max |E(t) - E(0)| = {res.energy_drift:.3e} J")
    if closed:
        print(f"  constraint residuals: position max |d(q)| = {res.constraint_drift:.3e}, "
              f"velocity max |G_c v - U| = {float(np.max(res.velocity_residual)):.3e}")
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
    ax[0].set_title(f"{model.name}: free motion, RK4 dt = {args.dt:g} s"
                    + (", Baumgarte stabilization" if closed else ""))
    ax[1].plot(res.t, res.energy - res.energy[0])
    ax[1].set_ylabel("E(t) - E(0) [J]")
    ax[1].set_xlabel("t [s]")
    fig.tight_layout()
    return _save(fig, path, "demo", "--output", "Plot")


def _models(args):
    print(models.listing())
    print("\nsoadyn demo --model NAME runs one; in Python: soadyn.models.get(NAME)")
    return 0


def _load(command, file, floating):
    """The model of a URDF/URDF+ or MJCF (.xml) file, or of a built-in model's name; an
    exit status (int) with a one-line error when it cannot be loaded."""
    try:
        if not os.path.exists(file) and file in models.BUILTIN:
            return models.get(file)
        if file.lower().endswith(".xml"):  # MJCF (MuJoCo's format), read by MuJoCo's compiler
            return sd.load_mjcf(file, floating_base=True if floating else None)
        return sd.load_urdf(file, floating_base=floating)
    except ImportError as e:  # load_mjcf without the optional mujoco; tello without sympy
        return _error(command, str(e).splitlines()[0], 1)
    except (OSError, ValueError) as e:  # URDFError, MJCFError (ValueErrors) name the file and the element
        return _error(command, str(e).splitlines()[0] if str(e) else type(e).__name__, 1)


def _info(args):
    model = _load("info", args.file, args.floating)
    if isinstance(model, int):
        return model
    print(model.summary())
    if args.sparsity is not None:
        return _sparsity_picture(model, args.sparsity or f"{model.name}_sparsity.png")
    return 0


def _view(args):
    model = _load("view", args.file, args.floating)
    if isinstance(model, int):
        return model
    print(model.summary())
    try:
        sd.viewer.show(model, host=args.host, port=args.port, block=True, collisions=args.collisions)
    except ImportError as e:
        return _error("view", str(e).splitlines()[0], 1)
    return 0


def _sparsity_picture(model, path):
    """Write the mass-matrix sparsity picture (:func:`soadyn.plot.sparsity`) of ``model``."""
    try:
        import matplotlib  # optional (extra 'plot'): imported only to draw
        matplotlib.use("Agg")
    except ImportError:
        return _error("info", "--sparsity: matplotlib is not installed (pip install 'soadyn[plot]')", 1)
    tree = model.spanning_tree() if model.has_constraints else model
    d = sd.plot.sparsity_data(tree)
    n = tree.nv
    print(f"\nMass matrix {n} x {n}: {int(d.predicted.sum())} entries may be nonzero by the topology "
          f"([Jain12, §7]), {int(d.observed.sum())} are at random configurations; "
          f"{int(d.geometric_zeros.sum())} are zero by geometry (axes, mass placement), which the topology "
          "cannot see")
    return _save(sd.plot.sparsity(tree), path, "info", "--sparsity", "Picture")


def _save(fig, path, command, option, what):
    """Write a matplotlib figure, close it and say where; a one-line error (naming the
    option that chose the path) when the file cannot be written."""
    import matplotlib.pyplot as plt  # optional (extra 'plot'): the caller checked it is installed

    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        return _error(command, f"{option}: cannot write the {what.lower()} {path!r} ({e.strerror})", 1)
    finally:
        plt.close(fig)
    print(f"{what} written to {os.path.abspath(path)}")
    return 0


def _bench_module():
    """The benchmark script of the source checkout (``benchmarks/bench.py``), which is not
    part of the installed package (it imports Pinocchio)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    folder = os.path.join(root, "benchmarks")
    path = os.path.join(folder, "bench.py")
    if not os.path.isfile(path):
        raise SystemExit("soadyn bench: error: the benchmarks are not installed with the package; run it from a "
                         "source checkout (git clone, then pip install -e .)")
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its sibling peers.py
    spec = importlib.util.spec_from_file_location("soadyn_benchmarks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parser():
    """The argument parser of ``soadyn`` (precompile and bench parse their own arguments)."""
    names = _builtin_names()
    p = argparse.ArgumentParser(prog="soadyn", description="SOA multibody dynamics",
                                epilog=f"built-in models (soadyn models describes them): {names}. "
                                       "Also: soadyn precompile [--jobs N], soadyn bench [--quick] "
                                       "(see their --help).")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="summary, dynamics and a short simulation of a built-in model",
                       description="Summary, dynamics at a random state and a short free-motion simulation "
                                   "(RK4) of a built-in model, with an energy plot. Closed chains start on "
                                   "the constraint manifold and are integrated with constrained forward "
                                   "dynamics and Baumgarte stabilization.")
    d.add_argument("--model", default="double_pendulum", metavar="NAME",
                   help=f"built-in model (default: double_pendulum), one of: {names}")
    d.add_argument("--duration", type=_positive_seconds, default=5.0, help="simulated time [s] (default 5)")
    d.add_argument("--dt", type=_positive_seconds, default=1e-3, help="RK4 step [s] (default 0.001)")
    d.add_argument("--output", default="demo_output", help="directory for the plot (default demo_output)")
    d.set_defaults(func=_demo)
    m = sub.add_parser("models", help="list the built-in models, one line each",
                       description="The built-in models: name, size, tree or closed chain, description.")
    m.set_defaults(func=_models)
    i = sub.add_parser("info", help="load a URDF/URDF+ file (or an MJCF .xml file) and print its summary")
    i.add_argument("file", help="URDF/URDF+ or MJCF (.xml) file, or the name of a built-in model")
    i.add_argument("--floating", action="store_true", help="add a floating base")
    i.add_argument("--sparsity", nargs="?", const="", default=None, metavar="PNG",
                   help="also write the mass-matrix sparsity picture (default file: MODEL_sparsity.png)")
    i.set_defaults(func=_info)
    w = sub.add_parser("view", help="show a URDF/URDF+ or MJCF file (or a built-in model) in the browser",
                       description="Serve the model in the browser (viser, extra 'viewer') at its neutral "
                                   "configuration (loops closed), with its visual geometry or, without one, its "
                                   "kinematic skeleton; loop joints and couplings are marked. Ctrl-C stops.")
    w.add_argument("file", help="URDF/URDF+ or MJCF (.xml) file, or the name of a built-in model")
    w.add_argument("--floating", action="store_true", help="add a floating base")
    w.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    w.add_argument("--port", type=int, default=8080, help="port (default 8080; the next free one if busy)")
    w.add_argument("--collisions", action="store_true", help="also draw the collision shapes (a GUI box toggles them)")
    w.set_defaults(func=_view)
    sub.add_parser("precompile", help="compile every kernel into the on-disk cache")
    sub.add_parser("bench", help="benchmarks against peer libraries (from a source checkout)")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # subcommands with their own argument parsers: everything after the name is theirs
    if argv and argv[0] == "precompile":
        return precompile.main(argv[1:])
    if argv and argv[0] == "bench":
        return _bench_module().main(argv[1:])
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
