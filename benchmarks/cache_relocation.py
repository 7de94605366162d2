"""A moved copy of a compiled package: the first call of a public function from an empty
cache, from the warm cache where it was made, and from a copy of the package directory
moved elsewhere with every modification time renewed (a container layer, a moved
environment), with soadyn's filing of the cache by path inside the package
(``soadyn.numba_cache.PackageCacheLocator``) and with Numba's own (by a hash of each
source's absolute directory: ``NUMBA_CACHE_LOCATOR_CLASSES`` set to Numba's locators).

Run from a source checkout: ``python benchmarks/cache_relocation.py [--output DIR]``; writes
``cache_relocation.md``. The calls and their set-up are cold_compile.py's; each runs in a
fresh process (CPU time of the call, ``time.process_time``).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cold_compile import CALLS, SCRIPT, SETUP  # noqa: E402

#: the first calls measured: a tree function, a closed-chain cluster function, a contact step
MEASURED = ("aba", "cluster_aba", "step")

#: Numba's own cache locators, as a user who sets ``NUMBA_CACHE_LOCATOR_CLASSES`` has them
NUMBAS = "UserProvidedCacheLocator,InTreeCacheLocator,UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator"

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "soadyn")


def call_time(name, root, **env):
    """CPU seconds of the first call ``name`` in a fresh process with the package at ``root``."""
    kind, call = CALLS[name]
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "SOADYN_"))}
    environment.update(PYTHONPATH=root, SOADYN_COMPILE_NOTICE="0", **env)
    script = f"import soadyn\nassert soadyn.__file__.startswith({root!r})\n" + SCRIPT.format(setup=SETUP[kind],
                                                                                              call=call)
    out = subprocess.run([sys.executable, "-c", script], env=environment, cwd=root, capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1].split()[1])


def moved_copy(source, destination):
    shutil.copytree(source, destination)
    for directory, _, files in os.walk(destination):
        for f in files:
            os.utime(os.path.join(directory, f))


def measure(name, work, **env):
    """(empty cache, warm where made, moved copy) CPU seconds of the first call ``name``."""
    built, moved = os.path.join(work, "built"), os.path.join(work, "moved")
    shutil.copytree(SRC, os.path.join(built, "soadyn"), ignore=shutil.ignore_patterns("__pycache__"))
    cold = call_time(name, built, **env)
    warm = call_time(name, built, **env)
    moved_copy(built, moved)
    return cold, warm, call_time(name, moved, **env)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = ap.parse_args(argv)
    rows = []
    for name in MEASURED:
        for filing, env in (("soadyn's (by path in the package)", {}),
                            ("Numba's (by absolute path)", {"NUMBA_CACHE_LOCATOR_CLASSES": NUMBAS})):
            with tempfile.TemporaryDirectory() as work:
                cold, warm, moved = measure(name, work, **env)
            rows.append((name, filing, cold, warm, moved))
            print(f"{name:12s} {filing:36s} empty {cold:6.2f}  warm {warm:6.2f}  moved {moved:6.2f} s CPU", flush=True)
    lines = ["# The cache of a moved copy", "", f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} logical cores.",
             "", "CPU seconds of a public function's first call in a fresh process: from an empty cache, from the "
             "cache where the package was compiled, and from a copy of the package directory (its cache with it) "
             "moved to another path with every modification time renewed. The calls are cold_compile.py's.", "",
             "| call | cache filed by | empty cache [s] | warm, same place [s] | moved copy [s] |", "|---|---|---|---|---|"]
    lines += [f"| {n} | {f} | {c:.2f} | {w:.2f} | {m:.2f} |" for n, f, c, w, m in rows]
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, "cache_relocation.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    import results_json
    from timing import machine_description
    results_json.write_twin(path, machine_description())


if __name__ == "__main__":
    main()
