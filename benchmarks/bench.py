"""Benchmarks against Pinocchio: ``soadyn bench`` or ``python benchmarks/bench.py``.

Sections (all measured in one run, soadyn and Pinocchio interleaved, so that the
ratios are meaningful on a shared, noisy machine):

* **per call** on the example-robot-data robots (panda, ur5, solo12, hyq, talos, g1):
  ``rnea``, ``aba``, ``mass_matrix``, ``mass_matrix_inverse``, ``frame_jacobian``,
  ``forward_kinematics``, ``frame_placement``, ``frame_velocity``, ``rnea_derivatives`` and
  ``aba_derivatives`` through the plain public functions (new output array, input
  checks included), through the low-overhead path (:class:`soadyn.Workspace` and
  ``out=``) and the matching Pinocchio calls;
* **chains**: generated serial chains of 2…256 bodies, time against the number of
  bodies with fitted exponents (RNEA/ABA should be linear, the mass matrix quadratic);
* **batch**: one batched call on B states against a Python loop over ``pin.aba`` /
  ``pin.rnea`` and against ``pin.abaInParallel`` / ``pin.rneaInParallel`` with the
  same number of threads;
* **startup**: a fresh process calling every public function once, with an empty
  Numba cache (cold compile, full runs only) and with a warm one (ready time);
* **rollout**: ``sd.rollout`` against MuJoCo's ``mujoco.rollout`` on panda and ur5, 1 and 2
  threads, both integrators, with the trajectories' agreement (``rollout.py``);
* **distributed**: ``soadyn.distributed.map_batches`` on a local Dask cluster of 1 and 2
  workers against the single-process batch, and the per-chunk overhead
  (``dask_throughput.py``).

Each per-call figure is the median over ``rounds`` samples of many calls after a
warm-up; every sample times a block of calls long enough to dwarf the timer, and the
implementations take turns within each round. Outputs in ``--output``: CSV files,
``summary.md`` (the tables printed at the end), ``machine.txt`` and PNG plots.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

from timing import machine_description, time_interleaved

ROBOT_ALGORITHMS = ("rnea", "aba", "mass_matrix", "mass_matrix_inverse", "frame_jacobian",
                    "forward_kinematics", "frame_placement", "frame_velocity", "rnea_derivatives",
                    "aba_derivatives")
CHAIN_ALGORITHMS = ("rnea", "aba", "mass_matrix")
#: the exponent the chain sweep should show: time ∝ bodies ** exponent
EXPECTED_EXPONENT = {"rnea": 1, "aba": 1, "mass_matrix": 2}
IMPLS = ("soadyn", "soadyn_low", "pinocchio")
IMPL_LABEL = {"soadyn": "soadyn", "soadyn_low": "soadyn (Workspace + out=)", "pinocchio": "Pinocchio"}


#: the targets for the ratios soadyn / Pinocchio, (plain call, Workspace + out=), that the
#: summary marks: robot -> algorithm -> (plain, low-overhead); None where there is none
TARGETS = {
    "talos": {"rnea": (0.8, 0.6), "aba": (0.8, 0.6), "mass_matrix": (0.8, 0.6),
              "rnea_derivatives": (1.0, None), "aba_derivatives": (1.0, None)},  # issue 15
    "g1": {"rnea": (0.8, 0.6), "aba": (0.8, 0.6), "mass_matrix": (0.8, 0.6),
           "rnea_derivatives": (1.0, None), "aba_derivatives": (1.0, None)},
    "panda": {"rnea": (1.0, None), "aba": (1.0, None), "mass_matrix": (1.0, None)},
    "ur5": {"rnea": (1.0, None), "aba": (1.0, None), "mass_matrix": (1.0, None)},
}


def target(robot, algorithm):
    """The target ratios (plain, low-overhead) of ``TARGETS``, (None, None) where none is set."""
    return TARGETS.get(robot, {}).get(algorithm, (None, None))


# ============================================================================ timing
class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total, enabled=True):
        self.total, self.done, self.enabled = max(total, 1), 0, enabled
        self.start = time.perf_counter()

    def step(self, label):
        self.done += 1
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                         f"{elapsed:5.0f} s  {label:<40.40s}")
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ============================================================================ per call
def _robot_state(pair, rng):
    import soadyn as sd
    m = pair.sd
    q = sd.random_configuration(m, rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    return {"q": q, "v": v, "a": a, "tau": tau, "qp": pair.q_to_pin(q), "vp": pair.v_to_pin(v),
            "ap": pair.v_to_pin(a), "taup": pair.v_to_pin(tau)}


def _accepts_out(fn, *args):
    """Whether ``fn(*args, out=..., workspace=...)`` is supported (checked by calling it)."""
    try:
        fn(*args[:-2], out=args[-2], workspace=args[-1])
        return True
    except TypeError:
        return False


def robot_cases(pair, algorithm, state, pin):
    """``({impl: (stmt, namespace)}, note)`` for one robot and algorithm."""
    import soadyn as sd
    m = pair.sd
    ns = dict(state, sd=sd, m=m, ws=sd.Workspace(m), out=np.empty(m.nv), M=np.empty((m.nv, m.nv)),
              J=np.empty((6, m.nv)), M3=tuple(np.empty((m.nv, m.nv)) for _ in range(3)))
    cases, note = {}, ""
    frame = m.bodies[-1].name
    ns["frame"] = frame  # the frame functions' frame: the last body
    if pin is not None:
        ns.update(pin=pin, pm=pair.pm, pd=pair.pd, fid=pair.pm.getFrameId(frame), LOCAL=pin.LOCAL)
    if algorithm == "rnea":
        cases["soadyn"] = "sd.rnea(m, q, v, a)"
        cases["soadyn_low"] = "sd.rnea(m, q, v, a, out=out, workspace=ws)"
        cases["pinocchio"] = "pin.rnea(pm, pd, qp, vp, ap)"
    elif algorithm == "aba":
        cases["soadyn"] = "sd.aba(m, q, v, tau)"
        cases["soadyn_low"] = "sd.aba(m, q, v, tau, out=out, workspace=ws)"
        cases["pinocchio"] = "pin.aba(pm, pd, qp, vp, taup)"
    elif algorithm == "mass_matrix":
        cases["soadyn"] = "sd.mass_matrix(m, q)"
        cases["soadyn_low"] = "sd.mass_matrix(m, q, out=M, workspace=ws)"
        cases["pinocchio"] = "pin.crba(pm, pd, qp)"
        note = "Pinocchio fills the upper triangle only"
    elif algorithm == "mass_matrix_inverse":
        fn = getattr(sd, "mass_matrix_inverse", None)
        if fn is None:
            return {}, "soadyn has no mass_matrix_inverse yet: row skipped"
        ns["minv"] = fn
        cases["soadyn"] = "minv(m, q)"
        if _accepts_out(fn, m, state["q"], ns["M"], ns["ws"]):
            cases["soadyn_low"] = "minv(m, q, out=M, workspace=ws)"
        cases["pinocchio"] = "pin.computeMinverse(pm, pd, qp)"
        note = "Pinocchio fills the upper triangle only"
    elif algorithm == "frame_jacobian":
        cases["soadyn"] = "sd.frame_jacobian(m, q, frame)"
        cases["soadyn_low"] = "sd.frame_jacobian(m, q, frame, out=J, workspace=ws)"
        cases["pinocchio"] = "pin.computeFrameJacobian(pm, pd, qp, fid, LOCAL)"
        note = f"frame {frame!r}, local axes"
    elif algorithm == "forward_kinematics":
        cases["soadyn"] = "sd.forward_kinematics(m, q)"
        cases["soadyn_low"] = "sd.forward_kinematics(m, q, workspace=ws)"
        cases["pinocchio"] = "pin.forwardKinematics(pm, pd, qp)"
        note = "world poses of all bodies"
    elif algorithm == "frame_placement":
        cases["soadyn"] = "sd.frame_placement(m, q, frame)"
        # Pinocchio's frame placement needs its forward kinematics first (both in the call)
        cases["pinocchio"] = "pin.forwardKinematics(pm, pd, qp); pin.updateFramePlacement(pm, pd, fid)"
        note = f"frame {frame!r}: 4×4 world pose (Pinocchio: forwardKinematics + updateFramePlacement)"
    elif algorithm == "frame_velocity":
        cases["soadyn"] = "sd.frame_velocity(m, q, v, frame)"
        cases["pinocchio"] = "pin.forwardKinematics(pm, pd, qp, vp); pin.getFrameVelocity(pm, pd, fid, LOCAL)"
        note = f"frame {frame!r}, local axes (Pinocchio: forwardKinematics with v + getFrameVelocity)"
    elif algorithm == "rnea_derivatives":
        cases["soadyn"] = "sd.rnea_derivatives(m, q, v, a)"
        cases["soadyn_low"] = "sd.rnea_derivatives(m, q, v, a, out=M3, workspace=ws)"
        cases["pinocchio"] = "pin.computeRNEADerivatives(pm, pd, qp, vp, ap)"
        note = "∂τ/∂q, ∂τ/∂v, M; Pinocchio returns copies (its M: upper triangle)"
    elif algorithm == "aba_derivatives":
        cases["soadyn"] = "sd.aba_derivatives(m, q, v, tau)"
        cases["soadyn_low"] = "sd.aba_derivatives(m, q, v, tau, out=M3, workspace=ws)"
        cases["pinocchio"] = "pin.computeABADerivatives(pm, pd, qp, vp, taup)"
        note = "∂q̈/∂q, ∂q̈/∂v, M⁻¹; Pinocchio returns copies"
    if pin is None:
        cases.pop("pinocchio", None)
    return {k: (stmt, ns) for k, stmt in cases.items()}, note


def bench_robots(robots, pin, rounds, sample_seconds, rng, progress):
    import peers
    rows = []
    for name in robots:
        try:
            if pin is not None:
                pair = peers.load_pair(name)
            else:
                import soadyn as sd
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = sd.load_urdf(peers.robot_path(name), floating_base=peers.ROBOTS[name][1], mimic="ignore")
                pair = _SoadynOnly(m)
        except (FileNotFoundError, ImportError) as e:
            for alg in ROBOT_ALGORITHMS:
                progress.step(f"{name}: skipped")
            rows.append({"robot": name, "algorithm": "-", "note": f"skipped: {e}"})
            continue
        state = _robot_state(pair, np.random.default_rng(0))
        for alg in ROBOT_ALGORITHMS:
            progress.step(f"{name} {alg}")
            cases, note = robot_cases(pair, alg, state, pin)
            row = {"robot": name, "nb": pair.sd.nbodies, "nv": pair.sd.nv, "algorithm": alg, "note": note,
                   "load": _load()}
            if cases:
                res = time_interleaved(cases, rounds, sample_seconds, rng)
                for impl, (med, lo, hi) in res.items():
                    row[f"{impl}_us"] = med * 1e6
                    row[f"{impl}_min_us"] = lo * 1e6
                    row[f"{impl}_max_us"] = hi * 1e6
                if "pinocchio" in res:
                    for impl in ("soadyn", "soadyn_low"):
                        if impl in res:
                            row[f"{impl}_ratio"] = res[impl][0] / res["pinocchio"][0]
                            row[f"{impl}_ratio_of_minima"] = res[impl][1] / res["pinocchio"][1]
            rows.append(row)
    return rows


class _SoadynOnly:
    """Stands in for a PinPair when Pinocchio is not installed."""

    def __init__(self, model):
        self.sd = model

    def q_to_pin(self, q):
        return q

    def v_to_pin(self, v):
        return v


# ============================================================================ overhead
def _noop(n_args):
    """A compiled function of ``n_args`` arguments that does nothing: its call time is
    Numba's dispatch (type checks, unboxing) alone. Compiled as the kernels are
    (soadyn.core.jit.kernel: without reference counting, which makes Numba's unboxing of each
    array argument allocate a record of its runtime); not cached: this module is loaded
    from a file path, which Numba's cache cannot re-import."""
    from soadyn.core import jit
    names = ", ".join(f"x{k}" for k in range(n_args))
    scope = {}
    exec(f"def noop({names}):\n    return 0\n", scope)
    return jit.kernel(cache=False)(scope["noop"])


