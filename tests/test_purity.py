"""Every public function is a function of its arguments: no state carried from one call
to the next (shuffled call orders give bitwise-identical results) and safe under threads
(several threads on the same models give the serial results)."""
import threading

import numpy as np
import pytest

import soadyn as sd
from conftest import mechanism
from soadyn.core import joints as jt


def _cases():
    """(name, call) pairs on shared models: tree functions on a random tree, closed-chain
    ones on a four-bar linkage (implicit loop) and Mini Cheetah (geared rotors)."""
    rng = np.random.default_rng(3)
    tree = sd.models.random_tree(12, 3, floating_base=True)
    four_bar = mechanism("crank_rocker")
    cheetah = mechanism("mini_cheetah")
    heap = _heap()
    cases = []
    for k in range(3):
        q = sd.random_configuration(tree, rng)
        v, tau = rng.normal(size=(2, tree.nv))
        frames = [tree.frames[-1].name, tree.frames[4].name]
        cases += [(f"aba{k}", lambda q=q, v=v, tau=tau: sd.aba(tree, q, v, tau)),
                  (f"mass_matrix{k}", lambda q=q: sd.mass_matrix(tree, q)),
                  (f"oscm{k}", lambda q=q, frames=frames: sd.operational_space_compliance(tree, q, frames)),
                  (f"coriolis{k}", lambda q=q, v=v: sd.coriolis_matrix(tree, q, v)),
                  (f"centroidal{k}", lambda q=q: sd.centroidal_momentum_matrix(tree, q)),
                  (f"regressor{k}", lambda q=q, v=v, tau=tau: sd.joint_torque_regressor(tree, q, v, tau))]
        y, yd = sd.closed.embedding.random_independent_state(four_bar, rng, 0.6)
        qc, vc = sd.spanning_state(four_bar, y, yd)
        tc = rng.normal(size=four_bar.nv)
        cases.append((f"embedding{k}", lambda qc=qc, vc=vc, tc=tc: sd.constrained_forward_dynamics(
            four_bar, qc, vc, tc, method="embedding").qdd))
        cases.append((f"direct{k}", lambda qc=qc, vc=vc, tc=tc: sd.constrained_forward_dynamics(
            four_bar, qc, vc, tc).qdd))  # the compiled default
        cases.append((f"kkt_derivatives{k}", lambda qc=qc, vc=vc, tc=tc: np.stack(
            sd.constrained_forward_dynamics_derivatives(four_bar, qc, vc, tc))))
        cases.append((f"cluster_aba_four_bar{k}", lambda y=y, yd=yd: sd.cluster_aba(four_bar, y, yd, np.ones(len(yd)))))
        yc, ydc = sd.closed.embedding.random_independent_state(cheetah, rng, 0.6)
        tau_c = rng.normal(size=len(ydc))
        cases.append((f"cluster_aba_cheetah{k}", lambda yc=yc, ydc=ydc, t=tau_c: sd.cluster_aba(cheetah, yc, ydc, t)))
        cases.append((f"cluster_regressor{k}", lambda y=y, yd=yd: sd.cluster_torque_regressor(four_bar, y, yd, yd)))
        qs = sd.random_configuration(heap, rng)
        qs[0::7] *= 0.2  # the bodies within 0.2 m of each other, touching each other and the ground
        qs[1::7] *= 0.2
        qs[2::7] = 0.15 * rng.random(len(qs[2::7]))
        cases.append((f"detect_contacts{k}", lambda q=qs: np.concatenate(
            [(c := sd.detect_contacts(heap, q, margin=0.02)).point.ravel(), c.depth, c.objects.ravel()])))
        cases.append((f"collision_distances{k}", lambda q=qs: sd.collision_distances(heap, q).points))
    return cases


def _heap():
    """Eight shapes of every kind on free bodies over the ground."""
    from soadyn.geometry import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Sphere
    model = sd.Model("heap")
    shapes = (Sphere(0.1), Capsule(0.05, 0.2), Cylinder(0.08, 0.2), Box((0.2, 0.1, 0.15)), Ellipsoid((0.1, 0.05, 0.08)),
              ConvexMesh(np.random.default_rng(1).normal(size=(30, 3)) * 0.1), Box((0.1, 0.1, 0.1)), Sphere(0.05))
    for k, shape in enumerate(shapes):
        model.add_body(f"b{k}", jt.Free(), None, mass=1.0, inertia=np.eye(3))
        model.add_collision(f"b{k}", shape)
    model.add_ground()
    return model


def test_results_do_not_depend_on_the_order_of_calls():
    cases = _cases()
    reference = {name: call().copy() for name, call in cases}
    rng = np.random.default_rng(0)
    for _ in range(3):
        for i in rng.permutation(len(cases)):
            name, call = cases[i]
            assert np.array_equal(call(), reference[name]), name


@pytest.mark.slow
def test_concurrent_calls_from_four_threads_give_the_serial_results():
    cases = _cases()
    reference = {name: call().copy() for name, call in cases}
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(500 // 3):  # each thread: about 500 calls of each function
            for i in rng.permutation(len(cases)):
                name, call = cases[i]
                if not np.array_equal(call(), reference[name]):
                    failures.append(name)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, sorted(set(failures))
