"""sd.step and sd.rollout(contacts=True) against mujoco.mj_step and mujoco.rollout on the same
MJCF scenes, same timestep, same run.

``python benchmarks/contact_step.py`` (needs ``pip install mujoco example-robot-data``)
writes ``benchmarks/results/contact_step.json`` and ``contact_step.md``.

Scenes, each one MJCF that both libraries load (soadyn through ``sd.load_mjcf``):

* **solo12 standing**: example-robot-data's solo12 (URDF through MuJoCo's compiler, its own
  collision meshes removed, no joint limits), a free base, a sphere of radius 0.016 on each
  foot, a ground plane; joint PD servos kp = 6 N m/rad, kd = 0.3 N m s/rad to the
  "standing" configuration of its SRDF (MuJoCo: ``<position kp kv>`` actuators; soadyn:
  ``pd=(kp, kd, q_ref)``).
* **5-box stack**: five 0.1 m boxes (1 kg, μ = 1) stacked on a plane, each free.
* **talos standing**: example-robot-data's talos (a 32-joint humanoid) the same way, a box
  sole (0.2 × 0.13 × 0.01 m) under each foot, PD to its "half_sitting" configuration
  (kp 3000 / kd 30 on the legs and torso, 300 / 3 on the arms and head, 0 on the grippers).

MuJoCo: ``Euler`` integrator, elliptic friction cones (the Coulomb cone soadyn solves),
its default soft contacts and Newton solver; soadyn: its default :class:`ContactSettings`
(rigid contacts, ADMM, tol 1e-10, warm started from the previous step). dt = 1 ms.

Timed: ``sd.step`` in a Python loop against ``mj_step`` in a Python loop (each call one
step, the state carried over: steps per second of a single-state simulator), and one
``sd.rollout`` call of B states × T steps against ``mujoco.rollout`` of the same (1 thread:
MuJoCo ``Rollout(nthread=0)`` against ``sd.rollout`` with one batch thread; 2 threads:
``Rollout(nthread=2)`` against the default two). Medians over interleaved rounds
(benchmarks/timing.py). The loop of ``sd.step`` passes the scene's joint PD servo as
``pd=(kp, kd, q_ref)``, which the step evaluates inside its kernel, as MuJoCo's position
servos are inside ``mj_step`` (computed in NumPy it cost about 2 µs a step).

NCP residuals of both, per contact step of a standing trajectory, against the rigid Coulomb
NCP with De Saxcé's correction [LeLidec24]: soadyn's from its record; MuJoCo's from its
contact impulses (``mj_contactForce`` · dt) and the contact velocities after the step
(J(q_k) v_{k+1} at its contact points, in its contact frames) — MuJoCo solves a soft
(regularized) problem, so its residuals measure how far its impulses are from the rigid
law, and its steady penetration is reported beside ours.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import robot_path  # noqa: E402
from timing import machine_description, time_interleaved  # noqa: E402

import soadyn as sd  # noqa: E402
import soadyn.core.batch as batch_dispatch  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
DT = 1e-3

SOLO12_STANDING = {"FL_HAA": 0.1, "FL_HFE": 0.8, "FL_KFE": -1.6, "HL_HAA": 0.1, "HL_HFE": -0.8, "HL_KFE": 1.6,
                   "FR_HAA": -0.1, "FR_HFE": 0.8, "FR_KFE": -1.6, "HR_HAA": -0.1, "HR_HFE": -0.8, "HR_KFE": 1.6}
TALOS_HALF_SITTING = {
    "arm_left_1_joint": 0.25847, "arm_left_2_joint": 0.173046, "arm_left_3_joint": -0.0002,
    "arm_left_4_joint": -0.525366, "arm_left_7_joint": 0.1, "arm_right_1_joint": -0.25847,
    "arm_right_2_joint": -0.173046, "arm_right_3_joint": 0.0002, "arm_right_4_joint": -0.525366,
    "arm_right_7_joint": 0.1, "leg_left_3_joint": -0.411354, "leg_left_4_joint": 0.859395,
    "leg_left_5_joint": -0.448041, "leg_left_6_joint": -0.001708, "leg_right_3_joint": -0.411354,
    "leg_right_4_joint": 0.859395, "leg_right_5_joint": -0.448041, "leg_right_6_joint": -0.001708,
    "torso_2_joint": 0.006761}


# --------------------------------------------------------------------------- scenes (MJCF)
def _urdf_spec(name):
    import mujoco
    with open(robot_path(name)) as f:
        xml = f.read()
    xml = re.sub(r"<visual>.*?</visual>", "", xml, flags=re.S)
    xml = re.sub(r"<collision>.*?</collision>", "", xml, flags=re.S)
    xml = re.sub(r"<dynamics[^>]*/>", "", xml)
    xml = re.sub(r"(<robot[^>]*>)", r'\1<mujoco><compiler discardvisual="true" balanceinertia="false" '
                 r'fusestatic="false"/></mujoco>', xml, count=1)
    return mujoco.MjSpec.from_string(xml)


def _common(spec):
    import mujoco
    spec.option.timestep = DT
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], name="ground")


def _robot(name, feet, gains, reference, height):
    """(xml, gains (nu,) kp, kd, reference {joint: value}, base height)."""
    import mujoco
    spec = _urdf_spec(name)
    _common(spec)
    base = spec.worldbody.first_body()
    base.add_freejoint()
    for body, geom in feet:
        spec.body(body).add_geom(**geom)
    kp, kd = [], []
    for j in spec.joints:
        if j.type == mujoco.mjtJoint.mjJNT_FREE:
            continue
        j.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        p, d = gains(j.name)
        kp.append(p)
        kd.append(d)
        a = spec.add_actuator(name=f"servo_{j.name}", target=j.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        a.set_to_position(kp=p, kv=d)
        a.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        a.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    spec.compile()
    return spec.to_xml(), np.array(kp), np.array(kd), reference, height


def solo12():
    import mujoco
    sphere = {"type": mujoco.mjtGeom.mjGEOM_SPHERE, "size": [0.016, 0, 0]}
    feet = [(f"{leg}_FOOT", sphere) for leg in ("FL", "FR", "HL", "HR")]
    return _robot("solo12", feet, lambda j: (6.0, 0.3), SOLO12_STANDING, 0.235)


def talos():
    import mujoco
    sole = {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": [0.1, 0.065, 0.005], "pos": [0, 0, 0.005]}
    feet = [("left_sole_link", sole), ("right_sole_link", sole)]

    def gains(j):
        if "gripper" in j:
            return 0.0, 0.0
        if j.startswith(("leg", "torso")):
            return 3000.0, 30.0
        return 300.0, 3.0
    return _robot("talos", feet, gains, TALOS_HALF_SITTING, 1.01927)


def box_stack(n=5, size=0.1):
    h = size / 2
    bodies = "".join(f'<body name="box{k}" pos="0 0 {h + k * size - 1e-4 * k:.6f}"><freejoint/>'
                     f'<geom type="box" size="{h} {h} {h}" mass="1"/></body>' for k in range(n))
    xml = (f'<mujoco model="box stack"><option timestep="{DT}" integrator="Euler" cone="elliptic"/><worldbody>'
           f'<geom name="ground" type="plane" size="0 0 1"/>{bodies}</worldbody></mujoco>')
    return xml, np.zeros(0), np.zeros(0), {}, None


# --------------------------------------------------------------------------- both libraries
class Scene:
    """The MJCF scene in both libraries and its initial state."""

    def __init__(self, name, xml, kp, kd, reference, height):
        import mujoco
        self.name = name
        self.mm = mujoco.MjModel.from_xml_string(xml)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = sd.load_mjcf(xml)
        mm, model = self.mm, self.model
        d = mujoco.MjData(mm)
        for jname, value in reference.items():
            d.qpos[mm.jnt_qposadr[mm.joint(jname).id]] = value
        if height is not None:
            d.qpos[2] = height
        self.ctrl = np.array([d.qpos[mm.jnt_qposadr[mm.actuator_trnid[a, 0]]] for a in range(mm.nu)])
        q = sd.io.mjcf.q_from_mujoco(model, d.qpos.copy())
        if height is not None:  # the lowest foot 0.5 mm into the ground
            dist = sd.collision_distances(model, q)
            q[2] -= dist.distance.min() + 5e-4
        self.q0 = q
        d.qpos[:] = sd.io.mjcf.q_to_mujoco(model, q)
        self.qpos0 = d.qpos.copy()
        self.kp, self.kd = kp, kd
        # the PD of soadyn on the same dofs as MuJoCo's servos (actuator order = joint order)
        self.kp_v, self.kd_v = np.zeros(model.nv), np.zeros(model.nv)
        v_index = {b.joint.name: b.joint.v_index for b in model.bodies}
        for a in range(mm.nu):
            vi = v_index[mm.joint(int(mm.actuator_trnid[a, 0])).name]
            self.kp_v[vi], self.kd_v[vi] = kp[a], kd[a]
        self.has_pd = mm.nu > 0
        # the dofs of the PD of sd.rollout (its 1-coordinate joints) and their coordinates,
        # found once: the timed loop of sd.step computes its PD torques from them as MuJoCo
        # computes its servos' inside mj_step (a loop over the bodies in Python per step
        # cost 14 µs on solo12, more than the step)
        self.pd_v, self.pd_q = _pd_indices(model)

    def pd_error(self, q, qref):
        """q_ref − q on the dofs of the 1-coordinate joints (the PD of sd.rollout), 0 elsewhere."""
        e = np.zeros(self.model.nv)
        e[self.pd_v] = qref[self.pd_q] - q[self.pd_q]
        return e

    def pd(self, T, batch=None):
        if not self.has_pd:
            return None
        qref = np.tile(self.q0, (T, 1)) if batch is None else np.tile(self.q0, (batch, T, 1))
        return (self.kp_v, self.kd_v, qref)


def mujoco_trajectory(scene, T):
    """MuJoCo's states and the NCP residuals of its contact impulses per step."""
    import mujoco
    mm = scene.mm
    d = mujoco.MjData(mm)
    d.qpos[:] = scene.qpos0
    d.ctrl[:] = scene.ctrl
    res, depth, counts = [], [], []
    jacp, jacr = np.zeros((3, mm.nv)), np.zeros((3, mm.nv))
    f6 = np.zeros(6)
    for _ in range(T):
        mujoco.mj_step(mm, d)
        lam, sig, mu = [], [], []
        for i in range(d.ncon):
            c = d.contact[i]
            mujoco.mj_contactForce(mm, d, i, f6)
            frame = c.frame.reshape(3, 3)  # rows: normal, t1, t2
            lam.append(np.array([f6[1], f6[2], f6[0]]) * mm.opt.timestep)
            v = np.zeros(3)
            for sign, g in ((-1.0, c.geom1), (1.0, c.geom2)):
                b = mm.geom_bodyid[g]
                if b == 0:
                    continue
                mujoco.mj_jac(mm, d, jacp, jacr, c.pos, b)
                v += sign * jacp @ d.qvel
            sig.append(np.array([frame[1] @ v, frame[2] @ v, frame[0] @ v]))
            mu.append(c.friction[0])
            depth.append(-c.dist)
        counts.append(d.ncon)
        if d.ncon:
            res.append(ncp_residuals(np.array(lam), np.array(sig), np.array(mu)))
    return np.array(res), np.array(depth), np.array(counts), d


