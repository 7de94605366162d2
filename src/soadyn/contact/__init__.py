"""Frictional contact dynamics: the Delassus operator of a set of contacts, the products of
the contact Jacobian a time stepper needs, the Coulomb NCP solvers (ADMM, PGS) and time
stepping with contact (:func:`step`, :class:`ContactSettings`, :class:`StepResult`).

The layer above :mod:`soadyn.closed` and :mod:`soadyn.geometry`; its kernels are in
:mod:`soadyn.kernels.contact`. Contact vectors (impulses λ, velocities σ, rows of the
Delassus operator) are three numbers per contact in its frame (t1, t2, n), normal last
(:mod:`soadyn.geometry.contacts`).
"""
from .delassus import delassus
from .jacobian import contact_impulse, contact_velocities, impulse_response
from .settings import ContactSettings, StepResult
from .solver import ContactSolution, ContactSolverWarning, solve_contacts
from .step import step

__all__ = ["delassus", "solve_contacts", "ContactSolution", "ContactSolverWarning", "contact_velocities",
           "contact_impulse", "impulse_response", "step", "StepResult", "ContactSettings"]
