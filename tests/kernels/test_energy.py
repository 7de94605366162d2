"""Kinetic and potential energy (soadyn.kernels.energy) and the centre of mass against Pinocchio on the
bench robots."""
from __future__ import annotations

import numpy as np

import soadyn as sd

from conftest import PINOCCHIO_TOL, pinocchio, rel, robot_states


def test_energy_and_center_of_mass(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, _, _ in robot_states(pair, count=2, seed=5):
        qp, vp = pair.q_to_pin(q), pair.v_to_pin(v)
        assert np.isclose(sd.kinetic_energy(m, q, v), pin.computeKineticEnergy(pm, pd, qp, vp), rtol=PINOCCHIO_TOL)
        assert np.isclose(sd.potential_energy(m, q), pin.computePotentialEnergy(pm, pd, qp), rtol=PINOCCHIO_TOL, atol=PINOCCHIO_TOL)
        c = sd.center_of_mass(m, q)
        assert rel(c, pin.centerOfMass(pm, pd, qp)) < PINOCCHIO_TOL
