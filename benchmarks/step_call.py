"""What a call of ``sd.step`` costs around its compiled kernel, against ``mujoco.mj_step``
from Python on the same MJCF scenes (those of ``benchmarks/contact_step.py``), same run.

``python benchmarks/step_call.py`` writes ``benchmarks/results/step_call.md`` and its
``.json`` twin. ``--rows-only FILE.json`` writes just the measured rows (for a run of
another checkout of soadyn, ``PYTHONPATH=that/src``), which ``--before FILE.json`` then shows
beside this checkout's as a second table (each with the ratio to its own run's mj_step).

Timed call by call (``time.perf_counter_ns`` around each), the cases taking turns in
blocks of calls, in a shuffled order, for many rounds; reported: the median over all calls
of a case (a call interrupted by other work on the machine is one slow call among many: the
median of single calls stays put where the mean of a block of them does not) and its
25th–75th percentiles. The timer's own cost (an empty call, measured the same way) is
subtracted. Each case is one call:

* ``mj_step``: ``mujoco.mj_step(m, d)`` of the standing scene (servos inside);
* ``sd.step``: ``sd.step(model, q, v, tau, dt, warm_start=r)`` of one state of the standing
  trajectory (the same arguments every call: the same work every call);
* ``kernel``: the step kernel itself on the same arguments, through Numba's dispatcher (the
  floor of a call from Python: the compiled stages and the dispatch of its 12 arguments);
* ``loop``: a step of a loop with the PD torques computed in NumPy, the state carried over;
* ``servo loop``: the same loop with the PD servo inside the step (``pd=(kp, kd, q_ref)``,
  as ``contact_step.py``'s loop runs).

``sd.step − kernel`` is the Python around the kernel (validation, warm start, scratch,
the result's objects).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import contact_step as cs  # noqa: E402
import results_json  # noqa: E402
from timing import machine_description  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.core.call import NO_FORCES  # noqa: E402
from soadyn.core.compile import derived  # noqa: E402
from soadyn.contact.servo import NO_SERVO  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def measure(name, rounds, calls, seed=0):
    import importlib

    import mujoco
    step_module = importlib.import_module("soadyn.contact.step")
    from soadyn.kernels.contact import step as ks
    scene = cs.Scene(name, *{"solo12": cs.solo12, "box stack": cs.box_stack, "talos": cs.talos}[name]())
    model, mm = scene.model, scene.mm
    dm = mujoco.MjData(mm)
    dm.qpos[:] = scene.qpos0
    dm.ctrl[:] = scene.ctrl
    kp, kd = scene.kp_v, scene.kd_v
    q, v, r = scene.q0.copy(), np.zeros(model.nv), None
    for _ in range(200):  # into the standing trajectory
        tau = kp * scene.pd_error(q, scene.q0) - kd * v
        r = sd.step(model, q, v, tau, cs.DT, warm_start=r)
        q, v = r.q, r.v
    tau = kp * scene.pd_error(q, scene.q0) - kd * v
    fixed = sd.step(model, q, v, tau, cs.DT, warm_start=r)  # its arguments, every call
    # the kernel's arguments as sd.step passes them (this thread's packed tables, the
    # previous step's record as the warm start, a record for the step)
    th = step_module._thread_step(derived(model), step_module.step_tables(model), 1)
    warm = r._record
    record = np.empty(th.size)
    kernel_args = (th.T, q, v, tau, NO_FORCES, cs.DT, sd.ContactSettings().vector(), warm, record, NO_SERVO, NO_SERVO,
                   NO_SERVO)
    assert ks.step_kernel(*kernel_args) == 0
    np.testing.assert_array_equal(record[th.q_at + model.nq:], fixed.v)  # the same step
    state = {"q": q, "v": v, "r": r}

    def loop():
        q, v = state["q"], state["v"]
        res = sd.step(model, q, v, kp * scene.pd_error(q, scene.q0) - kd * v, cs.DT, warm_start=state["r"])
        state["q"], state["v"], state["r"] = res.q, res.v, res

    servo_state = {"q": q, "v": v, "r": r}
    servo = (kp, kd, scene.q0) if scene.has_pd else None
    zero = np.zeros(model.nv)

    def servo_loop():
        res = sd.step(model, servo_state["q"], servo_state["v"], zero, cs.DT, warm_start=servo_state["r"], pd=servo)
        servo_state["q"], servo_state["v"], servo_state["r"] = res.q, res.v, res

    step, kernel = sd.step, ks.step_kernel
    cases = {
        "mj_step": lambda: mujoco.mj_step(mm, dm),
        "sd.step": lambda: step(model, q, v, tau, cs.DT, warm_start=r),
        "kernel": lambda: kernel(*kernel_args),
        "loop": loop,
        "servo loop": servo_loop,
        "empty": lambda: None,
    }
    us, rounds_median = per_call(cases, rounds, calls, np.random.default_rng(seed))
    timer = us.pop("empty")[0]
    row = {"scene": name, "nv": model.nv, "contacts": len(fixed.contacts), "iterations": fixed.solution.iterations,
           "timer us": timer}
    for k, (p25, p50, p75) in us.items():
        row[f"{k} us median"], row[f"{k} us p25"], row[f"{k} us p75"] = p50 - timer, p25 - timer, p75 - timer
    # the ratio round by round (each round's median call of mj_step over that of sd.step, the
    # two measured within milliseconds of each other), then its median over the rounds:
    # robust to a machine whose speed drifts between rounds, as a shared one does
    mj = np.array(rounds_median["mj_step"]) - timer
    for k in ("sd.step", "loop", "servo loop"):
        row[f"{k} paired ratio"] = float(np.median(mj / (np.array(rounds_median[k]) - timer)))
    return row


def per_call(cases, rounds, calls, rng):
    """{case: (25th, 50th, 75th percentile) µs} of single calls: ``calls`` calls of each case
    per round, the cases in a shuffled order each round (after a warm-up round)."""
    clock = time.perf_counter_ns
    samples = {k: [] for k in cases}
    medians = {k: [] for k in cases}
    keys = list(cases)
    for rnd in range(rounds + 1):
        rng.shuffle(keys)
        for key in keys:
            f, out = cases[key], samples[key]
            for _ in range(calls):
                t0 = clock()
                f()
                t1 = clock()
                if rnd:
                    out.append(t1 - t0)
            if rnd:
                medians[key].append(float(np.median(out[-calls:])) / 1e3)
    return ({k: tuple(float(x) for x in np.percentile(np.array(s) / 1e3, [25, 50, 75])) for k, s in samples.items()},
            medians)


def report(rows, header, label, before=None):
    lines = ["# sd.step per call against mujoco.mj_step", "", "```", header, "```", "",
             "µs per call (the median of single calls over interleaved rounds, the timer's cost subtracted; in "
             "brackets the 25th–75th percentiles). `Python` = sd.step − kernel (the same arguments: one state of "
             "the standing trajectory, warm started from the step before); ratio = steps/s of sd.step / steps/s "
             "of mj_step (≥ 1: soadyn faster); `ratio (paired)`: the same ratio round by round (the medians of each "
             "round's blocks of calls, measured within milliseconds of each other), its median over the rounds — the "
             "figure to read on a shared machine whose speed drifts between rounds; `loop`: a step of "
             "contact_step.py's earlier loop (PD torques in NumPy, state carried over); `servo loop`: the same loop with "
             "the PD servo inside the step (`pd=(kp, kd, q_ref)`, as contact_step.py's loop now runs; mj_step has its "
             "servos inside)."]
    lines += ["", f"## {label}", ""] + _table(rows)
    if before is not None:
        # the other checkout's run: its date and load from its machine block
        when = "; ".join(x.strip() for x in before["machine"].splitlines() if x.startswith(("date", "load")))
        lines += ["", f"## {before['label']}", "", f"A run of another checkout on the same machine ({when}).", ""]
        lines += _table(before["rows"])
    return "\n".join(lines) + "\n"


def _table(rows):
    lines = ["| scene | nv | contacts | iterations | mj_step | sd.step | kernel | Python | ratio | ratio (paired) | loop | "
             "ratio (loop) | ratio (loop, paired) | servo loop | ratio (servo loop) | ratio (servo loop, paired) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def cell(k):
            return f"{r[k + ' us median']:.2f} ({r[k + ' us p25']:.2f}–{r[k + ' us p75']:.2f})"
        def paired(k):  # (not in the rows of an older step_call.py)
            x = r.get(f"{k} paired ratio")
            return "–" if x is None else f"{x:.2f}"
        py = r["sd.step us median"] - r["kernel us median"]
        lines.append(f"| {r['scene']} | {r['nv']} | {r['contacts']} | {r['iterations']} | {cell('mj_step')} | "
                     f"{cell('sd.step')} | {cell('kernel')} | {py:.2f} | "
                     f"{r['mj_step us median'] / r['sd.step us median']:.2f} | {paired('sd.step')} | {cell('loop')} | "
                     f"{r['mj_step us median'] / r['loop us median']:.2f} | {paired('loop')} | "
                     + (f"{cell('servo loop')} | {r['mj_step us median'] / r['servo loop us median']:.2f} | "
                        f"{paired('servo loop')} |" if "servo loop us median" in r else "– | – | – |"))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", default=["solo12", "box stack", "talos"])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--calls", type=int, default=500, help="calls of each case per round")
    ap.add_argument("--label", default="this checkout")
    ap.add_argument("--output", default=os.path.join(RESULTS, "step_call"))
    ap.add_argument("--rows-only", help="write only the measured rows (JSON) to this file")
    ap.add_argument("--before", help="the rows of a run of another checkout (--rows-only), shown as a second table")
    args = ap.parse_args(argv)
    import mujoco
    header = machine_description() + f"mujoco {mujoco.__version__}"
    rows = []
    for name in args.scenes:
        rows.append(measure(name, args.rounds, args.calls))
        print(rows[-1], flush=True)
    if args.rows_only:
        with open(args.rows_only, "w") as f:
            json.dump({"machine": header, "label": args.label, "rows": rows}, f, indent=1)
        return 0
    before = None
    if args.before:
        with open(args.before) as f:
            before = json.load(f)
    text = report(rows, header, args.label, before)
    with open(args.output + ".md", "w") as f:
        f.write(text)
    results_json.write_twin(args.output + ".md", header)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
