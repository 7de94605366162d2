"""Per-call time of the closed-chain forward-dynamics methods (``soadyn.closed.METHODS``).

Models: ``soadyn.models.four_bar_chain(k, tail)`` — k four-bar loops stacked into a
spatial chain (3k bodies, k revolute cut joints of 5 rows each, rank 2k) followed by a
serial tail. Two sweeps:

* loops: k = 1, 2, 4, 6, 8, 16 with no tail (the tree grows with the loops);
* tree:  k = 2 loops with a tail of 0 … 512 bodies (where the O(N) augmented method
  overtakes the dense ones).

A table of mechanisms with couplings (geared chains, the rotor-driven robots of the
URDF+ files) times the two compiled methods, direct and embedding, where the default
method's rule (``soadyn.closed.forward.EMBEDDING_COUPLING_WORK``) switches between them.

A third table times every method against Pinocchio's loop solvers on the mechanisms of
the closed-chain issue (four_bar.urdf, six_bar.urdf, the crank-rocker four-bar, the planar
four-bar leg ``soadyn.models.planar_leg_linkage``, the 8-loop chain, two loops with a
194-link tail): ``pin.lcaba`` (after
``pin.computeJointMinimalOrdering``) and ``pin.constraintDynamics`` (after
``pin.initConstraintDynamics``), the loops as CONTACT_3D anchors
(``peers.pinocchio_loop_constraints``), timed interleaved with soadyn in the same run
(medians); q̈ must agree to 1e-8 (relative to 1 + max |q̈|) for a column to be reported.

Every method registered in ``METHODS`` is timed (``constrained_forward_dynamics`` with
``method=``), together with the constraint evaluation alone (G_c, 𝔘̊: shared by all
methods) and the tree ABA for scale, interleaved (the cases take turns in a shuffled
order, ``--rounds`` samples of ``--sample-seconds`` each; medians): the machine is shared,
and timing the methods one after the other let a change of load decide which was faster
— the ordering embedding vs direct on the loop sweep ([Chignoli23]) is a same-run ratio.
Results go to ``benchmarks/results/closed_chain_methods.{json,md}``.

    PYTHONPATH=src python benchmarks/closed_chain_methods.py [--quick]

BLAS runs single-threaded (``OPENBLAS_NUM_THREADS=1`` unless set): the matrices are small
and spinning BLAS threads only steal the cores from the recursions.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.closed import METHODS, evaluate_constraints  # noqa: E402
from soadyn.closed.forward import EMBEDDING_COUPLING_WORK, EMBEDDING_LOOP_ROWS  # noqa: E402
from soadyn.models import four_bar_chain, four_bar_linkage  # noqa: E402

import results_json  # noqa: E402  (beside this script)


HERE = os.path.dirname(os.path.abspath(__file__))
URDFPLUS = os.path.join(HERE, "..", "..", "shared", "models", "urdfplus")


def closed_state(k, tail, rng):
    """A consistent state: every module is the same four-bar in its own frame, so one
    closed four-bar configuration, repeated, closes all loops."""
    single = four_bar_linkage()
    q1, _ = sd.close_loops(single, [0.7, 1.0, 1.6])
    model = four_bar_chain(k, tail)
    guess = np.concatenate([np.tile(q1, k), rng.normal(size=tail) * 0.3])
    q, v = sd.close_loops(model, guess, rng.normal(size=model.nv))
    return model, q, v


def measure(k, tail, rounds, sample_seconds, rng):
    """Interleaved medians [µs] of every method, the constraint evaluation and the tree's
    ABA on k loops with a ``tail``-link tail (the methods take turns, so a change of the
    machine's load hits all of them alike; the ordering embedding vs direct of [Chignoli23]
    is the ratio of two same-run medians)."""
    from timing import time_interleaved
    model, q, v = closed_state(k, tail, rng)
    tau = rng.normal(size=model.nv)
    row = {"loops": k, "tail": tail, "bodies": model.nbodies, "nv": model.nv,
           "rows": int(sd.constraint_jacobian(model, q).shape[0])}
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    row["rank"] = ref.constraint_rank
    tree = model.spanning_tree()  # the open tree's ABA, asked for explicitly
    ns = dict(sd=sd, model=model, tree=tree, q=q, v=v, tau=tau, evaluate_constraints=evaluate_constraints)
    cases = {"aba": ("sd.aba(tree, q, v, tau)", ns), "constraints": ("evaluate_constraints(model, q, v)", ns)}
    for name in METHODS:
        res = sd.constrained_forward_dynamics(model, q, v, tau, method=name)
        assert np.allclose(res.qdd, ref.qdd, atol=1e-8 * (1 + np.abs(ref.qdd).max())), name
        cases[name] = (f"sd.constrained_forward_dynamics(model, q, v, tau, method={name!r})", ns)
    times = time_interleaved(cases, rounds, sample_seconds, rng)
    for key in cases:
        row[f"{key}_us"] = times[key][0] * 1e6
    row["embedding_vs_direct"] = row["embedding_us"] / row["direct_us"]
    return row


def _coupled(rng):
    """(name, model, q, v) of mechanisms with couplings: geared chains and the URDF+ robots
    with rotors."""
    out = [(f"geared_chain({k})", sd.models.geared_chain(k)) for k in (4, 6, 12)]
    for name in ("mini_cheetah.urdf", "mit_humanoid.urdf", "jvrc1_humanoid.urdf"):
        path = os.path.join(URDFPLUS, name)
        if os.path.exists(path):
            out.append((name, sd.load_urdf(path)))
    return [(name, m) + tuple(sd.close_loops(m, sd.random_configuration(m, rng), rng.normal(size=m.nv)))
            for name, m in out]


def measure_couplings(rounds, sample_seconds, rng):
    """Interleaved medians [µs] of the two compiled methods on the mechanisms with
    couplings, and the default method's choice."""
    from timing import time_interleaved

    from soadyn.closed.direct import direct_tables
    rows = []
    for name, model, q, v in _coupled(rng):
        tau = rng.normal(size=model.nv)
        t = direct_tables(model)
        row = {"mechanism": name, "bodies": model.nbodies, "nv": model.nv, "coupling_rows": t.m - t.m_loop,
               "loop_rows": t.m_loop}
        ref = sd.constrained_forward_dynamics(model, q, v, tau, method="direct").qdd
        cases = {}
        for method in ("direct", "embedding"):
            res = sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd
            assert np.abs(res - ref).max() < 1e-8 * (1 + np.abs(ref).max()), (name, method)
            cases[method] = ("f(model, q, v, tau, method=method)",
                             dict(f=sd.constrained_forward_dynamics, model=model, q=q, v=v, tau=tau, method=method))
        times = time_interleaved(cases, rounds, sample_seconds, rng)
        for method in cases:
            row[f"{method}_us"] = times[method][0] * 1e6
        row["embedding_vs_direct"] = row["embedding_us"] / row["direct_us"]
        row["default"] = sd.closed.default_method(model)
        rows.append(row)
    return rows


