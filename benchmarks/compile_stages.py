"""Where the cold compile time of a first call goes, by stage of Numba's compiler: its
front end (bytecode, untyped passes, type inference), the lowering to LLVM IR, LLVM's
passes and the machine code.

Run from a source checkout: ``python benchmarks/compile_stages.py [NAME ...] [--output DIR]``;
NAME is a key of ``cold_compile.CALLS`` or :data:`PRECOMPILE` (every kernel of ``soadyn
precompile`` in one process; default: :data:`DEFAULT`, the slowest first calls and two small
ones for scale, then :data:`PRECOMPILE`). Writes ``compile_stages.md`` and its JSON twin (default
``benchmarks/results/``). Each first call runs in its own process with its own empty
``NUMBA_CACHE_DIR`` (the setup of ``cold_compile.py``, not timed).

In the child each stage is a method of Numba or llvmlite wrapped with a timer of the
process's CPU time (``time.process_time``); the timers nest, and each stage is given its
exclusive time, the time of the calls nested in it subtracted (a callee's compilation runs
inside its caller's type inference, a Python entry point's LLVM IR is parsed inside its
lowering). The stages:

==========================  ==============================================================
Numba's bookkeeping         ``Dispatcher.compile`` less all below: the cache's index, the
                            pipeline's set-up, Numba's events
bytecode, untyped passes    ``run_pass`` of every pass of ``numba.core.untyped_passes``
                            (the bytecode's translation to Numba's IR among them)
type inference              ``TypeInferer.build_constraint``, ``propagate`` and ``unify``
other typed passes          ``run_pass`` of every pass of ``numba.core.typed_passes``, less
                            the stages below (what lowering does beside its own)
lowering                    ``Lower.lower_normal_function`` and the Python entry points
                            (``CPUContext.create_cpython_wrapper``): Numba's IR to LLVM's
                            IR, in Python
IR text                     ``llvmlite.ir.Module.__str__`` and ``llvmlite.binding.
                            parse_assembly``: the module printed as text and parsed by LLVM
LLVM function passes        ``CPUCodeLibrary._optimize_functions``
LLVM module passes          ``CPUCodeLibrary._optimize_final_module``
machine code                ``CPUCodeLibrary._finalize_final_module``
cache writes                ``Cache.save_overload``
outside                     the call's CPU time less all of the above (imports, Python)
==========================  ==============================================================

A method that the installed Numba lacks is reported as missing, and its time falls into
the stage that calls it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cold_compile import CALLS, FIRST_CALL_TARGET, PRECOMPILE_TARGET, SETUP  # noqa: E402

#: the first calls split by default: one of each family of kernels over the target in
#: cold_compile.md, and two small ones for scale
DEFAULT = ("rnea", "aba", "aba_derivatives", "cluster_aba", "cluster_efpa (implicit)",
           "constrained_forward_dynamics (embedding)", "cluster_aba_derivatives", "detect_contacts", "step",
           "rollout (contacts=True)", "step (Mini Cheetah, rotors)")

#: beside cold_compile's first calls: every kernel of ``soadyn precompile``, compiled in one
#: process (its CPU time is then a lower bound of what ``--jobs 2`` spends in its two,
#: which compile the helpers they share once each)
PRECOMPILE = "soadyn precompile --jobs 1"
EXTRA = {PRECOMPILE: ("", "from soadyn.precompile import precompile\nprecompile(jobs=1, verbose=False)")}

#: (stage, the methods it times as "module:owner.attribute"), in the order of the table
STAGES = (
    ("Numba's bookkeeping", ("numba.core.dispatcher:Dispatcher.compile",)),
    ("bytecode and untyped passes", ("numba.core.untyped_passes:*.run_pass",)),
    ("type inference", ("numba.core.typeinfer:TypeInferer.build_constraint",
                        "numba.core.typeinfer:TypeInferer.propagate", "numba.core.typeinfer:TypeInferer.unify")),
    ("other typed passes", ("numba.core.typed_passes:*.run_pass",)),
    ("lowering", ("numba.core.lowering:Lower.lower_normal_function",
                  "numba.core.cpu:CPUContext.create_cpython_wrapper")),
    ("IR text", ("llvmlite.ir:Module.__str__", "llvmlite.binding:parse_assembly")),
    ("LLVM function passes", ("numba.core.codegen:CPUCodeLibrary._optimize_functions",)),
    ("LLVM module passes", ("numba.core.codegen:CPUCodeLibrary._optimize_final_module",)),
    ("machine code", ("numba.core.codegen:CPUCodeLibrary._finalize_final_module",)),
    ("cache writes", ("numba.core.caching:Cache.save_overload",)),
)
#: the stages that are LLVM's own work (C++), the others being Numba's Python
LLVM_STAGES = ("LLVM function passes", "LLVM module passes", "machine code")
#: the stages also summed per code library: each kernel's module passes and machine code run
#: over its own copy of every helper it links in
PER_LIBRARY = ("LLVM module passes", "machine code")

CHILD = """
import functools, importlib, json, time
import numpy as np
import soadyn as sd
import soadyn.core  # soadyn's patches of Numba go in here: the timers must wrap what they put in place
rng = np.random.default_rng(0)
{setup}

STAGES = {stages!r}
spent, missing, open_spans, wrapped, per_library = {{}}, [], [], [], {{}}
PER_LIBRARY = {per_library!r}

