"""The benchmark pages of the documentation, drawn from the committed results.

``soadyn bench --report`` (or ``make bench-report``) reads every ``*.json`` under
``benchmarks/results/`` (the machine-readable twins of the ``.md`` results,
``results_json.py``) and writes Markdown pages with matplotlib figures into
``docs/benchmarks/`` (``--output DIR`` elsewhere). It runs no benchmark and needs no
network: the pages are a function of the committed JSON, and the documentation build
(``docs/conf.py``) regenerates them before it reads the sources, so that the built pages
cannot drift from the results.

Each section names the result file it shows and the provenance stored in it: the machine,
the date and the commit of the run (``provenance``). Every result file is shown on some
page (the index lists where; ``tests/docs/test_bench_report.py`` checks it).

    PYTHONPATH=src python benchmarks/report.py [--results DIR] [--output DIR]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")
OUTPUT = os.path.join(ROOT, "docs", "benchmarks")

sys.path.insert(0, HERE)
import results_json  # noqa: E402

__all__ = ["load_results", "provenance", "fit_exponent", "build", "main"]


# ============================================================================ data
def load_results(results_dir):
    """Every ``*.json`` under ``results_dir`` (recursively): ``{relative path: data}``,
    sorted by path."""
    out = {}
    for folder, _, files in os.walk(results_dir):
        for name in files:
            if name.endswith(".json"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    out[os.path.relpath(path, results_dir).replace(os.sep, "/")] = json.load(f)
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class Provenance:
    """Where a result comes from: ``machine`` (cpu, cores, os, or what the run recorded),
    ``date``, ``commit`` (short SHA of soadyn measured) and ``note`` (how they were recorded)."""
    machine: str
    date: str
    commit: str
    note: str


def provenance(data):
    """The ``Provenance`` stored in a result: a machine block (``timing.machine_description``)
    at ``data["machine"]`` or ``data["meta"]["machine"]``, else the ``meta`` fields."""
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    block = data.get("machine") if isinstance(data.get("machine"), str) else meta.get("machine")
    if isinstance(block, str) and block.startswith("date:"):
        meta = {**results_json.parse_machine(block), **{k: v for k, v in meta.items() if k == "provenance"}}
    if meta.get("cpu"):
        machine = f"{meta['cpu']}, {meta.get('cores') or '?'} logical cores, {meta.get('os') or 'os not recorded'}"
    else:
        machine = meta.get("machine") or meta.get("os") or "not recorded"
    return Provenance(machine=machine, date=str(meta.get("date") or "not recorded"),
                      commit=str(meta.get("commit") or "not recorded"),
                      note=meta.get("provenance") or "recorded by the run")


def fit_exponent(x, y):
    """p of the least-squares fit y ≈ c·x^p in log-log coordinates."""
    import numpy as np
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def md_tables(data):
    """(heading, table) of a Markdown twin (``results_json.twin``), in document order."""
    for section in data.get("sections", []):
        for table in section["tables"]:
            yield section["heading"], table


# ============================================================================ pages
def _cell(x):
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isnan(x):
            return "–"
        a = abs(x)
        return f"{x:.2e}" if a and (a < 1e-2 or a >= 1e5) else f"{x:.3g}" if a < 10 else f"{x:.1f}"
    return str(x).replace("|", "\\|").replace("\n", " ")


class Page:
    """One Markdown page: its text, the figures it saves and the result files it shows."""

    def __init__(self, out, name, title, intro):
        self.out, self.name, self.title = out, name, title
        self.lines = [f"# {title}", "", intro, ""]
        self.sources = []

    def text(self, *paragraphs):
        for p in paragraphs:
            self.lines += [p, ""]

    def heading(self, title):
        self.lines += [f"## {title}", ""]

    def source(self, key, data):
        """Name the result file and its provenance (machine, date, commit)."""
        p = provenance(data)
        self.sources.append(key)
        self.lines += [f"*Data:* `benchmarks/results/{key}` — machine: {p.machine}; date: {p.date}; "
                       f"commit: `{p.commit}` — {p.note}.", ""]

    def table(self, columns, rows):
        self.lines.append("| " + " | ".join(_cell(c) for c in columns) + " |")
        self.lines.append("|" + "---|" * len(columns))
        for r in rows:
            self.lines.append("| " + " | ".join(_cell(c) for c in r) + " |")
        self.lines.append("")

    def figure(self, fig, name, caption):
        import matplotlib.pyplot as plt
        os.makedirs(os.path.join(self.out, "figures"), exist_ok=True)
        fig.tight_layout()
        fig.savefig(os.path.join(self.out, "figures", f"{name}.png"), dpi=100)
        plt.close(fig)
        self.lines += [f"![{caption}](figures/{name}.png)", "", f"*{caption}*", ""]

    def twin_tables(self, data):
        """The prose and tables of a Markdown twin, each section under its own heading (as a
        subsection; the result's title is the page section's)."""
        for section in data.get("sections", []):
            heading = section["heading"]
            if heading and heading != data.get("title"):
                self.lines += [f"### {heading}", ""]
            paragraphs = section.get("paragraphs", [])
            for k, table in enumerate(section["tables"] + [None]):
                self.lines += [p["text"] + "\n" for p in paragraphs if p["after_tables"] == k]
                if table is not None:
                    self.table(table["columns"], table["rows"])

    def write(self):
        with open(os.path.join(self.out, f"{self.name}.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(self.lines).rstrip() + "\n")


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _plain_log_axis(ax, axis="y"):
    """Log scale with plain tick labels (0.5, 1, 2) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    target.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _column(table, name):
    i = table["columns"].index(name)
    return [r[i] for r in table["rows"]]