def ncp_residuals(lam, sigma, mu):
    """(primal, dual, complementarity) of [LeLidec24] with De Saxcé's correction, per
    contact set (the largest over the contacts)."""
    out = []
    for li, si, m in zip(lam, sigma, mu):
        hat = si + np.array([0.0, 0.0, m * np.hypot(si[0], si[1])])
        out.append((_cone_distance(li, m, False), _cone_distance(hat, m, True), abs(li @ hat)))
    return np.max(np.array(out), axis=0)


def _cone_distance(x, mu, dual):
    t, n = np.hypot(x[0], x[1]), x[2]
    if dual:
        inside, polar, r, s = mu * t <= n, t <= -mu * n, t, mu
    else:
        inside, polar, r, s = t <= mu * n, mu * t <= -n, mu * t, 1.0
    if inside:
        return 0.0
    if polar:
        return float(np.linalg.norm(x))
    if dual:
        beta = (t + mu * n) / (mu * mu + 1.0)
        proj = np.array([beta * x[0] / t, beta * x[1] / t, mu * beta])
    else:
        alpha = (mu * t + n) / (mu * mu + 1.0)
        proj = np.array([mu * alpha * x[0] / t, mu * alpha * x[1] / t, alpha])
    return float(np.linalg.norm(x - proj))


