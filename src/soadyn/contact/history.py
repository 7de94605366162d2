"""The contacts of a simulation, step by step: :class:`ContactHistory`, what
:func:`soadyn.simulate` with ``contacts=True`` records beside the states, what
:meth:`soadyn.SimulationResult.plot` draws (normal forces, NCP residuals) and what the
viewer plays back (contact points, force arrows).

Entry i belongs to the recorded state i at time ``t[i]``: the contacts of the step that
ended there (detected at the start of that step, at most one time step earlier) and the
forces λ/dt of its impulses. Entry 0 (the initial state, which no step ended at) has no
contacts. The points of all entries are stored end to end (``offsets`` delimits them), as
the number of contacts changes from step to step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ContactHistory"]


def _frozen(a, dtype=float):
    a = np.ascontiguousarray(a, dtype=dtype)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class ContactHistory:
    """The contacts of a trajectory (module docstring), K recorded states.

    Attributes
    ----------
    t : (K,) the recorded times [s].
    offsets : (K + 1,) entry i's contacts are rows ``offsets[i]:offsets[i + 1]`` of
        ``points``, ``normals`` and ``forces``.
    points : (P, 3) the contact points [m], world frame.
    normals : (P, 3) the unit normals (from each contact's first object into its second), world.
    forces : (P, 3) the contact forces C λ / dt [N] on each contact's second object, world
        frame (C the contact frame; −force acts on the first object).
    normal_force : (K,) Σ λ_n / dt over the entry's contacts [N] (0 without contacts).
    iterations : (K,) the solver's iterations; ``converged`` (K,) bool (True without contacts).
    primal, dual, complementarity : (K,) the NCP residuals of each entry's solve
        (:class:`~soadyn.ContactSolution`; 0 without contacts).
    """

    t: np.ndarray
    offsets: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    forces: np.ndarray
    normal_force: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    primal: np.ndarray
    dual: np.ndarray
    complementarity: np.ndarray

    def __len__(self):
        return len(self.t)

    @property
    def counts(self):
        """(K,) the number of contacts of each entry."""
        return np.diff(self.offsets)

    @property
    def residual(self):
        """(K,) the largest of the three NCP residuals of each entry."""
        return np.maximum(np.maximum(self.primal, self.dual), self.complementarity)

    def at(self, i):
        """(points (k, 3) [m], forces (k, 3) [N]) of entry ``i``, world frame."""
        if not -len(self) <= i < len(self):
            raise IndexError(f"i: expected an entry index in [0, {len(self)}), got {i}")
        i %= len(self)
        s = slice(self.offsets[i], self.offsets[i + 1])
        return self.points[s], self.forces[s]

    @classmethod
    def from_steps(cls, t, steps, dt):
        """The history of recorded states at times ``t`` (K,) [s]: ``steps`` (K,) holds for
        each state the :class:`~soadyn.StepResult` of the step that ended at it (None for
        the initial state, or a state no step ended at), each of length ``dt`` (K,) or a
        number [s] (the forces are λ / dt)."""
        t = np.asarray(t, dtype=float)
        K = len(t)
        if len(steps) != K:
            raise ValueError(f"steps: expected one step result per recorded time ({K}), got {len(steps)}")
        dt = np.broadcast_to(np.asarray(dt, dtype=float), (K,))
        offsets = np.zeros(K + 1, dtype=np.int64)
        points, normals, forces = [], [], []
        fn, its, conv = np.zeros(K), np.zeros(K, dtype=np.int64), np.ones(K, dtype=bool)
        res = np.zeros((3, K))
        for i, r in enumerate(steps):
            k = 0 if r is None else len(r.contacts)
            offsets[i + 1] = offsets[i] + k
            if r is None:
                continue
            lam = np.asarray(r.impulses, dtype=float).reshape(k, 3)
            if k:
                c = r.contacts
                points.append(c.point)
                normals.append(c.normal)
                forces.append(np.einsum("kij,kj->ki", c.frame, lam) / dt[i])
                fn[i] = lam[:, 2].sum() / dt[i]
            s = r.solution
            its[i], conv[i] = s.iterations, bool(s.converged)
            res[:, i] = s.primal, s.dual, s.complementarity
        stack = (lambda xs: np.concatenate(xs) if xs else np.zeros((0, 3)))
        return cls(_frozen(t), _frozen(offsets, np.int64), _frozen(stack(points)), _frozen(stack(normals)),
                   _frozen(stack(forces)), _frozen(fn), _frozen(its, np.int64), _frozen(conv, bool),
                   _frozen(res[0]), _frozen(res[1]), _frozen(res[2]))
