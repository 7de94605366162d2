"""Cost of the cluster derivatives relative to one C-RNEA / C-ABA call.

``sd.cluster_rnea_derivatives`` against ``sd.cluster_rnea`` and ``sd.cluster_aba_derivatives``
against ``sd.cluster_aba`` (plain public calls, input checks included), on mini_cheetah
(explicit clusters: rotors) and tello (implicit clusters: the hip and knee–ankle
differentials) by default. The four calls of a robot take turns (``time_interleaved`` of
``bench.py``); reported: median µs per call and the ratio of medians.

    PYTHONPATH=src python benchmarks/cluster_derivatives.py [--robots mini_cheetah tello] [--rounds 15]
"""
from __future__ import annotations

import argparse
import os
import random
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.closed.embedding.clusters import random_independent_state  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import time_interleaved  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robots", nargs="+", default=["mini_cheetah", "tello"])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--sample-seconds", type=float, default=0.05)
    args = p.parse_args(argv)
    print(f"load average at start: {os.getloadavg()}")
    print("| robot | C-RNEA [µs] | cluster_rnea_derivatives [µs] | ratio | C-ABA [µs] | "
          "cluster_aba_derivatives [µs] | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name in args.robots:
        model = sd.models.get(name)
        rng = np.random.default_rng(0)
        y, yd = random_independent_state(model, rng, 0.3)
        ydd = rng.normal(size=yd.size)
        ns = {"sd": sd, "m": model, "y": y, "yd": yd, "ydd": ydd, "tau": ydd.copy()}
        cases = {"rnea": ("sd.cluster_rnea(m, y, yd, ydd)", ns),
                 "rnea_d": ("sd.cluster_rnea_derivatives(m, y, yd, ydd)", ns),
                 "aba": ("sd.cluster_aba(m, y, yd, tau)", ns),
                 "aba_d": ("sd.cluster_aba_derivatives(m, y, yd, tau)", ns)}
        t = {k: v[0] * 1e6 for k, v in time_interleaved(cases, args.rounds, args.sample_seconds,
                                                         random.Random(0)).items()}
        print(f"| {name} | {t['rnea']:.1f} | {t['rnea_d']:.0f} | {t['rnea_d'] / t['rnea']:.0f}× | {t['aba']:.1f} | "
              f"{t['aba_d']:.0f} | {t['aba_d'] / t['aba']:.0f}× |", flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
