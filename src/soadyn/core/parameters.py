"""The dynamic parameters π of a model: ten per body, in which the dynamics are linear.

Body k's parameters are, in Pinocchio's order (``pin.Inertia.toDynamicParameters``),

    π_k = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)

with m the mass [kg], c the centre of mass in the body frame [m] and I the rotational
inertia about the body origin in body axes [kg m²], I = I_c + m (|c|² 1 − c cᵀ) for the
inertia I_c about the centre of mass (:meth:`~soadyn.Model.set_inertia`'s argument). The
model's π stacks the bodies' in body order, 10 nb entries; the regressors
(:func:`~soadyn.joint_torque_regressor`, :func:`~soadyn.kinetic_energy_regressor`,
:func:`~soadyn.potential_energy_regressor`, :func:`~soadyn.cluster_torque_regressor`) have
one column per entry.

Physical consistency ([Wensing18]): π_k belongs to a rigid body — a nonnegative mass
distribution — exactly when its pseudo-inertia

    J_k = [[Σ, m c], [(m c)ᵀ, m]],   Σ = ½ tr(I) 1 − I  (the second moment of the mass about the origin)

is positive semi-definite: m ≥ 0, no first moment without mass, and the rotational inertia
about the centre of mass positive semi-definite with principal moments that satisfy the
triangle inequalities I_1 + I_2 ≥ I_3. An unconstrained least-squares estimate need not be.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["PARAMETER_NAMES", "body_parameters", "body_inertia", "pseudo_inertia", "dynamic_parameters",
           "check_dynamic_parameters", "parameter_names"]

#: the names of a body's ten parameters, in the order of π_k
PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")

#: (row, column) of the rotational inertia I for the entries 4..9 of π_k
_INERTIA_ENTRIES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))

#: tolerance of the consistency check, relative to max(1, the largest entry of J_k): the
#: same as :func:`~soadyn.core.model.check_rigid_inertia`'s for the principal moments
TOLERANCE = 1e-9


def body_parameters(mass, com, inertia_com):
    """π_k (10,) of a body of ``mass`` [kg], centre of mass ``com`` (3,) [m] and rotational
    inertia ``inertia_com`` (3, 3) about it [kg m²] (body axes)."""
    c = np.asarray(com, dtype=float)
    Io = np.asarray(inertia_com, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, [Io[r, s] for r, s in _INERTIA_ENTRIES]])


def _rotational(p):
    """The rotational inertia about the body origin (3, 3) of the parameters ``p`` (10,)."""
    Io = np.empty((3, 3))
    for value, (r, s) in zip(p[4:], _INERTIA_ENTRIES):
        Io[r, s] = Io[s, r] = value
    return Io


def body_inertia(p):
    """``(mass, com, inertia_com)`` of a body's parameters ``p`` (10,): the inverse of
    :func:`body_parameters` for m > 0; for m = 0 (and no first moment) the centre of mass is
    taken at the body origin and the inertia is p's rotational inertia. Raises ValueError
    for m < 0 or a first moment without mass, which no body has."""
    p = np.asarray(p, dtype=float)
    mass, h, Io = float(p[0]), p[1:4], _rotational(p)
    if mass < 0.0:
        raise ValueError(f"mass m = {mass} is negative")
    if mass == 0.0:
        if np.any(h != 0.0):
            raise ValueError(f"first moment m c = {h.tolist()} without mass (m = 0)")
        return 0.0, np.zeros(3), Io
    c = h / mass
    Ic = Io - mass * (c @ c * np.eye(3) - np.outer(c, c))
    return mass, c, 0.5 * (Ic + Ic.T)


def pseudo_inertia(p):
    """The 4 × 4 pseudo-inertia J_k = [[½ tr(I) 1 − I, m c], [(m c)ᵀ, m]] of a body's
    parameters ``p`` (10,) (module docstring; [Wensing18])."""
    p = np.asarray(p, dtype=float)
    Io = _rotational(p)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(Io) * np.eye(3) - Io
    J[:3, 3] = J[3, :3] = p[1:4]
    J[3, 3] = p[0]
    return J


def parameter_names(model):
    """The name of every entry of the model's π: ``"<body>.<parameter>"`` (10 nb)."""
    return [f"{b.name}.{n}" for b in model.bodies for n in PARAMETER_NAMES]


