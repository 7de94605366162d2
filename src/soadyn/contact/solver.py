"""The Coulomb contact problem: :func:`solve_contacts` and :class:`ContactSolution`
(kernels in :mod:`soadyn.kernels.contact`: ``admm``, ``pgs``, ``cones``)."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..kernels.contact.admm import (COMPLEMENTARITY, CONVERGED, DUAL, INFO_SIZE, ITERATIONS, PRIMAL, admm_kernel,
                                    admm_scratch_size)
from ..kernels.contact.pgs import pgs_kernel

__all__ = ["solve_contacts", "ContactSolution", "ContactSolverWarning", "METHODS"]

#: the solvers of :func:`solve_contacts`
METHODS = ("admm", "pgs")

#: relative asymmetry max|G − Gᵀ| / max(1, max|G|) accepted for a Delassus operator
SYMMETRY_TOL = 1e-9


class ContactSolverWarning(RuntimeWarning):
    """A contact solve stopped at ``max_iter`` without reaching its tolerance."""


@dataclass(frozen=True)
class ContactSolution:
    """The solution of a contact problem (:func:`solve_contacts`).

    Attributes
    ----------
    impulses : (k, 3) λ per contact in its frame (t1, t2, n) [N s] (forces: λ / dt).
    velocities : (k, 3) σ = (G + R)λ + g per contact, same frames [m/s].
    iterations : iterations taken (0: the warm start already solved it, or, in a time step
        whose contacts all stick, one linear solve did: :mod:`soadyn.kernels.contact.sticking`).
    converged : whether the three residuals are at most ``tol``.
    primal, dual, complementarity : the residuals of the Coulomb NCP with De Saxcé's
        correction [LeLidec24] at ``impulses``: max over the contacts of the distance of λ
        to K_μ, of σ̂ = σ + Γ(σ) to K_μ*, and |λ·σ̂|.
    method : "admm" or "pgs"; ``tol``: the tolerance asked for.
    """

    impulses: np.ndarray
    velocities: np.ndarray
    iterations: int
    converged: bool
    primal: float
    dual: float
    complementarity: float
    method: str
    tol: float

    @property
    def residual(self):
        """The largest of the three residuals."""
        return max(self.primal, self.dual, self.complementarity)


def made_solution(impulses, velocities, iterations, converged, primal, dual, complementarity, method, tol):
    """A :class:`ContactSolution` of values already of its types (impulses, velocities
    read-only (k, 3) arrays): the object the dataclass's constructor gives, its dictionary
    filled at once (the constructor sets each of the nine fields through
    ``object.__setattr__``: the class is frozen), for :func:`soadyn.step`."""
    s = _new(ContactSolution)
    f = s.__dict__
    f["impulses"], f["velocities"], f["iterations"], f["converged"] = impulses, velocities, iterations, converged
    f["primal"], f["dual"], f["complementarity"], f["method"], f["tol"] = primal, dual, complementarity, method, tol
    return s


_new = object.__new__


def _matrix(G):
    try:
        a = np.asarray(G, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"G: expected a (3k, 3k) array of numbers, got {type(G).__name__}") from None
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] % 3:
        raise ValueError(f"G: expected a square (3k, 3k) Delassus matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"G: expected finite values, got {a[~np.isfinite(a)][0]}")
    asym = np.abs(a - a.T).max() if a.size else 0.0
    if asym > SYMMETRY_TOL * max(1.0, np.abs(a).max(initial=0.0)):
        raise ValueError(f"G: expected a symmetric matrix, got max|G − Gᵀ| = {asym:.3g}")
    return np.ascontiguousarray(a)


def _vector(x, n, name, what):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected {what}, got {type(x).__name__}") from None
    if a.ndim == 0 and name == "R":
        a = np.full(n, float(a))
    a = a.reshape(-1) if a.ndim == 2 and a.shape[1] == 3 and a.size == n else a
    if a.shape != (n,):
        raise ValueError(f"{name}: expected {what}, shape ({n},), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite values, got {a[~np.isfinite(a)][0]}")
    return np.ascontiguousarray(a)


def solve_contacts(G, g, friction, method="admm", R=None, tol=1e-10, max_iter=1000, warm_start=None, *,
                   warn=True):
    """Solve the frictional contact problem of k contacts: the Coulomb NCP with De Saxcé's
    correction [LeLidec24]

        K_μ ∋ λ ⊥ σ + Γ(σ) ∈ K_μ*,   σ = (G + R) λ + g,   Γ(σ) = (0, 0, μ‖σ_T‖),

    per contact, in its frame (t1, t2, n): λ in the friction cone ‖λ_T‖ ≤ μ λ_n, Signorini's
    condition on the normal (λ_n ≥ 0, σ_n ≥ 0, λ_n σ_n = 0), sticking (σ_T = 0) inside the
    cone and sliding on its boundary opposite to σ_T.

    Parameters
    ----------
    G : (3k, 3k) the Delassus operator J M⁻¹ Jᵀ (:func:`~soadyn.delassus`), symmetric
        positive semidefinite [m/s per N s].
    g : (3k,) or (k, 3) the free contact velocity J v_free (the velocity without impulses;
        a stepper may add a penetration bias) [m/s].
    friction : (k,) the Coulomb coefficients μ ≥ 0.
    method : "admm" (the proximal ADMM of [Carpentier24], :mod:`soadyn.kernels.contact.admm`)
        or "pgs" (projected Gauss–Seidel per contact, :mod:`soadyn.kernels.contact.pgs`).
    R : optional (3k,) or a number, the diagonal compliance ≥ 0 [m/s per N s]: the problem
        of G + R, compliant contact (R > 0 makes the solution unique); None: rigid (0).
    tol : the largest accepted residual (primal, dual and complementarity, see
        :class:`ContactSolution`).
    max_iter : the iteration limit.
    warm_start : optional (k, 3) or (3k,) impulses to start from (projected onto the cones);
        an argument, never kept from an earlier call.
    warn : issue a :class:`ContactSolverWarning` when the solve did not converge (default
        True; the result says so in ``converged`` either way).

    Returns a :class:`ContactSolution`.
    """
    if method not in METHODS:
        raise ValueError(f"method: expected one of {METHODS}, got {method!r}")
    Gm = _matrix(G)
    n = Gm.shape[0]
    k = n // 3
    gv = _vector(g, n, "g", "the free contact velocities (3k,) [m/s]")
    mu = _vector(friction, k, "friction", "the friction coefficients (k,)")
    if np.any(mu < 0):
        raise ValueError(f"friction: expected coefficients ≥ 0, got {mu[mu < 0][0]:g}")
    Rv = np.zeros(n) if R is None else _vector(R, n, "R", "the diagonal compliance (3k,) ≥ 0")
    if np.any(Rv < 0):
        raise ValueError(f"R: expected a compliance ≥ 0, got {Rv[Rv < 0][0]:g}")
    if not (isinstance(tol, (int, float, np.floating, np.integer)) and math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol: expected a positive number, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 0:
        raise ValueError(f"max_iter: expected an integer ≥ 0, got {max_iter!r}")
    lam = np.zeros(n) if warm_start is None else _vector(warm_start, n, "warm_start", "impulses (k, 3) [N s]").copy()
    sigma = np.empty(n)
    info = np.zeros(INFO_SIZE)
    if k == 0:
        # nothing to solve; and the kernels keep their residuals (3,) in a row of their (·, n)
        # scratch, which holds none at n = 0 (they were written out of bounds)
        info[CONVERGED] = 1.0
    elif method == "admm":
        status = admm_kernel(Gm, gv, mu, Rv, float(tol), int(max_iter), warm_start is not None, lam, sigma, info,
                             np.empty((n, n)), np.empty(admm_scratch_size.py_func(n)))
        if status:
            raise ValueError("G: G + R is not positive semidefinite (its shifted factorization failed)")
    else:
        pgs_kernel(Gm, gv, mu, Rv, float(tol), int(max_iter), warm_start is not None, lam, sigma, info,
                   np.empty((2, n)))
    solution = ContactSolution(lam.reshape(k, 3), sigma.reshape(k, 3), int(info[ITERATIONS]), bool(info[CONVERGED]),
                               float(info[PRIMAL]), float(info[DUAL]), float(info[COMPLEMENTARITY]), method, float(tol))
    if warn and not solution.converged:
        warnings.warn(f"solve_contacts: {method} did not converge in {solution.iterations} iterations (residuals: "
                      f"primal {solution.primal:.3g}, dual {solution.dual:.3g}, complementarity "
                      f"{solution.complementarity:.3g}; tol {tol:g}); pass a larger max_iter or tol, or warn=False",
                      ContactSolverWarning, stacklevel=2)
    return solution
