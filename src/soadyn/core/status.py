"""Status codes that the compiled kernels return, and the exceptions they become.

Kernels never raise: they return one of these codes (``OK`` = 0) and the public function
turns a nonzero code into an error that names the argument (:func:`raise_status`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ClosedChainError", "closed_chain_error", "raise_status", "check_batch_status", "overflow_error", "Unsolved"]


class Unsolved(Exception):
    """A cluster kernel's compiled position solve or explicit form did not succeed
    (``UNSOLVED``): no convergence from its starts, a singular configuration, or a given
    spanning configuration that fails its checks. Internal: the cluster functions catch
    it and take the Python path, which tries further starts and names the cause."""

OK, BAD_FIRST, BAD_SECOND, BAD_THIRD, BAD_FEXT, BAD_QUATERNION, SINGULAR, BAD_SHAPE, UNSOLVED, OFF_MANIFOLD, \
    OVERFLOW, NO_MASS = range(12)


def _zero_quaternion(model, names, state, batch_index=None):
    """``"name[a:b], the quaternion of the <kind> joint 'j'"`` for the first configuration
    argument of ``state`` (named by ``names``) that holds a zero quaternion (in the row
    ``batch_index`` of a batch), or None when none does."""
    for name, x in zip(names, state):
        if not isinstance(x, np.ndarray) or x.ndim not in (1, 2) or x.shape[-1] != model.nq:
            continue
        row = x if x.ndim == 1 else x[batch_index or 0]
        for joint in model.joints:
            if joint.kind in ("free", "spherical"):
                o = joint.q_index + (3 if joint.kind == "free" else 0)
                if not np.any(row[o:o + 4]):
                    return f"{name}[{o}:{o + 4}], the quaternion of the {joint.kind} joint {joint.name!r}"
    return None


def _largest_argument(names, state, batch_index):
    """``"v (max |v| = 1e+300)"`` for the named state argument with the largest finite
    magnitude (in the row ``batch_index`` of a batch), or None without arrays."""
    best = None
    for name, x in zip(names, state):
        if isinstance(x, (float, int, np.floating)) and not isinstance(x, bool):
            x = np.asarray(float(x))  # a scalar argument (a time step)
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.size == 0:
            continue
        row = x if batch_index is None or x.ndim < 2 else x[batch_index]  # (a (B,) vector of steps: whole)
        top = float(np.abs(row).max())
        if best is None or top > best[1]:
            best = (name, top)
    return None if best is None else f"{best[0]} (max |{best[0]}| = {best[1]:.3g})"


def overflow_error(names, state=(), batch_index=None, function=None):
    """The :class:`OverflowError` of an ``OVERFLOW`` status: a result computed from finite
    arguments is not finite. Names ``function`` (when given) and the argument of ``state``
    (named by ``names``) of largest magnitude, the likely cause."""
    where = "" if batch_index is None else f" (batch entry {batch_index})"
    import soadyn  # (here: the package imports this module)

    # a kernel's name that is not a public function (energy_kernel of kinetic_energy) is not shown
    who = f"soadyn.{function}: " if function is not None and hasattr(soadyn, function) else ""
    largest = _largest_argument(names, state, batch_index)
    cause = f"{largest} is too large" if largest else f"one of {', '.join(names)} is too large"
    return OverflowError(f"{who}{', '.join(names)}: finite values whose result is beyond the floating-point range "
                         f"(it would be inf or NaN){where}: {cause} (too large a velocity, force, time step or "
                         "displacement)")


def raise_status(status, names, batch_index=None, model=None, state=(), function=None):
    """Raise the error a kernel reported.

    ``names`` are the kernel's state arguments in order (``BAD_FIRST`` names
    ``names[0]``, ...); ``model``, when given, lets a ``SINGULAR`` status name the
    cause (:meth:`~soadyn.Model.singular_mass_matrix_causes`: an inertia that is not positive
    semi-definite, joints that move no inertia, redundant joints on an inertia-free body),
    and with ``state`` (the arguments named by ``names``) a ``BAD_QUATERNION`` status the
    joint whose quaternion is zero and an ``OVERFLOW`` status the largest argument;
    ``function``: the public function's name, for the ``OVERFLOW`` message.
    """
    where = "" if batch_index is None else f" (batch entry {batch_index})"
    if status == UNSOLVED:
        raise Unsolved(batch_index)
    if status in (BAD_FIRST, BAD_SECOND, BAD_THIRD):
        raise ValueError(f"{names[status - 1]}: expected finite values, got NaN or inf{where}")
    if status == BAD_FEXT:
        raise ValueError(f"f_ext: expected finite values, got NaN or inf{where}")
    if status == BAD_QUATERNION:
        which = None if model is None else _zero_quaternion(model, names, state, batch_index)
        raise ValueError(f"{which or 'q: a quaternion of a free or spherical joint'}: expected a nonzero quaternion "
                         f"(x, y, z, w) (any nonzero scale is a rotation), got zero{where}")
    if status == OVERFLOW:
        raise overflow_error(names, state, batch_index, function)
    if status == BAD_SHAPE:
        raise ValueError(f"workspace: it was built for a different model{where}")
    if status == OFF_MANIFOLD:
        raise ValueError(f"q, v: the state violates the constraints beyond the residual tolerance{where}")
    if status == NO_MASS:
        name = "" if model is None else f" {model.name!r}"
        raise ValueError(f"model:{name} has no mass, so its centre of mass (and what is taken about it) is "
                         f"undefined{where}")
    if status == SINGULAR:
        causes = [] if model is None else model.singular_mass_matrix_causes()
        if causes:
            cause = "; ".join(causes)
        elif model is None:
            cause = "the cause was not looked for"
        else:
            cause = (f"no structural cause found in model {model.name!r} (every inertia is positive "
                     "semi-definite, every joint moves mass or inertia, no joint's motion is undone by "
                     "another's), so the configuration itself is singular for this model")
        raise np.linalg.LinAlgError(
            f"the mass matrix is singular or indefinite at this configuration{where}: {cause}; this function "
            "needs M⁻¹ (kinematics, rnea and mass_matrix work on such a model)")
    raise RuntimeError(f"kernel status {status}{where}")


def check_batch_status(status, names, model=None, state=(), function=None):
    """Raise for the first nonzero entry of a batched call's status array."""
    bad = np.flatnonzero(status)
    if bad.size:
        raise_status(int(status[bad[0]]), names, int(bad[0]), model, state, function)


