"""Compile every kernel into Numba's on-disk cache ahead of use.

Numba compiles a kernel on its first call (seconds to tens of seconds each, minutes for
the whole library) and caches the machine code on disk. ``soadyn precompile`` (or
``python -m soadyn.precompile``) exercises the public API on small built-in models so
that later processes start warm; ``--jobs N`` spreads independent groups of kernels over
N processes (compilation itself is single-threaded).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import numpy as np

import soadyn as sd
from soadyn.dynamics import innovations, oscm, spo
from soadyn.dynamics.rollout import exponential_coordinate_rate


def _tree_kernels():
    """Tree algorithms on single states, with and without external forces; configuration
    space."""
    m = sd.models.random_tree(8, 0, floating_base=True)
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    f = rng.normal(size=(m.nbodies, 6))
    sd.rnea(m, q, v, a)
    sd.rnea(m, q, v, a, f)
    # the plain-call kernel's versions (soadyn.kernels.plain), compiled on a function's
    # second plain call: for given rates and for absent ones (generalized_gravity,
    # bias_forces, ...)
    sd.rnea(m, q, v, a)
    sd.rnea(m, q, None, None)
    sd.rnea(m, q, v, None)
    sd.rnea(m, q, None, a)
    sd.body_forces(m, q, v, a)
    sd.aba(m, q, v, a)
    sd.aba(m, q, v, a, f)
    sd.aba(m, q, v, a)
    sd.aba(m, q, None, a)
    sd.mass_matrix(m, q)
    sd.mass_matrix(m, q, method="jtmj")
    sd.rnea_derivatives(m, q, v, a)
    sd.rnea_derivatives(m, q, v, a, f)
    sd.aba_derivatives(m, q, v, a)
    sd.aba_derivatives(m, q, v, a, f)
    sd.forward_kinematics(m, q, v, a)
    sd.forward_kinematics(m, q)
    sd.frame_jacobian(m, q, m.frames[-1].name)
    sd.frame_placement(m, q, m.frames[-1].name)
    sd.frame_velocity(m, q, v, m.frames[-1].name)
    sd.frame_acceleration(m, q, v, a, m.frames[-1].name)
    sd.kinetic_energy(m, q, v)
    sd.integrate(m, q, v, 0.1)
    sd.difference(m, q, q)
    sd.configuration_rate(m, q, v)
    sd.normalize(m, q)
    sd.rollout(m, q, v, a[None], 0.01)  # one kernel for every integrator
    exponential_coordinate_rate(m, v, a, 0.01)  # simulate's RK4 stages


def _tree_batches():
    """The batched twins of the tree algorithms."""
    m = sd.models.random_tree(8, 0, floating_base=True)
    rng = np.random.default_rng(0)
    Q = np.stack([sd.random_configuration(m, rng) for _ in range(2)])
    V, A = rng.normal(size=(2, 2, m.nv))
    F = rng.normal(size=(2, m.nbodies, 6))
    sd.rnea(m, Q, V, A)
    sd.rnea(m, Q, V, A, F)
    sd.body_forces(m, Q, V, A)
    sd.aba(m, Q, V, A)
    sd.aba(m, Q, V, A, F)
    sd.mass_matrix(m, Q)
    sd.rnea_derivatives(m, Q, V, A)
    sd.aba_derivatives(m, Q, V, A)
    sd.forward_kinematics(m, Q, V, A)
    sd.forward_kinematics(m, Q)
    sd.mass_matrix_inverse(m, Q)
    sd.mass_matrix_inverse(m, Q, method="innovations")
    sd.frame_jacobian(m, Q, m.frames[-1].name)
    sd.kinetic_energy(m, Q, V)
    sd.log_det_mass_matrix(m, Q)
    sd.articulated_inertias(m, Q)
    sd.articulated_inertias(m, Q, partitioned=True)
    sd.operational_space_compliance(m, Q, [m.frames[-1].name])
    sd.rollout(m, Q, V, A[:, None], 0.01)


def _operator_kernels():
    """Innovations factorization, M⁻¹, log det M, SPO products and the OSCM."""
    m = sd.models.random_tree(8, 1, floating_base=True)
    q = sd.random_configuration(m, 1)
    sd.articulated_inertias(m, q)
    sd.articulated_inertias(m, q, partitioned=True)
    sd.mass_matrix_inverse(m, q)
    sd.mass_matrix_inverse(m, q, method="innovations")
    sd.log_det_mass_matrix(m, q)
    frames = [m.frames[-1].name, m.frames[3].name]
    sd.operational_space_compliance(m, q, frames)
    sd.operational_space_inertia(m, q, frames[:1])
    oscm.eoscm_diagonal(m, q)
    x = np.ones((m.nv, 2))
    innovations.apply_innovations_factor(m, q, x)
    spo.spo_product(m, q, np.ones((m.nbodies, 6)))
    spo.influence_product(m, np.ones((m.nbodies, 6, 6)), np.ones((m.nbodies, 6)))


def _control_kernels():
    """Centroidal dynamics, the Coriolis matrix and the dynamic-parameter regressors (single
    states and batches: their kernels take both)."""
    m = sd.models.random_tree(8, 2, floating_base=True)
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    sd.centroidal_momentum_matrix(m, q)
    sd.center_of_mass_jacobian(m, q)
    sd.center_of_mass(m, q, v, a)  # one kernel for the centre of mass, h_G, its rate and I_G
    sd.coriolis_matrix(m, q, v)
    sd.joint_torque_regressor(m, q, v, a)
    sd.kinetic_energy_regressor(m, q, v)  # one kernel for both energy regressors


def _closed_chain_methods():
    """Loop closure, the cut-joint methods and the compiled direct method (single and
    batched)."""
    m = sd.models.four_bar_chain(2, 1)
    rng = np.random.default_rng(2)
    q, v = sd.close_loops(m, sd.neutral(m) + 0.1 * rng.normal(size=m.nq), rng.normal(size=m.nv))
    tau = rng.normal(size=m.nv)
    for method in sd.closed.METHODS:
        if method != "embedding":  # with the cluster kernels
            sd.constrained_forward_dynamics(m, q, v, tau, method=method)
    sd.constrained_forward_dynamics(m, q, v, tau)  # the default: the compiled direct method
    sd.constrained_forward_dynamics(m, q, v, tau)  # its plain call (one kernel from the second call on)
    sd.constrained_forward_dynamics(m, q[None], v[None], tau[None])  # its batched kernel


def _cluster_kernels():
    """Constraint embedding: the cluster algorithms (C-ABA, C-RNEA, C-CRBA, C-EFPA)."""
    robot = sd.models.mini_cheetah()
    y, yd = sd.independent_state(robot, sd.neutral(robot), np.zeros(robot.nv))
    sd.cluster_aba(robot, y, yd, yd)
    sd.cluster_rnea(robot, y, yd, yd)
    sd.cluster_mass_matrix(robot, y)
    for _ in range(2):  # the first call with these frames is validated, the second plain
        sd.cluster_efpa(robot, y, [robot.frames[-1].name])


def _implicit_clusters():
    """Everything that contains the compiled preparation of implicit clusters (loop joints,
    symbolic constraints), in one process so that it compiles once: the plain calls of
    C-ABA, C-RNEA and C-EFPA (solve and algorithm in one kernel), the batched C-ABA and
    C-RNEA (whose kernels also take single states with ``q=`` or external forces), the
    spanning-state solve (the kernel of the compiled preparation) and the embedding method
    (single and batched). The
    cluster mass matrix runs the preparation kernel and the cluster kernels the "clusters"
    group compiles, and the state comes from the spanning-state solve rather than
    ``close_loops`` (the "closed" group's kernel): those would be compiled twice."""
    m = sd.models.four_bar_chain(1, 0)
    y, yd = sd.independent_state(m, sd.neutral(m) + 0.1, np.ones(m.nv))
    q, v = sd.spanning_state(m, y, yd)
    sd.cluster_aba(m, y, yd, yd)
    sd.cluster_rnea(m, y, yd, yd)
    for _ in range(2):  # the first call with these frames is validated, the second plain
        sd.cluster_efpa(m, y, [m.frames[-1].name])
    Y, YD = y[None], yd[None]
    sd.cluster_aba(m, Y, YD, YD)
    sd.cluster_rnea(m, Y, YD, YD)
    tau = np.zeros(m.nv)
    sd.constrained_forward_dynamics(m, q, v, tau, method="embedding")
    sd.constrained_forward_dynamics(m, q[None], v[None], tau[None], method="embedding")


def _collision_kernels():
    """Contact detection and collision distances (one kernel each, every pair family)."""
    from soadyn.core import joints
    from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Sphere

    m = sd.Model("collision kernels")
    shapes = (Sphere(0.1), Capsule(0.1, 0.3), Cylinder(0.1, 0.3), Box((0.2, 0.3, 0.4)), Ellipsoid((0.1, 0.2, 0.3)),
              ConvexMesh(np.eye(4, 3)))
    for k, shape in enumerate(shapes):
        m.add_body(f"b{k}", joints.Free(), None, mass=1.0, inertia=np.eye(3))
        m.add_collision(f"b{k}", shape)
    m.add_ground()
    q = sd.neutral(m)
    sd.detect_contacts(m, q)
    sd.collision_distances(m, q)
    # the kernel for compiled callers (body poses in, separate output arrays)
    from soadyn.geometry.detect import _prepared
    from soadyn.kernels.collision.detect import detect_contacts_kernel
    _, detection, scratch = _prepared(m)
    R, p = sd.body_placements(m, q)
    k = 4
    detect_contacts_kernel(detection.ci, detection.cf, R, p, 0.0, scratch.fs, scratch.js, np.zeros((k, 2), np.int64),
                           np.zeros((k, 2), np.int64), np.zeros((k, 3)), np.zeros((k, 3)), np.zeros(k), np.zeros(k),
                           np.zeros((k, 3, 3)))


def _contact_kernels():
    """The contact dynamics: the Delassus operator (tree and cluster paths), the contact
    Jacobian products, the NCP solvers and time stepping with contact, trees and closed chains."""
    m = sd.models.random_tree(6, 0, floating_base=True)
    q = sd.random_configuration(m, 0)
    contacts = sd.Contacts.from_points(m, [("world", 5), (2, 4)], [[0.0, 0.0, 0.0], [0.1, 0.0, 0.2]],
                                       [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    for _ in range(2):  # the validated call, then the fast path
        G = sd.delassus(m, q, contacts)
    sd.contact.contact_velocities(m, q, np.zeros(m.nv), contacts)
    sd.contact.impulse_response(m, q, contacts, np.ones((2, 3)))
    for method in ("admm", "pgs"):
        sd.solve_contacts(G + np.eye(6), np.ones(6), [0.5, 0.5], method=method, warn=False)
    robot = sd.models.mini_cheetah()
    qc = sd.neutral(robot)
    foot = robot.frame(robot.frames[-1].name)
    sd.delassus(robot, qc, sd.Contacts.from_points(robot, [("world", foot.body)], [[0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]]))
    # time stepping with contact: the step kernel and the rollout kernel (single and batched)
    from soadyn.core import joints
    from soadyn.geometry import Box
    scene = sd.Model("contact step kernels")
    scene.add_body("box", joints.Free(), None, mass=1.0, inertia=np.eye(3) * 0.01)
    scene.add_collision("box", Box((0.1, 0.1, 0.1)))
    scene.add_ground()
    qs = sd.neutral(scene)
    qs[2] = 0.0499
    r = sd.step(scene, qs, np.zeros(6), None, 1e-3)
    sd.step(scene, qs, np.zeros(6), None, 1e-3, warm_start=r)
    for lead in ((), (2,)):
        sd.rollout(scene, np.broadcast_to(qs, lead + (7,)), None, np.zeros(lead + (2, 6)), 1e-3, contacts=True)
    sd.models.add_foot_spheres(robot)  # the step of a model with rotors in contact (one kernel)
    robot.add_ground()
    sd.step(robot, qc, np.zeros(robot.nv), None, 1e-3)


#: kernel groups in the order the pool starts them. With two processes the first two, the
#: longest, start together: "implicit" (the compiled preparation of implicit clusters) and
#: "contact" (the steps, the Delassus operators, the solvers, with the tree and detection
#: code they link in). The rest follow in this order, each loading from the on-disk cache
#: what an earlier group compiled: "tree" the kernels "contact" compiled (the ABA, the RNEA),
#: "closed" and "clusters" the loop-constraint kernel and cluster passes of "implicit",
#: "collision" the detection of "contact". Two orders measured slower and not kept
#: (benchmarks/results/design_notes.md): "contact" among the last groups, and "batches"
#: split into three small groups.
GROUPS = {"implicit": _implicit_clusters, "contact": _contact_kernels, "tree": _tree_kernels,
          "operators": _operator_kernels, "control": _control_kernels, "batches": _tree_batches,
          "closed": _closed_chain_methods, "clusters": _cluster_kernels, "collision": _collision_kernels}


def _quiet():
    # the workers compile on purpose: no first-use notice (soadyn.numba_cache)
    os.environ["SOADYN_COMPILE_NOTICE"] = "0"


def _run(name):
    _quiet()
    t0 = time.perf_counter()
    GROUPS[name]()
    return name, time.perf_counter() - t0


def _progress(done, total, t0, name, stream):
    """A progress bar redrawn in place on a terminal, one line per finished group in a log."""
    width = 24
    filled = width * done // total
    line = (f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} groups, {time.perf_counter() - t0:5.1f} s"
            f"{'  (' + name + ' done)' if name else ''}")
    if stream.isatty():
        stream.write("\r" + line + "   ")
    elif name:
        stream.write(line + "\n")
    stream.flush()


def precompile(jobs=1, groups=None, verbose=True):
    """Compile (or load from the cache) the kernels of ``groups`` (default: all) using
    ``jobs`` processes, with a progress bar on stderr when ``verbose``. Returns {group:
    seconds}."""
    names = list(GROUPS) if groups is None else list(groups)
    for n in names:
        if n not in GROUPS:
            raise ValueError(f"groups: unknown group {n!r}; expected some of {list(GROUPS)}")
    t0 = time.perf_counter()
    stream = sys.stderr
    results = {}
    if verbose:
        _progress(0, len(names), t0, "", stream)
    if jobs <= 1:
        for n in names:
            results.update([_run(n)])
            if verbose:
                _progress(len(results), len(names), t0, n, stream)
    else:
        # spawn: children import soadyn afresh (no inherited Numba state)
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=_quiet) as pool:
            for job in as_completed([pool.submit(_run, n) for n in names]):
                n, seconds = job.result()
                results[n] = seconds
                if verbose:
                    _progress(len(results), len(names), t0, n, stream)
    if verbose:
        if stream.isatty():
            stream.write("\n")
        for n in names:
            print(f"  {n:<10s} {results[n]:7.1f} s")
        print(f"kernels ready in {time.perf_counter() - t0:.1f} s ({jobs} process{'es' if jobs > 1 else ''})")
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(prog="soadyn precompile", description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel processes")
    ap.add_argument("groups", nargs="*", help=f"kernel groups (default: all of {list(GROUPS)})")
    args = ap.parse_args(argv)
    precompile(max(1, args.jobs), args.groups or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
