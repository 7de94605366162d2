"""What each of soadyn's Numba patches earns (soadyn.numba_patches): each patch alone against
stock Numba (``SOADYN_NUMBA_PATCHES=0``), and all of them, in the same run.

    PYTHONPATH=src python benchmarks/numba_patches.py [--groups tree closed clusters] [--rounds 20]

1. **Cold compile.** One process per configuration, each with an empty Numba cache of its
   own, compiles the kernel groups of ``soadyn precompile`` named by ``--groups``; the CPU
   time of the process (``time.process_time``: what compiling costs, whatever the load of
   the shared machine) per group. Stock runs twice, first and last: the difference of its
   two runs is the noise of a cold compile. ``--jobs 2`` runs two configurations at a time.
2. **Per call.** One worker process per configuration (stock twice: the process-to-process
   noise), all alive together, each loading the kernels its cold compile left in its cache;
   the driver asks them in turn, case by case in a shuffled order per round, for one sample
   (a ``timeit`` burst of ``--sample`` seconds) of public calls on the UR5, a four-bar
   linkage, the Mini Cheetah and two contact scenes (solo12 standing, a stack of five boxes:
   ``sd.step``, whose kernels a worker compiles before its first sample unless ``--groups``
   holds "contact"), and of Pinocchio's ``aba`` on the UR5 in the same worker (the machine's
   speed at that moment). Reported: the median over rounds of the per-call time [µs], and of its ratio
   to the stock worker's sample of the same round.

A patch is kept when it gains more than the noise on either measure: the cold compile CPU
time by more than twice the stock-to-stock difference (and at least 2 %), or a per-call time
by more than twice the stock-to-stock spread (the larger of the median ratio's distance to 1
and half the interquartile range of the per-round ratios of the two stock workers, at least
1 %). ``--output DIR`` writes ``numba_patches.md`` and ``numba_patches.json`` there.

``--all-but NAME ...`` asks the other question: whether a patch is needed *in the
combination* (some pay only beside others). It measures all the patches against all but
each one named, and all again, which gives the noise. A patch is needed when taking it out
costs more than that noise, on either measure. It writes ``numba_patches_all_but.md`` and
its twin.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

#: the public calls timed per configuration (their kernels are in the groups "tree", "closed" and "clusters")
CASES = {
    "pinocchio aba (ur5)": "pin.aba(pm, pd, qp, vp, tau)",
    "rnea (ur5)": "sd.rnea(m, q, v, tau)",
    "aba (ur5)": "sd.aba(m, q, v, tau)",
    "mass_matrix (ur5)": "sd.mass_matrix(m, q)",
    "frame_jacobian (ur5)": "sd.frame_jacobian(m, q, frame)",
    "aba_derivatives (ur5)": "sd.aba_derivatives(m, q, v, tau)",
    "constrained_forward_dynamics (four-bar)": "sd.constrained_forward_dynamics(four_bar, qc, vc, tc)",
    # the C-ABA of a model with clusters (its kernels are in the group "clusters"): where
    # pass_views_whole was measured (benchmarks/results/design_notes.md)
    "cluster_aba (mini cheetah)": "sd.cluster_aba(cheetah, yc, ydc, tyc)",
    # a contact step of a standing robot and of a box stack (group "contact"; the scenes of
    # benchmarks/contact_step.py, 200 steps into the trajectory, the same arguments every call)
    "step (solo12)": "sd.step(solo12, *solo12_args, warm_start=solo12_warm)",
    "step (box stack)": "sd.step(stack, *stack_args, warm_start=stack_warm)",
}
PEER = "pinocchio aba (ur5)"

COMPILE = """
import json, time
import numpy as np
import soadyn
from soadyn import numba_patches, precompile
times = {{}}
for group in {groups!r}:
    t0, c0 = time.perf_counter(), time.process_time()
    precompile.GROUPS[group]()
    times[group] = (time.process_time() - c0, time.perf_counter() - t0)