#: per function of the overhead table: the kernel its plain call runs and that kernel's
#: arguments (names of the benchmark's namespace, set up in ``bench_overhead``), and the
#: output arrays the call allocates
OVERHEAD_KERNELS = {
    "rnea": ("k_rnea", "tables, q, v, a, out", "np.empty(nv)"),
    "aba": ("k_aba", "tables, q, v, tau, out", "np.empty(nv)"),
    "mass_matrix": ("k_crba", "mi, mf, b, q, M", "np.empty((nv, nv))"),
    "mass_matrix_inverse": ("k_minv", "mi, mf, b, q, M", "np.empty((nv, nv))"),
    "forward_kinematics": ("k_poses", "mi, mf, b, q, R, p", "np.empty((nb, 3, 3)), np.empty((nb, 3))"),
    "frame_jacobian": ("k_jacobian", "mi, mf, b, q, body, Rf, pf, local, J", "np.empty((6, nv))"),
    "frame_placement": ("k_placement", "mi, mf, b, q, body, Rf, pf, T", "np.empty((4, 4))"),
    "frame_velocity": ("k_velocity", "mi, mf, b, q, v, body, Rf, pf, local, V6", "np.empty(6)"),
}


def bench_overhead(robots, pin, rounds, sample_seconds, rng, progress):
    """Where the time of a plain call goes: Numba's dispatch and the kernel the call runs
    (the plain-call kernel of :mod:`soadyn.kernels.plain` for ``rnea`` and ``aba``, the
    kernel itself for the others), the output allocation and the rest, the Python wrapper
    (differences of interleaved medians). The *floor* is the kernel called from Python with
    everything prepared plus the allocation of the outputs: what a call that returns new
    arrays through this kernel costs with no Python around it."""
    import peers
    import soadyn as sd
    from soadyn.dynamics.aba import _ABA
    from soadyn.dynamics.crba import _CRBA
    from soadyn.dynamics.frames import model_frame
    from soadyn.dynamics.innovations import _MINV
    from soadyn.dynamics.jacobians import _JACOBIAN
    from soadyn.dynamics.kinematics import _FRAME_PLACEMENT, _FRAME_VELOCITY, _POSES
    from soadyn.dynamics.rnea import _RNEA
    noops = {}
    rows = []
    for name in robots:
        try:
            pair = peers.load_pair(name)
        except (FileNotFoundError, ImportError):
            for _ in OVERHEAD_KERNELS:
                progress.step(f"overhead {name}: skipped")
            continue
        m = pair.sd
        c = m.compiled
        state = _robot_state(pair, np.random.default_rng(0))
        for alg, (kernel, arguments, allocation) in OVERHEAD_KERNELS.items():
            progress.step(f"overhead {name} {alg}")
            cases, _ = robot_cases(pair, alg, state, pin)
            cases.pop("soadyn_low", None)
            ns = cases["soadyn"][1]
            for _ in range(2):  # the first call validates; the second compiles (or loads) the plain kernel
                exec(cases["soadyn"][0], ns)
            f = model_frame(m, ns["frame"])
            ns.update(mi=c.mi, mf=c.mf, nv=c.nv, nb=c.nb, b=ns["ws"].buffer, tables=m._derived.plain_tables(),
                      body=f.body, Rf=f.kernel_rotation, pf=f.kernel_translation, local=0,
                      R=np.empty((c.nb, 3, 3)), p=np.empty((c.nb, 3)), T=np.empty((4, 4)), V6=np.empty(6),
                      k_rnea=_RNEA.plain.fast, k_aba=_ABA.plain.fast, k_crba=_CRBA.fast, k_minv=_MINV.fast,
                      k_poses=_POSES.fast, k_jacobian=_JACOBIAN.fast, k_placement=_FRAME_PLACEMENT.fast,
                      k_velocity=_FRAME_VELOCITY.fast, np=np, sd=sd)
            n_args = arguments.count(",") + 1
            noop = noops.get(n_args)
            if noop is None:
                noop = noops[n_args] = _noop(n_args)
            ns["noop"] = noop
            cases["kernel"] = (f"{kernel}({arguments})", ns)
            cases["dispatch"] = (f"noop({arguments})", ns)
            cases["allocation"] = (allocation, ns)
            if eval(cases["kernel"][0], ns) != 0:
                raise RuntimeError(f"overhead {name} {alg}: the kernel failed")
            res = {k: v[0] * 1e6 for k, v in time_interleaved(cases, rounds, sample_seconds, rng).items()}
            row = {"robot": name, "algorithm": alg, "load": _load(), "plain_us": res["soadyn"],
                   "dispatch_us": res["dispatch"], "kernel_us": res["kernel"] - res["dispatch"],
                   "allocation_us": res["allocation"],
                   "wrapper_us": res["soadyn"] - res["kernel"] - res["allocation"],
                   "floor_us": res["kernel"] + res["allocation"]}
            if "pinocchio" in res:
                row["pinocchio_us"] = res["pinocchio"]
            rows.append(row)
    return rows


