"""Operational-space compliance Λ = 𝒥M⁻¹𝒥* and inertia Λ⁻¹ for any set of frames.

Seed 001 ("Operational space terminology", "Generalized Backward Lyapunov Equation for
SKO Models", "Applying the Backward Lyapunov decomposition to the EOSCM") and seed 000
eq. 21–22:

    Λ = ℬ*Ωℬ,   Ω = ψ*H*D⁻¹Hψ = Υ + ψ̃*Υ + Υψ̃ + R        (ψ̃ = ψ − I)

with the block-diagonal Υ from the base-to-tips scatter (seed 001; seed 000 eq. 22)

    Υ(k) = ψ*(℘(k), k) Υ(℘(k)) ψ(℘(k), k) + H*(k)D⁻¹(k)H(k),

and every block of Ω given by Υ at the bodies' nearest common ancestor k = ℘(i, j):
Ω(i, j) = ψ*(k, i)Υ(k)ψ(k, j) (seed 001, "General expression for the elements").

For m frames on bodies b_f, Λ(f, g) = ℬ*(f) Ω(b_f, b_g) ℬ(g). One tips-to-base sweep
evaluates all of them: each body k holds the group of frames in its subtree with a
single pending transfer ψ(k, a) to the group's anchor body a. A group moving up an
edge costs one 6×6 product (O(N) over the tree); where groups meet (at a body with
frames of its own, or with two children carrying frames) the pending transfers are
applied to the frames, Λ(f, g) = X_f* Υ(k) X_g is formed for every new pair, and the
merged group is anchored at k — O(m²) in all. Total: O(N + m²) after the O(N) ATBI,
the fastest available algorithm for the EOSCM (seed 001).
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
from numba import njit

from .. import _validation as val
from .. import spatial as sp
from ..model import Frame
from ._layout import NV, PARENT, VIDX, workspace_views
from .innovations import atbi, spo_adjoint_blocks

__all__ = ["operational_space_compliance", "operational_space_inertia", "eoscm_diagonal"]


# --------------------------------------------------------------------------- 6×6 helpers
@njit(inline="always", cache=True)
def _mul6(A, B, out, transpose_a=False):
    """out = A B, or Aᵀ B with ``transpose_a`` (6×6)."""
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for k in range(6):
                acc += (A[k, a] if transpose_a else A[a, k]) * B[k, b]
            out[a, b] = acc


# --------------------------------------------------------------------------- Υ
@njit(cache=True)
def upsilon_pass(mi, ws, nv, A, Ups, tmp):
    """Υ(k) = A_k Υ(℘(k)) A_kᵀ + H*(k)D⁻¹(k)H(k) with A_k = ψ*(℘(k), k), base to tips.

    Seed 001 (backward Lyapunov scatter for the EOSCM), seed 000 eq. 22. Needs
    :func:`~.innovations.atbi` and ``spo_adjoint_blocks(..., psi=True, A)`` first; ``tmp``
    is a (6, 6) scratch array.
    """
    nb = mi.shape[0]
    R, t, Rw, pw, Rj, pj, S, V, Ac, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    for k in range(nb):
        vi = mi[k, VIDX]
        n = mi[k, NV]
        for a in range(6):
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    acc += S[vi + r2, a] * Dinv[k, r2, r]
                scratch[0, 0, r] = acc  # (H*D⁻¹)[a, r]
            for b in range(6):
                acc = 0.0
                for r in range(n):
                    acc += scratch[0, 0, r] * S[vi + r, b]
                Ups[k, a, b] = acc
        p = mi[k, PARENT]
        if p >= 0:
            _mul6(A[k], Ups[p], tmp)
            for a in range(6):
                for b in range(6):
                    acc = 0.0
                    for c in range(6):
                        acc += tmp[a, c] * A[k, b, c]
                    Ups[k, a, b] += acc


@njit(cache=True)
def eoscm_diagonal_kernel(mi, mf, q, ws, nv, A, Ups):
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    spo_adjoint_blocks(mi, ws, nv, True, A)
    upsilon_pass(mi, ws, nv, A, Ups, np.empty((6, 6)))
    return val.OK


# --------------------------------------------------------------------------- Λ
@njit(inline="always", cache=True)
def _transfer_group(head, nxt, T, X, tmp):
    """X_f ← T X_f for every frame f of the list starting at ``head``."""
    f = head
    while f >= 0:
        _mul6(T, X[f], tmp)
        X[f, :, :] = tmp
        f = nxt[f]


@njit(inline="always", cache=True)
def _set_pair(Lam, f, g, Xf, Wg):
    """Λ(f, g) = X_fᵀ W_g and Λ(g, f) = its transpose."""
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for k in range(6):
                acc += Xf[k, a] * Wg[k, b]
            Lam[6 * f + a, 6 * g + b] = acc
            Lam[6 * g + b, 6 * f + a] = acc


@njit(inline="always", cache=True)
def _meet(Lam, Ups, head, nxt, X, W, new, among_new):
    """Λ(f, g) = X_f* Υ X_g for every frame g of the list ``new`` and f of the list ``head``
    (both anchored at the body of Υ) and, with ``among_new``, for every pair within ``new``."""
    g = new
    while g >= 0:
        _mul6(Ups, X[g], W[g])
        f = head
        while f >= 0:
            _set_pair(Lam, f, g, X[f], W[g])
            f = nxt[f]
        if among_new:
            f = new
            while f != nxt[g]:
                _set_pair(Lam, f, g, X[f], W[g])
                f = nxt[f]
        g = nxt[g]


def _buffer_sizes(nb, m):
    return 3 * nb * 36 + 2 * m * 36 + 2 * 36, 5 * nb + m


@njit(cache=True)
def oscm_kernel(mi, mf, q, ws, nv, fbody, Bf, fbuf, ibuf, Lam):
    """Λ (6m × 6m) for frames on bodies ``fbody`` with pick-off blocks ``Bf[f]`` = φ(b_f, O_f)."""
    st = atbi(mi, mf, q, ws, nv)
    if st != val.OK:
        return st
    nb = mi.shape[0]
    m = fbody.shape[0]
    o = 0
    A = fbuf[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    Ups = fbuf[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    T = fbuf[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    X = fbuf[o:o + m * 36].reshape((m, 6, 6)); o += m * 36
    W = fbuf[o:o + m * 36].reshape((m, 6, 6)); o += m * 36
    tmp = fbuf[o:o + 72].reshape((2, 6, 6))
    head = ibuf[0:nb]  # each body's group: a list of frames linked by nxt
    tail = ibuf[nb:2 * nb]
    pending = ibuf[2 * nb:3 * nb]  # 1: the group's X_f still await the transfer T(k)
    own = ibuf[3 * nb:4 * nb]  # the frames fixed to each body, also linked by nxt
    own_tail = ibuf[4 * nb:5 * nb]
    nxt = ibuf[5 * nb:5 * nb + m]

    spo_adjoint_blocks(mi, ws, nv, True, A)
    upsilon_pass(mi, ws, nv, A, Ups, tmp[0])

    head[:] = -1
    tail[:] = -1
    pending[:] = 0
    own[:] = -1
    for f in range(m):
        b = fbody[f]
        nxt[f] = -1
        if b >= 0:
            if own[b] < 0:
                own[b] = f
            else:
                nxt[own_tail[b]] = f
            own_tail[b] = f
            X[f, :, :] = Bf[f]
    Lam[:] = 0.0
    for k in range(nb - 1, -1, -1):
        if own[k] >= 0:
            # frames fixed to k meet everything below k here: anchor the group at k
            if pending[k]:
                _transfer_group(head[k], nxt, T[k], X, tmp[0])
                pending[k] = 0
            _meet(Lam, Ups[k], head[k], nxt, X, W, own[k], True)
            if head[k] < 0:
                head[k] = own[k]
            else:
                nxt[tail[k]] = own[k]
            tail[k] = own_tail[k]
        p = mi[k, PARENT]
        if head[k] < 0 or p < 0:
            continue
        # the group's transfer to the parent: ψ(p, k) T(k), with ψ(p, k) = A_kᵀ
        if pending[k]:
            _mul6(A[k], T[k], tmp[1], True)
        else:
            tmp[1, :, :] = A[k].T
        if head[p] < 0:
            head[p] = head[k]
            tail[p] = tail[k]
            T[p, :, :] = tmp[1]
            pending[p] = 1
            continue
        # two groups meet at p: anchor both there and pair them through Υ(p)
        if pending[p]:
            _transfer_group(head[p], nxt, T[p], X, tmp[0])
            pending[p] = 0
        _transfer_group(head[k], nxt, tmp[1], X, tmp[0])
        _meet(Lam, Ups[p], head[p], nxt, X, W, head[k], False)
        nxt[tail[p]] = head[k]
        tail[p] = tail[k]
    return val.OK


# --------------------------------------------------------------------------- frame plans
class _FramePlan:
    """Resolved frames (bodies, pick-off blocks) and buffers for one model and frame list."""

    def __init__(self, model, frames):
        fs = [model.frame(f) for f in frames]
        self.m = len(fs)
        self.names = [f.name for f in fs]
        self.fbody = np.array([f.body for f in fs], dtype=np.int64)
        self.Bf = np.zeros((self.m, 6, 6))
        for k, f in enumerate(fs):
            if f.body >= 0:
                self.Bf[k] = sp.force_transform(f.rotation, f.translation)
        nf, ni = _buffer_sizes(model.nbodies, self.m)
        self.fbuf = np.zeros(nf)
        self.ibuf = np.zeros(ni, dtype=np.int64)


_plans = threading.local()


def _frame_key(frames):
    if isinstance(frames, (str, int, np.integer, Frame)):
        frames = (frames,)
    return tuple(f.index if isinstance(f, Frame) else f for f in frames)


def _plan(model, frames):
    cache = getattr(_plans, "cache", None)
    if cache is None:
        cache = _plans.cache = weakref.WeakKeyDictionary()
    c = model.compiled
    per_model = cache.get(c)
    if per_model is None:
        per_model = cache[c] = {}
    try:
        key = _frame_key(frames)
        plan = per_model.get(key)
    except TypeError:
        raise TypeError(f"frames: expected a frame name or index or a sequence of them, got {frames!r}") from None
    if plan is None:
        if len(key) == 0:
            raise ValueError("frames: expected at least one frame")
        plan = per_model[key] = _FramePlan(model, key)
    return plan


# --------------------------------------------------------------------------- public API
def operational_space_compliance(model, q, frames, *, out=None, workspace=None):
    """Operational-space compliance Λ = 𝒥M⁻¹𝒥* = ℬ*Ωℬ (seed 001) of a set of frames.

    Computed from the ATBI and the Υ recursion (seed 000 eq. 22) in time linear in the
    number of bodies plus quadratic in the number of frames, without the mass matrix.

    Parameters
    ----------
    model : Model
    q : (nq,) configuration.
    frames : a frame name or index, or a sequence of m of them (repeats allowed).

    Returns Λ (6m, 6m), symmetric positive semi-definite: block (f, g) maps a spatial
    force [n; f] applied at frame g to the spatial acceleration [ω̇; v̇] it induces at
    frame f, both angular first in the frames' own (local) axes — i.e. Λ = J M⁻¹ Jᵀ with
    J the stacked ``frame_jacobian(model, q, f, "local")``. A frame fixed to the world
    has zero rows and columns.
    """
    plan = _plan(model, frames)
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    Lam = val.output(out, (6 * plan.m, 6 * plan.m))
    ws = workspace if workspace is not None else model.workspace()
    st = oscm_kernel(c.mi, c.mf, q, ws.buffer, c.nv, plan.fbody, plan.Bf, plan.fbuf, plan.ibuf, Lam)
    if st:
        val.raise_status(st, ("q",))
    return Lam


def operational_space_inertia(model, q, frames, *, rcond=1e-12, workspace=None):
    """Operational-space inertia Λ⁻¹ = (𝒥M⁻¹𝒥*)⁻¹ (seed 001: the OSIM) of a set of frames.

    Same arguments and block layout as :func:`operational_space_compliance`. Λ is always
    defined but singular when the frames' Jacobian rows are dependent (redundant frames,
    fewer dofs than constrained directions, a frame fixed to the world): then
    ``numpy.linalg.LinAlgError`` is raised, stating the rank. ``rcond``: eigenvalues of Λ
    below ``rcond`` × its largest count as zero.

    Returns (6m, 6m) symmetric positive definite.
    """
    Lam = operational_space_compliance(model, q, frames, workspace=workspace)
    w, Vec = np.linalg.eigh(Lam)
    tol = rcond * max(float(w[-1]), 0.0)
    if not w[0] > tol:
        rank = int(np.count_nonzero(w > tol))
        names = _plan(model, frames).names
        raise np.linalg.LinAlgError(
            f"frames: the operational-space compliance of {names} is singular (rank {rank} of "
            f"{Lam.shape[0]}): the frames' Jacobian rows are dependent, so the operational-space "
            "inertia does not exist")
    return (Vec / w) @ Vec.T


def eoscm_diagonal(model, q, *, workspace=None):
    """The block-diagonal Υ of the EOSCM decomposition Ω = Υ + ψ̃*Υ + Υψ̃ + R (seed 001;
    seed 000 eq. 21–22): Υ(k) = Ω(k, k), the operational-space compliance of body k's frame.

    Returns (nb, 6, 6), body frames, angular first.
    """
    c = model.compiled
    q = val.vector(q, c.nq, "q", batch_ok=False)
    ws = workspace if workspace is not None else model.workspace()
    Ups = np.empty((c.nb, 6, 6))
    st = eoscm_diagonal_kernel(c.mi, c.mf, q, ws.buffer, c.nv, np.empty((c.nb, 6, 6)), Ups)
    if st:
        val.raise_status(st, ("q",))
    return Ups