def couplings_table(rows):
    head = ["mechanism", "bodies", "nv", "coupling_rows", "loop_rows", "direct_us", "embedding_us",
            "embedding_vs_direct", "default"]
    return table(rows, None, head)


def _mechanisms(rng):
    """(name, model, q, v) of the mechanisms compared with Pinocchio."""
    out = []
    for name in ("four_bar.urdf", "six_bar.urdf"):
        path = os.path.join(URDFPLUS, name)
        if os.path.exists(path):
            model = sd.load_urdf(path, gravity=(0.0, -9.81, 0.0))
            q, v = sd.close_loops(model, rng.normal(size=model.nq), rng.normal(size=model.nv))
            out.append((name, model, q, v))
    single = four_bar_linkage()
    q, v = sd.close_loops(single, [0.7, 1.0, 1.6], rng.normal(size=single.nv))
    out.append(("crank-rocker four-bar", single, q, v))
    leg = sd.models.planar_leg_linkage()
    q, v = sd.close_loops(leg, sd.random_configuration(leg, rng), rng.normal(size=leg.nv))
    out.append(("planar four-bar leg", leg, q, v))
    for k, tail in ((8, 0), (2, 194)):
        model, q, v = closed_state(k, tail, rng)
        out.append((f"{k} loops + {tail}-link tail" if tail else f"{k}-loop chain", model, q, v))
    return out