print(json.dumps({{"applied": numba_patches.applied(), "times": times}}))
"""


def configurations():
    """(label, value of SOADYN_NUMBA_PATCHES) in the order of the cold compiles."""
    sys.path.insert(0, SRC)
    from soadyn.numba_patches import PATCHES
    return [("stock", "0"), *((name, name) for name in PATCHES), ("all", "1"), ("stock again", "0")]


def all_but_configurations(names):
    """(label, value of SOADYN_NUMBA_PATCHES) of ``--all-but``: all the patches, all but each
    of ``names``, all again (the noise)."""
    sys.path.insert(0, SRC)
    from soadyn.numba_patches import PATCHES
    unknown = set(names) - set(PATCHES)
    if unknown:
        raise SystemExit(f"--all-but: expected names among {', '.join(PATCHES)}, got {', '.join(sorted(unknown))}")
    return [("all", "1"), *((f"all but {name}", ",".join(p for p in PATCHES if p != name)) for name in names),
            ("all again", "1")]


def _environment(switch, cache):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SOADYN_NUMBA_PATCH")}
    environment.update(PYTHONPATH=SRC, SOADYN_COMPILE_NOTICE="0", SOADYN_NUMBA_PATCHES=switch,
                       NUMBA_CACHE_DIR=cache)
    return environment


def cold_compile(switch, cache, groups):
    out = subprocess.run([sys.executable, "-c", COMPILE.format(groups=list(groups))],
                         env=_environment(switch, cache), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"SOADYN_NUMBA_PATCHES={switch}: {out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def worker(sample):
    """Answer "<case>" lines on stdin with the per-call seconds of one sample."""
    sys.path.insert(0, HERE)
    import pinocchio as pin

    import soadyn as sd
    from peers import load_pair

    pair = load_pair("ur5")
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, tau = rng.normal(size=(2, m.nv))
    four_bar = sd.models.four_bar_linkage()
    y, yd = sd.closed.embedding.random_independent_state(four_bar, rng, 0.6)
    qc, vc = sd.spanning_state(four_bar, y, yd)
    ns = dict(sd=sd, pin=pin, m=m, pm=pm, pd=pd, q=q, v=v, tau=tau, qp=pair.q_to_pin(q), vp=pair.v_to_pin(v),
              frame=m.frames[-1].name, four_bar=four_bar, qc=qc, vc=vc, tc=rng.normal(size=four_bar.nv))
    cheetah = sd.models.mini_cheetah()
    yc, ydc = sd.closed.embedding.random_independent_state(cheetah, rng)
    ns.update(cheetah=cheetah, yc=yc, ydc=ydc, tyc=rng.normal(size=len(ydc)))
    ns.update(contact_namespace(sd))
    from timing import serve_samples

    serve_samples(CASES, ns, sample)


def contact_namespace(sd):
    """The names the step cases of :data:`CASES` use: the two scenes of
    ``benchmarks/contact_step.py`` 200 steps into their trajectories (PD torques as its loop
    computes them), the arguments and the warm start of the next step."""
    import contact_step as cs
    ns = {}
    for name, make in (("solo12", cs.solo12), ("stack", cs.box_stack)):
        scene = cs.Scene(name, *make())
        q, v, r = scene.q0.copy(), np.zeros(scene.model.nv), None
        for _ in range(200):  # into the standing trajectory
            r = sd.step(scene.model, q, v, scene.kp_v * scene.pd_error(q, scene.q0) - scene.kd_v * v, cs.DT,
                        warm_start=r)
            q, v = r.q, r.v
        ns.update({name: scene.model, f"{name}_warm": r,
                   f"{name}_args": (q, v, scene.kp_v * scene.pd_error(q, scene.q0) - scene.kd_v * v, cs.DT)})
    return ns


def per_call(configs, caches, rounds, sample):
    procs = {label: subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--sample", str(sample)],
                                     env=_environment(switch, caches[label]), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
             for label, switch in configs}
    for label, p in procs.items():
        line = p.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"worker {label}: {line!r}")
    samples = {label: {key: [] for key in CASES} for label in procs}
    rng = np.random.default_rng(0)
    order = [(label, key) for label in procs for key in CASES]
    for _ in range(rounds):
        rng.shuffle(order)
        for label, key in order:
            procs[label].stdin.write(key + "\n")
            procs[label].stdin.flush()
            samples[label][key].append(json.loads(procs[label].stdout.readline()))
    for p in procs.values():
        p.stdin.close()
        p.wait()
    return samples


def _short(case):
    """A case's function name (``rnea (ur5)`` -> ``rnea``), or the whole key when two cases
    time the same function (the two steps)."""
    name = case.split(" (")[0]
    return name if sum(k.split(" (")[0] == name for k in CASES) == 1 else case


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", nargs="*", default=["tree", "closed", "clusters"], help="kernel groups compiled cold")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--sample", type=float, default=0.02, help="seconds per per-call sample")
    parser.add_argument("--jobs", type=int, default=1, help="cold compiles at a time")
    parser.add_argument("--output", default=None)
    parser.add_argument("--all-but", nargs="+", default=None, metavar="PATCH",
                        help="measure all patches against all but each of these (is a patch needed in the combination?)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.sample)
        return
    configs = configurations() if args.all_but is None else all_but_configurations(args.all_but)
    # the reference and its second run (the noise); a configuration's gain is against the reference
    ref, ref2 = ("stock", "stock again") if args.all_but is None else ("all", "all again")
    sign = 1.0 if args.all_but is None else -1.0  # all but X: X is needed when taking it out costs
    started = time.strftime("%Y-%m-%d %H:%M")
    with tempfile.TemporaryDirectory() as root:
        caches = {label: os.path.join(root, label.replace(" ", "-")) for label, _ in configs}

        def compile_one(config):
            label, switch = config
            result = cold_compile(switch, caches[label], args.groups)
            print(f"cold compile {label:28s} {sum(c for c, _ in result['times'].values()):6.1f} s CPU", flush=True)
            return label, result

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            compiled = dict(pool.map(compile_one, configs))
        # the per-call workers: stock twice (the noise), each patch alone, all
        samples = per_call([c for c in configs], caches, args.rounds, args.sample)

    cpu = {label: sum(c for c, _ in compiled[label]["times"].values()) for label, _ in configs}
    ref_cpu = 0.5 * (cpu[ref] + cpu[ref2])
    compile_noise = max(2 * abs(cpu[ref] - cpu[ref2]) / ref_cpu, 0.02)
    ratios = {label: {key: np.array(samples[label][key]) / np.array(samples[ref][key]) for key in CASES}
              for label, _ in configs}
    call_noise = {}
    for key in CASES:
        r = ratios[ref2][key]
        q1, q3 = np.percentile(r, [25, 75])
        call_noise[key] = max(2 * max(abs(np.median(r) - 1), (q3 - q1) / 2), 0.01)
    patch_labels = [label for label, _ in configs if label not in (ref, ref2, "all")]
    verdict = {}
    for label in patch_labels + (["all"] if args.all_but is None else []):
        compile_gain = 1 - cpu[label] / ref_cpu
        call_gains = {key: 1 - np.median(ratios[label][key]) for key in CASES if key != PEER}
        kept = sign * compile_gain > compile_noise or any(sign * call_gains[k] > call_noise[k] for k in call_gains)
        verdict[label] = dict(compile_cpu=cpu[label], compile_gain=compile_gain, call_gains=call_gains, kept=kept)

    sys.path.insert(0, HERE)
    from timing import machine_description

    title = ("soadyn's Numba patches, each alone against stock Numba" if args.all_but is None
             else "soadyn's Numba patches: all of them against all but one")
    lines = [f"# {title}", "",
             f"{started}; cold compile of the groups {', '.join(args.groups)} (CPU time of a fresh process with "
             f"an empty cache of its own, {args.jobs} at a time); per call: {len(configs)} workers, "
             f"{args.rounds} rounds of the cases in a shuffled order, {args.sample * 1e3:.0f} ms per sample, "
             f"medians over rounds of the ratio to the {ref} worker's sample of the same round.", "",
             f"Noise: cold compile, {ref} against {ref2} {cpu[ref]:.1f} / {cpu[ref2]:.1f} s "
             f"(a patch must gain more than {compile_noise * 100:.1f} %); per call, twice the {ref}-to-{ref2} "
             "spread: " + ", ".join(f"{_short(k)} {call_noise[k] * 100:.1f} %" for k in CASES if k != PEER)
             + ".", "",
             "| configuration | cold compile CPU [s] | gain | " + " | ".join(k for k in CASES if k != PEER)
             + " | kept |",
             "|---" * (4 + len(CASES) - 1) + "|"]
    for label, _ in configs:
        row = [label, f"{cpu[label]:.1f}",
               "" if label in (ref, ref2) else f"{(1 - cpu[label] / ref_cpu) * 100:+.1f} %"]
        for key in CASES:
            if key == PEER:
                continue
            t = np.median(samples[label][key]) * 1e6
            row.append(f"{t:.3f} µs" + ("" if label == ref else f" ({np.median(ratios[label][key]):.3f})"))
        row.append("" if label not in verdict else ("yes" if verdict[label]["kept"] else "**no: within noise**"))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Per group (CPU s): " + "; ".join(
        f"{label}: " + ", ".join(f"{g} {compiled[label]['times'][g][0]:.1f}" for g in args.groups)
        for label, _ in configs), "",
        "Pinocchio's aba in each worker [µs] (the machine's speed): " + ", ".join(
            f"{label} {np.median(samples[label][PEER]) * 1e6:.3f}" for label, _ in configs), "",
        "```", machine_description(), "```", ""]
    text = "\n".join(lines)
    print(text)
    if args.output:
        name = "numba_patches.md" if args.all_but is None else "numba_patches_all_but.md"
        with open(os.path.join(args.output, name), "w") as f:
            f.write(text)
        import results_json
        results_json.write_twin(os.path.join(args.output, name))  # the machine block is in the text

if __name__ == "__main__":
    main()
