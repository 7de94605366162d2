"""Where the cold compile time of a first call goes: per Numba dispatcher, its exclusive
and inclusive compile time.

Run from a source checkout: ``python benchmarks/compile_profile.py [NAME ...] [--top N]
[--output FILE]``; NAME is a key of ``cold_compile.CALLS`` (default: all of them). Each
first call runs in its own process with its own empty ``NUMBA_CACHE_DIR`` (the setup of
``cold_compile.py``, not timed). In the child a listener on Numba's ``numba:compile``
event keeps the stack of dispatchers being compiled: a dispatcher's inclusive time is
the span of its compile event, its exclusive time that span less the compile events
nested in it (its callees, compiled during its type inference). Numba links every
callee's module into the caller's and optimises the linked module again, so LLVM work on
a deep callee shows up again in the exclusive time of every non-inlined caller.

The child reports wall time (``time.perf_counter``) and CPU time (``time.process_time``)
of the whole call: the machine may be shared, and CPU time is what the compilation costs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cold_compile import CALLS, SETUP  # noqa: E402

CHILD = """
import json, time
from numba.core import event as ev
import numpy as np
import soadyn as sd
rng = np.random.default_rng(0)
{setup}

class Profile(ev.Listener):
    def __init__(self):
        self.stack, self.rows = [], {{}}

    def on_start(self, event):
        self.stack.append([time.perf_counter(), 0.0])

    def on_end(self, event):
        t0, nested = self.stack.pop()
        span = time.perf_counter() - t0
        if self.stack:
            self.stack[-1][1] += span
        d = event.data["dispatcher"]
        name = getattr(d, "__qualname__", None) or getattr(getattr(d, "py_func", None), "__qualname__", repr(d))
        module = getattr(getattr(d, "py_func", None), "__module__", "")
        row = self.rows.setdefault(module + "." + name, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += span - nested
        row[2] += span

profile = Profile()
ev.register("numba:compile", profile)
w0, c0 = time.perf_counter(), time.process_time()
{call}
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
ev.unregister("numba:compile", profile)
print("PROFILE" + json.dumps(dict(wall=wall, cpu=cpu, rows=profile.rows)))
"""


def profile(name, env):
    """{wall, cpu, rows: {dispatcher: [compiles, exclusive s, inclusive s]}} of the first
    call ``name`` in a fresh process with an empty cache."""
    kind, call = CALLS[name]
    with tempfile.TemporaryDirectory() as cache:
        out = subprocess.run([sys.executable, "-c", CHILD.format(setup=SETUP[kind], call=call)],
                             env=dict(env, NUMBA_CACHE_DIR=cache), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{name}: the child failed\n{out.stderr}")
    line = [x for x in out.stdout.splitlines() if x.startswith("PROFILE")][-1]
    return json.loads(line[len("PROFILE"):])


def report(name, result, top):
    rows = sorted(result["rows"].items(), key=lambda r: -r[1][1])
    n = sum(r[0] for _, r in rows)
    lines = [f"## {name}: {result['wall']:.1f} s wall, {result['cpu']:.1f} s CPU, {n} compiles", "",
             "| dispatcher | compiles | exclusive [s] | inclusive [s] |", "|---|---|---|---|"]
    lines += [f"| {d} | {r[0]} | {r[1]:.2f} | {r[2]:.2f} |" for d, r in rows[:top]]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"first calls to profile (default: all of {list(CALLS)})")
    ap.add_argument("--top", type=int, default=15, help="dispatchers listed per call")
    ap.add_argument("--output", help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    for n in args.names:
        if n not in CALLS:
            ap.error(f"unknown call {n!r}; expected some of {list(CALLS)}")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""), SOADYN_COMPILE_NOTICE="0")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = [f"# Cold compile profile ({os.cpu_count()} logical cores, load average {load:.2f} at the start)", ""]
    for name in args.names or list(CALLS):
        text.append(report(name, profile(name, env), args.top))
        print(text[-1], flush=True)
    if args.output:
        with open(args.output, "w") as f:
            f.write("\n".join(text))


if __name__ == "__main__":
    main()
