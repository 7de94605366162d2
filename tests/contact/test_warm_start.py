"""The warm start of a step's contact solve, matched per contact (soadyn.kernels.contact.warm).

Truths: a warm start is a set of previous contacts, not a list: permuting the previous
step's contacts (and their impulses alike) changes nothing in the next step, bit for bit;
with compliance (a unique solution) a warm-started step and a cold one give the same
impulses to the solver's tolerance."""
import dataclasses

import numpy as np
import pytest

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.geometry import Box

DT = 1e-3


def box_on_ground(friction=0.8):
    m = sd.Model("box on ground")
    m.add_body("box", jt.Free(), None, mass=1.0, inertia=np.eye(3) / 600.0)
    m.add_collision("box", Box((0.1, 0.1, 0.1)), friction=friction)
    m.add_ground(friction=friction)
    return m


def permuted(result, order):
    """``result`` with its contacts (and their impulses and velocities σ, ADMM's dual start)
    listed in ``order``."""
    c = result.contacts
    fields = {f: getattr(c, f)[order] for f in ("objects", "bodies", "point", "normal", "depth", "friction", "frame")}
    sigma = result.solver_velocities.reshape(-1, 3)[order].reshape(-1)
    return dataclasses.replace(result, contacts=dataclasses.replace(c, **fields), impulses=result.impulses[order],
                               solver_velocities=sigma)


def sliding_box_steps(model, settings):
    """The first step of a box 0.6 mm into the ground, tipping, sliding and spinning."""
    q = np.array([0.0, 0.0, 0.0494, 0.0, 0.0, 0.0, 1.0])
    v = np.array([0.0, 0.0, 2.0, 0.3, -0.1, 0.0])  # ω (body), then v (body)
    r0 = sd.step(model, q, v, None, DT, settings=settings)
    assert len(r0.contacts) == 4 and r0.solution.iterations > 0
    return r0


@pytest.mark.parametrize("order", [[3, 2, 1, 0], [1, 3, 0, 2]])
def test_permuted_previous_contacts_change_nothing(order):
    m = box_on_ground()
    settings = sd.ContactSettings()
    r0 = sliding_box_steps(m, settings)
    # the corners carry different impulses: a start taken by list position would differ
    assert np.abs(r0.impulses - r0.impulses[order]).max() > 1e-4
    a = sd.step(m, r0.q, r0.v, None, DT, settings=settings, warm_start=r0)
    b = sd.step(m, r0.q, r0.v, None, DT, settings=settings, warm_start=permuted(r0, order))
    assert a.solution.iterations == b.solution.iterations
    np.testing.assert_array_equal(a.impulses, b.impulses)
    np.testing.assert_array_equal(a.v, b.v)


def test_warm_started_step_equals_the_cold_step_to_tolerance():
    """With compliance R > 0 the NCP has one solution: the step warm started from a
    permuted previous step and the cold step both converge to it."""
    m = box_on_ground()
    settings = sd.ContactSettings(compliance=1e-2)
    r0 = sliding_box_steps(m, settings)
    cold = sd.step(m, r0.q, r0.v, None, DT, settings=settings)
    warm = sd.step(m, r0.q, r0.v, None, DT, settings=settings, warm_start=permuted(r0, [2, 3, 0, 1]))
    assert cold.converged and warm.converged
    # both solve the R-strongly monotone NCP to 1e-10: their impulses differ by O(tol / R)
    np.testing.assert_allclose(warm.impulses, cold.impulses, rtol=0, atol=1e-7)
    assert np.abs(cold.impulses[:, 2]).max() > 1e-3  # the comparison is of loaded contacts
