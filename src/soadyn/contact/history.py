"""The contacts of a simulation, step by step: :class:`ContactHistory`, what
:meth:`soadyn.SimulationResult.plot` draws (normal forces, NCP residuals) and what the
viewer plays back (contact points, force arrows), made from what :func:`soadyn.simulate`
with ``contacts=True`` records (:meth:`ContactHistory.from_simulation`) or from a sequence
of :func:`soadyn.step` results (:meth:`ContactHistory.from_steps`).

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
        ``points`` and ``forces``.
    points : (P, 3) the contact points [m], world frame.
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
        points, forces = [], []
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
                forces.append(np.einsum("kij,kj->ki", c.frame, lam) / dt[i])
                fn[i] = lam[:, 2].sum() / dt[i]
            s = r.solution
            its[i], conv[i] = s.iterations, bool(s.converged)
            res[:, i] = s.primal, s.dual, s.complementarity
        stack = (lambda xs: np.concatenate(xs) if xs else np.zeros((0, 3)))
        return cls(_frozen(t), _frozen(offsets, np.int64), _frozen(stack(points)), _frozen(stack(forces)),
                   _frozen(fn), _frozen(its, np.int64), _frozen(conv, bool), _frozen(res[0]), _frozen(res[1]),
                   _frozen(res[2]))

    @classmethod
    def from_simulation(cls, result):
        """The history of a :func:`soadyn.simulate` result with ``contacts=True``: its
        ``contacts`` (the :class:`~soadyn.contact.rollout.ContactRecord` of the steps that
        end at the recorded times after t_0) and ``contact_points`` (per such time a (k, 6)
        array: points [m], forces [N], world frame). Entry 0 (t_0) has no contacts."""
        record, rows = getattr(result, "contacts", None), getattr(result, "contact_points", None)
        if record is None or rows is None:
            raise ValueError("result: expected a simulate(..., contacts=True) result (with contacts and "
                             "contact_points), got one without contacts")
        t = np.asarray(result.t, dtype=float)
        K = len(t)
        if len(rows) != K - 1 or len(record.count) != K - 1:
            raise ValueError(f"result: expected the contacts of the {K - 1} recorded steps, got {len(rows)} point "
                             f"arrays and a record of {len(record.count)}")
        # each entry's step length: dt, but the last step, which ends at t_final (simulate's grid)
        dt, n = float(result.info["dt"]), int(result.info["steps"])
        h = np.full(K, dt)
        h[-1] = t[-1] - (n - 1) * dt
        pf = [np.asarray(r, dtype=float).reshape(-1, 6) for r in rows]
        offsets = np.zeros(K + 1, dtype=np.int64)
        offsets[2:] = np.cumsum([len(r) for r in pf])
        stack = np.concatenate(pf) if pf else np.zeros((0, 6))

        def entries(x, dtype=float, first=0.0):
            return _frozen(np.concatenate([[first], np.asarray(x, dtype=float)]), dtype)

        fn = np.concatenate([[0.0], np.nan_to_num(record.normal_impulse) / h[1:]])
        return cls(_frozen(t), _frozen(offsets, np.int64), _frozen(stack[:, :3]), _frozen(stack[:, 3:]),
                   _frozen(fn), entries(record.iterations, np.int64), entries(record.converged, bool, True),
                   entries(record.primal), entries(record.dual), entries(record.complementarity))