# ============================================================================ chains
def bench_chains(sizes, pin, rounds, sample_seconds, rng, progress):
    """Serial chains; for each algorithm all sizes and implementations take turns in one
    interleaved measurement, so that the fitted exponents see one machine state."""
    import soadyn as sd
    from peers import pinocchio_model
    pairs = {}
    for n in sizes:
        m = sd.models.serial_chain(n)
        pair = pinocchio_model(m) if pin is not None else _SoadynOnly(m)
        pairs[n] = (pair, _robot_state(pair, np.random.default_rng(n)))
    rows = []
    for alg in CHAIN_ALGORITHMS:
        progress.step(f"chains {alg}")
        cases = {}
        for n, (pair, state) in pairs.items():
            for impl, case in robot_cases(pair, alg, state, pin)[0].items():
                cases[(n, impl)] = case
        res = time_interleaved(cases, rounds, sample_seconds, rng)
        for n in sizes:
            row = {"bodies": n, "algorithm": alg, "load": _load()}
            for (nn, impl), (med, lo, hi) in res.items():
                if nn == n:
                    row[f"{impl}_us"] = med * 1e6
                    row[f"{impl}_min_us"] = lo * 1e6
                    row[f"{impl}_max_us"] = hi * 1e6
            rows.append(row)
    return rows