# ---------------------------------------------------------------- tree algorithms
def page_trees(out, res, results_dir=RESULTS):
    plt = _plt()
    import numpy as np
    page = Page(out, "trees", "Tree algorithms against Pinocchio",
                "Per-call time of soadyn's public functions on one state against Pinocchio's Python calls on the "
                "same robots (example-robot-data files loaded by both libraries), measured in the same run: the "
                "cases take turns in a shuffled order and each number is a median over rounds, so that a change "
                "of the machine's load hits both libraries alike. A ratio below 1 means soadyn is faster.")
    bench = res.get("bench/bench.json")
    if bench:
        sec = bench["sections"]
        page.heading("Per call")
        page.source("bench/bench.json", bench)
        rows = sec["per_call"]
        robots = list(dict.fromkeys(r["robot"] for r in rows))
        algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
        fig, ax = plt.subplots(figsize=(10, 4.2))
        width = 0.8 / len(robots)
        for j, robot in enumerate(robots):
            ratio = {r["algorithm"]: r["soadyn_ratio"] for r in rows if r["robot"] == robot}
            ax.bar(np.arange(len(algorithms)) + (j - (len(robots) - 1) / 2) * width,
                   [ratio.get(a, np.nan) for a in algorithms], width, label=robot)
        ax.axhline(1.0, color="k", lw=0.8)
        _plain_log_axis(ax)
        ax.set_xticks(np.arange(len(algorithms)), algorithms, rotation=30, ha="right")
        ax.set_ylabel("soadyn / Pinocchio (per call)")
        ax.legend(ncol=len(robots), fontsize=8, loc="upper left")
        page.figure(fig, "per_call_ratios", "Per-call time ratio soadyn / Pinocchio, one bar per function and robot "
                    "(log scale; below the line soadyn is faster)")
        page.text("What each pair compares: `mass_matrix` and `mass_matrix_inverse` return the full matrix where "
                  "Pinocchio's `crba` and `computeMinverse` fill the upper triangle only; `forward_kinematics` "
                  "returns the world poses of every body where `forwardKinematics` returns nothing (it fills "
                  "its data); the frame functions are compared with Pinocchio's `forwardKinematics` followed by "
                  "the frame update. The notes column says so per row; *low-overhead* is the same function with "
                  "a `workspace=` argument (no allocation of the outputs).")
        page.table(["robot", "nv", "function", "soadyn [µs]", "low-overhead [µs]", "Pinocchio [µs]", "ratio",
                    "low-overhead ratio", "note"],
                   [[r["robot"], r["nv"], r["algorithm"], r["soadyn_us"], r["soadyn_low_us"], r["pinocchio_us"],
                     r["soadyn_ratio"], r["soadyn_low_ratio"], r["note"]] for r in rows])
        page.heading("Where a small call's time goes")
        page.text("On a small robot most of a call is fixed cost: Numba's dispatch of the compiled kernel, the "
                  "allocation of the outputs and the Python function around the kernel (which looks up the "
                  "model's tables and the thread's workspace and checks the arguments). The *floor* is the "
                  "kernel called from Python with every argument prepared plus the allocation of its outputs: "
                  "where the floor alone is above Pinocchio's whole call, no Python call that returns new arrays "
                  "can match it, and the loop of your own compiled code below (`soadyn.compiled`) is the way to "
                  "pay the fixed cost once. A batch of states pays it once too.")
        ov = sec.get("overhead", [])
        show = ["rnea", "aba", "mass_matrix", "forward_kinematics"]
        fig, axes = plt.subplots(1, len(show), figsize=(12, 3.6), sharey=False)
        parts = [("dispatch_us", "dispatch"), ("kernel_us", "kernel"), ("allocation_us", "allocation"),
                 ("wrapper_us", "Python wrapper")]
        for ax, alg in zip(axes, show):
            rr = [r for r in ov if r["algorithm"] == alg]
            x = np.arange(len(rr))
            bottom = np.zeros(len(rr))
            for key, label in parts:
                vals = np.array([r[key] for r in rr])
                ax.bar(x, vals, 0.6, bottom=bottom, label=label)
                bottom += vals
            ax.plot(x, [r["pinocchio_us"] for r in rr], "k_", ms=18, mew=2, label="Pinocchio's call")
            ax.set_xticks(x, [r["robot"] for r in rr], rotation=45, ha="right", fontsize=8)
            ax.set_title(alg, fontsize=10)
        axes[0].set_ylabel("µs per call")
        axes[-1].legend(fontsize=7)
        page.figure(fig, "call_overhead", "A public call's time split into dispatch, kernel, output allocation "
                    "and Python wrapper, against Pinocchio's whole call")
        page.table(["robot", "function", "public call [µs]", "dispatch", "kernel", "allocation", "wrapper",
                    "floor", "Pinocchio [µs]"],
                   [[r["robot"], r["algorithm"], r["plain_us"], r["dispatch_us"], r["kernel_us"], r["allocation_us"],
                     r["wrapper_us"], r["floor_us"], r["pinocchio_us"]] for r in ov])
        page.heading("Scaling with the number of bodies")
        page.text("Serial chains of N revolute bodies (`soadyn.models.serial_chain`); log-log axes, the exponent p "
                  "of t ∝ N^p fitted over the three largest chains. Both libraries' recursions are O(N); the mass "
                  "matrix is N × N and grows as N² once the recursion's fixed cost is paid.")
        chains = sec.get("chains", [])
        algs = list(dict.fromkeys(r["algorithm"] for r in chains))
        fig, axes = plt.subplots(1, len(algs), figsize=(12, 3.8))
        for ax, alg in zip(np.atleast_1d(axes), algs):
            rr = sorted((r for r in chains if r["algorithm"] == alg), key=lambda r: r["bodies"])
            n = [r["bodies"] for r in rr]
            for key, label in (("soadyn_us", "soadyn"), ("pinocchio_us", "Pinocchio")):
                t = [r[key] for r in rr]
                ax.loglog(n, t, "o-", ms=3, label=f"{label} (p = {fit_exponent(n[-3:], t[-3:]):.2f})")
            ax.set_title(alg, fontsize=10)
            ax.set_xlabel("bodies N")
            ax.legend(fontsize=8)
        np.atleast_1d(axes)[0].set_ylabel("µs per call")
        page.figure(fig, "tree_chain_scaling", "Time per call against the number of bodies of a serial chain, "
                    "with fitted exponents")
        page.heading("Batches of states")
        page.text("One call on a batch of B states runs the kernel over the states on the batch threads "
                  "(`soadyn.core.batch.batch_threads`); Pinocchio is called in a Python loop and through its "
                  "parallel entry points `pin.abaInParallel` and `pin.rneaInParallel` on a `pin.ModelPool` of as "
                  "many threads.")
        batch = sec.get("batch", [])
        fig, ax = plt.subplots(figsize=(10, 3.8))
        labels = [f"{r['robot']} {r['algorithm']}" for r in batch]
        x = np.arange(len(batch))
        for k, (key, label) in enumerate((("soadyn_batch_states_per_s", "soadyn batched call"),
                                          ("pinocchio_parallel_states_per_s", "Pinocchio parallel"),
                                          ("pinocchio_loop_states_per_s", "Pinocchio Python loop"))):
            ax.bar(x + (k - 1) * 0.27, [r[key] for r in batch], 0.27, label=label)
        ax.set_yscale("log")
        ax.set_xticks(x, labels, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel("states per second")
        ax.legend(fontsize=8)
        page.figure(fig, "batch_throughput", f"States per second on batches of {batch[0]['batch'] if batch else '?'} "
                    "states, 2 threads")
        page.table(["robot", "function", "batch", "threads", "soadyn [states/s]", "Pinocchio loop", "Pinocchio parallel",
                    "vs loop", "vs parallel"],
                   [[r["robot"], r["algorithm"], r["batch"], r["threads"], r["soadyn_batch_states_per_s"],
                     r["pinocchio_loop_states_per_s"], r["pinocchio_parallel_states_per_s"], r["speedup_vs_pin_loop"],
                     r["speedup_vs_pin_parallel"]] for r in batch])
    _twin_section(page, res, "compiled_api.json", "Kernels from your own Numba loop",
                  "`soadyn.compiled` exposes the kernels to a `numba.njit` loop of your own: per state, what a "
                  "Python user pays in each library (Pinocchio's number includes its binding's conversions; it is "
                  "not a comparison of the two C++ cores).")
    _twin_section(page, res, "one_state.json", "The cost of one model state per call",
                  "Every public call reads one snapshot of the model (a later edit cannot change a call under "
                  "way); the run compares the code before and after that change with Pinocchio's `aba` as the "
                  "yardstick in both processes.")
    _twin_section(page, res, "partitioning.json", "Partitioned against unpartitioned ABA",
                  "`sd.aba` runs multi-dof hinges as a sequence of rank-one steps (the partitioned recursion); "
                  "the table times it against the block recursion on chains of each hinge type.")
    _twin_section(page, res, "sparsity.json", "Mass-matrix sparsity of the bench robots",
                  "Entries of M that the topology allows to be nonzero ([Jain12]) and those that vanish by the "
                  "geometry at every sampled configuration.")
    picture = os.path.join(results_dir, "sparsity_talos.png")
    if "sparsity.json" in res and os.path.isfile(picture):
        os.makedirs(os.path.join(out, "figures"), exist_ok=True)
        shutil.copyfile(picture, os.path.join(out, "figures", "sparsity_talos.png"))
        page.lines += ["![Mass-matrix sparsity of talos](figures/sparsity_talos.png)", "",
                       "*Mass-matrix sparsity of talos (`soadyn info FILE --sparsity`; "
                       "`benchmarks/results/sparsity_talos.png`)*", ""]
    mm = res.get("mass_matrix_scaling.json")
    if mm:
        page.heading("Mass matrix: CRBA and JᵀMJ")
        page.text("Two ways to form M on serial chains: the composite-rigid-body recursion and the operator form "
                  "JᵀMJ of [CDI18]; log-log with the exponents fitted over N ≥ 32.")
        page.source("mass_matrix_scaling.json", mm)
        _, table = next(md_tables(mm))
        n = _column(table, "N")
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for col, label in (("crba [µs]", "CRBA"), ("jtmj [µs]", "JᵀMJ")):
            t = _column(table, col)
            big = [(a, b) for a, b in zip(n, t) if a >= 32]
            ax.loglog(n, t, "o-", ms=3, label=f"{label} (p = {fit_exponent(*zip(*big)):.2f})")
        ax.set_xlabel("bodies N")
        ax.set_ylabel("µs per call")
        ax.legend(fontsize=8)
        page.figure(fig, "mass_matrix_scaling", "Mass matrix by CRBA and by JᵀMJ against the number of bodies")
        page.twin_tables(mm)
    return page


def _twin_section(page, res, key, title, intro):
    data = res.get(key)
    if not data:
        return
    page.heading(title)
    page.text(intro)
    page.source(key, data)
    page.twin_tables(data)


# ---------------------------------------------------------------- closed chains
def page_closed(out, res, results_dir=RESULTS):
    plt = _plt()
    page = Page(out, "closed_chains", "Closed chains and transmissions",
                "Forward dynamics of systems with kinematic loops and transmissions (gears, belts, rotors): "
                "constraint embedding (C-ABA, C-RNEA, C-EFPA of [Chignoli23]) against the projection and "
                "Lagrange-multiplier methods, and against Pinocchio's loop solvers (`lcaba`, "
                "`constraintDynamics`).")
    sweeps = res.get("chignoli23_sweeps.json")
    if sweeps:
        page.heading("Scaling with the number of links ([Chignoli23] Figs. 11 and 13)")
        page.text("Serial chains of n links actuated by geared motors (GT) and by parallel belt transmissions "
                  "(PBT), as in [Chignoli23, Fig. 11]: constrained forward dynamics by C-ABA (constraint "
                  "embedding), by the projection method (the spanning tree's dynamics projected with the "
                  "explicit constraint map G) and by Lagrange multipliers, with the approximate ABA ([Chignoli23, "
                  "§II]: the loops replaced by a constant reflected rotor inertia, not exact) for scale; and the inverse operational-space inertia of the PBT "
                  "chain by C-EFPA against the projected form, as in [Chignoli23, Fig. 13]. Log-log axes; p is "
                  "the exponent of t ∝ n^p fitted over n ≥ 8. Pinocchio has no transmissions (its loop "
                  "solvers take loop-closure constraints only), so its `lcaba` is compared on chains of "
                  "kinematic loops in the next section.")
        page.source("chignoli23_sweeps.json", sweeps)
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        panels = [("GT", ("C-ABA", "projection method", "Lagrange multiplier", "approximate ABA"),
                   "GT chain: forward dynamics"),
                  ("PBT", ("C-ABA", "projection method", "Lagrange multiplier", "approximate ABA"),
                   "PBT chain: forward dynamics"),
                  ("PBT", ("C-EFPA", "projected EFPA"), "PBT chain: inverse OSIM")]
        for ax, (chain, methods, title) in zip(axes, panels):
            rows = sweeps["results"][chain]
            for m in methods:
                pts = [(r["n"], r[m]) for r in rows if m in r]
                if not pts:
                    continue
                n, t = zip(*pts)
                big = [(a, b) for a, b in pts if a >= 8]
                ax.loglog(n, t, "o-", ms=3, label=f"{m} (p = {fit_exponent(*zip(*big)):.2f})")
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("links n")
            ax.legend(fontsize=7)
        axes[0].set_ylabel("µs per call")
        page.figure(fig, "chignoli23_scaling", "Time against the number of links of geared (GT) and belt (PBT) "
                    "chains, after [Chignoli23] Figs. 11 and 13, with fitted exponents")
        for chain in ("GT", "PBT"):
            rows = sweeps["results"][chain]
            cols = list(dict.fromkeys(k for r in rows for k in r))
            page.lines += [f"### {chain} chain [µs]", ""]
            page.table(cols, [[r.get(c) for c in cols] for r in rows])
    scaling = res.get("closed_chain_scaling.json")
    if scaling:
        page.heading("Chains of four-bar loops against Pinocchio's lcaba")
        page.text("Chains of k four-bar loops (3k links, 5k constraint rows; `soadyn.models.four_bar_chain`): "
                  "every method of `constrained_forward_dynamics` — `embedding` (constraint embedding, C-ABA on "
                  "the clusters), `direct` (Lagrange multipliers: the KKT system, compiled), `augmented` (the "
                  "O(N) cut-joint method of [Jain24]: two ABA sweeps and the operational-space compliance of the "
                  "cut joints, M never formed) and `projection` (on a null-space basis of the constraints) — "
                  "against Pinocchio's `lcaba` "
                  "and `constraintDynamics` with the loops as 3D contact constraints, in the same run. p is the "
                  "exponent fitted over the three longest chains.")
        page.source("closed_chain_scaling.json", scaling)
        rows = scaling["rows"]
        methods = [m for m in scaling["meta"]["methods"]] + ["pin_lcaba", "pin_constraintDynamics"]
        fig, ax = plt.subplots(figsize=(7, 4.4))
        for m in methods:
            pts = [(r["bodies"], r[f"{m}_us"]) for r in rows if r.get(f"{m}_us") == r.get(f"{m}_us")]
            if len(pts) < 3:
                continue
            n, t = zip(*pts)
            label = {"pin_lcaba": "Pinocchio lcaba", "pin_constraintDynamics": "Pinocchio constraintDynamics"}.get(m, m)
            ax.loglog(n, t, "o-" if not m.startswith("pin") else "s--", ms=3,
                      label=f"{label} (p = {fit_exponent(n[-3:], t[-3:]):.2f})")
        ax.set_xlabel("links")
        ax.set_ylabel("µs per call")
        ax.legend(fontsize=8)
        page.figure(fig, "loop_chain_scaling", "Constrained forward dynamics on chains of four-bar loops: soadyn's "
                    "methods and Pinocchio's loop solvers against the number of links")
        cols = ["loops", "bodies", "nv", "rows"] + [f"{m}_us" for m in methods] + ["default", "default_vs_pinocchio"]
        page.table([c.replace("_us", " [µs]") for c in cols], [[r.get(c) for c in cols] for r in rows])
    methods = res.get("closed_chain_methods.json")
    if methods:
        page.heading("The cut-joint methods")
        page.text("Per-call time of each method of `constrained_forward_dynamics` on chains of four-bar loops "
                  "(growing number of loops, then two loops with a growing serial tail), on mechanisms with "
                  "couplings (where the default method switches between `direct` and `embedding`), and on the "
                  "closed-chain mechanisms against Pinocchio. `constraints` is the evaluation of the constraint "
                  "Jacobian and bias alone; `aba` the open tree's ABA for scale.")
        page.source("closed_chain_methods.json", methods)
        for key, title in (("loops", "Growing number of loops"), ("tree", "Two loops, growing serial tail"),
                           ("couplings", "Couplings: the two compiled methods"),
                           ("peers", "Against Pinocchio's loop solvers")):
            rows = methods.get(key, [])
            if rows:
                cols = list(dict.fromkeys(k for r in rows for k in r))
                page.lines += [f"### {title}", ""]
                page.table([c.replace("_us", " [µs]") for c in cols], [[r.get(c) for c in cols] for r in rows])
    for key, title, intro in (
            ("chignoli23_tables.json", "[Chignoli23]'s benchmark robots: every algorithm",
             "Per-call time of the cluster algorithms and the comparison methods of [Chignoli23, Tables II–IV] "
             "on the paper's robots."),
            ("chignoli23_pinocchio.json", "C-ABA against Pinocchio's ABA on the same trees",
             "The rotor-driven robots of [Chignoli23] as trees (the same tree without the rotors) in Pinocchio: "
             "the cost of constraint embedding over a plain tree ABA."),
            ("chignoli23_grbda.json", "Against GRBDA",
             "soadyn's public calls against the times of GRBDA (the C++ implementation of [Chignoli23]) as the "
             "paper reports them (`grbda_us`: the paper's numbers, another machine)."),
            ("chignoli23_accuracy.json", "Torque error of the approximate models ([Chignoli23] Fig. 14)",
             "Inverse-dynamics torques along a sinusoidal ankle trajectory of the MIT Humanoid: the error of "
             "the unconstrained, approximate and diagonal models against the exact one."),
            ("closed_chain_targets.json", "Every closed-chain target in one run",
             "The targets of the closed-chain work, each measured ratio against its goal.")):
        data = res.get(key)
        if not data:
            continue
        page.heading(title)
        page.text(intro)
        page.source(key, data)
        _generic(page, data)
    _twin_section(page, res, "embedding_batches.json", "Batched constraint embedding",
                  "Batches of states through the embedding method and C-ABA against loops of single calls.")
    osc = res.get("oscm_scaling.json")
    if osc:
        page.heading("Operational-space compliance: O(N) against dense")
        page.text("The operational-space compliance Λ⁻¹ = J M⁻¹ Jᵀ of a tip frame by the O(N) recursion "
                  "(`operational_space_compliance`) against a dense Cholesky of the CRBA mass matrix and against "
                  "the explicit M⁻¹; log-log, exponents over N ≥ 32.")
        page.source("oscm_scaling.json", osc)
        _, table = next(md_tables(osc))
        n = _column(table, "bodies")
        fig, ax = plt.subplots(figsize=(6, 4))
        for col in ("oscm [µs]", "dense CRBA + Cholesky [µs]", "J M⁻¹ Jᵀ via M⁻¹ [µs]", "ABA [µs]"):
            t = _column(table, col)
            big = [(a, b) for a, b in zip(n, t) if a >= 32]
            ax.loglog(n, t, "o-", ms=3, label=f"{col.replace(' [µs]', '')} (p = {fit_exponent(*zip(*big)):.2f})")
        ax.set_xlabel("bodies N")
        ax.set_ylabel("µs per call")
        ax.legend(fontsize=8)
        page.figure(fig, "oscm_scaling", "Operational-space compliance: the O(N) recursion against the dense forms")
        page.twin_tables(osc)
    return page


def _records(obj):
    """Rows of a JSON value for a table: a list of flat dicts as they are; a dict of dicts,
    one row per key with its nested dicts flattened ("a: b" columns)."""
    def flat(d, prefix=""):
        out = {}
        for k, v in d.items():
            if isinstance(v, dict):
                out.update(flat(v, f"{prefix}{k}: "))
            elif not isinstance(v, list):
                out[f"{prefix}{k}"] = v
        return out
    if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        return [flat(r) for r in obj]
    if isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
        return [{"": k, **flat(v)} for k, v in obj.items()]
    return None


def _generic(page, data):
    """Tables of a structured result: every list of records or dict of dicts under its key."""
    body = data.get("results", data)
    found = False
    for key, value in (body.items() if isinstance(body, dict) else []):
        if key in ("meta", "machine"):
            continue
        rows = _records(value)
        if rows is None and isinstance(value, dict):
            # a dict of scalars next to tables (e.g. the trajectory's amplitude): one small table
            scalars = {k: v for k, v in value.items() if not isinstance(v, (dict, list))}
            if scalars:
                page.table(list(scalars), [list(scalars.values())])
                found = True
            continue
        if rows:
            cols = list(dict.fromkeys(k for r in rows for k in r))
            page.lines += [f"### {key}", ""]
            page.table(cols, [[r.get(c) for c in cols] for r in rows])
            found = True
    if not found:
        rows = _records(body)
        if rows:
            cols = list(dict.fromkeys(k for r in rows for k in r))
            page.table(cols, [[r.get(c) for c in cols] for r in rows])
        else:
            scalars = {k: v for k, v in body.items() if not isinstance(v, (dict, list))}
            page.table(list(scalars), [list(scalars.values())])


# ---------------------------------------------------------------- simulation
def page_simulation(out, res, results_dir=RESULTS):
    plt = _plt()
    import numpy as np
    page = Page(out, "simulation", "Simulation against MuJoCo",
                "Rollouts (`sd.rollout`: B initial states integrated T steps under given torques) against "
                "`mujoco.rollout` on the same robots (MJCF files written from the same URDF inertias, no "
                "damping, friction or armature), the MJCF loader's agreement with MuJoCo's own dynamics, and "
                "batches of states on a local Dask cluster.")
    roll = res.get("rollout.json")
    if roll:
        page.heading("Rollout throughput")
        page.text("The same torques from the same initial states in both libraries; the first table is the "
                  "throughput, the second how far the trajectories drift apart.")
        page.source("rollout.json", roll)
        _, table = next(md_tables(roll))
        labels = [f"{r} {i}" for r, i in zip(_column(table, "robot"), _column(table, "integrator"))]
        fig, ax = plt.subplots(figsize=(8, 3.8))
        x = np.arange(len(labels))
        bars = (("MuJoCo 1 thr [steps/s]", "MuJoCo, 1 thread", "tab:orange", ""),
                ("soadyn 1 thr", "soadyn, 1 thread", "tab:blue", ""),
                ("MuJoCo 2 thr", "MuJoCo, 2 threads", "tab:orange", "//"),
                ("soadyn 2 thr", "soadyn, 2 threads", "tab:blue", "//"))
        for k, (col, label, color, hatch) in enumerate(bars):
            ax.bar(x + (k - 1.5) * 0.2, _column(table, col), 0.2, label=label, color=color, hatch=hatch,
                   edgecolor="white")
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_ylabel("steps per second")
        ax.legend(fontsize=8)
        page.figure(fig, "rollout_vs_mujoco", "Rollout throughput of soadyn and MuJoCo, one and two threads")
        page.twin_tables(roll)
    bench = res.get("bench/bench.json")
    if bench and bench["sections"].get("rollout"):
        page.heading("Rollouts in the soadyn bench run")
        page.source("bench/bench.json", bench)
        rows = bench["sections"]["rollout"]
        page.table(["robot", "integrator", "B", "T", "MuJoCo 1 thr [steps/s]", "soadyn 1 thr", "ratio",
                    "MuJoCo 2 thr", "soadyn 2 thr", "ratio"],
                   [[r["robot"], r["integrator"], r["batch"], r["steps"], r["mujoco_1thr_steps_per_s"],
                     r["soadyn_1thr_steps_per_s"], r["ratio1"], r["mujoco_2thr_steps_per_s"],
                     r["soadyn_2thr_steps_per_s"], r["ratio2"]] for r in rows])
        dist = bench["sections"].get("distributed")
        if dist:
            page.lines += ["### soadyn.distributed in the bench run", ""]
            page.table(["how", "aba [states/s]", "vs 1 thread", "rollout [steps/s]", "vs 1 thread"],
                       [[r["how"], r["aba_states_per_s"], r["aba_vs_1_thread"], r["rollout_steps_per_s"],
                         r["rollout_vs_1_thread"]] for r in dist])
    _twin_section(page, res, "mjcf.json", "MJCF files: agreement with MuJoCo",
                  "`sd.load_mjcf` on the test models and the dm_control suite: the largest relative difference "
                  "of inverse dynamics and of the mass matrix from MuJoCo's `mj_rne` and `mj_fullM`, and an exact "
                  "loop against MuJoCo's soft `<connect>` equality.")
    _twin_section(page, res, "distributed.json", "soadyn.distributed on a local Dask cluster",
                  "`map_batches` splits a batch into chunks for single-threaded worker processes; the per-chunk "
                  "overhead decides how many states a chunk needs to be worth sending.")
    return page


# ---------------------------------------------------------------- contacts
def page_contacts(out, res, results_dir=RESULTS):
    plt = _plt()
    import numpy as np
    page = Page(out, "contacts", "Contacts, collisions, centroidal dynamics and identification",
                "The contact pipeline against Pinocchio and MuJoCo — collision detection (`sd.detect_contacts` "
                "against `pin.computeCollisions` and `mujoco.mj_collision`), the Delassus operator "
                "(`sd.delassus` against `pin.computeDelassusMatrix`) and the contact solvers "
                "(`sd.solve_contacts` against Pinocchio's ADMM and PGS) — and the control and identification "
                "functions (centroidal momentum, Coriolis matrix, regressors) against Pinocchio.")
    col = res.get("collision.json")
    if col:
        page.heading("Collision detection")
        page.text("One call finds every pair of shapes in contact with its contact points and normals; the three "
                  "libraries find the same pairs in contact on every scene (the table's last column). µs per call, "
                  "medians of interleaved rounds.")
        page.source("collision.json", col)
        scenes = col["scenes"]
        fig, ax = plt.subplots(figsize=(7, 3.8))
        x = np.arange(len(scenes))
        for k, lib in enumerate(("soadyn", "pinocchio", "mujoco")):
            ax.bar(x + (k - 1) * 0.27, [s["us"][lib][0] for s in scenes.values()], 0.27, label=lib)
        ax.set_xticks(x, list(scenes))
        ax.set_yscale("log")
        ax.set_ylabel("µs per call")
        ax.legend(fontsize=8)
        page.figure(fig, "collision", "Collision detection: µs per call of soadyn, Pinocchio (coal) and MuJoCo")
        page.table(["scene", "objects", "pairs", "contacts", "soadyn [µs]", "Pinocchio [µs]", "MuJoCo [µs]",
                    "ratio vs Pinocchio", "ratio vs MuJoCo", "pairs in contact (soadyn / Pinocchio / MuJoCo)"],
                   [[name, s["objects"], s["pairs"], s["contacts"], s["us"]["soadyn"][0], s["us"]["pinocchio"][0],
                     s["us"]["mujoco"][0], s["ratio vs pinocchio"], s["ratio vs mujoco"],
                     " / ".join(str(len(s["pairs in contact"][k])) for k in ("soadyn", "pinocchio", "mujoco"))]
                    for name, s in scenes.items()])
    dl = res.get("contact_delassus.json")
    if dl:
        page.heading("Delassus operator and contact solvers")
        page.text("The Delassus operator G = J M⁻¹ Jᵀ of the contacts and the solution of the frictional contact "
                  "problem on it, by ADMM ([Carpentier24]) and projected Gauss–Seidel ([LeLidec24]), against "
                  "Pinocchio's on the same problems; the solvers' times depend on their iteration counts, which "
                  "the second table gives with the agreement of the results.")
        page.source("contact_delassus.json", dl)
        rows = dl["rows"]
        labels = [f"{r['robot']} {r['case']}" for r in rows]
        fig, ax = plt.subplots(figsize=(8, 3.8))
        x = np.arange(len(rows))
        ax.bar(x - 0.2, [r["soadyn_us"] for r in rows], 0.4, label="soadyn")
        ax.bar(x + 0.2, [r["pinocchio_us"] for r in rows], 0.4, label="Pinocchio")
        ax.set_yscale("log")
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("µs per call")
        ax.legend(fontsize=8)
        page.figure(fig, "contact_delassus", "Delassus operator (delassus) and contact solvers (admm, pgs): "
                    "µs per call of soadyn and Pinocchio")
        page.table(["robot", "case", "soadyn [µs]", "Pinocchio [µs]", "ratio"],
                   [[r["robot"], r["case"], r["soadyn_us"], r["pinocchio_us"], r["ratio"]] for r in rows])
        agree = []
        for robot, a in dl.get("agreement", {}).items():
            for solver in ("admm", "pgs"):
                s = a.get(solver, {})
                agree.append([robot, a.get("contacts"), a.get("delassus_max_abs_error"), solver,
                              s.get("soadyn_iterations"), s.get("soadyn_converged"), s.get("pinocchio_iterations"),
                              s.get("pinocchio_converged"), s.get("max_abs_impulse_difference")])
        page.table(["robot", "contacts", "max \\|G − G_pin\\|", "solver", "soadyn iterations", "converged",
                    "Pinocchio iterations", "converged", "max impulse difference"], agree)
    cp = res.get("contact_physics.json")
    if cp:
        page.heading("Time stepping with contact: closed forms and MuJoCo")
        page.text("`sd.step` on the scenes of `benchmarks/contact_scenes.py` (a box on an incline, a sphere "
                  "launched sliding, drops, a stack of five boxes, solo12 standing under PD), each held to its "
                  "closed form or conservation law with the tolerance of its test in `tests/contact/test_physics.py`; "
                  "then the same MJCF scenes in MuJoCo. Values, not timings.")
        page.source("contact_physics.json", cp)
        page.table(["check", "closed form", "measured", "unit", "tolerance", "pass"],
                   [[r["test"], r["closed_form"], r["measured"], r["unit"], r["tolerance"],
                     "yes" if r["passed"] else "no"] for r in cp["physics"]])
        page.table(["scene", "soadyn", "MuJoCo (elliptic)", "MuJoCo (pyramidal)", "closed form", "unit", "pass"],
                   [[r["test"], r["soadyn"], r["mujoco"], r.get("mujoco_pyramidal"), r["closed_form"], r["unit"],
                     "yes" if r["passed"] else "no"] for r in cp["mujoco_comparison"]])
    cs = res.get("contact_step.json")
    if cs:
        page.heading("Time stepping with contact against MuJoCo")
        page.text("Steps per second of `sd.step` (one call from Python per step) and `sd.rollout(..., "
                  "contacts=True)` (B initial states × T steps in one call, on 1 and 2 threads) against "
                  "`mujoco.mj_step` and `mujoco.rollout` on the same MJCF scenes, same timestep "
                  "(`benchmarks/contact_step.py`); ratio = soadyn / MuJoCo in steps per second (above 1: "
                  "soadyn is faster). The NCP residuals are those of the rigid Coulomb law for both "
                  "(MuJoCo's contacts are soft).")
        page.source("contact_step.json", cs)
        page.table(["scene", "nv", "step", "rollout, 1 thread", "rollout, 2 threads", "NCP soadyn (median, max)",
                    "NCP MuJoCo (median, max)"],
                   [[r["scene"], r["nv"], r["ratio step"], r["ratio rollout 1 thread"], r["ratio rollout 2 threads"],
                     r["ncp soadyn (median, max)"], r["ncp mujoco (median, max)"]] for r in cs["rows"]])
        stages = [r for r in cs["rows"] if "stages us (min of 5)" in r]
        if stages:
            names = list(stages[0]["stages us (min of 5)"])
            page.table(["scene"] + [f"{n} [µs]" for n in names],
                       [[r["scene"]] + [r["stages us (min of 5)"].get(n) for n in names] for r in stages])
    _twin_section(page, res, "step_call.json", "One sd.step call: the kernel and the Python around it",
                  "µs per call of `sd.step`, of its compiled kernel alone on the same arguments, and of "
                  "`mujoco.mj_step`, timed call by call (`benchmarks/step_call.py`); the Python around the "
                  "kernel is their difference.")
    cl = res.get("contact_loops.json")
    if cl:
        page.heading("Closed chains in contact: the Mini Cheetah with its rotors")
        page.text("`sd.step` on the Mini Cheetah standing under PD, its twelve geared rotors kept exact by "
                  "constraint embedding, against `mujoco.mj_step` on the same robot written as MJCF with the "
                  "rotor couplings as (soft) joint equalities, same timestep (`benchmarks/contact_loops.py`). "
                  "Times in µs per step (median, fastest, slowest sample); the standing state of both; and "
                  "where soadyn's step spends its time.")
        page.source("contact_loops.json", cl)
        page.table(["step", "median [µs]", "fastest [µs]", "slowest [µs]"],
                   [[name] + list(t) for name, t in cl["time_us"].items()])
        page.text(f"Ratio soadyn / MuJoCo: {cl['ratio']:.2f} (target {cl.get('target')}).")
        page.table(["part", "µs"], [[name, t] for name, t in cl["stages_us"].items()])
        standing = cl["standing"]
        page.table(["library", "quantity", "value"],
                   [[lib, k, v] for lib in ("soadyn", "mujoco") for k, v in standing[lib].items()])
    ci = res.get("control_ident.json")
    if ci:
        page.heading("Centroidal dynamics, Coriolis matrix and regressors")
        page.text("Public calls on one state, robots with their floating base; the agreement table gives the "
                  "largest relative difference from Pinocchio over random states (fixed and floating base).")
        page.source("control_ident.json", ci)
        speed = ci["speed"]
        robots = list(speed)
        funcs = list(dict.fromkeys(f for r in robots for f in speed[r]))
        fig, ax = plt.subplots(figsize=(9, 3.8))
        width = 0.8 / len(robots)
        for j, robot in enumerate(robots):
            ax.bar(np.arange(len(funcs)) + (j - (len(robots) - 1) / 2) * width,
                   [speed[robot].get(f, {}).get("ratio", np.nan) for f in funcs], width, label=robot)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(funcs)), funcs, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("soadyn / Pinocchio (per call)")
        ax.legend(fontsize=8)
        page.figure(fig, "control_ident", "Centroidal, Coriolis and regressor functions: per-call ratio soadyn / "
                    "Pinocchio")
        page.table(["robot", "function", "soadyn [µs]", "Pinocchio [µs]", "ratio"],
                   [[r, f, v["soadyn_us"], v["pinocchio_us"], v["ratio"]] for r in robots for f, v in speed[r].items()])
        agreement = ci.get("agreement", {})
        cases = list(agreement)
        fns = list(dict.fromkeys(f for c in cases for f in agreement[c]))
        page.lines += ["### Agreement with Pinocchio (largest relative difference)", ""]
        page.table(["function"] + cases, [[f] + [agreement[c].get(f) for c in cases] for f in fns])
    return page


