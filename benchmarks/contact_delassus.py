"""The Delassus operator and the contact solvers against Pinocchio.

* ``delassus``: ``sd.delassus`` (ATBI + the Υ sweep over the contact points) against
  ``pin.computeDelassusMatrix`` (CONTACT_3D constraints at the same points, placement
  rotations equal to the contact frames) on solo12 (4 feet on the ground) and talos (the 4
  corners of each sole, 8 contacts), at the same random configuration;
* ``solve``: ``sd.solve_contacts`` (ADMM, PGS) against Pinocchio's ADMMConstraintSolver
  and PGSConstraintSolver on the same problem (G from the Delassus operator, g = J v_free the
  contact velocities after one free step of 1 ms from rest under gravity, μ = 0.8, a
  compliance R = 1e-6 so that the solution is unique), both asked for absolute residuals
  1e-10 (Pinocchio's relative criteria off). Iterations and residuals are reported; no target.

One run, the cases interleaved (``benchmarks/timing.py``), medians. Writes
``benchmarks/results/contact_delassus.json`` and ``.md``.

    PYTHONPATH=src python benchmarks/contact_delassus.py [--rounds 15]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402
from timing import machine_description, time_interleaved  # noqa: E402

import soadyn as sd  # noqa: E402

RESULTS = os.path.join(HERE, "results")
DT, MU, COMPLIANCE, TOL = 1e-3, 0.8, 1e-6, 1e-10


def pinocchio_problem(pin, pair, q, contacts):
    m, pm, pd = pair.sd, pair.pm, pair.pd
    qp = pair.q_to_pin(q)
    pin.forwardKinematics(pm, pd, qp)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for (_, body), point, C in zip(contacts.bodies, contacts.point, contacts.frame):
        jid = pm.getJointId(m.bodies[body].joint.name)
        oMi = pd.oMi[jid]
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid,
                                      pin.SE3(oMi.rotation.T @ C, oMi.rotation.T @ (point - oMi.translation)), 0,
                                      pin.SE3.Identity(), pin.ReferenceFrame.LOCAL)
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    return qp, cms, cds


def pinocchio_solvers(pin, k):
    cms, cds = peers.pinocchio_cone_constraints(np.full(k, MU))
    out = {}
    for method in ("admm", "pgs"):
        if method == "admm":
            settings, result, solver = pin.ADMMSolverSettings(), pin.ADMMSolverResult(), pin.ADMMConstraintSolver(3 * k)
        else:
            settings, result, solver = pin.PGSSolverSettings(), pin.PGSSolverResult(), pin.PGSConstraintSolver(3 * k)
        settings.absolute_feasibility_tol = settings.absolute_complementarity_tol = TOL
        settings.relative_feasibility_tol = settings.relative_complementarity_tol = 0.0
        settings.max_iterations = 1000
        out[method] = (solver, settings, result)
    return cms, cds, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sample", type=float, default=0.05, help="seconds per sample")
    args = ap.parse_args(argv)
    import pinocchio as pin
    rng = np.random.default_rng(0)
    cases, notes = {}, {}
    for name in ("solo12", "talos"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pair = peers.load_pair(name)
        m = pair.sd
        q = sd.random_configuration(m, rng)
        contacts = peers.robot_contacts(pair, name, q, np.tile([0.0, 0.0, 1.0], (8, 1)), friction=MU)  # the ground
        k = len(contacts)
        G = sd.delassus(m, q, contacts)
        qp, cms, cds = pinocchio_problem(pin, pair, q, contacts)
        Gp = pin.computeDelassusMatrix(pair.pm, pair.pd, qp, cms, cds, 0.0)
        v_free = DT * sd.aba(m, q, None, np.zeros(m.nv))
        g = sd.contact.contact_velocities(m, q, v_free, contacts).reshape(-1)
        R = np.full(3 * k, COMPLIANCE)
        scms, scds, solvers = pinocchio_solvers(pin, k)
        D = pin.DelassusOperatorDense(G)
        D.updateCompliance(R)
        notes[name] = {"contacts": k, "delassus_max_abs_error": float(np.abs(G - Gp).max()),
                       "delassus_max_abs": float(np.abs(Gp).max())}
        ns = {"sd": sd, "pin": pin, "m": m, "q": q, "contacts": contacts, "pm": pair.pm, "pd": pair.pd, "qp": qp,
              "cms": cms, "cds": cds, "G": G, "g": g, "mu": np.full(k, MU), "R": R, "D": D, "scms": scms,
              "scds": scds, "TOL": TOL}
        cases[(name, "delassus", "soadyn")] = ("sd.delassus(m, q, contacts)", ns)
        cases[(name, "delassus", "pinocchio")] = ("pin.computeDelassusMatrix(pm, pd, qp, cms, cds, 0.0)", ns)
        for method, (solver, settings, result) in solvers.items():
            sol = sd.solve_contacts(G, g, ns["mu"], method=method, R=R, tol=TOL)
            solver.solve(D, g, scms, scds, settings, result)
            ref = result.retrieveConstraintImpulses()
            notes[name][method] = {"soadyn_iterations": sol.iterations, "soadyn_converged": sol.converged,
                                   "soadyn_residual": sol.residual, "pinocchio_iterations": int(result.iterations),
                                   "pinocchio_converged": bool(result.converged),
                                   "max_abs_impulse_difference": float(np.abs(sol.impulses.reshape(-1) - ref).max())}
            ns[f"solver_{method}"], ns[f"settings_{method}"], ns[f"result_{method}"] = solver, settings, result
            cases[(name, method, "soadyn")] = (f"sd.solve_contacts(G, g, mu, method={method!r}, R=R, tol=TOL)", ns)
            cases[(name, method, "pinocchio")] = (
                f"solver_{method}.solve(D, g, scms, scds, settings_{method}, result_{method})", ns)
    per_round = {}
    times = time_interleaved(cases, args.rounds, args.sample, rng, per_round)
    rows = []
    for name in ("solo12", "talos"):
        for what in ("delassus", "admm", "pgs"):
            ours, theirs = times[(name, what, "soadyn")], times[(name, what, "pinocchio")]
            rows.append({"robot": name, "case": what, "soadyn_us": ours[0] * 1e6, "pinocchio_us": theirs[0] * 1e6,
                         "ratio": ours[0] / theirs[0],
                         # round by round (the two samples of a round close in time), then the median
                         "paired_ratio": float(np.median(np.array(per_round[(name, what, "soadyn")])
                                                         / np.array(per_round[(name, what, "pinocchio")]))),
                         "soadyn_min_max_us": [ours[1] * 1e6, ours[2] * 1e6],
                         "pinocchio_min_max_us": [theirs[1] * 1e6, theirs[2] * 1e6]})
    machine = machine_description()
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "contact_delassus.json"), "w") as f:
        json.dump({"machine": machine, "rounds": args.rounds, "rows": rows, "agreement": notes}, f, indent=1)
    lines = ["# Delassus operator and contact solvers against Pinocchio", "",
             "`python benchmarks/contact_delassus.py`: one run, cases interleaved, medians of "
             f"{args.rounds} samples (µs per call); ratio = soadyn / Pinocchio (target for `delassus`: ≤ 1.0, "
             "aim 0.5; solvers: reported); the ratio of the fastest samples too (on a loaded machine the least "
             "disturbed measure), and the ratio round by round (each round's two samples, taken within a round of "
             "each other), its median over the rounds (on a machine whose speed drifts between rounds, the figure "
             "to read).", "", "```", machine, "```", "",
             "| robot | contacts | case | soadyn [µs] | Pinocchio [µs] | ratio | ratio, fastest samples | "
             "ratio, paired | iterations (soadyn / Pinocchio) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = notes[r["robot"]]
        its = "" if r["case"] == "delassus" else f"{n[r['case']]['soadyn_iterations']} / {n[r['case']]['pinocchio_iterations']}"
        fastest = r["soadyn_min_max_us"][0] / r["pinocchio_min_max_us"][0]
        lines.append(f"| {r['robot']} | {n['contacts']} | {r['case']} | {r['soadyn_us']:.2f} | {r['pinocchio_us']:.2f} | "
                     f"{r['ratio']:.2f} | {fastest:.2f} | {r['paired_ratio']:.2f} | {its} |")
    lines += ["", "Agreement on the timed problems:", ""]
    for name, n in notes.items():
        lines.append(f"- {name}: max |G − G_pin| = {n['delassus_max_abs_error']:.2e} (max |G_pin| = "
                     f"{n['delassus_max_abs']:.3g}); ADMM impulses differ by {n['admm']['max_abs_impulse_difference']:.2e} "
                     f"(soadyn residual {n['admm']['soadyn_residual']:.1e}, Pinocchio converged: "
                     f"{n['admm']['pinocchio_converged']}); PGS by {n['pgs']['max_abs_impulse_difference']:.2e} "
                     f"(soadyn residual {n['pgs']['soadyn_residual']:.1e}, Pinocchio converged: "
                     f"{n['pgs']['pinocchio_converged']})")
    with open(os.path.join(RESULTS, "contact_delassus.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