def _loop_chains(rng, loops):
    """(name, model, q, v) of the chains of k four-bar loops without a tail (3k bodies)."""
    return [(f"{k}-loop chain", *closed_state(k, 0, rng)) for k in loops]


def measure_peers(rounds, sample_seconds, rng, mechanisms=None):
    """Interleaved medians [µs] of every soadyn method and of Pinocchio's loop solvers on
    ``mechanisms`` ((name, model, q, v); default: the closed-chain issue's mechanisms)."""
    import pinocchio as pin

    import peers
    from timing import time_interleaved
    rows = []
    for name, model, q, v in (_mechanisms(rng) if mechanisms is None else mechanisms):
        tau = rng.normal(size=model.nv)
        ref = sd.constrained_forward_dynamics(model, q, v, tau, method="projection").qdd
        scale = 1.0 + np.abs(ref).max()
        row = {"mechanism": name, "bodies": model.nbodies, "nv": model.nv,
               "rows": int(sd.constraint_jacobian(model, q).shape[0])}
        cases = {}
        for method in METHODS:
            res = sd.constrained_forward_dynamics(model, q, v, tau, method=method).qdd
            assert np.abs(res - ref).max() < 1e-8 * scale, (name, method)
            cases[method] = ("f(model, q, v, tau, method=method)",
                             dict(f=sd.constrained_forward_dynamics, model=model, q=q, v=v, tau=tau, method=method))
        pair = peers.pinocchio_model(model)
        cmodels, cdatas = peers.pinocchio_loop_constraints(pair)
        qp, vp, tp = pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau)
        lc_data = pair.pm.createData()
        pin.computeJointMinimalOrdering(pair.pm, lc_data, cmodels)
        lc_settings = pin.ProximalSettings(1e-12, 1e-3, 20)  # PEERS.md: mu = 1e-3 keeps ≤ 1e-10 error
        cd_datas = pin.StdVec_RigidConstraintData()  # each solver its own constraint datas
        for cm in cmodels:
            cd_datas.append(cm.createData())
        cd_data = pair.pm.createData()
        pin.initConstraintDynamics(pair.pm, cd_data, cmodels, cd_datas)
        cd_settings = pin.ProximalSettings(1e-12, 1e-8, 3)  # 2–3 iterations reach round-off (PEERS.md)
        ns = dict(pin=pin, pm=pair.pm, qp=qp, vp=vp, tp=tp, cm=cmodels, cd=cdatas, cd2=cd_datas, lc_data=lc_data,
                  cd_data=cd_data, lc_settings=lc_settings, cd_settings=cd_settings)
        peers_stmt = {"pin_lcaba": "pin.lcaba(pm, lc_data, qp, vp, tp, cm, cd, lc_settings)",
                      "pin_constraintDynamics": "pin.constraintDynamics(pm, cd_data, qp, vp, tp, cm, cd2, cd_settings)"}
        for key, stmt in peers_stmt.items():
            qdd = pair.v_from_pin(eval(stmt, ns))
            err = float(np.abs(qdd - ref).max() / scale)
            row[f"{key}_error"] = err
            if err < 1e-8:
                cases[key] = (stmt, ns)
        times = time_interleaved(cases, rounds, sample_seconds, rng)
        for key in list(METHODS) + list(peers_stmt):
            row[f"{key}_us"] = times[key][0] * 1e6 if key in times else float("nan")
        fastest_peer = np.nanmin([row["pin_lcaba_us"], row["pin_constraintDynamics_us"]])
        row["default"] = sd.closed.default_method(model)
        row["default_vs_pinocchio"] = row[f"{row['default']}_us"] / fastest_peer
        # the same ratio of the fastest samples (the least disturbed on a shared machine)
        row["default_vs_pinocchio_best"] = times[row["default"]][1] / min(times[k][1] for k in peers_stmt if k in times)
        rows.append(row)
    return rows