# ---------------------------------------------------------------- compile time
def page_compile(out, res, results_dir=RESULTS):
    plt = _plt()
    page = Page(out, "compile", "Compile time and start-up",
                "soadyn's kernels are compiled by Numba on first use and cached on disk (beside the installed "
                "package's sources), so a function's first call in a fresh environment takes seconds and every "
                "later process loads it from the cache. `soadyn precompile --jobs 2` compiles every kernel ahead "
                "of time (`make test` runs it first); after it a fresh process has every public function ready "
                "in about a second. The first compilation in a process prints one line on stderr "
                "(`SOADYN_COMPILE_NOTICE=0` silences it).")
    page.text("Why a first call takes seconds: Numba compiles a kernel with everything it calls, for this "
              "machine's processor. soadyn keeps that short by compiling its kernels without Numba's reference "
              "counting (they hold only their callers' arrays and allocate nothing), by compiling its helpers "
              "only for linking into the kernels that call them, and by lighter LLVM pipelines where a kernel "
              "optimizes its helpers again anyway (`soadyn.numba_patches`). `benchmarks/compile_profile.py NAME` "
              "shows where one first call's time goes, per compiled function.")
    cc = res.get("cold_compile.json")
    if cc:
        page.heading("Cold compile per function")
        page.text("What a user waits for once per environment (and never again after `soadyn precompile`).")
        page.source("cold_compile.json", cc)
        _, table = next(md_tables(cc))
        names = _column(table, "function")
        wall = [float(str(w).rstrip(" ✗")) for w in _column(table, "first call, wall [s]")]
        fig, ax = plt.subplots(figsize=(8, 0.25 * len(names) + 1.2))
        ax.barh(range(len(names)), wall, color="tab:blue")
        ax.axvline(10.0, color="tab:red", lw=1, ls="--", label="target 10 s")
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("first call, wall time [s]")
        ax.legend(fontsize=8)
        page.figure(fig, "cold_compile", "Cold compile: the first call of each public function with an empty cache")
        page.twin_tables(cc)
    bench = res.get("bench/bench.json")
    if bench and bench["sections"].get("startup"):
        page.heading("Start-up in the bench run")
        page.text("Seconds to import soadyn, to have every public function ready, and per function, with an "
                  "empty cache (cold) and with the cache the cold run filled (warm).")
        page.source("bench/bench.json", bench)
        rows = bench["sections"]["startup"]
        keys = [k for k in rows[0] if k != "phase"]
        page.table(["phase"] + [k.removesuffix("_s") + " [s]" for k in keys[:3]],
                   [[r["phase"]] + [r[k] for k in keys[:3]] for r in rows])
        page.table(["function"] + [r["phase"] for r in rows],
                   [[k.removesuffix("_s")] + [r[k] for r in rows] for k in keys[3:]])
    _twin_section(page, res, "import_time.json", "Import and first call from a warm cache",
                  "`import soadyn` imports each public name on first use (`soadyn/__init__.py`), so a program "
                  "pays for what it calls; against the code before, with `import pinocchio` in the same rounds "
                  "(`benchmarks/import_time.py`).")
    _twin_section(page, res, "cache_relocation.json", "A moved copy of a compiled package",
                  "The cache is filed by each module's path inside the package (`soadyn.numba_cache."
                  "PackageCacheLocator`), and Numba checks each entry against a hash of its source's content: a "
                  "copy of the package directory moved to another path, every modification time renewed, starts "
                  "warm. Filed as Numba files it (by a hash of the absolute path) the copy compiles again "
                  "(`benchmarks/cache_relocation.py`).")
    _twin_section(page, res, "numba_patches.json", "What each Numba patch earns",
                  "Each of soadyn's patches of Numba's compilation alone against stock Numba "
                  "(`SOADYN_NUMBA_PATCHES=0`), same run: the cold compile of kernel groups and the per-call time "
                  "of the functions it touches (`benchmarks/numba_patches.py`).")
    _twin_section(page, res, "before_after.json", "Per call against the code before the compiled-core rework",
                  "Public calls with this tree's code against commit 44078f2, the state before the rework of the "
                  "compiled core, interleaved in two worker processes (`benchmarks/before_after.py`).")
    _twin_section(page, res, "numba_patches_all_but.json", "Whether each Numba patch is needed beside the others",
                  "All of soadyn's patches against all but one, same run: whether taking one out of the "
                  "combination costs (`benchmarks/numba_patches.py --all-but`).")
    _twin_section(page, res, "numba_patches_removed.json", "The two patches removed",
                  "All the patches against all but keep_struct_values and all but pass_views_whole, on the "
                  "code before their removal, with Mini Cheetah's C-ABA among the calls (`benchmarks/"
                  "numba_patches.py --all-but keep_struct_values pass_views_whole`): neither gained beyond the "
                  "noise, in this run or any earlier one, and both were taken out.")
    _twin_section(page, res, "numba_patches_restored.json", "One of the two restored",
                  "The same comparison on 2026-12-03, after a bisection of a first call's growth pointed at the "
                  "removal: pass_views_whole gained beyond the noise (the clusters group above all) and is back; "
                  "keep_struct_values did not and stays out.")
    _twin_section(page, res, "numba_patches_separate.json", "Helpers kept functions of their own, then not",
                  "All the patches against all but separate_helpers (the helpers not marked forceinline kept "
                  "functions of their own in a kernel's module), with the contact group and two contact steps "
                  "among the calls (`benchmarks/numba_patches.py --all-but separate_helpers`): kept beside "
                  "internal_helpers, within the noise once that was removed, and removed with it.")
    _twin_section(page, res, "numba_patches_internal.json", "internal_helpers removed",
                  "All the patches against all but internal_helpers, once the helpers separate_helpers marked "
                  "were kept out of it: no gain beyond the noise left, and an internal copy of a helper had been "
                  "handed to another module's call (`benchmarks/numba_patches.py --all-but internal_helpers`).")
    _twin_section(page, res, "compile_profile.json", "Where the compile time goes",
                  "CPU time of the first call in a fresh process and the number of functions Numba compiled for "
                  "it, before and after a change of the partitioned ABA (`benchmarks/compile_profile.py NAME` "
                  "prints the breakdown per compiled function).")
    _twin_section(page, res, "compile_stages.json", "Where the compile time goes, by stage of the compiler",
                  "The slowest first calls split by stage of Numba's compiler: its front end and type inference, "
                  "the lowering to LLVM IR and its text, LLVM's passes and machine code (`benchmarks/"
                  "compile_stages.py`, exclusive CPU times). The last column takes LLVM's work out: most of a "
                  "first call is Numba's Python, and it grows with the amount of code compiled.")
    _twin_section(page, res, "layouts.json", "Layouts derived from one field list",
                  "The per-call time of `aba` and `rnea` with the flat arrays' sizes and views derived from one "
                  "declaration each (`soadyn/core/layout.py`), against the hand-written offsets before "
                  "(`benchmarks/layouts.py`, CPU time, interleaved).")
    _twin_section(page, res, "call_path.json", "The call path: rendered fast path and ordinary path",
                  "The per-call time of `aba`, `rnea`, `mass_matrix` and `forward_kinematics` through the "
                  "positional call rendered from one template (`soadyn/core/fast_path.py`), through the ordinary "
                  "path of the same tree, and with the code before (`benchmarks/call_path.py`, CPU time, "
                  "interleaved).")
    _twin_section(page, res, "overflow_check.json", "The cost of refusing an overflow",
                  "`aba`'s kernel with its check that finite arguments gave a finite result, against the same "
                  "kernel compiled without it, in one process (`benchmarks/overflow_check.py`).")
    _twin_section(page, res, "design_notes.json", "Measurements behind design choices",
                  "The measurements that justified choices in the sources, quoted with their dates and the "
                  "files they justified (the sources keep the reasons).")
    return page