def dynamic_parameters(model):
    """The dynamic parameters π (10 nb,) of ``model``'s bodies, in body order, each body's ten
    in Pinocchio's order (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz): mass
    [kg], first moment [kg m] and rotational inertia about the body origin [kg m²], body
    frame (the module :mod:`soadyn.core.parameters`). The regressors are linear in them:
    ``rnea(model, q, v, a) = joint_torque_regressor(model, q, v, a) @ π``; change them with
    :meth:`~soadyn.Model.set_dynamic_parameters`. A new array (a pure function of the model)."""
    if model.symbolic:
        raise TypeError(f"model: {model.name!r} has symbolic (sympy) inertias; its dynamic parameters are not numbers")
    return np.concatenate([body_parameters(b.mass, b.com, b.inertia_com) for b in model.bodies]) \
        if model.bodies else np.zeros(0)


def _consistency_problem(p):
    """Why the parameters ``p`` (10,) belong to no rigid body, or None."""
    mass, h = p[0], p[1:4]
    if mass < 0.0:
        return f"mass m = {mass} is negative"
    J = pseudo_inertia(p)
    tol = TOLERANCE * max(1.0, float(np.abs(J).max()))
    if mass <= tol and np.abs(h).max() > tol:
        return f"first moment m c = {h.tolist()} without mass (m = {mass})"
    lam = np.linalg.eigvalsh(J)
    if lam[0] >= -tol:
        return None
    why = f"pseudo-inertia not positive semi-definite (eigenvalues {lam.tolist()})"
    if mass > 0.0:
        moments = np.linalg.eigvalsh(body_inertia(p)[2])
        if moments[0] < -tol:
            why += f": the rotational inertia about the centre of mass has a negative principal moment ({moments.tolist()})"
        else:
            why += (f": the principal moments about the centre of mass {moments.tolist()} violate the triangle "
                    "inequality I1 + I2 >= I3")
    return why


def check_dynamic_parameters(model, parameters, strict=True):
    """Check that ``parameters`` is a π for ``model`` — shape (10 nb,), finite — whose every
    body is physically consistent (its pseudo-inertia positive semi-definite, [Wensing18]; the
    module docstring); returns it as a (nb, 10) float array (a copy).

    Raises ValueError naming the argument for a wrong shape or non-finite entries, and naming
    the body (and why: a negative mass, a first moment without mass, a rotational inertia
    that is not positive semi-definite or violates the triangle inequality) for inconsistent
    parameters. With ``strict=False`` an inertia that is inconsistent but has a rigid-body
    form (mass ≥ 0, no first moment without mass) is only warned about — robot description
    files in the wild carry such inertias (:meth:`~soadyn.Model.set_inertia`'s
    ``strict_inertia``).
    """
    nb = len(model.bodies)
    try:
        p = np.array(parameters, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"parameters: expected {10 * nb} real numbers (10 per body of model {model.name!r}), got "
                        f"{type(parameters).__name__}") from None
    if p.shape != (10 * nb,):
        raise ValueError(f"parameters: expected shape ({10 * nb},) — 10 per body of model {model.name!r}, which has "
                         f"{nb} bodies — got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        bad = np.flatnonzero(~np.isfinite(p))
        raise ValueError(f"parameters: expected finite values, got NaN or inf at {[parameter_names(model)[k] for k in bad]}")
    p = p.reshape(nb, 10)
    problems = []
    for b, row in zip(model.bodies, p):
        why = _consistency_problem(row)
        if why is not None:
            fatal = row[0] < 0.0 or why.startswith("first moment")
            problems.append((fatal, f"body {b.name!r}: {why}"))
    if problems and (strict or any(fatal for fatal, _ in problems)):
        raise ValueError("parameters: physically inconsistent " + "; ".join(msg for _, msg in problems))
    for _, msg in problems:
        warnings.warn(f"parameters: physically inconsistent {msg}", stacklevel=3)
    return p