class ClosedChainError(ValueError):
    """A tree-dynamics function (``aba``, ``rnea``, ``mass_matrix``, ...) was given a model with
    loops, couplings or user constraints: its open spanning tree's dynamics are not those of
    the closed system. Use the closed-chain functions, or ask for the spanning tree
    explicitly with ``model.spanning_tree()``."""


def closed_chain_error(model, function):
    """The :class:`ClosedChainError` for the tree-dynamics ``function`` (its public name)
    called on ``model``, which has constraints."""
    parts = []
    for what, items in (("loops", model.loops), ("couplings", model.couplings),
                        ("user constraints", model.user_constraints)):
        if items:
            names = [c.name for c in items]
            parts.append(f"{what} {names[:5] + ['...'] if len(names) > 5 else names}")
    return ClosedChainError(
        f"model: soadyn.{function} expected a tree (a model without loops, couplings or user constraints), got "
        f"model {model.name!r} with {' and '.join(parts)}; its result would ignore them. For the closed system "
        "use soadyn.constrained_forward_dynamics / soadyn.constrained_inverse_dynamics (spanning-tree q, v, tau) "
        "or the cluster functions soadyn.cluster_aba / soadyn.cluster_rnea (independent coordinates y, yd); for "
        f"the open spanning tree itself ask for it explicitly: soadyn.{function}(model.spanning_tree(), ...)")