# ============================================================================ index
PAGES = (page_trees, page_closed, page_simulation, page_contacts, page_compile)


def _span(values):
    return f"{min(values):.2f}–{max(values):.2f}"


def _at_a_glance(res):
    """One line per headline comparison, each computed from its result file."""
    out = []
    bench = res.get("bench/bench.json")
    if bench:
        rows = bench["sections"].get("per_call", [])
        for alg in ("aba", "rnea", "mass_matrix", "aba_derivatives"):
            ratios = [r["soadyn_ratio"] for r in rows if r["algorithm"] == alg]
            if ratios:
                out.append(f"`{alg}`: {_span(ratios)} × the time of Pinocchio's call on {len(ratios)} robots "
                           f"([trees](trees.md), `bench/bench.json`)")
    roll = res.get("rollout.json")
    if roll:
        _, table = next(md_tables(roll))
        out.append(f"`sd.rollout`: {_span(_column(table, 'ratio 1 thr') + _column(table, 'ratio 2 thr'))} × "
                   "MuJoCo's steps per second (above 1: faster; [simulation](simulation.md), `rollout.json`)")
    scaling = res.get("closed_chain_scaling.json")
    if scaling:
        last = scaling["rows"][-1]
        out.append(f"closed chains, {last['bodies']} links in {last['loops']} loops: the embedding method "
                   f"{last['embedding_us'] / last['pin_lcaba_us']:.2f} × the time of Pinocchio's `lcaba` "
                   f"([closed chains](closed_chains.md), `closed_chain_scaling.json`)")
    col = res.get("collision.json")
    if col:
        vp = [s["ratio vs pinocchio"] for s in col["scenes"].values()]
        vm = [s["ratio vs mujoco"] for s in col["scenes"].values()]
        out.append(f"`sd.detect_contacts`: {_span(vp)} × the time of `pin.computeCollisions`, {_span(vm)} × "
                   "`mujoco.mj_collision` ([contacts](contacts.md), `collision.json`)")
    return out


