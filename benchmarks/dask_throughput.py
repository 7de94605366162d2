"""soadyn.distributed.map_batches on a local Dask cluster against the single-process batch.

``python benchmarks/dask_throughput.py`` (needs ``pip install soadyn[distributed]
example-robot-data``) writes ``benchmarks/results/distributed.md``.

* **Throughput** of batched ``sd.aba`` (B states of ur5) and ``sd.rollout`` (B/64
  rollouts of T steps): the single-process batch kernel run on the calling thread (one
  block of ``run_blocks``) and the batched public call (all threads), against
  ``map_batches`` on a ``LocalCluster`` of 1 and of 2 single-threaded worker processes
  (:func:`soadyn.distributed.local_cluster`), default chunk size. Both clusters are started
  (and their workers warmed) before timing: the figures are those of a running cluster,
  as a user who keeps a client gets them.
* **Per-chunk overhead**: ``map_batches`` on one worker with chunk sizes from 1024 to the
  whole batch; the time is fitted as ``a + b · chunks``, b being the cost of a chunk
  (scheduling, transfer of its inputs and outputs) beyond the states it evaluates.

Medians over ``--rounds`` rounds, the ways of one measurement interleaved in random order.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

import soadyn as sd
from soadyn.core.compile import derived
from soadyn.dynamics.rollout import INTEGRATORS
from soadyn.kernels.aba import aba_batch
from soadyn.kernels.rollout import rollout_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import machine_description, time_interleaved  # noqa: E402
from peers import robot_path  # noqa: E402


def problem(batch, steps, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sd.load_urdf(robot_path("ur5"), floating_base=False)
    rng = np.random.default_rng(seed)
    q = np.stack([sd.random_configuration(model, rng) for _ in range(batch)])
    v, tau = rng.normal(size=(2, batch, model.nv))
    controls = rng.normal(size=(batch // 64, steps, model.nv))
    return model, q, v, tau, controls


def interleaved(cases, rounds, seed=0):
    """{name: median seconds} of the callables ``cases``: one call per sample, each round in
    a new random order, after warm-up calls."""
    times = time_interleaved({k: ("f()", {"f": f}) for k, f in cases.items()}, rounds, 1e-3,
                             np.random.default_rng(seed))
    return {k: t[0] for k, t in times.items()}


def on_this_thread(model, kernel, args, batch):
    """The batched kernel on all ``batch`` states on the calling thread (one block of
    :func:`soadyn.core.batch.run_blocks`): the single-process batch on one thread."""
    d = derived(model)
    status = np.zeros(batch, dtype=np.int64)
    return lambda: kernel(d.compiled.mi, d.compiled.mf, d.buffer(), *args, status, 0, batch)


def stacked_on_this_thread(model, kernel, states, params, outs):
    """A kernel that evaluates the states stored one after another (``rollout_kernel``) on
    all of ``states`` at once on the calling thread: the single-process batch on one
    thread."""
    d = derived(model)
    merged = [x.reshape((-1,) + x.shape[2:]) for x in states]
    out_rows = [o.reshape((-1,) + o.shape[2:]) for o in outs]
    return lambda: kernel(d.compiled.mi, d.compiled.mf, d.buffer(), *merged, *params, *out_rows)


def measure(B, T, dt, rounds):
    """Throughput of the four ways (module docstring) and the per-chunk sweep: ``{"rows":
    [one dict per way], "chunks": {chunk: seconds}, "per_chunk_s", "fixed_s", "state_us",
    "nroll"}``."""
    import distributed

    import soadyn.distributed as sdd
    model, q, v, tau, controls = problem(B, T)
    nroll = len(controls)
    q0, v0 = q[:nroll].copy(), v[:nroll].copy()
    aba_out = np.empty((B, model.nv))
    roll_out = (np.empty((nroll, T + 1, model.nq)), np.empty((nroll, T + 1, model.nv)))
    code = INTEGRATORS["semi-implicit-euler"]
    with sdd.local_cluster(1) as c1, distributed.Client(c1) as one, \
            sdd.local_cluster(2) as c2, distributed.Client(c2) as two:
        cases = {
            "1 thread": on_this_thread(model, aba_batch, (q, v, tau, np.zeros((B, 0, 6)), True, aba_out), B),
            "threads": lambda: sd.aba(model, q, v, tau),
            "1 worker": lambda: sdd.map_batches(sd.aba, model, (q, v, tau), one),
            "2 workers": lambda: sdd.map_batches(sd.aba, model, (q, v, tau), two),
        }
        aba_t = interleaved(cases, rounds)
        cases = {
            "1 thread": stacked_on_this_thread(model, rollout_kernel, (q0, v0, controls), (dt, code), roll_out),
            "threads": lambda: sd.rollout(model, q0, v0, controls, dt),
            "1 worker": lambda: sdd.rollout(model, q0, v0, controls, dt, client=one),
            "2 workers": lambda: sdd.rollout(model, q0, v0, controls, dt, client=two),
        }
        roll_t = interleaved(cases, rounds)
        chunks = sorted({c for c in (1024, 4096, 16384, 65536) if c < B} | {B})
        sweep = interleaved({c: (lambda c=c: sdd.map_batches(sd.aba, model, (q, v, tau), one, chunk=c))
                             for c in chunks}, max(3, rounds // 2))
    n = np.array([-(-B // c) for c in chunks], dtype=float)
    per_chunk, fixed = np.polyfit(n, np.array([sweep[c] for c in chunks]), 1)
    labels = {"1 thread": "single process, batch kernel on 1 thread",
              "threads": f"single process, batched call ({os.cpu_count()} threads)",
              "1 worker": "map_batches, 1 worker", "2 workers": "map_batches, 2 workers"}
    rows = [{"how": label, "batch": B, "steps": T, "aba_states_per_s": B / aba_t[k],
             "aba_vs_1_thread": aba_t["1 thread"] / aba_t[k], "rollout_steps_per_s": nroll * T / roll_t[k],
             "rollout_vs_1_thread": roll_t["1 thread"] / roll_t[k], "per_chunk_ms": per_chunk * 1e3}
            for k, label in labels.items()]
    return {"rows": rows, "chunks": sweep, "per_chunk_s": per_chunk, "fixed_s": fixed,
            "state_us": aba_t["1 thread"] / B * 1e6, "nroll": nroll, "version": distributed.__version__}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=262144, help="states for aba (rollouts: batch / 64)")
    ap.add_argument("--steps", type=int, default=500, help="steps per rollout")
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--output", default=os.path.join(HERE, "results", "distributed.md"))
    args = ap.parse_args(argv)
    import soadyn.distributed as sdd
    B, T, dt = args.batch, args.steps, args.dt
    r = measure(B, T, dt, args.rounds)
    nroll, per_chunk, fixed, state_us, sweep = r["nroll"], r["per_chunk_s"], r["fixed_s"], r["state_us"], r["chunks"]
    lines = ["# soadyn.distributed: throughput on a local Dask cluster", "", "```", machine_description(),
             f"dask {r['version']}", "```", "",
             f"ur5 (nv = 6). `aba`: B = {B} states; `rollout`: {nroll} rollouts × {T} steps "
             f"(semi-implicit Euler, dt = {dt} s). map_batches with its default chunk ({sdd.DEFAULT_CHUNK} "
             f"states; rollout: {max(1, sdd.DEFAULT_CHUNK // T)} rollouts of {T} steps); workers are "
             "single-threaded processes (`soadyn.distributed.local_cluster`), both clusters started and "
             f"warmed before timing. Medians of {args.rounds} rounds, the four ways interleaved in random order.",
             "", "| how | aba [states/s] | vs 1 thread | rollout [steps/s] | vs 1 thread |", "|---|---|---|---|---|"]
    for row in r["rows"]:
        lines.append(f"| {row['how']} | {row['aba_states_per_s']:.3g} | {row['aba_vs_1_thread']:.2f} | "
                     f"{row['rollout_steps_per_s']:.3g} | {row['rollout_vs_1_thread']:.2f} |")
    lines += ["", f"## Per-chunk overhead (1 worker, aba, B = {B})", "",
              "| chunk [states] | chunks | time [s] | states/s |", "|---|---|---|---|"]
    for c, t in sweep.items():
        lines.append(f"| {c} | {-(-B // c)} | {t:.3f} | {B / t:.3g} |")
    lines += ["", f"Fit time = a + b · chunks: b = **{per_chunk * 1e3:.2f} ms per chunk** (scheduling, moving its "
              f"inputs and results through the scheduler), a = {fixed:.3f} s (the evaluation of the B states and "
              f"the call's fixed cost). One aba state costs {state_us:.2f} µs on one thread, so chunks of n "
              f"states lose b / (b + n × {state_us:.2f} µs) of a worker's time: "
              f"{per_chunk / (per_chunk + 4096 * state_us * 1e-6) * 100:.0f} % at n = 4096, "
              f"{per_chunk / (per_chunk + 65536 * state_us * 1e-6) * 100:.0f} % at n = 65536. A function "
              f"k times costlier per state than this aba needs k times fewer states per chunk; a rollout of T "
              f"steps counts as about T states."]
    text = "\n".join(lines) + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    import results_json
    results_json.write_twin(args.output)  # the machine block is in the text
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
