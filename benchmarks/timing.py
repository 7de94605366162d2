"""Timing shared by the benchmark scripts: interleaved medians and the description of the
machine a run was made on (imported by bench.py and the per-topic scripts; it imports none
of them)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import timeit

import numpy as np

__all__ = ["time_interleaved", "machine_description"]


def time_interleaved(cases, rounds, sample_seconds, rng, samples_out=None):
    """Per-call seconds of each case: ``{key: (median, min, max)}``.

    ``cases`` maps a key to ``(stmt, namespace)``; statements run through ``timeit``
    (no wrapper function in the timed loop). Each case is warmed up and calibrated to
    ``sample_seconds`` per sample; the cases then take turns, in a shuffled order, for
    ``rounds`` rounds. ``samples_out``, a dict, receives each case's per-round samples
    (lists in round order: the samples of one round were taken within a round's time of
    each other, for ratios round by round on a machine whose speed drifts).
    """
    timers, numbers = {}, {}
    for key, (stmt, ns) in cases.items():
        timer = timeit.Timer(stmt, globals=ns)
        timer.timeit(number=3)  # warm-up (and any first-call work)
        n, elapsed = 1, 0.0
        while True:
            elapsed = timer.timeit(number=n)
            if elapsed >= sample_seconds / 4 or n >= 1 << 20:
                break
            n *= 4
        timers[key] = timer
        numbers[key] = max(1, int(n * sample_seconds / max(elapsed, 1e-9)))
    samples = {key: [] for key in cases}
    keys = list(cases)
    for _ in range(rounds):
        rng.shuffle(keys)
        for key in keys:
            samples[key].append(timers[key].timeit(number=numbers[key]) / numbers[key])
    if samples_out is not None:
        samples_out.update(samples)
    return {key: (float(np.median(s)), float(np.min(s)), float(np.max(s))) for key, s in samples.items()}



def serve_samples(cases, namespace, sample_seconds, timer=time.perf_counter):
    """The worker side of a two-process interleaved comparison: calibrate a
    ``timeit.Timer`` per case (``cases``: key → statement, run in ``namespace``) so that one
    sample lasts about ``sample_seconds``, print "ready", then answer each "<key>" line on
    stdin with the per-call seconds of one sample (JSON)."""
    import json

    timers, numbers = {}, {}
    for key, stmt in cases.items():
        timers[key] = timeit.Timer(stmt, timer=timer, globals=namespace)
        timers[key].timeit(number=100)  # warm-up (first calls: tables, plain-call versions)
        n = 100
        while timers[key].timeit(number=n) < sample_seconds / 4:
            n *= 4
        numbers[key] = max(1, int(n * sample_seconds / max(timers[key].timeit(number=n), 1e-9)))
    print("ready", flush=True)
    for line in sys.stdin:
        key = line.strip()
        print(json.dumps(timers[key].timeit(number=numbers[key]) / numbers[key]), flush=True)


def sample_workers(script, trees, worker_args, served, rounds, seed=0):
    """The driver side of a two-process interleaved comparison (:func:`serve_samples` the
    worker's): start ``script`` once per entry of ``trees`` (name → the ``src`` directory put
    on PYTHONPATH) with the arguments ``worker_args(name)``, wait for each to be ready, then
    for ``rounds`` rounds ask for one sample of every case — the cases in a shuffled order,
    for each case the workers in a shuffled order, each worker only for the cases of
    ``served[name]``. Returns {name: {case: [seconds per call, one per round]}}."""
    import json

    procs = {name: subprocess.Popen([sys.executable, os.path.abspath(script), *worker_args(name)],
                                    env=dict(os.environ, PYTHONPATH=src), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
             for name, src in trees.items()}
    for p in procs.values():
        assert p.stdout.readline().strip() == "ready"
    samples = {name: {key: [] for key in served[name]} for name in trees}
    rng = np.random.default_rng(seed)
    keys = list(dict.fromkeys(k for name in trees for k in served[name]))
    names = list(trees)
    for _ in range(rounds):
        rng.shuffle(keys)
        for key in keys:
            rng.shuffle(names)
            for name in names:
                if key in samples[name]:
                    procs[name].stdin.write(key + "\n")
                    procs[name].stdin.flush()
                    samples[name][key].append(json.loads(procs[name].stdout.readline()))
    for p in procs.values():
        p.stdin.close()
        p.wait()
    return samples


def machine_description():
    import numba
    lines = [f"date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}"]
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines.append(f"cpu: {cpu}")
    from soadyn.core.batch import batch_threads
    lines.append(f"logical cores: {os.cpu_count()}; soadyn batch threads: {batch_threads()}; OMP_WAIT_POLICY="
                 f"{os.environ.get('OMP_WAIT_POLICY', 'unset')}")
    if hasattr(os, "getloadavg"):
        lines.append("load average at start (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())
    lines.append(f"os: {platform.platform()}")
    lines.append(f"python: {sys.version.split()[0]} ({platform.python_implementation()})")
    import soadyn
    versions = [f"soadyn {soadyn.__version__}{_git_commit()}", f"numpy {np.__version__}",
                f"numba {numba.__version__}"]
    try:
        import pinocchio
        versions.append(f"pinocchio {pinocchio.__version__}")
    except ImportError:
        versions.append("pinocchio not installed")
    lines.append("versions: " + ", ".join(versions))
    return "\n".join(lines) + "\n"


def _git_commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5)
        return f" (git {sha.stdout.strip()})" if sha.returncode == 0 and sha.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        return ""
