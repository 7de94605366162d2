"""sd.step on the Mini Cheetah with its rotors standing on the ground against MuJoCo's
``mj_step`` on the same robot with its rotor couplings as equality constraints, same run.

``python benchmarks/contact_loops.py`` (needs ``pip install mujoco``) writes
``benchmarks/results/contact_loops.json`` and ``contact_loops.md``.

The scene: ``sd.models.mini_cheetah()`` (a floating base, 12 links, 12 rotors each coupled
to its link by a gear ratio) with one sphere per foot (``sd.models.add_foot_spheres``:
radius 0.02 m, friction 0.8) on ``add_ground()`` (friction 1; a contact's μ is the larger
of the two, 1.0, in both libraries), standing under joint PD on the link joints.

MuJoCo's model is written from soadyn's (:func:`mjcf`): the same bodies (rotors are bodies
with hinge joints), placements, inertias, foot spheres and ground; each coupling q_rotor =
ratio · q_link an ``<equality><joint polycoef="0 ratio 0 0 0"/>`` (MuJoCo keeps it softly,
with its default solref/solimp, in the same solve as the contacts); elliptic friction cones
(soadyn's Coulomb cone); ``balanceinertia`` (the published hip-link inertias violate the
triangle inequality slightly, which MuJoCo refuses; soadyn keeps them as published); the
same timestep (1 ms) and gravity; its default Newton solver
and Euler integrator. The PD torques are held as ``qfrc_applied`` (MuJoCo) and ``tau``
(soadyn).

Both robots are first dropped from 2 cm and brought to rest under PD for 1.5 s; then one
step is timed from the standing state: ``sd.step(model, q, v, tau, dt, warm_start=r)``
(detection, C-ABA, C-EFPA Delassus, ADMM, C-ABA impulse response, γ: the whole step), and
``mujoco.mj_step(m, d)`` from the same standing state at every call (qpos, qvel and its
solver's warm start restored by three copies before each call, timed alone and subtracted
from MuJoCo's time). Medians of interleaved rounds (benchmarks/timing.py). The report
gives the time of each stage of soadyn's step as well (each stage timed alone, same run).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import machine_description, time_interleaved  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.closed.embedding.clusters import cluster_tree  # noqa: E402
from soadyn.closed.kinematics import evaluate_constraints  # noqa: E402
from soadyn.core.compile import snapshot  # noqa: E402

#: the case of the step's kernel alone (timed with sd.step and mj_step, in the same rounds)
KERNEL = "soadyn: the step's kernel alone (no Python call around it)"
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
DT = 1e-3
KP, KD = 80.0, 4.0
LEGS = np.array([0.0, -0.8, 1.6] * 4)  # (abduction, hip, knee) per leg [rad]


def scene():
    """(model, tree, q, v): the Mini Cheetah with foot spheres and the ground, its feet 2 cm up."""
    model = sd.models.mini_cheetah()
    sd.models.add_foot_spheres(model)
    model.add_ground()
    tree = cluster_tree(model)
    y = np.zeros(tree.nyq)
    y[6], y[7:] = 1.0, LEGS
    q, _ = sd.spanning_state(model, y, None)
    y[2] = 0.02 - sd.collision_distances(model, q).distance.min()
    q, v = sd.spanning_state(model, y, None)
    return model, tree, q, v


def pd(tree, nv, q, v):
    tau = np.zeros(nv)
    iq, iv = tree.independent_q_index[7:], tree.independent_v_index[6:]
    tau[iv] = KP * (LEGS - q[iq]) - KD * v[iv]
    return tau


def _vec(x):
    return " ".join(f"{float(a):.17g}" for a in np.asarray(x).reshape(-1))


def _quat_wxyz(R):
    from scipy.spatial.transform import Rotation
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return (w, x, y, z)


def mjcf(model):
    """MJCF text of ``model`` (module docstring): bodies, hinge/free joints, inertias, the
    collision spheres and the ground plane, the couplings as joint equalities."""
    m = snapshot(model)
    children = {}
    for b in m.bodies:
        children.setdefault(b.parent, []).append(b.index)
    spheres = {}
    for o in m.collisions:
        if o.body >= 0:
            spheres.setdefault(o.body, []).append(o)
    lines = ['<mujoco model="mini_cheetah">',
             '  <compiler balanceinertia="true"/>',
             f'  <option timestep="{DT}" gravity="{_vec(m.gravity)}" cone="elliptic"/>',
             '  <worldbody>']
    ground = next(o for o in m.collisions if o.body < 0)
    lines.append(f'    <geom name="ground" type="plane" size="0 0 1" pos="{_vec(ground.body_placement[:3, 3])}" '
                 f'friction="{ground.friction} 0 0" contype="1" conaffinity="1"/>')

    def body(i, indent):
        b = m.bodies[i]
        R, p = b.placement
        pad = " " * indent
        out = [f'{pad}<body name="{b.name}" pos="{_vec(p)}" quat="{_vec(_quat_wxyz(R))}">']
        if b.joint.kind == "free":
            out.append(f'{pad}  <freejoint name="{b.joint.name}"/>')
        else:
            assert b.joint.kind == "revolute", b.joint.kind
            out.append(f'{pad}  <joint name="{b.joint.name}" type="hinge" axis="{_vec(b.joint.axis)}"/>')
        Ic = b.inertia_com
        full = (Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2])
        out.append(f'{pad}  <inertial pos="{_vec(b.com)}" mass="{b.mass}" fullinertia="{_vec(full)}"/>')
        for o in spheres.get(i, []):
            ps = o.body_placement[:3, 3]  # (spheres: the orientation does not matter)
            out.append(f'{pad}  <geom name="{o.name}" type="sphere" size="{o.shape.radius}" pos="{_vec(ps)}" '
                       f'friction="{o.friction} 0 0" contype="{o.contype}" conaffinity="{o.conaffinity}"/>')
        for c in children.get(i, []):
            out += body(c, indent + 2)
        out.append(f"{pad}</body>")
        return out

    for r in children.get(-1, []):
        lines += body(r, 4)
    lines += ["  </worldbody>", "  <equality>"]
    for cp in m.couplings:
        link, rotor = m.bodies[m.body_index(cp.predecessor)], m.bodies[m.body_index(cp.successor)]
        assert rotor.parent == link.parent and cp.offset == 0.0  # q_rotor = ratio · q_link
        lines.append(f'    <joint name="{cp.name}" joint1="{rotor.joint.name}" joint2="{link.joint.name}" '
                     f'polycoef="0 {cp.ratio} 0 0 0"/>')
    lines += ["  </equality>", "</mujoco>"]
    return "\n".join(lines)


class MujocoScene:
    """The MuJoCo model and data of the scene, and soadyn's coordinates in MuJoCo's."""

    def __init__(self, model, q):
        import mujoco
        self.mujoco = mujoco
        self.m = mujoco.MjModel.from_xml_string(mjcf(model))
        self.d = mujoco.MjData(self.m)
        self.sm = snapshot(model)
        self.joints = [(b.joint.q_index, b.joint.v_index, b.joint.nq, int(self.m.joint(b.joint.name).qposadr[0]),
                        int(self.m.joint(b.joint.name).dofadr[0])) for b in self.sm.bodies]
        self.set_configuration(q)

    def set_configuration(self, q):
        """MuJoCo's state at soadyn's configuration q, at rest."""
        for qi, _, n, qa, _ in self.joints:
            if n == 7:  # free joint: p, quaternion (x, y, z, w) → p, (w, x, y, z)
                self.d.qpos[qa:qa + 3] = q[qi:qi + 3]
                self.d.qpos[qa + 3] = q[qi + 6]
                self.d.qpos[qa + 4:qa + 7] = q[qi + 3:qi + 6]
            else:
                self.d.qpos[qa] = q[qi]
        self.d.qvel[:] = 0.0
        self.mujoco.mj_forward(self.m, self.d)

    def configuration(self):
        """soadyn's q of MuJoCo's state."""
        q = np.zeros(self.sm.nq)
        for qi, _, n, qa, _ in self.joints:
            if n == 7:
                q[qi:qi + 3] = self.d.qpos[qa:qa + 3]
                q[qi + 3:qi + 6] = self.d.qpos[qa + 4:qa + 7]
                q[qi + 6] = self.d.qpos[qa + 3]
            else:
                q[qi] = self.d.qpos[qa]
        return q

    def hinge_velocities(self):
        """soadyn's v of MuJoCo's state on the hinge joints (the base's entries zero)."""
        v = np.zeros(self.sm.nv)
        for _, vi, n, _, va in self.joints:
            if n == 1:
                v[vi] = self.d.qvel[va]
        return v

    def apply(self, tau):
        """soadyn's spanning joint forces τ (hinges) as MuJoCo's qfrc_applied."""
        for _, vi, n, _, va in self.joints:
            if n == 1:
                self.d.qfrc_applied[va] = tau[vi]

    def coupling_residual(self):
        """max |q_rotor − ratio · q_link| over the couplings [rad] (MuJoCo keeps them softly)."""
        sm, q = self.sm, self.configuration()
        return max(abs(q[sm.bodies[sm.body_index(c.successor)].joint.q_index]
                       - c.ratio * q[sm.bodies[sm.body_index(c.predecessor)].joint.q_index]) for c in sm.couplings)

    def normal_force(self):
        """Σ of the contacts' normal forces [N] (MuJoCo's mj_contactForce, contact frame)."""
        f, total = np.zeros(6), 0.0
        for i in range(self.d.ncon):
            self.mujoco.mj_contactForce(self.m, self.d, i, f)
            total += f[0]
        return total


def stand(model, tree, q, v, seconds):
    """soadyn's robot after ``seconds`` of standing under PD: (q, v, the last StepResult,
    the worst constraint residual on the way)."""
    r, worst = None, 0.0
    for _ in range(int(round(seconds / DT))):
        r = sd.step(model, q, v, pd(tree, model.nv, q, v), DT, warm_start=r)
        q, v = r.q, r.v
        st = evaluate_constraints(model, q, v, bias=False)
        worst = max(worst, np.abs(st.residual).max(), np.abs(st.velocity_residual(v)).max())
    return q, v, r, worst


def stand_mujoco(ms, tree, seconds):
    worst = 0.0
    for _ in range(int(round(seconds / DT))):
        q = ms.configuration()
        ms.apply(pd(tree, ms.sm.nv, q, ms.hinge_velocities()))
        ms.mujoco.mj_step(ms.m, ms.d)
        worst = max(worst, ms.coupling_residual())
    return worst


def stage_cases(model, tree, q, v, r):
    """soadyn's step in parts at the standing state: its one kernel without the Python
    call around it, and the kernels it runs, each called alone (same tables)."""
    from soadyn.closed.embedding.algorithms import _explicit_call
    from soadyn.contact import cluster_step as cs
    from soadyn.core.call import NO_FORCES
    from soadyn.kernels.cluster.aba import cluster_aba_kernel
    from soadyn.kernels.cluster.efpa import cluster_efpa_kernel
    from soadyn.kernels.collision.detect import detect_kernel
    from soadyn.kernels.contact import cluster_step as kcs
    from soadyn.kernels.contact.admm import INFO_SIZE, admm_kernel, admm_scratch_size
    from soadyn.kernels.cluster.response import cluster_response_kernel
    sm = snapshot(model)
    settings = sd.ContactSettings()
    call = cs._step_call(sm)
    K = call.capacity
    T = call.tables(K)
    wobj, wpoints, wlam, wscale = cs._warm_arrays(r, model)
    mi, mf, ws, ci, cf, cws, _ = _explicit_call(sm)
    tau = pd(tree, model.nv, q, v)
    y, yd = q[tree.independent_q_index].copy(), v[tree.independent_v_index].copy()
    contacts = r.contacts
    side = np.flatnonzero(contacts.bodies.reshape(-1) >= 0)
    owner, body = side // 2, contacts.bodies.reshape(-1)[side].astype(np.int64)
    Rb, pb = sd.body_placements(model, q)
    fR = np.ascontiguousarray(np.einsum("hji,hjk->hik", Rb[body], contacts.frame[owner]))
    fp = np.ascontiguousarray(np.einsum("hji,hj->hi", Rb[body], contacts.point[owner] - pb[body]))
    D = sd.delassus(model, q, contacts)
    n = D.shape[0]
    sol = r.solution
    g = sol.velocities.reshape(-1) - D @ sol.impulses.reshape(-1)
    F = np.zeros((sm.nbodies, 6))
    F[body, 5] = 1.0
    ns = dict(kcs=kcs, call=call, q=q, v=v, tau=tau, NO_FORCES=NO_FORCES, DT=DT, prm=settings.vector(), K=K,
              T=T, wobj=wobj, wpoints=wpoints, wlam=wlam, wscale=wscale, q1=np.empty(sm.nq), v1=np.empty(sm.nv),
              info=np.zeros(kcs.STEP_INFO_SIZE), vectors=np.empty((4 * K, 3)), scalars=np.empty(2 * K),
              frames=np.empty((K, 3, 3)), pairs=np.empty((2 * K, 2), dtype=np.int64),
              cluster_aba_kernel=cluster_aba_kernel, cluster_response_kernel=cluster_response_kernel, mi=mi, mf=mf,
              ws=ws, ci=ci, cf=cf, cws=cws, y=y, yd=yd, zeros=np.zeros(tree.nyv), ydd=np.empty(tree.nyv),
              dyd=np.empty(tree.nyv), F=F, tau_ind=np.zeros(tree.nyv),
              cluster_efpa_kernel=cluster_efpa_kernel, body=body, fR=fR, fp=fp,
              Z=np.empty((2 * len(body), tree.nyv, 6)), Om=np.empty((6 * len(body), 6 * len(body))),
              detect_kernel=detect_kernel, fs=np.zeros(call.sizes[4]), js=np.zeros(call.sizes[5], dtype=np.int64),
              vec=np.empty((2 * K, 3)), sca=np.empty(2 * K), frm=np.empty((K, 3, 3)),
              prs=np.empty((2 * K, 2), dtype=np.int64), det=call.parts[2], dcf=call.parts[6],
              admm_kernel=admm_kernel, D=D, g=g, mu=np.asarray(contacts.friction), R=np.zeros(n),
              lam0=sol.impulses.reshape(-1).copy(), lam=np.empty(n), sig=np.empty(n), ainfo=np.zeros(INFO_SIZE),
              A=np.empty((n, n)), V=np.empty(admm_scratch_size.py_func(n)))
    return {
        KERNEL:
            ("kcs.cluster_step_kernel(T, q, v, tau, NO_FORCES, DT, prm, wobj, wpoints, wlam, wscale, q1, v1, info, "
             "vectors, scalars, frames, pairs)", ns),
        "C-ABA, free velocity (kernel alone)":
            ("cluster_aba_kernel(mi, mf, ws, y, yd, tau_ind, NO_FORCES, ci, cf, cws, True, ydd)", ns),
        "C-ABA, free velocity, then the impulse response on its factorization (kernel alone)":
            ("cluster_response_kernel(mi, mf, ws, y, yd, tau_ind, NO_FORCES, F, ci, cf, cws, ydd, dyd)", ns),
        "C-ABA, the impulse response as a second full C-ABA (kernel alone; what the step no longer runs)":
            ("cluster_aba_kernel(mi, mf, ws, y, zeros, zeros, F, ci, cf, cws, False, ydd)", ns),
        "C-EFPA of the contact frames (the whole kernel alone, six columns a frame; the step runs three-column "
        "propagators per contact on its free stage's backward pass)":
            ("cluster_efpa_kernel(mi, mf, ws, y, body, fR, fp, Z, ci, cf, cws, Om)", ns),
        "detection from q (kernel alone)":
            ("detect_kernel(mi, mf, ws, q, det, dcf, 0.0, fs, js, vec, sca, frm, prs)", ns),
        "ADMM, warm started (kernel alone)":
            ("lam[:] = lam0; admm_kernel(D, g, mu, R, 1e-10, 500, True, lam, sig, ainfo, A, V)", ns),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--sample", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    import mujoco
    model, tree, q0, v0 = scene()
    ms = MujocoScene(model, q0)
    mass = sum(b.mass for b in model.bodies)
    settle = 1.5
    q, v, r, worst = stand(model, tree, q0, v0, settle)
    mj_worst = stand_mujoco(ms, tree, settle)
    tau = pd(tree, model.nv, q, v)
    ms.apply(pd(tree, model.nv, ms.configuration(), ms.hinge_velocities()))
    mj_standing = {"base height m": float(ms.configuration()[2]), "normal force N": ms.normal_force(),
                   "worst coupling residual rad": float(mj_worst)}
    # MuJoCo steps from the same standing state at every call, as soadyn does (its state
    # restored by three copies, timed alone as well)
    d = ms.d
    qpos, qvel, warm = d.qpos.copy(), d.qvel.copy(), d.qacc_warmstart.copy()
    ns = dict(sd=sd, mujoco=mujoco, model=model, q=q, v=v, tau=tau, DT=DT, r=r, mm=ms.m, md=d, qpos=qpos,
              qvel=qvel, warm=warm)
    restore = "md.qpos[:] = qpos; md.qvel[:] = qvel; md.qacc_warmstart[:] = warm"
    cases = {"soadyn sd.step": ("sd.step(model, q, v, tau, DT, warm_start=r)", ns),
             "mujoco mj_step": (f"{restore}; mujoco.mj_step(mm, md)", ns),
             "mujoco state restore alone": (restore, ns)}
    parts = stage_cases(model, tree, q, v, r)
    # the kernel alone in the same rounds as sd.step: their difference is the Python call
    cases[KERNEL] = parts.pop(KERNEL)
    times = time_interleaved(cases, args.rounds, args.sample, np.random.default_rng(args.seed))
    stages = time_interleaved(parts, max(5, args.rounds // 3), args.sample, np.random.default_rng(args.seed + 1))
    ours = times["soadyn sd.step"][0]
    theirs = times["mujoco mj_step"][0] - times["mujoco state restore alone"][0]
    result = {
        "machine": machine_description(),
        "peers": {"mujoco": mujoco.__version__},
        "scene": {"robot": "mini_cheetah (12 geared rotors)", "bodies": model.nbodies, "nv": model.nv,
                  "independent velocities": tree.nyv, "contacts": len(r.contacts), "dt": DT, "kp": KP, "kd": KD,
                  "mass": mass},
        "time_us": {k: [1e6 * x for x in t] for k, t in times.items()},
        "ratio": ours / theirs,
        "target": 1.5,
        "stages_us": {k: 1e6 * t[0] for k, t in stages.items()},
        "standing": {
            "soadyn": {"base height m": float(q[2]), "normal force N": float(r.impulses[:, 2].sum() / DT),
                       "worst constraint residual": float(worst), "converged": bool(r.solution.converged),
                       "NCP residual": float(r.solution.residual)},
            "mujoco": mj_standing,
            "m g N": mass * 9.81,
        },
    }
    result["load average at end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "contact_loops.json"), "w") as f:
        json.dump(result, f, indent=2)
    write_markdown(result, args)
    print(open(os.path.join(RESULTS, "contact_loops.md")).read())


def write_markdown(res, args):
    mach = res["machine"]
    lines = ["# Closed chains in contact: sd.step against mujoco.mj_step, Mini Cheetah with rotors standing", "",
             f"`python benchmarks/contact_loops.py` (the module docstring says what each call does). Medians of "
             f"{args.rounds} interleaved rounds of {args.sample} s samples, µs per step; ratio = soadyn / MuJoCo "
             f"(target ≤ {res['target']}).", "", "```"]
    lines += [mach]
    lines += [f"peers: mujoco {res['peers']['mujoco']}", "```", ""]
    load = res.get("load average at end")
    if load is not None and load[0] > (os.cpu_count() or 1):
        lines += [f"The machine was shared with other jobs (load average {load[0]:.2f} at the end of the run on "
                  f"{os.cpu_count()} logical cores, and at its start in the block above): the medians include their "
                  "interference; a quiet machine gives shorter times.", ""]
    sc = res["scene"]
    lines += [f"Scene: {sc['robot']}, {sc['bodies']} bodies, nv = {sc['nv']} (spanning), "
              f"{sc['independent velocities']} independent velocities, {sc['contacts']} contacts, dt = {sc['dt']} s, "
              f"PD kp = {sc['kp']}, kd = {sc['kd']}, mass {sc['mass']:.3f} kg.", "",
              "| step | median µs | min µs | max µs |", "|---|---|---|---|"]
    for k, (med, lo, hi) in res["time_us"].items():
        lines.append(f"| {k} | {med:.1f} | {lo:.1f} | {hi:.1f} |")
    lines += ["", f"**ratio soadyn / MuJoCo: {res['ratio']:.2f}** (target ≤ {res['target']}; MuJoCo's time "
              "without its state restore)", "",
              "Where soadyn's step spends its time (each part alone, same state, medians of interleaved "
              "rounds of their own, after the first table's; the Python call around the kernel is sd.step minus "
              "the kernel of the first table):", "",
              "| part | µs |", "|---|---|"]
    for k, t in res["stages_us"].items():
        lines.append(f"| {k} | {t:.1f} |")
    kernel = res["time_us"][KERNEL][0]
    step_us = res['time_us']['soadyn sd.step'][0]
    mj_us = res['time_us']['mujoco mj_step'][0] - res['time_us']['mujoco state restore alone'][0]
    lines.append(f"| the step's kernel alone (first table, same rounds as sd.step) | {kernel:.1f} |")
    lines.append(f"| the Python call around the kernel (sd.step − kernel, first table) | {step_us - kernel:.1f} |")
    verdict = "met" if res["ratio"] <= res["target"] else "missed"
    lines += ["", f"Target {verdict}: the step's kernel alone takes {kernel / mj_us:.2f}× MuJoCo's mj_step; the "
              f"Python call around it (argument checks, the warm start's check, the output arrays, the Contacts, "
              f"ContactSolution and StepResult of the result) adds {step_us - kernel:.1f} µs. Inside the kernel, "
              "one C-ABA backward pass (the free velocity's, on the detection's joint placements) serves the "
              "Delassus (C-EFPA's propagators, three columns per contact) and the impulse response (the force-only "
              "sweeps on its factorization: the second part minus the first, against the third, a second full "
              "C-ABA); the "
              "ADMM solve iterates to the default tol 1e-10 from the previous step's impulses and penalty scale."]
    st = res["standing"]
    lines += ["", f"Standing after 1.5 s (m g = {st['m g N']:.3f} N):", "",
              "| | base height m | Σ normal force N | worst loop/coupling residual on the way |", "|---|---|---|---|",
              f"| soadyn | {st['soadyn']['base height m']:.5f} | {st['soadyn']['normal force N']:.3f} | "
              f"{st['soadyn']['worst constraint residual']:.1e} (position and velocity; exact by embedding) |",
              f"| mujoco | {st['mujoco']['base height m']:.5f} | {st['mujoco']['normal force N']:.3f} | "
              f"{st['mujoco']['worst coupling residual rad']:.1e} rad (soft equality constraints) |", ""]
    with open(os.path.join(RESULTS, "contact_loops.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