def measure(scene, batch, steps, rounds, seed=0):
    import mujoco
    from mujoco import rollout as mjr
    mm, model = scene.mm, scene.model
    stages = stage_breakdown(scene)  # first, on a fresh workspace
    rng = np.random.default_rng(seed)
    # the initial states of the batch: the scene's, with small joint perturbations
    q0 = np.tile(scene.q0, (batch, 1))
    v0 = 0.01 * rng.normal(size=(batch, model.nv))
    tau = np.zeros((batch, steps, model.nv))
    kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d = mujoco.MjData(mm)
    S0 = np.zeros((batch, mujoco.mj_stateSize(mm, kind)))
    for b in range(batch):
        mujoco.mj_resetData(mm, d)
        d.qpos[:] = sd.io.mjcf.q_to_mujoco(model, q0[b])
        d.qvel[:] = sd.io.mjcf.v_to_mujoco(model, q0[b], v0[b])
        d.ctrl[:] = scene.ctrl
        mujoco.mj_getState(mm, d, S0[b], kind)
    ctrl = np.tile(scene.ctrl, (batch, steps, 1)) if mm.nu else None
    pd = scene.pd(steps, batch)
    # single steps
    d1 = mujoco.MjData(mm)
    d1.qpos[:] = scene.qpos0
    d1.ctrl[:] = scene.ctrl
    qref1 = scene.q0
    state = {"q": scene.q0.copy(), "v": np.zeros(model.nv), "r": None}
    kp, kd = scene.kp_v, scene.kd_v

    no_torques = np.zeros(model.nv)
    # the joint PD servo inside the step where MuJoCo has its position servos inside mj_step
    # (the box stack has none)
    servo = (kp, kd, qref1) if scene.has_pd else None

    def sd_step():
        q, v = state["q"], state["v"]
        # (no finiteness test here, which mj_step's loop has none of: sd.step raises
        # OverflowError on a state that leaves the finite numbers)
        r = sd.step(model, q, v, no_torques, DT, warm_start=state["r"], pd=servo)
        state["q"], state["v"], state["r"] = r.q, r.v, r

    def mj_step():
        mujoco.mj_step(mm, d1)

    datas = [mujoco.MjData(mm) for _ in range(2)]
    threads = batch_dispatch.batch_threads

    def sd_rollout(nthreads):
        batch_dispatch.batch_threads = (lambda: 1) if nthreads == 1 else threads
        try:
            return sd.rollout(model, q0, v0, tau, DT, contacts=True, pd=pd)
        finally:
            batch_dispatch.batch_threads = threads

    with mjr.Rollout(nthread=0) as serial, mjr.Rollout(nthread=2) as pool:
        kw = {} if ctrl is None else {"control": ctrl}
        cases = {
            ("step", "mujoco"): ("f()", {"f": mj_step}),
            ("step", "soadyn"): ("f()", {"f": sd_step}),
            ("rollout1", "mujoco"): ("f()", {"f": lambda: serial.rollout(mm, datas[0], S0, nstep=steps, **kw)}),
            ("rollout1", "soadyn"): ("f()", {"f": lambda: sd_rollout(1)}),
            ("rollout2", "mujoco"): ("f()", {"f": lambda: pool.rollout(mm, datas, S0, nstep=steps, **kw)}),
            ("rollout2", "soadyn"): ("f()", {"f": lambda: sd_rollout(2)}),
        }
        times = time_interleaved(cases, rounds, 0.05, rng)
        mstate, _ = serial.rollout(mm, datas[0], S0, nstep=steps, **kw)
    sps = {}
    for (what, lib), t in times.items():
        sps[(what, lib)] = (1.0 if what == "step" else batch * steps) / t[0]
    # a standing trajectory of both: residuals, penetration, the base height
    T = 1000
    qs, vs, rec = sd.rollout(model, scene.q0, None, np.zeros((T, model.nv)), DT, contacts=True,
                             pd=scene.pd(T), record=True)
    mres, mdepth, mcount, dend = mujoco_trajectory(scene, T)
    on = rec.count > 0
    out = {
        "scene": scene.name, "nv": model.nv, "batch": batch, "steps": steps, "dt": DT, "rounds": rounds,
        "sps": {f"{w} {lib}": v for (w, lib), v in sps.items()},
        "ratio step": sps[("step", "soadyn")] / sps[("step", "mujoco")],
        "ratio rollout 1 thread": sps[("rollout1", "soadyn")] / sps[("rollout1", "mujoco")],
        "ratio rollout 2 threads": sps[("rollout2", "soadyn")] / sps[("rollout2", "mujoco")],
        "contacts soadyn (median)": float(np.median(rec.count)), "contacts mujoco (median)": float(np.median(mcount)),
        "iterations soadyn (mean, max)": [float(rec.iterations.mean()), float(rec.iterations.max())],
        "ncp soadyn (median, max)": [float(np.median(rec.residual[on])), float(np.max(rec.residual[on]))]
        if on.any() else None,
        "ncp mujoco (median, max)": [float(np.median(mres.max(axis=1))), float(np.max(mres))] if len(mres) else None,
        "ncp mujoco components median (primal, dual, complementarity)": np.median(mres, axis=0).tolist()
        if len(mres) else None,
        "depth soadyn end [m]": float(rec.max_depth[-1]),
        "depth mujoco end [m]": float(max(-c.dist for c in dend.contact[:dend.ncon])) if dend.ncon else 0.0,
        "base height soadyn end [m]": float(qs[-1, 2]),
        "base height mujoco end [m]": float(dend.qpos[2]),
        "mujoco rollout states finite": bool(np.isfinite(mstate).all()),
        "stages us (min of 5)": stages,
    }
    return out


