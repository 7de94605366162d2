"""Status codes that the compiled kernels return, and the exceptions they become.

Kernels never raise: they return one of these codes (``OK`` = 0) and the public function
turns a nonzero code into an error that names the argument (:func:`raise_status`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ClosedChainError", "closed_chain_error", "raise_status", "check_batch_status", "Unsolved"]


class Unsolved(Exception):
    """A cluster kernel's compiled position solve or explicit form did not succeed
    (``UNSOLVED``): no convergence from its starts, a singular configuration, or a given
    spanning configuration that fails its checks. Internal: the cluster functions catch
    it and take the Python path, which tries further starts and names the cause."""

OK, BAD_FIRST, BAD_SECOND, BAD_THIRD, BAD_FEXT, BAD_QUATERNION, SINGULAR, BAD_SHAPE, UNSOLVED, OFF_MANIFOLD, NO_MASS = range(11)


def raise_status(status, names, batch_index=None, model=None):
    """Raise the error a kernel reported.

    ``names`` are the kernel's state arguments in order (``BAD_FIRST`` names
    ``names[0]``, ...); ``model``, when given, lets a ``SINGULAR`` status name the
    cause (:meth:`~soadyn.Model.singular_mass_matrix_causes`: an inertia that is not positive
    semi-definite, joints that move no inertia, redundant joints on an inertia-free body).
    """
    where = "" if batch_index is None else f" (batch entry {batch_index})"
    if status == UNSOLVED:
        raise Unsolved(batch_index)
    if status in (BAD_FIRST, BAD_SECOND, BAD_THIRD):
        raise ValueError(f"{names[status - 1]}: expected finite values, got NaN or inf{where}")
    if status == BAD_FEXT:
        raise ValueError(f"f_ext: expected finite values, got NaN or inf{where}")
    if status == BAD_QUATERNION:
        raise ValueError(f"q: a quaternion of a free or spherical joint is zero{where}")
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


def check_batch_status(status, names, model=None):
    """Raise for the first nonzero entry of a batched call's status array."""
    bad = np.flatnonzero(status)
    if bad.size:
        raise_status(int(status[bad[0]]), names, int(bad[0]), model)


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