def timed(target, stage):
    modname, path = target.split(":")
    owner = importlib.import_module(modname)
    if path.startswith("*."):  # the method of every class of the module that defines it
        attr = path[2:]
        for cls in list(vars(owner).values()):
            if isinstance(cls, type) and cls.__module__ == modname and attr in vars(cls):
                timed(f"{{modname}}:{{cls.__name__}}.{{attr}}", stage)
        return
    *owners, attr = path.split(".")
    for name in owners:
        owner = getattr(owner, name, None)
    method = getattr(owner, attr, None) if owner is not None else None
    if method is None:
        missing.append(target)
        return

    @functools.wraps(method)
    def timer(*args, **kwargs):
        open_spans.append(0.0)
        t0 = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            span = time.process_time() - t0
            nested = open_spans.pop()
            spent[stage] = spent.get(stage, 0.0) + span - nested
            if stage in PER_LIBRARY:  # a kernel's library: its name is the kernel's
                name = getattr(args[0], "name", "?")
                per_library[name] = per_library.get(name, 0.0) + span - nested
            if open_spans:
                open_spans[-1] += span
    timer.stage_timer = True
    setattr(owner, attr, timer)
    wrapped.append((target, owner, attr))

for stage, targets in STAGES:
    for target in targets:
        timed(target, stage)
w0, c0 = time.perf_counter(), time.process_time()
{call}
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
# a timer replaced by someone else's patch timed nothing: reported as missing
missing += [t for t, owner, attr in wrapped if not getattr(vars(owner).get(attr), "stage_timer", False)]
print("STAGES" + json.dumps(dict(wall=wall, cpu=cpu, spent=spent, missing=missing, per_library=per_library)))
"""


def stages(name, env):
    """{wall, cpu, spent: {stage: exclusive CPU s}, missing: [methods not found]} of the
    first call ``name`` in a fresh process with an empty cache."""
    setup, call = EXTRA[name] if name in EXTRA else (SETUP[CALLS[name][0]], CALLS[name][1])
    child = CHILD.format(setup=setup, call=call, stages=STAGES, per_library=PER_LIBRARY)
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", child], env=dict(env, NUMBA_CACHE_DIR=cache),
                             capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{name}: the child failed\n{out.stderr}")
    line = [x for x in out.stdout.splitlines() if x.startswith("STAGES")][-1]
    return json.loads(line[len("STAGES"):])


def row(name, result):
    """The table row of one first call: CPU s per stage, the time outside them, the total
    and the total less LLVM's stages."""
    spent = result["spent"]
    values = [spent.get(stage, 0.0) for stage, _ in STAGES]
    outside = result["cpu"] - sum(values)
    without_llvm = result["cpu"] - sum(spent.get(s, 0.0) for s in LLVM_STAGES)
    return [name] + [f"{v:.1f}" for v in values] + [f"{outside:.1f}", f"{result['cpu']:.1f}",
                                                     f"{without_llvm:.1f}"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"first calls to split (default: {list(DEFAULT)}), or "
                    f"{PRECOMPILE!r}")
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    for n in args.names:
        if n not in CALLS and n not in EXTRA:
            ap.error(f"unknown call {n!r}; expected some of {list(CALLS) + list(EXTRA)}")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""), SOADYN_COMPILE_NOTICE="0")
    results = {}
    for name in args.names or DEFAULT + (PRECOMPILE,):
        results[name] = stages(name, env)
        print(name, json.dumps(results[name]), flush=True)
    missing = sorted({m for r in results.values() for m in r["missing"]})
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    head = ["first call"] + [s for s, _ in STAGES] + ["outside", "total", "total less LLVM"]
    lines = ["# Cold compile by stage of the compiler", "",
             f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} logical cores"
             + (f", load average at the end {load[0]:.2f}" if load else "") + ".", "",
             "CPU seconds of each first call in a fresh process with an empty Numba cache, by stage "
             "(exclusive times: a stage's nested stages subtracted; `benchmarks/compile_stages.py` says what "
             "each stage times). \"total less LLVM\" is the call's time with LLVM's passes and machine code "
             f"taken out: what the first call would cost if LLVM's work were free (target: {FIRST_CALL_TARGET:g} s).",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row(n, r)) + " |" for n, r in results.items()]
    if PRECOMPILE in results:
        r = results[PRECOMPILE]
        rest = r["cpu"] - sum(r["spent"].get(s, 0.0) for s in LLVM_STAGES)
        llvm = r["cpu"] - rest
        lines += ["", f"`{PRECOMPILE}` compiles every kernel once in one process: {r['cpu']:.1f} s CPU, "
                  f"{llvm:.1f} s of it LLVM's and {rest:.1f} s outside LLVM. Spread perfectly over 2 cores "
                  f"(`--jobs 2`, target {PRECOMPILE_TARGET:g} s), the part outside LLVM alone takes "
                  f"{rest / 2:.1f} s of wall time, and the target leaves LLVM "
                  f"{max(0.0, 2 * PRECOMPILE_TARGET - rest):.1f} s of CPU of the {llvm:.1f} s it takes now."]
        libraries = sorted(r["per_library"].items(), key=lambda kv: -kv[1])
        linked = sum(t for _, t in libraries)
        lines += ["", f"LLVM's module passes and machine code ran over {len(libraries)} libraries, {linked:.1f} s "
                  "in all: each kernel's over its own copy of every helper it links in. The largest:", "",
                  "| library (kernel) | module passes and machine code [s] |", "|---|---|"]
        lines += [f"| {name} | {t:.2f} |" for name, t in libraries[:15]]
    if missing:
        lines += ["", "Methods this Numba lacks (their time falls into their callers' stages): "
                  + ", ".join(f"`{m}`" for m in missing) + "."]
    lines.append("")
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, "compile_stages.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    import results_json
    from timing import machine_description
    results_json.write_twin(path, machine_description())


if __name__ == "__main__":
    main()
