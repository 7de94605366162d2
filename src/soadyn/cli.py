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


def _largest(values, names):
    """"|x| = n, largest x[name] = v": the norm and the largest entry of a vector, named."""
    k = int(np.argmax(np.abs(values)))
    return f"|x| = {np.linalg.norm(values):.4g}, largest {names[k]} = {values[k]:+.4g}"


def _print_quantity(label, text, verbose_value=None, verbose=False):
    """One line per quantity: ``label`` padded, then ``text``; the whole array below it
    with ``--verbose``."""
    print(f"  {label:<34s}{text}")
    if verbose and verbose_value is not None:
        print(np.array2string(np.asarray(verbose_value), prefix="    ", max_line_width=110).replace("\n", "\n    ")
              if np.ndim(verbose_value) else verbose_value)


def _eigen_range(M):
    w = np.linalg.eigvalsh(0.5 * (M + M.T))
    return f"{M.shape[0]} x {M.shape[1]}, eigenvalues in [{w[0]:.3g}, {w[-1]:.3g}], condition {w[-1] / w[0]:.3g}"


def _demo_tree(model, rng, verbose):
    """The tree functions at a random state; returns (q, v)."""
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    names = [f"v[{k}]" for k in range(model.nv)]
    for j in model.joints:
        for r in range(j.nv):
            names[j.v_index + r] = j.name if j.nv == 1 else f"{j.name}[{r}]"
    print("  state                             random q, v ~ N(0, 1), tau = 0")
    M = sd.mass_matrix(model, q)
    _print_quantity("mass matrix M(q) (CRBA)", _eigen_range(M), M, verbose)
    C = sd.bias_forces(model, q, v)
    _print_quantity("bias forces C(q, v) [N, N m]", _largest(C, names), C, verbose)
    a = sd.aba(model, q, v, np.zeros(model.nv))
    _print_quantity("forward dynamics (ABA) qdd", _largest(a, names), a, verbose)
    _print_quantity("check |rnea(qdd) - tau|", f"{np.abs(sd.rnea(model, q, v, a)).max():.2e}")
    return q, v


def _demo_closed(model, rng, verbose):
    """The closed-chain functions at a consistent state; returns (q, v)."""
    y, yd = random_independent_state(model, rng)
    q, v = sd.spanning_state(model, y, yd)
    names = sd.cluster_tree(model).velocity_names
    print("  state                             loops closed from random independent coordinates, tau = 0")
    _print_quantity("constraint residual max |d(q)|", f"{np.abs(sd.constraint_residual(model, q)).max():.2e}")
    H = sd.cluster_mass_matrix(model, y)
    _print_quantity("mass matrix H(y) = GᵀMG", _eigen_range(H), H, verbose)
    res = sd.constrained_forward_dynamics(model, q, v, np.zeros(model.nv))
    _print_quantity("constraints", f"{res.n_constraints} rows of G_c, rank {res.constraint_rank}, "
                                   f"{res.degrees_of_freedom} degrees of freedom")
    ydd = sd.cluster_aba(model, y, yd, np.zeros(yd.size))
    _print_quantity("forward dynamics (C-ABA) ydd", _largest(ydd, names), ydd, verbose)
    # checked against a cut-joint method: the default may be the embedding, i.e. C-ABA itself
    check = res if res.method != "embedding" else sd.constrained_forward_dynamics(model, q, v, np.zeros(model.nv),
                                                                                  method="direct")
    qdd_ind = sd.independent_state(model, q, check.qdd)[1]
    _print_quantity(f"check |C-ABA - {check.method} method|", f"{np.abs(qdd_ind - ydd).max():.2e}", check.qdd,
                    verbose)
    return q, v


def _demo(args):
    if args.model not in models.BUILTIN:
        return _error("demo", f"--model: unknown built-in model {args.model!r}; expected one of: "
                              f"{_builtin_names()} (soadyn models describes them)", 2)
    t0 = time.perf_counter()
    try:
        model = models.get(args.model)
    except ImportError as e:
        return _error("demo", f"--model {args.model}: needs a package that cannot be imported: {e}", 1)
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        return _error("demo", f"--output: cannot create the directory {args.output!r} ({e.strerror})", 1)
    closed = model.has_constraints
    print(model.summary() if args.verbose else model.summary().splitlines()[0])
    rng = np.random.default_rng(0)
    np.set_printoptions(precision=4, suppress=True, linewidth=110)
    q, v = (_demo_closed if closed else _demo_tree)(model, rng, args.verbose)
    _print_quantity("energy", f"kinetic {sd.kinetic_energy(model, q, v):.6g} J, "
                              f"potential {sd.potential_energy(model, q):.6g} J")
    _print_quantity("compile or cache load, evaluation", f"{time.perf_counter() - t0:.2f} s")

    if closed:
        res = simulate(model, q, v, args.duration, dt=args.dt, progress=True, stabilization="baumgarte",
                       baumgarte=DEMO_BAUMGARTE)
        alpha, beta = DEMO_BAUMGARTE
        how = (f"constrained forward dynamics ({res.info['constraint_method']} method), Baumgarte "
               f"stabilization (alpha = {alpha:g}/s, beta = {beta:g}/s)")
    else:
        res = simulate(model, q, v, args.duration, dt=args.dt, progress=True)
        how = "forward dynamics (ABA)"
    print(f"\nSimulated {args.duration:g} s of free motion with RK4 (dt = {args.dt:g} s), {how}:")
    _print_quantity("energy drift max |E(t) - E(0)|", f"{res.energy_drift:.3e} J of E(0) = {res.energy[0]:.6g} J")
    if closed:
        _print_quantity("constraint drift max |d(q)|", f"{res.constraint_drift:.3e}")
        _print_quantity("velocity drift max |G_c v - U|", f"{float(np.max(res.velocity_residual)):.3e}")
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
                                       "Also: soadyn precompile [--jobs N], soadyn bench [--quick | --report] "
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
    d.add_argument("--verbose", action="store_true", help="also print the body tree and the full arrays")
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