_STAGES = ("placements", "detect", "free velocity (block ABA)", "Delassus (G, g)", "solve (cold)", "solve (warm)",
           "update (M⁻¹Jᵀλ, integrate)", "start check (warm, no G)")


def _stage_loop():
    """A compiled loop over one stage of the step kernel (soadyn.kernels.contact.step), for
    the breakdown of a step's time: ``which`` indexes :data:`_STAGES`."""
    from soadyn.core import jit
    from soadyn.core.layout import carve, model_tables
    from soadyn.kernels.contact import step as ks
    from soadyn.kernels.kinematics import joint_placements, no_forces

    @jit.kernel(cache=False)
    def loop(mi, mf, ws, q, v, tau, dt, ci, cf, prm, dims, fbuf, ibuf, info, q1, v1, n, which):
        m = model_tables(mi, mf)
        s = ks.step_scratch(fbuf, ibuf, m.nb, m.nv, dims)
        K = dims[0]
        fext = no_forces(ws)
        none, no_points = carve(s.prev_objects, 0, (0, 2)), carve(s.prev_points, 0, (0, 3))
        joint_placements(mi, mf, ws, q)
        k = ks.detect_stage(mi, mf, ws, ci, cf, prm[ks.MARGIN], s, K)
        ks.free_stage(mi, mf, ws, v, tau, fext, dt, s)
        ks.delassus_stage(mi, mf, ws, k, K, dt, prm, s)
        ks.solve_stage(k, K, m.nv, prm, none, no_points, carve(s.prev_lam, 0, 0), carve(s.prev_sigma, 0, 0), s.prev_scale,
                       s, info)
        for i in range(k):  # the solution as the warm start of the next solve
            s.prev_objects[2 * i], s.prev_objects[2 * i + 1] = s.cil[2 * i], s.cil[2 * i + 1]
        for r in range(3 * k):
            s.prev_lam[r] = s.lam[r]
            s.prev_sigma[r] = s.sigma[r]
            s.prev_points[r] = s.cfl[r]
        s.prev_scale[0], s.prev_scale[1] = info[ks.SCALE_L], info[ks.SCALE_POWER]
        s.g[2] -= 1e-6  # a warm solve that has to iterate: the next step's g moved a little
        for _ in range(n):
            if which == 0:
                joint_placements(mi, mf, ws, q)
            elif which == 1:
                ks.detect_stage(mi, mf, ws, ci, cf, prm[ks.MARGIN], s, K)
            elif which == 2:
                ks.free_stage(mi, mf, ws, v, tau, fext, dt, s)
            elif which == 3:
                ks.delassus_stage(mi, mf, ws, k, K, dt, prm, s)
            elif which == 4:
                ks.solve_stage(k, K, m.nv, prm, none, no_points, carve(s.prev_lam, 0, 0), carve(s.prev_sigma, 0, 0), s.prev_scale,
                       s, info)
            elif which == 5:
                ks.solve_stage(k, K, m.nv, prm, carve(s.prev_objects, 0, (k, 2)), carve(s.prev_points, 0, (k, 3)),
                               carve(s.prev_lam, 0, 3 * k), carve(s.prev_sigma, 0, 3 * k), s.prev_scale, s, info)
            elif which == 6:
                ks.update_stage(mi, mf, ws, q, k, K, dt, s, q1, v1)
            else:
                ks.start_stage(mi, mf, ws, k, K, prm, carve(s.prev_objects, 0, (k, 2)), carve(s.prev_points, 0, (k, 3)),
                               carve(s.prev_lam, 0, 3 * k), s.prev_scale, s, info)
        return k
    return loop