def _load():
    """The 1-minute load average (how busy the shared machine was), or None."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def fit_exponents(chain_rows, min_bodies):
    """Least-squares slopes of log(time) against log(bodies) for n ≥ ``min_bodies``:
    ``{(algorithm, impl): (p of the time, p of the time less the smallest chain's)}``.
    The second discounts the fixed cost of a call, which bends the first towards 0."""
    out = {}
    for alg in CHAIN_ALGORITHMS:
        for impl in IMPLS:
            pts = sorted((r["bodies"], r[f"{impl}_us"]) for r in chain_rows
                         if r["algorithm"] == alg and f"{impl}_us" in r)
            big = [(n, t) for n, t in pts if n >= min_bodies]
            if len(big) < 2:
                continue
            x = np.log([n for n, _ in big])
            raw = float(np.polyfit(x, np.log([t for _, t in big]), 1)[0])
            fixed = pts[0][1]
            marginal = [t - fixed for _, t in big]
            net = float(np.polyfit(x, np.log(marginal), 1)[0]) if min(marginal) > 0 else float("nan")
            out[(alg, impl)] = (raw, net)
    return out


# ============================================================================ batch
def bench_batch(robots, batch, pin, rounds, progress):
    """Throughput of one batched call against Pinocchio loops and parallel calls."""
    import soadyn as sd
    import peers
    from soadyn.core.batch import batch_threads
    threads = batch_threads()
    rows = []
    for name in robots:
        try:
            pair = peers.load_pair(name) if pin is not None else None
        except FileNotFoundError:
            pair = None
        if pair is None:
            progress.step(f"batch {name}: skipped")
            progress.step(f"batch {name}: skipped")
            continue
        m, pm = pair.sd, pair.pm
        rng = np.random.default_rng(1)
        Q = np.stack([sd.random_configuration(m, rng) for _ in range(batch)])
        V, X = rng.normal(size=(2, batch, m.nv))
        Qp = np.stack([pair.q_to_pin(q) for q in Q])
        Vp = np.stack([pair.v_to_pin(v) for v in V])
        Xp = np.stack([pair.v_to_pin(x) for x in X])
        pool = pin.ModelPool(pm, threads)
        # Pinocchio's batch API takes one state per column (Eigen is column-major)
        QpT, VpT, XpT = Qp.T, Vp.T, Xp.T
        resT = np.empty((pm.nv, batch), order="F")
        res = np.empty((batch, pm.nv))
        ws = sd.Workspace(m)
        out = np.empty((batch, m.nv))
        pd = pair.pd
        for alg in ("aba", "rnea"):
            progress.step(f"batch {name} {alg}")
            pin_one = pin.aba if alg == "aba" else pin.rnea
            pin_par = pin.abaInParallel if alg == "aba" else pin.rneaInParallel
            sd_fn = sd.aba if alg == "aba" else sd.rnea

            def pin_loop():
                for k in range(batch):
                    res[k] = pin_one(pm, pd, Qp[k], Vp[k], Xp[k])

            variants = {
                "soadyn_batch": lambda: sd_fn(m, Q, V, X),
                "soadyn_batch_low": lambda: sd_fn(m, Q, V, X, out=out, workspace=ws),
                "pinocchio_loop": pin_loop,
                "pinocchio_parallel": lambda: pin_par(threads, pool, QpT, VpT, XpT, resT),
            }
            for f in variants.values():
                f()
            # check the batched results agree before timing them
            sd_res = sd_fn(m, Q, V, X)
            pin_loop()
            err = max(np.abs(pair.v_to_pin(sd_res[k]) - res[k]).max() / max(1.0, np.abs(res[k]).max())
                      for k in range(0, batch, max(1, batch // 20)))
            times = {k: [] for k in variants}
            keys = list(variants)
            for _ in range(rounds):
                random.shuffle(keys)
                for k in keys:
                    t0 = time.perf_counter()
                    variants[k]()
                    times[k].append(time.perf_counter() - t0)
            med = {k: float(np.median(t)) for k, t in times.items()}
            row = {"robot": name, "algorithm": alg, "batch": batch, "threads": threads,
                   "max_rel_error": err, "load": _load()}
            for k, t in med.items():
                row[f"{k}_ms"] = t * 1e3
                row[f"{k}_states_per_s"] = batch / t
            row["speedup_vs_pin_loop"] = med["pinocchio_loop"] / med["soadyn_batch"]
            row["speedup_vs_pin_parallel"] = med["pinocchio_parallel"] / med["soadyn_batch"]
            rows.append(row)
    return rows


# ============================================================================ startup
_READY_SCRIPT = r"""
import json, time
import numpy as np
t0 = time.perf_counter()
import soadyn as sd
t_import = time.perf_counter() - t0
m = sd.models.random_tree(8, 0, floating_base=True)
rng = np.random.default_rng(0)
q = sd.random_configuration(m, rng)
v, a = rng.normal(size=(2, m.nv))
Q, V, A = np.stack([q, q]), np.stack([v, v]), np.stack([a, a])
frame = m.frames[-1].name
calls = [
    ("model.compile", lambda: m.compile()),
    ("rnea", lambda: sd.rnea(m, q, v, a)),
    ("rnea f_ext", lambda: sd.rnea(m, q, v, a, np.zeros((m.nbodies, 6)))),
    ("bias_forces", lambda: sd.bias_forces(m, q, v)),
    ("generalized_gravity", lambda: sd.generalized_gravity(m, q)),
    ("aba", lambda: sd.aba(m, q, v, a)),
    ("aba f_ext", lambda: sd.aba(m, q, v, a, np.zeros((m.nbodies, 6)))),
    ("mass_matrix", lambda: sd.mass_matrix(m, q)),
    ("mass_matrix jtmj", lambda: sd.mass_matrix(m, q, "jtmj")),
    ("frame_jacobian", lambda: sd.frame_jacobian(m, q, frame)),
    ("forward_kinematics", lambda: sd.forward_kinematics(m, q)),
    ("forward_kinematics v a", lambda: sd.forward_kinematics(m, q, v, a)),
    ("frame_placement", lambda: sd.frame_placement(m, q, frame)),
    ("frame_velocity", lambda: sd.frame_velocity(m, q, v, frame)),
    ("frame_acceleration", lambda: sd.frame_acceleration(m, q, v, a, frame)),
    ("kinetic_energy", lambda: sd.kinetic_energy(m, q, v)),
    ("potential_energy", lambda: sd.potential_energy(m, q)),
    ("center_of_mass", lambda: sd.center_of_mass(m, q, v)),
    ("integrate", lambda: sd.integrate(m, q, v, 0.01)),
    ("difference", lambda: sd.difference(m, q, q)),
    ("rnea batch", lambda: sd.rnea(m, Q, V, A)),
    ("aba batch", lambda: sd.aba(m, Q, V, A)),
    ("mass_matrix batch", lambda: sd.mass_matrix(m, Q)),
    ("forward_kinematics batch", lambda: sd.forward_kinematics(m, Q, V, A)),
]
if hasattr(sd, "mass_matrix_inverse"):
    calls.append(("mass_matrix_inverse", lambda: sd.mass_matrix_inverse(m, q)))
if hasattr(sd, "rnea_derivatives"):
    calls.append(("rnea_derivatives", lambda: sd.rnea_derivatives(m, q, v, a)))
    calls.append(("aba_derivatives", lambda: sd.aba_derivatives(m, q, v, a)))
times = {}
for name, f in calls:
    t = time.perf_counter()
    f()
    times[name] = time.perf_counter() - t
print(json.dumps({"import": t_import, "calls": times, "total": time.perf_counter() - t0}))
"""


def bench_rollout(quick, progress):
    """``sd.rollout`` against ``mujoco.rollout`` (:func:`rollout.measure`): one row per robot
    and integrator, steps per second at 1 and 2 threads and the trajectories' agreement;
    [] (with a note on stderr) without MuJoCo."""
    try:
        import mujoco  # noqa: F401

        import rollout
    except ImportError as e:
        print(f"rollout section skipped: {e}", file=sys.stderr)
        return []
    rows = []
    batch, steps, rounds = (16, 200, 3) if quick else (64, 1000, 9)
    for robot in ("panda", "ur5"):
        for integrator in rollout.INTEGRATORS:
            progress.step(f"rollout {robot} {integrator}")
            r = rollout.measure(robot, integrator, batch, steps, 0.002, rounds)
            sps = r.pop("sps")
            r.update({f"{impl}_{threads}thr_steps_per_s": x for (impl, threads), x in sps.items()})
            rows.append(r)
    return rows


def bench_distributed(quick, progress):
    """``map_batches`` on a local Dask cluster (:func:`dask_throughput.measure`): one row per
    way of evaluating the batch, and the fitted per-chunk cost; [] without Dask."""
    try:
        import dask_throughput
        import distributed  # noqa: F401
    except ImportError as e:
        print(f"distributed section skipped: {e}", file=sys.stderr)
        return []
    progress.step("distributed")
    batch, steps, rounds = (16384, 100, 3) if quick else (262144, 500, 7)
    return dask_throughput.measure(batch, steps, 0.002, rounds)["rows"]


def peer_sections(rollout_rows, distributed_rows):
    """The summary tables of the rollout and distributed sections."""
    out = []
    if rollout_rows:
        out.append("## Rollouts: sd.rollout against mujoco.rollout (steps per second; ratio ≥ 1: soadyn faster)\n")
        out.append("| robot | integrator | B × T | MuJoCo 1 thr | soadyn 1 thr | ratio | MuJoCo 2 thr | soadyn 2 thr "
                   "| ratio | max Δq all T | soadyn vs itself, q0 + 1e-12 |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rollout_rows:
            out.append(f"| {r['robot']} | {r['integrator']} | {r['batch']} × {r['steps']} | "
                       f"{r['mujoco_1thr_steps_per_s']:.3g} | {r['soadyn_1thr_steps_per_s']:.3g} | {r['ratio1']:.2f} | "
                       f"{r['mujoco_2thr_steps_per_s']:.3g} | {r['soadyn_2thr_steps_per_s']:.3g} | {r['ratio2']:.2f} | "
                       f"{r['q_all']:.1e} | {r['q_sens']:.1e} |")
        out.append("\n1 thread: MuJoCo `Rollout(nthread=0)` against a loop of single `sd.rollout` calls; 2 threads: "
                   "`Rollout(nthread=2)` against one batched call. Over the horizon the trajectories differ as "
                   "much as the motion's own sensitivity (last column) allows.\n")
    if distributed_rows:
        out.append("## soadyn.distributed on a local Dask cluster (ur5)\n")
        out.append("| how | aba [states/s] | vs 1 thread | rollout [steps/s] | vs 1 thread | per-chunk cost [ms] |")
        out.append("|---|---|---|---|---|---|")
        for r in distributed_rows:
            out.append(f"| {r['how']} | {r['aba_states_per_s']:.3g} | {r['aba_vs_1_thread']:.2f} | "
                       f"{r['rollout_steps_per_s']:.3g} | {r['rollout_vs_1_thread']:.2f} | "
                       f"{r['per_chunk_ms']:.2f} |")
        out.append("")
    return "\n".join(out)


def _ready_process(cache_dir=None):
    """Run the readiness script in a fresh interpreter; its JSON report."""
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = pkg_root + os.pathsep + env.get("PYTHONPATH", "")
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, "-c", _READY_SCRIPT], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_startup(cold, progress):
    """``[{"phase": ..., "import_s", "ready_s", per-call seconds}]``."""
    rows = []
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            progress.step("startup: cold compile (empty cache)")
            rows.append(dict(phase="cold (empty Numba cache)", **_flatten(_ready_process(cache))))
            progress.step("startup: warm cache")
            rows.append(dict(phase="warm (cache from the cold run)", **_flatten(_ready_process(cache))))
    else:
        progress.step("startup: default cache")
        rows.append(dict(phase="default cache", **_flatten(_ready_process())))
    return rows


def _flatten(report):
    row = {"import_s": report["import"], "ready_s": report["total"]}
    row.update({f"{k}_s": t for k, t in report["calls"].items()})
    return row


# ============================================================================ output
SECTION_FILES = {"robots": "per_call", "overhead": "overhead", "chains": "chains", "batch": "batch",
                 "startup": "startup", "rollout": "rollout", "distributed": "distributed"}


def read_csv(path):
    """Rows written by :func:`write_csv` (numbers back as int/float), or [] without a file."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            row = {}
            for k, v in r.items():
                if v == "":
                    continue
                try:
                    row[k] = int(v)
                except ValueError:
                    try:
                        row[k] = float(v)
                    except ValueError:
                        row[k] = v
            rows.append(row)
    return rows


def write_csv(path, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def _fmt(x, spec="7.2f"):
    return format(x, spec) if isinstance(x, (int, float)) else " " * (int(spec.split(".")[0]) - 1) + "-"


def _mark(ratio, limit):
    if limit is None or not isinstance(ratio, float):
        return " "
    return "✓" if ratio <= limit else "✗"


def summary_tables(robot_rows, overhead_rows, chain_rows, exponents, batch_rows, startup_rows):
    out = []
    if robot_rows:
        out.append("## Per call [µs] (medians; ratio = soadyn / Pinocchio, ✓/✗ against issue 5's targets)\n")
        out.append("| robot | nb | nv | algorithm | soadyn | low-overhead | Pinocchio | plain ratio | low ratio | note |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in robot_rows:
            if r["algorithm"] == "-":
                out.append(f"| {r['robot']} | | | | | | | | | {r.get('note', '')} |")
                continue
            tp, tl = target(r["robot"], r["algorithm"])
            pr, lr = r.get("soadyn_ratio"), r.get("soadyn_low_ratio")
            out.append(
                f"| {r['robot']} | {r['nb']} | {r['nv']} | {r['algorithm']} | {_fmt(r.get('soadyn_us'))} | "
                f"{_fmt(r.get('soadyn_low_us'))} | {_fmt(r.get('pinocchio_us'))} | "
                f"{_fmt(pr, '5.2f')} {_mark(pr, tp)}{'' if tp is None else f' (≤ {tp})'} | "
                f"{_fmt(lr, '5.2f')} {_mark(lr, tl)}{'' if tl is None else f' (≤ {tl})'} | {r.get('note', '')} |")
        out.append("")
    if overhead_rows:
        out.append("## Where a plain call's time goes [µs] (differences of interleaved medians)\n")
        out.append("Numba dispatch and kernel: of the kernel the plain call runs (for `rnea` and `aba` the "
                   "plain-call kernel of `soadyn.kernels.plain`, five arguments; the arguments as the call "
                   "passes them); Python wrapper: the rest; floor: the kernel called from Python with every "
                   "argument prepared, plus the allocation of the outputs — the least a call through this "
                   "kernel that returns new arrays costs.\n")
        out.append("| robot | function | plain call | Numba dispatch | kernel | output allocation | "
                   "Python wrapper | floor | Pinocchio | floor / Pinocchio | plain / Pinocchio |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in overhead_rows:
            pin_us = r.get("pinocchio_us")
            out.append(f"| {r['robot']} | {r['algorithm']} | {r['plain_us']:.2f} | {r['dispatch_us']:.2f} | "
                       f"{r['kernel_us']:.2f} | {r['allocation_us']:.2f} | {r['wrapper_us']:.2f} | "
                       f"{r.get('floor_us', float('nan')):.2f} | {_fmt(pin_us, '.2f')} | "
                       f"{_fmt(None if pin_us is None else r.get('floor_us', float('nan')) / pin_us, '.2f')} | "
                       f"{_fmt(None if pin_us is None else r['plain_us'] / pin_us, '.2f')} |")
        out.append("")
    if chain_rows:
        out.append("## Serial chains: time [µs] against the number of bodies\n")
        impls = [i for i in IMPLS if any(f"{i}_us" in r for r in chain_rows)]
        out.append("| bodies | algorithm | " + " | ".join(IMPL_LABEL[i] for i in impls) + " |")
        out.append("|---|---|" + "---|" * len(impls))
        for r in chain_rows:
            out.append(f"| {r['bodies']} | {r['algorithm']} | " + " | ".join(_fmt(r.get(f'{i}_us'), '9.2f') for i in impls) + " |")
        out.append("\nFitted exponents over the three largest chains (time ∝ bodies^p; second value: "
                   "after subtracting the 2-body chain's time, the fixed cost of a call):\n")
        for (alg, impl), (p, q) in exponents.items():
            out.append(f"- {alg}, {IMPL_LABEL[impl]}: p = {p:.2f}, without the fixed cost {q:.2f} "
                       f"(expected {EXPECTED_EXPONENT[alg]})")
        out.append("")
    if batch_rows:
        out.append("## Batched throughput (one call on B states)\n")
        out.append("| robot | algorithm | B | threads | soadyn batch [ms] | soadyn batch, out= [ms] | "
                   "Pinocchio loop [ms] | Pinocchio InParallel [ms] | vs loop (≥ 3) | vs InParallel (≥ 1.5) |")
        out.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in batch_rows:
            a, b = r["speedup_vs_pin_loop"], r["speedup_vs_pin_parallel"]
            out.append(f"| {r['robot']} | {r['algorithm']} | {r['batch']} | {r['threads']} | "
                       f"{r['soadyn_batch_ms']:.2f} | {r['soadyn_batch_low_ms']:.2f} | {r['pinocchio_loop_ms']:.2f} | "
                       f"{r['pinocchio_parallel_ms']:.2f} | {a:.2f}× {'✓' if a >= 3 else '✗'} | "
                       f"{b:.2f}× {'✓' if b >= 1.5 else '✗'} |")
        out.append("")
    if startup_rows:
        out.append("## Startup: a fresh process calls every public function once\n")
        for r in startup_rows:
            slow = sorted(((k[:-2], v) for k, v in r.items() if k.endswith("_s") and k not in ("import_s", "ready_s")),
                          key=lambda kv: -kv[1])[:3]
            out.append(f"- {r['phase']}: import {r['import_s']:.2f} s, all ready after {r['ready_s']:.2f} s "
                       f"(slowest first calls: " + ", ".join(f"{k} {v:.2f} s" for k, v in slow) + ")")
        out.append("")
    return "\n".join(out)


def plot(output, robot_rows, chain_rows, exponents, batch_rows):
    """ratios.png, scaling.png and batch.png; returns the paths written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    paths = []
    rows = [r for r in robot_rows if "soadyn_ratio" in r]
    if rows:
        algs = [a for a in ROBOT_ALGORITHMS if any(r["algorithm"] == a for r in rows)]
        fig, axes = plt.subplots(1, len(algs), figsize=(3.2 * len(algs), 3.6), sharey=True, squeeze=False)
        for ax, alg in zip(axes[0], algs):
            sub = [r for r in rows if r["algorithm"] == alg]
            x = np.arange(len(sub))
            ax.bar(x - 0.2, [r["soadyn_ratio"] for r in sub], 0.4, label="plain call")
            ax.bar(x + 0.2, [r.get("soadyn_low_ratio", np.nan) for r in sub], 0.4, label="Workspace + out=")
            ax.axhline(1.0, color="k", lw=0.8)
            if alg in ("rnea", "aba", "mass_matrix"):
                ax.axhline(0.8, color="tab:red", lw=0.8, ls="--")
                ax.axhline(0.6, color="tab:red", lw=0.8, ls=":")
            ax.set_xticks(x, [r["robot"] for r in sub], rotation=45)
            ax.set_title(alg)
        axes[0][0].set_ylabel("time soadyn / Pinocchio")
        axes[0][0].legend(fontsize=7)
        fig.suptitle("Per call, soadyn / Pinocchio (lower is faster; targets 0.8 / 0.6 dashed)", fontsize=9)
        fig.tight_layout()
        paths.append(os.path.join(output, "ratios.png"))
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    if chain_rows:
        fig, axes = plt.subplots(1, len(CHAIN_ALGORITHMS), figsize=(11, 3.6), squeeze=False)
        for ax, alg in zip(axes[0], CHAIN_ALGORITHMS):
            for impl, style in (("soadyn", "o-"), ("soadyn_low", "s--"), ("pinocchio", "^-")):
                pts = [(r["bodies"], r[f"{impl}_us"]) for r in chain_rows
                       if r["algorithm"] == alg and f"{impl}_us" in r]
                if pts:
                    p = exponents.get((alg, impl))
                    label = IMPL_LABEL[impl] + ("" if p is None else f" (p = {p[0]:.2f} / {p[1]:.2f})")
                    ax.loglog(*zip(*pts), style, label=label, ms=4)
            ax.set_title(f"{alg} (expected p = {EXPECTED_EXPONENT[alg]}; p raw / less fixed cost)", fontsize=8)
            ax.set_xlabel("bodies")
            ax.grid(True, which="both", lw=0.3)
            ax.legend(fontsize=7)
        axes[0][0].set_ylabel("time per call [µs]")
        fig.tight_layout()
        paths.append(os.path.join(output, "scaling.png"))
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    if batch_rows:
        fig, ax = plt.subplots(figsize=(8, 3.6))
        labels = [f"{r['robot']}\n{r['algorithm']}" for r in batch_rows]
        x = np.arange(len(batch_rows))
        for k, (key, label) in enumerate((("soadyn_batch", "soadyn batch"), ("pinocchio_loop", "Pinocchio loop"),
                                          ("pinocchio_parallel", "Pinocchio InParallel"))):
            ax.bar(x + (k - 1) * 0.27, [r[f"{key}_states_per_s"] / 1e6 for r in batch_rows], 0.27, label=label)
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_ylabel("million states / s")
        ax.set_title(f"Batched throughput, B = {batch_rows[0]['batch']}, {batch_rows[0]['threads']} threads")
        ax.legend(fontsize=7)
        fig.tight_layout()
        paths.append(os.path.join(output, "batch.png"))
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


# ============================================================================ main
def parse_args(argv):
    p = argparse.ArgumentParser(prog="soadyn bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds and sizes; finishes in under a minute")
    p.add_argument("--output", default=None,
                   help="directory for the CSV files, summary.md, machine.txt and the plots (default: a "
                        "new folder soadyn-bench-<date>-<time> in the current directory; the committed "
                        "full run is benchmarks/results/bench)")
    p.add_argument("--robots", default=None, help="comma-separated subset of " + ",".join(_robot_names()))
    p.add_argument("--chains", default=None, help="comma-separated chain sizes (default 2..256, quick 2,8,32,128)")
    p.add_argument("--batch", type=int, default=None, help="states per batched call (default 10000, quick 1000)")
    p.add_argument("--rounds", type=int, default=None, help="samples per measurement (default 41, quick 7)")
    p.add_argument("--skip", default="", help="comma-separated sections to skip: "
                   "robots,overhead,chains,batch,startup,rollout,distributed (their CSV files in --output, if any, "
                   "are kept and summarised again)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--report", action="store_true",
                   help="run no benchmark: write the documentation's benchmark pages and figures from the committed "
                        "results (--results, default benchmarks/results) into --output (default docs/benchmarks)")
    p.add_argument("--results", default=None, help="with --report: the folder of the result files")
    return p.parse_args(argv)


def _robot_names():
    from peers import ROBOTS
    return list(ROBOTS)


def new_output_folder():
    """The default --output: a folder soadyn-bench-<date>-<time> in the current directory
    that does not exist yet (a suffix -2, -3, ... for runs started in the same second), so
    that a run never writes into an earlier one's files (e.g. the committed results)."""
    base = time.strftime("soadyn-bench-%Y%m%d-%H%M%S")
    path, k = base, 1
    while os.path.exists(path):
        k += 1
        path = f"{base}-{k}"
    return path


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.report:
        import report
        return report.main((["--results", args.results] if args.results else []) +
                           (["--output", args.output] if args.output else []))
    if args.results is not None:
        raise SystemExit("soadyn bench: error: --results is an option of --report")
    if args.output is None:
        args.output = new_output_folder()
    # Pinocchio's OpenMP pool and soadyn's batch threads take turns here; with OpenMP's
    # default active waiting, the idle pool spins on the cores the other one needs
    # (measured with Numba's OpenMP layer: a 1000-state batch 2.0 ms passive, 7.5 ms
    # active). Set before the pool starts.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    quick = args.quick
    # many short samples: on a shared machine a sample either runs undisturbed or is
    # preempted; short ones make the median the undisturbed time more often
    rounds = args.rounds or (7 if quick else 41)
    sample = 0.0003 if quick else 0.0005
    robots = args.robots.split(",") if args.robots else _robot_names()
    sizes = ([int(s) for s in args.chains.split(",")] if args.chains else
             [2, 8, 32, 128] if quick else [2, 4, 8, 16, 32, 64, 128, 256])
    batch = args.batch or (1000 if quick else 10000)
    batch_robots = ["panda", "talos"] if quick else robots
    overhead_robots = [r for r in ("ur5", "panda", "solo12", "hyq", "talos", "g1") if r in robots]
    skip = set(filter(None, args.skip.split(",")))
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
        print("Pinocchio is not installed (pip install pin): timing soadyn alone", file=sys.stderr)
    os.makedirs(args.output, exist_ok=True)
    machine = machine_description()
    with open(os.path.join(args.output, "machine.txt"), "w") as f:
        f.write(machine)
    print(machine)
    steps = (len(robots) * len(ROBOT_ALGORITHMS) * ("robots" not in skip)
             + len(OVERHEAD_KERNELS) * len(overhead_robots) * ("overhead" not in skip and pin is not None)
             + len(CHAIN_ALGORITHMS) * ("chains" not in skip)
             + 2 * len(batch_robots) * ("batch" not in skip and pin is not None)
             + (1 if quick else 2) * ("startup" not in skip)
             + 4 * ("rollout" not in skip) + ("distributed" not in skip))
    progress = Progress(steps, enabled=not args.no_progress)
    rng = random.Random(0)
    t0 = time.perf_counter()
    kept = {name: read_csv(os.path.join(args.output, f"{name}.csv")) for name in SECTION_FILES.values()}
    robot_rows, overhead_rows, chain_rows, batch_rows, startup_rows, rollout_rows, distributed_rows = (
        kept[SECTION_FILES[k]] for k in ("robots", "overhead", "chains", "batch", "startup", "rollout",
                                         "distributed"))
    reused = [k for k in SECTION_FILES if k in skip and kept[SECTION_FILES[k]]]
    if "robots" not in skip:
        robot_rows = bench_robots(robots, pin, rounds, sample, rng, progress)
        write_csv(os.path.join(args.output, "per_call.csv"), robot_rows)
    if "overhead" not in skip and pin is not None:
        overhead_rows = bench_overhead(overhead_robots, pin, rounds, sample, rng, progress)
        write_csv(os.path.join(args.output, "overhead.csv"), overhead_rows)
    if "chains" not in skip:
        chain_rows = bench_chains(sizes, pin, rounds, sample, rng, progress)
        write_csv(os.path.join(args.output, "chains.csv"), chain_rows)
    chain_sizes = sorted({r["bodies"] for r in chain_rows})
    exponents = fit_exponents(chain_rows, chain_sizes[-min(3, len(chain_sizes))]) if chain_sizes else {}
    if "batch" not in skip and pin is not None:
        batch_rows = bench_batch(batch_robots, batch, pin, 3 if quick else 7, progress)
        write_csv(os.path.join(args.output, "batch.csv"), batch_rows)
    if "startup" not in skip:
        startup_rows = bench_startup(cold=not quick, progress=progress)
        write_csv(os.path.join(args.output, "startup.csv"), startup_rows)
    if "rollout" not in skip:
        rollout_rows = bench_rollout(quick, progress)
        write_csv(os.path.join(args.output, "rollout.csv"), rollout_rows)
    if "distributed" not in skip:
        distributed_rows = bench_distributed(quick, progress)
        write_csv(os.path.join(args.output, "distributed.csv"), distributed_rows)
    progress.close()
    text = summary_tables(robot_rows, overhead_rows, chain_rows, exponents, batch_rows, startup_rows)
    extra = peer_sections(rollout_rows, distributed_rows)
    if extra:
        text = text.rstrip("\n") + "\n\n" + extra
    paths = plot(args.output, robot_rows, chain_rows, exponents, batch_rows)
    if reused:
        text = (f"(Sections {', '.join(reused)}: kept from an earlier run in this directory; "
                "see the load column of their CSV files.)\n\n" + text)
    with open(os.path.join(args.output, "summary.md"), "w") as f:
        f.write(f"# soadyn benchmarks{' (quick)' if quick else ''}\n\n```\n{machine}```\n\n{text}\n")
    import results_json
    results_json.write_bench_twin(args.output)  # bench.json: the CSV files and machine.txt, for the report
    print(text)
    print(f"Written to {os.path.abspath(args.output)} ({', '.join(os.path.basename(p) for p in paths) or 'no plots'}); "
          f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its sibling peers.py
    sys.exit(main())
