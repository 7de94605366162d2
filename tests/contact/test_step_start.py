"""A step whose solve's start already solves its NCP (soadyn.kernels.contact.step.start_stage):
tested without forming the Delassus matrix, and the same step.

Truths: the step rebuilt from the public pieces (ABA, the Delassus operator, the contact
velocities, the impulse response, the NCP residuals evaluated in numpy), as
test_step.test_step_is_the_specified_composition does for a step that iterates; the same
rollout stepped by single calls; a start that does not solve the new problem iterates."""
import numpy as np
from scipy.spatial.transform import Rotation

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.geometry import Box
from test_step import assert_composed_step

DT = 1e-3


def stack(n=3, size=0.1, friction=0.8):
    """n cubes (1 kg) resting on each other on the ground, each free."""
    m = sd.Model("stack")
    for i in range(n):
        m.add_body(f"box{i}", jt.Free(), None, mass=1.0, inertia=np.eye(3) * size ** 2 / 6)
        m.add_collision(f"box{i}", Box((size, size, size)), friction=friction)
    m.add_ground(friction=friction)
    q = np.zeros(7 * n)
    for i in range(n):
        q[7 * i + 2] = size / 2 + i * size - 2e-4 * (i + 1)  # each 0.2 mm into the one below
        q[7 * i + 6] = 1.0
    return m, q


def free_velocity(m, q, v, tau):
    """v + dt·aba with each free joint's rotating-frame term −ω × u turned exactly (as in
    test_step.test_step_is_the_specified_composition)."""
    v_free = v + DT * sd.aba(m, q, v, tau)
    for b in range(m.nv // 6):
        w, u = v[6 * b:6 * b + 3], v[6 * b + 3:6 * b + 6]
        v_free[6 * b + 3:6 * b + 6] += Rotation.from_rotvec(-DT * w).apply(u) - u + DT * np.cross(w, u)
    return v_free


def settled(m, q, settings, steps=60):
    """The last result of ``steps`` warm-started steps from rest."""
    v = np.zeros(m.nv)
    r = None
    for _ in range(steps):
        r = sd.step(m, q, v, None, DT, settings=settings, warm_start=r)
        q, v = r.q, r.v
    return r


def test_a_start_that_solves_is_the_specified_step():
    m, q0 = stack()
    settings = sd.ContactSettings()
    r0 = settled(m, q0, settings)
    r = sd.step(m, r0.q, r0.v, None, DT, settings=settings, warm_start=r0)
    assert len(r.contacts) == 12 and r.converged
    assert r.solution.iterations == 0  # the previous impulses solve this step's NCP
    q, v = r0.q, r0.v
    contacts = sd.detect_contacts(m, q)
    v_free = free_velocity(m, q, v, np.zeros(m.nv))
    assert_composed_step(m, q, v_free, contacts, settings, DT, r)
    # each interface carries the weight of the boxes above it: (3 + 2 + 1) m g dt in all
    assert abs(r.impulses[:, 2].sum() - 6 * 9.81 * DT) < 1e-2 * 6 * 9.81 * DT  # 3 + 2 + 1 boxes' weights
    # a start that does not solve the problem: the solver iterates, to the same law
    g2 = sd.step(m, r0.q, r0.v + 0.02, None, DT, settings=settings, warm_start=r0)
    assert g2.solution.iterations > 0 and g2.converged


def test_rollout_with_started_steps_equals_single_steps():
    m, q0 = stack()
    T = 80
    qs, vs, rec = sd.rollout(m, q0, None, np.zeros((T, m.nv)), DT, contacts=True, record=True)
    assert (rec.iterations == 0).sum() > T // 2  # most steps started solved
    q, v, r = q0, np.zeros(m.nv), None
    for k in range(T):
        r = sd.step(m, q, v, None, DT, warm_start=r)
        q, v = r.q, r.v
        assert r.solution.iterations == rec.iterations[k]
        np.testing.assert_allclose(q, qs[k + 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(v, vs[k + 1], rtol=0, atol=1e-10)