def stage_breakdown(scene, n=2000):
    """µs per call of each stage of one step at the scene's initial state (its first
    contacts), in a compiled loop."""
    from soadyn.contact.step import step_tables
    from soadyn.core.compile import derived
    from soadyn.kernels.contact import step as ks
    model = scene.model
    d, tables = derived(model), step_tables(model)
    K = tables.capacity
    fbuf, ibuf = tables.scratch(K)
    loop = _stage_loop()
    args = (d.compiled.mi, d.compiled.mf, d.buffer(), scene.q0, np.zeros(model.nv), np.zeros(model.nv), DT,
            tables.ci, tables.cf, sd.ContactSettings().vector(), tables.dims(K), fbuf, ibuf,
            np.zeros(ks.STEP_INFO_SIZE), np.empty(model.nq), np.empty(model.nv))
    out = {}
    for which, label in enumerate(_STAGES):
        loop(*args, 10, which)
        best = np.inf
        for _ in range(5):
            t0 = time.perf_counter()
            loop(*args, n, which)
            best = min(best, (time.perf_counter() - t0) / n)
        out[label] = 1e6 * best
    return out


def _pd_indices(model):
    """(dofs, their coordinates) of the 1-coordinate joints (the joints sd.rollout's PD acts on)."""
    dofs, coords = [], []
    for body in model.bodies:
        j = body.joint
        if j.nv and j.nq == j.nv and j.kind not in ("free", "spherical"):
            dofs += range(j.v_index, j.v_index + j.nv)
            coords += range(j.q_index, j.q_index + j.nq)
    return np.array(dofs, dtype=np.int64), np.array(coords, dtype=np.int64)