def build(results_dir=RESULTS, output=OUTPUT):
    """Write the benchmark pages for the results under ``results_dir`` into ``output``;
    return ``{page name: [result files it shows]}`` (the index included)."""
    res = load_results(results_dir)
    os.makedirs(output, exist_ok=True)
    pages = [make(output, res, results_dir) for make in PAGES]
    for p in pages:
        p.write()
    shown = {key: [p.name for p in pages if key in p.sources] for key in res}
    index = Page(output, "index", "Benchmarks",
                 "What soadyn's calls cost against Pinocchio and MuJoCo on the same robots and the same machine, "
                 "drawn from the results committed in `benchmarks/results/`. Every number on these pages was "
                 "measured by a script in `benchmarks/`; each section names its result file and the machine, "
                 "date and commit of the run.")
    glance = _at_a_glance(res)
    if glance:
        index.heading("At a glance")
        index.text("\n".join(f"- {line}" for line in glance))
    index.heading("How the numbers are measured")
    index.text("A ratio is always soadyn's time over the peer's measured in the same run, interleaved: the cases "
               "take turns in a shuffled order for many short rounds and each time is the median over rounds. The "
               "machine is a shared 2-core virtual machine whose speed drifts with the load of other jobs; "
               "interleaving makes a change of load hit both sides of a ratio alike, so the ratios are stable where "
               "absolute times are not. Compare absolute times only within one result file.",
               "Kernels are compiled before timing (the compile time has its own page). A Python call of either "
               "library includes its binding: on small robots most of a call is this fixed cost, which a batch of "
               "states or a compiled loop of your own (`soadyn.compiled`) pays once.")
    index.heading("Running the benchmarks")
    index.text("```\nsoadyn bench            # per call, chain scaling, batches and start-up against Pinocchio,\n"
               "                        # rollouts against MuJoCo, soadyn.distributed on a local Dask cluster\n"
               "soadyn bench --quick    # the same with fewer rounds and sizes\n"
               "soadyn bench --report   # these pages from the committed results (make bench-report)\n```",
               "`soadyn bench` writes a Markdown summary, CSV files, `bench.json` and plots into a new folder "
               "`soadyn-bench-<date>-<time>` (`--output DIR` to choose); the committed full run is "
               "`benchmarks/results/bench/`. The other scripts in `benchmarks/` each write one result, `NAME.md` "
               "for reading and `NAME.json` for these pages; their docstrings say how to run them.")
    index.lines += ["```{toctree}", ":maxdepth: 1", ""] + [p.name for p in pages] + ["```", ""]
    index.heading("Result files")
    rows = []
    for key, data in res.items():
        prov = provenance(data)
        rows.append([f"`{key}`", ", ".join(f"[{n}]({n}.md)" for n in shown[key]) or "not shown", prov.date,
                     f"`{prov.commit}`", prov.machine])
    index.lines.append("| result | page | date | commit | machine |")
    index.lines.append("|---|---|---|---|---|")
    index.lines += ["| " + " | ".join(r) + " |" for r in rows] + [""]
    index.write()
    return {**{p.name: p.sources for p in pages}, "index": list(res)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="soadyn bench --report", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=RESULTS, help="folder of the result files (default benchmarks/results)")
    ap.add_argument("--output", default=OUTPUT, help="folder for the pages and figures (default docs/benchmarks)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.results):
        raise SystemExit(f"soadyn bench --report: error: --results {args.results!r} is not a folder")
    pages = build(args.results, args.output)
    missing = sorted(set(pages["index"]) - {k for n, s in pages.items() if n != "index" for k in s})
    print(f"benchmark pages written to {os.path.abspath(args.output)}: "
          f"{', '.join(n + '.md' for n in pages)}" + (f"; results not shown on a page: {missing}" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
