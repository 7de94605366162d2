"""Worst relative disagreement with Pinocchio per algorithm over the example-robot-data
robots (fixed and floating base, random states), and a first per-call timing on talos.

Run: python benchmarks/pinocchio_agreement.py  (needs the `test` extra)
"""
import os
import sys
import timeit

import numpy as np

import pinocchio as pin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soadyn as sd  # noqa: E402
from peers import ROBOTS, load_pair  # noqa: E402
from soadyn.interop import pinocchio as sdpin  # noqa: E402


def rel(x, y):
    return np.abs(x - y).max() / max(1.0, np.abs(y).max())


def main(states=10):
    worst = {}
    for name in ROBOTS:
        for floating in (False, True):
            P = load_pair(name, floating)
            m, pm, pd = P.sd, P.pm, P.pd
            T = P.v_permutation()
            rng = np.random.default_rng(0)
            for _ in range(states):
                q = sd.random_configuration(m, rng)
                v, a = rng.normal(size=(2, m.nv))
                qp, vp, ap = P.q_to_pin(q), P.v_to_pin(v), P.v_to_pin(a)
                errs = {
                    "rnea": rel(sd.rnea(m, q, v, a), P.v_from_pin(pin.rnea(pm, pd, qp, vp, ap))),
                    "aba": rel(sd.aba(m, q, v, a), P.v_from_pin(pin.aba(pm, pd, qp, vp, ap))),
                }
                Mp = pin.crba(pm, pd, qp).copy()
                Mp = T.T @ (np.triu(Mp) + np.triu(Mp, 1).T) @ T
                errs["mass_matrix (crba)"] = rel(sd.mass_matrix(m, q), Mp)
                errs["mass_matrix (jtmj)"] = rel(sd.mass_matrix(m, q, method="jtmj"), Mp)
                pin.framesForwardKinematics(pm, pd, qp)
                pin.computeJointJacobians(pm, pd, qp)
                ej = ep = 0.0
                for f in m.frames:
                    fid = pm.getFrameId(f.name)
                    ep = max(ep, rel(sd.frame_placement(m, q, f.name), pd.oMf[fid].homogeneous))
                    Jp = sdpin.jacobian_from_pinocchio(m, pin.getFrameJacobian(pm, pd, fid, pin.LOCAL), pm)
                    ej = max(ej, rel(sd.frame_jacobian(m, q, f.name), Jp))
                errs["frame_placement"] = ep
                errs["frame_jacobian"] = ej
                for k, e in errs.items():
                    worst[k] = max(worst.get(k, 0.0), e)
    print("worst relative error vs Pinocchio (6 robots x fixed/floating x %d states)" % states)
    for k, e in worst.items():
        print(f"  {k:<20s} {e:.1e}")

    P = load_pair("talos", True)
    m, pm, pd = P.sd, P.pm, P.pd
    rng = np.random.default_rng(1)
    q = sd.random_configuration(m, rng)
    v, tau = rng.normal(size=(2, m.nv))
    qp, vp, tp = P.q_to_pin(q), P.v_to_pin(v), P.v_to_pin(tau)
    n = 5000
    rows = [("aba", lambda: sd.aba(m, q, v, tau), lambda: pin.aba(pm, pd, qp, vp, tp)),
            ("rnea", lambda: sd.rnea(m, q, v, tau), lambda: pin.rnea(pm, pd, qp, vp, tp)),
            ("mass_matrix", lambda: sd.mass_matrix(m, q), lambda: pin.crba(pm, pd, qp))]
    print("talos (floating), per call, median of 7 x %d calls [us]" % n)
    for name, f_sd, f_pin in rows:
        f_sd(), f_pin()
        t_sd = np.median(timeit.repeat(f_sd, number=n, repeat=7)) / n * 1e6
        t_pin = np.median(timeit.repeat(f_pin, number=n, repeat=7)) / n * 1e6
        print(f"  {name:<12s} soadyn {t_sd:7.2f}   pinocchio {t_pin:7.2f}   ratio {t_sd / t_pin:.2f}")


if __name__ == "__main__":
    main()
