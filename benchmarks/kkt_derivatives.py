"""Cost of the KKT derivatives relative to one closed-chain forward-dynamics call.

``sd.constrained_forward_dynamics_derivatives`` against ``sd.constrained_forward_dynamics``
(default method; plain public calls, input checks included) and Pinocchio's
``constraintDynamics`` followed by ``computeConstraintDynamicsDerivatives`` (the loops as
CONTACT_3D anchors, ``peers.pinocchio_loop_constraints``), on the four-bar and a chain of
three four-bars by default. The calls of a mechanism take turns (``time_interleaved``);
reported: median µs per call and the ratios of medians. (Pinocchio's θ-derivative for
anchors between two joints disagrees with differences of its own ``constraintDynamics``,
docs/kkt_derivatives.md "Checks": its time is the cost of the call, not of a correct result.)

    PYTHONPATH=src python benchmarks/kkt_derivatives.py [--loops 1 3] [--rounds 15]
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
import peers  # noqa: E402
from timing import time_interleaved  # noqa: E402


def _pinocchio_namespace(model, q, v, tau):
    import pinocchio as pin
    pair = peers.pinocchio_model(model)
    cmodels, cdatas = peers.pinocchio_loop_constraints(pair)
    data = pair.pm.createData()
    pin.initConstraintDynamics(pair.pm, data, cmodels, cdatas)
    return {"pin": pin, "pm": pair.pm, "data": data, "cm": cmodels, "cd": cdatas,
            "st": pin.ProximalSettings(1e-12, 1e-8, 3),  # 2–3 iterations reach round-off (PEERS.md)
            "qp": pair.q_to_pin(q), "vp": pair.v_to_pin(v), "tp": pair.v_to_pin(tau)}


def measure(k, rounds, sample_seconds):
    """Medians [µs] of the calls on a chain of ``k`` four-bars (k = 1: the four-bar linkage),
    as a table row."""
    model = sd.models.four_bar_linkage() if k == 1 else sd.models.four_bar_chain(k)
    rng = np.random.default_rng(0)
    y, yd = random_independent_state(model, rng, 0.4)
    q, v = sd.spanning_state(model, y, yd)
    tau = rng.normal(size=model.nv)
    ns = {"sd": sd, "m": model, "q": q, "v": v, "tau": tau}
    cases = {"fd": ("sd.constrained_forward_dynamics(m, q, v, tau)", ns),
             "fd_d": ("sd.constrained_forward_dynamics_derivatives(m, q, v, tau)", ns)}
    try:
        cases["pin"] = ("pin.constraintDynamics(pm, data, qp, vp, tp, cm, cd, st); "
                        "pin.computeConstraintDynamicsDerivatives(pm, data, cm, cd, st)",
                        _pinocchio_namespace(model, q, v, tau))
    except ImportError:
        pass
    t = {key: val[0] * 1e6 for key, val in time_interleaved(cases, rounds, sample_seconds, random.Random(0)).items()}
    pin_t = t.get("pin", float("nan"))
    name = "four-bar" if k == 1 else f"{k} four-bars"
    return (f"| {name} | {model.nv} | {sd.constraint_jacobian(model, q).shape[0]} | {t['fd']:.1f} | {t['fd_d']:.0f} | "
            f"{t['fd_d'] / t['fd']:.0f}× | {pin_t:.1f} | {t['fd_d'] / pin_t:.0f}× |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loops", nargs="+", type=int, default=[1, 3], help="four-bars in the chain")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--sample-seconds", type=float, default=0.05)
    args = p.parse_args(argv)
    lines = [f"load average at start: {os.getloadavg()}",
             "| mechanism | nv | rows | constrained_forward_dynamics [µs] | derivatives [µs] | ratio | "
             "Pinocchio constraintDynamics + derivatives [µs] | ratio to Pinocchio |",
             "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines))
    for k in args.loops:
        print(measure(k, args.rounds, args.sample_seconds), flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