def report(rows, header):
    lines = ["# sd.step and sd.rollout(contacts=True) against MuJoCo", "", "```", header, "```", "",
             "Steps per second (medians of interleaved rounds); ratio = soadyn / MuJoCo (≥ 1: soadyn faster). "
             "`step`: one call per step from Python (sd.step with its joint PD servo `pd=` where the scene "
             "has servos, against mj_step with its position servos); `rollout` B × T: one call (1 thread: MuJoCo Rollout(nthread=0), soadyn "
             "one batch thread; 2 threads: Rollout(nthread=2), soadyn two).", "",
             "| scene | nv | B × T | step MuJoCo | step soadyn | ratio | rollout 1 thr MuJoCo | soadyn | ratio | "
             "rollout 2 thr MuJoCo | soadyn | ratio |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["sps"]
        lines.append(f"| {r['scene']} | {r['nv']} | {r['batch']} × {r['steps']} | {s['step mujoco']:.3g} | "
                     f"{s['step soadyn']:.3g} | {r['ratio step']:.2f} | {s['rollout1 mujoco']:.3g} | "
                     f"{s['rollout1 soadyn']:.3g} | {r['ratio rollout 1 thread']:.2f} | {s['rollout2 mujoco']:.3g} | "
                     f"{s['rollout2 soadyn']:.3g} | {r['ratio rollout 2 threads']:.2f} |")
    lines += ["", "## Contacts, NCP residuals and penetration over 1 s of standing (1000 steps)", "",
              "Residuals of the rigid Coulomb NCP with De Saxcé's correction (the largest of primal, dual, "
              "complementarity per step; median and max over the steps with contacts). soadyn solves it to "
              "tol = 1e-10; MuJoCo solves its soft contact model, whose impulses are not those of the rigid law.",
              "", "| scene | contacts soadyn / MuJoCo | soadyn iterations mean / max | NCP soadyn median / max | "
              "NCP MuJoCo median / max | MuJoCo (primal, dual, compl.) median | depth at 1 s soadyn / MuJoCo [mm] | "
              "base height at 1 s soadyn / MuJoCo [m] |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ns, nm = r["ncp soadyn (median, max)"], r["ncp mujoco (median, max)"]
        comp = r["ncp mujoco components median (primal, dual, complementarity)"]
        lines.append(
            f"| {r['scene']} | {r['contacts soadyn (median)']:.0f} / {r['contacts mujoco (median)']:.0f} | "
            f"{r['iterations soadyn (mean, max)'][0]:.2f} / {r['iterations soadyn (mean, max)'][1]:.0f} | "
            f"{ns[0]:.1e} / {ns[1]:.1e} | {nm[0]:.1e} / {nm[1]:.1e} | "
            f"({comp[0]:.1e}, {comp[1]:.1e}, {comp[2]:.1e}) | "
            f"{1e3 * r['depth soadyn end [m]']:.2f} / {1e3 * r['depth mujoco end [m]']:.2f} | "
            f"{r['base height soadyn end [m]']:.4f} / {r['base height mujoco end [m]']:.4f} |")
    lines += ["", "## Where soadyn's step time goes", "",
              "µs per call of each stage of the step kernel at the scene's first contacts, in a compiled loop (best of "
              "5 × 2000 calls). `solve (warm)`: from the previous solution and penalty scale, with g moved by 1e-6 so "
              "that it iterates, as many times as it needs (the rollouts' mean and largest iteration counts per step "
              "are in the table above). `start check`: the test of the warm start without G (σ from the impulse "
              "response), which the step runs where the contact rows outnumber the velocities (3k > nv: the box "
              "stack); a step whose start passes it (0 iterations) forms no G and runs no solve, so its cost is "
              "placements + detect + free velocity + start check + the integration.", "",
              "| scene | " + " | ".join(_STAGES) + " |", "|---|" + "---|" * len(_STAGES)]
    for r in rows:
        st = r["stages us (min of 5)"]
        lines.append(f"| {r['scene']} | " + " | ".join(f"{st[k]:.2f}" for k in _STAGES) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", default=["solo12", "box stack", "talos"])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--output", default=os.path.join(RESULTS, "contact_step"))
    args = ap.parse_args(argv)
    import mujoco
    header = machine_description() + f"mujoco {mujoco.__version__}"
    builders = {"solo12": solo12, "box stack": box_stack, "talos": talos}
    rows = []
    if len(args.scenes) > 1:
        # each scene in its own process: a second scene measured in the process of a first
        # one crashed in a run (2026-12-02, not yet understood), so each gets a fresh one
        import subprocess
        import tempfile
        for name in args.scenes:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "scene")
                subprocess.run([sys.executable, os.path.abspath(__file__), "--scenes", name, "--batch", str(args.batch),
                                "--steps", str(args.steps), "--rounds", str(args.rounds), "--output", out], check=True)
                with open(out + ".json") as f:
                    rows += json.load(f)["rows"]
    for name in args.scenes if len(args.scenes) == 1 else ():
        t0 = time.time()
        scene = Scene(name, *builders[name]())
        r = measure(scene, args.batch, args.steps, args.rounds)
        print(f"{name}: step {r['ratio step']:.2f}, rollout 1 thread {r['ratio rollout 1 thread']:.2f}, 2 threads "
              f"{r['ratio rollout 2 threads']:.2f} ({time.time() - t0:.0f} s)", flush=True)
        rows.append(r)
    text = report(rows, header)
    with open(args.output + ".md", "w") as f:
        f.write(text)
    with open(args.output + ".json", "w") as f:
        json.dump({"machine": header, "rows": rows}, f, indent=1)  # the machine block, as the other results
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
