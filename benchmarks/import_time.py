"""Warm start: ``import soadyn`` and ``import soadyn`` + the first ``sd.aba`` call from a warm
Numba cache, in fresh processes, for this tree and another (``--before``, e.g. main's
``src``), with ``import pinocchio`` as the peer, interleaved in a shuffled order per round.

    PYTHONPATH=src python benchmarks/import_time.py --before /work/main/src [--label NAME] [--rounds 15]

Each sample is one fresh interpreter timing its own statement (``time.perf_counter``
around it, so the interpreter's start-up is not counted). The kernels ``sd.aba`` needs are
loaded from each tree's cache: one untimed run per tree first fills it. Medians over
rounds; ``--output DIR`` writes ``import_time.md`` and ``import_time.json`` there.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

STATEMENTS = {
    "import soadyn": "import soadyn",
    "import soadyn; first sd.aba (warm cache)": (
        "import numpy as np\nimport soadyn as sd\nm = sd.models.serial_chain(6)\n"
        "sd.aba(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))"),
    "import pinocchio": "import pinocchio",
}

TIMED = """
import time
t0 = time.perf_counter()
exec(compile({statement!r}, "<timed>", "exec"))
print(time.perf_counter() - t0)
"""


def sample(src, statement):
    env = dict(os.environ, PYTHONPATH=src, SOADYN_COMPILE_NOTICE="0")
    out = subprocess.run([sys.executable, "-c", TIMED.format(statement=statement)], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the src directory of the code to compare with")
    parser.add_argument("--label", default=None, help="the name of the code before (default: its directory)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    trees = {"before": os.path.abspath(args.before), "after": SRC}
    for src in trees.values():  # fill each tree's cache (not timed)
        sample(src, STATEMENTS["import soadyn; first sd.aba (warm cache)"])
    cases = [(tree, key) for tree in trees for key in STATEMENTS if not (key == "import pinocchio" and tree == "before")]
    samples = {f"{tree}: {key}": [] for tree, key in cases}
    rng = np.random.default_rng(0)
    started = time.strftime("%Y-%m-%d %H:%M")
    for _ in range(args.rounds):
        rng.shuffle(cases)
        for tree, key in cases:
            samples[f"{tree}: {key}"].append(sample(trees[tree], STATEMENTS[key]))
    peer = np.array(samples["after: import pinocchio"])
    lines = ["# Warm start: import and first call", "",
             f"{started}; {args.rounds} rounds, each a fresh interpreter per sample, cases shuffled per round; "
             f"before: {args.label or '`' + args.before + '`'}, after: this tree. Medians [s]; the ratio to `import pinocchio` sampled in "
             "the same round.", "", "| case | before [s] | after [s] | after / before | after / import pinocchio |",
             "| --- | --- | --- | --- | --- |"]
    for key in STATEMENTS:
        if key == "import pinocchio":
            lines.append(f"| {key} | | {np.median(peer):.3f} | | 1 |")
            continue
        before, after = np.array(samples[f"before: {key}"]), np.array(samples[f"after: {key}"])
        lines.append(f"| {key} | {np.median(before):.3f} | {np.median(after):.3f} | "
                     f"{np.median(after / before):.3f} | {np.median(after / peer):.2f} |")
    sys.path.insert(0, HERE)
    from timing import machine_description
    text = "\n".join([*lines, "", "```", machine_description(), "```", ""])
    print(text)
    if args.output:
        with open(os.path.join(args.output, "import_time.md"), "w") as f:
            f.write(text)
        import results_json
        results_json.write_twin(os.path.join(args.output, "import_time.md"))  # the machine block is in the text

if __name__ == "__main__":
    main()