def peers_table(rows, methods):
    head = ["mechanism", "bodies", "nv", "rows"] + [f"{m}_us" for m in methods] + \
        ["pin_lcaba_us", "pin_constraintDynamics_us", "default", "default_vs_pinocchio", "default_vs_pinocchio_best",
         "pin_constraintDynamics_error"]
    lines = ["| " + " | ".join(h.replace("_us", " [µs]") for h in head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = []
        for h in head:
            x = r[h]
            cells.append(f"{x:.1f}" if h.endswith("_us") else f"{x:.2f}" if h.startswith("default_vs")
                         else f"{x:.0e}" if h.endswith("_error") else str(x))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(rows, methods, head=None):
    if head is None:
        head = ["loops", "tail", "bodies", "nv", "rows", "rank", "aba_us", "constraints_us"] + \
            [f"{m}_us" for m in methods] + ["embedding_vs_direct"]
    lines = ["| " + " | ".join(h.replace("_us", " [µs]") for h in head) + " |",
             "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[h]:.1f}" if h.endswith("_us") else f"{r[h]:.2f}" if h.endswith("_direct")
                                       else str(r[h]) for h in head) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sweep, few calls")
    ap.add_argument("--rounds", type=int, default=40, help="interleaved samples per case")
    ap.add_argument("--sample-seconds", type=float, default=0.003,
                    help="short samples: on a shared machine fewer of them are cut by other processes")
    ap.add_argument("--output", default=os.path.join(HERE, "results"))
    ap.add_argument("--no-peers", action="store_true", help="skip the comparison with Pinocchio")
    ap.add_argument("--loop-scaling", action="store_true",
                    help="only the scaling sweep against Pinocchio: chains of 1 … 32 four-bar loops, every method "
                         "and pin.lcaba / pin.constraintDynamics interleaved (closed_chain_scaling.{json,md})")
    args = ap.parse_args(argv)
    rounds, sample = (5, 0.005) if args.quick else (args.rounds, args.sample_seconds)
    if args.loop_scaling:
        return loop_scaling(args, rounds, sample)
    loops = [1, 2, 4] if args.quick else [1, 2, 4, 6, 8, 16]
    tails = [0, 8] if args.quick else [0, 8, 32, 128, 512]
    rng = np.random.default_rng(0)
    load_start = os.getloadavg()
    methods = list(METHODS)
    sweeps = {"loops": [measure(k, 0, rounds, sample, rng) for k in loops],
              "tree": [measure(2, t, rounds, sample, rng) for t in tails]}
    sweeps["couplings"] = measure_couplings(rounds, sample, rng)
    if not args.no_peers:
        sweeps["peers"] = measure_peers(rounds, sample, rng)
    meta = {"methods": methods, "rounds": rounds, "sample_seconds": sample, "python": platform.python_version(),
            "machine": platform.machine(), "numpy": np.__version__, "soadyn": sd.__version__,
            "date": time.strftime("%Y-%m-%d"), "loadavg_start": load_start, "loadavg_end": os.getloadavg(),
            "commit": results_json.git_commit()}
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "closed_chain_methods.json"), "w") as f:
        json.dump({"meta": meta, **sweeps}, f, indent=1)
    md = [f"# Closed-chain forward dynamics: per-call time ({meta['date']})", "",
          "Medians of {rounds} interleaved samples of {sample_seconds} s per case (the cases take turns in a shuffled "
          "order; single-threaded BLAS); chains of four-bar loops "
          "(`soadyn.models.four_bar_chain`). `constraints` = evaluation of G_c and the bias "
          "alone (shared by every method); `aba` = the spanning tree's unconstrained ABA; `embedding_vs_direct` = "
          "embedding / direct (same run: below 1 where embedding is faster, the ordering of [Chignoli23]). "
          "Load average (1, 5, 15 "
          "min) at the start {loadavg_start[0]:.2f} {loadavg_start[1]:.2f} {loadavg_start[2]:.2f}, at the end "
          "{loadavg_end[0]:.2f} {loadavg_end[1]:.2f} {loadavg_end[2]:.2f} on {cores} cores: absolute times grow "
          "with it, ratios in the last table are same-run.".format(cores=os.cpu_count(), **meta), "",
          "## Growing number of loops (tree grows with them)", "", table(sweeps["loops"], methods), "",
          "## Two loops, growing serial tail", "", table(sweeps["tree"], methods), "",
          "## Couplings (gears, rotors): the two compiled methods", "",
          "Public calls, interleaved medians; `default` is `sd.closed.default_method` (embedding when "
          f"m_loop/{EMBEDDING_LOOP_ROWS} + m_coupling·bodies/{EMBEDDING_COUPLING_WORK} ≥ 1).", "",
          couplings_table(sweeps["couplings"]), ""]
    if "peers" in sweeps:
        md += ["## Against Pinocchio's loop solvers (interleaved medians, same run)", "",
               "`default`: the method `constrained_forward_dynamics` uses without `method=` "
               "(`sd.closed.default_method`); `default_vs_pinocchio` = its time / the faster of Pinocchio's two "
               "(medians; `_best`: the same of the fastest samples); "
               "a Pinocchio column is left empty (nan) when its q̈ disagrees with soadyn's by more than 1e-8 "
               "(its relative error is in the last column).", "", peers_table(sweeps["peers"], methods), ""]
    text = "\n".join(md)
    with open(os.path.join(args.output, "closed_chain_methods.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


def loop_scaling(args, rounds, sample):
    """Time against the number of links of every method and of Pinocchio's two loop
    solvers on chains of k four-bar loops (3k links, 5k constraint rows), the same run."""
    from timing import machine_description

    rng = np.random.default_rng(0)
    loops = [1, 2, 4] if args.quick else [1, 2, 4, 8, 16, 32]
    machine = machine_description()
    rows = measure_peers(rounds, sample, rng, _loop_chains(rng, loops))
    for row, k in zip(rows, loops):
        row["loops"] = k
    os.makedirs(args.output, exist_ok=True)
    methods = list(METHODS)
    with open(os.path.join(args.output, "closed_chain_scaling.json"), "w") as f:
        json.dump({"meta": {**results_json.parse_machine(machine), "rounds": rounds, "sample_seconds": sample,
                            "methods": methods, "loadavg_end": os.getloadavg()}, "rows": rows}, f, indent=1)
    text = "\n".join([
        "# Closed chains against Pinocchio: time against the number of links", "", "```", machine.rstrip(), "```", "",
        f"Chains of k four-bar loops (`soadyn.models.four_bar_chain(k)`: 3k links, 5k constraint rows); every "
        f"method of `constrained_forward_dynamics` and Pinocchio's `lcaba` and `constraintDynamics` (loops as "
        f"CONTACT_3D anchors), interleaved medians of {rounds} samples of {sample} s per case, same run; a "
        f"Pinocchio column is nan when its q̈ disagrees with soadyn's by more than 1e-8.", "",
        peers_table(rows, methods), ""])
    with open(os.path.join(args.output, "closed_chain_scaling.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
