"""Operational-space compliance Λ = 𝒥M⁻¹𝒥* and inertia Λ⁻¹ for any set of frames.

[Jain24] ("Operational space terminology", "Generalized Backward Lyapunov Equation for
SKO Models", "Applying the Backward Lyapunov decomposition to the EOSCM") and [Jain23p,
eq. 21–22]:

    Λ = ℬ*Ωℬ,   Ω = ψ*H*D⁻¹Hψ = Υ + ψ̃*Υ + Υψ̃ + R        (ψ̃ = ψ − I)

with the block-diagonal Υ from the base-to-tips scatter ([Jain24]; [Jain23p, eq. 22])

    Υ(k) = ψ*(℘(k), k) Υ(℘(k)) ψ(℘(k), k) + H*(k)D⁻¹(k)H(k),

and every block of Ω given by Υ at the bodies' nearest common ancestor k = ℘(i, j):
Ω(i, j) = ψ*(k, i)Υ(k)ψ(k, j) ([Jain24], "General expression for the elements").

For m frames on bodies b_f, Λ(f, g) = ℬ*(f) Ω(b_f, b_g) ℬ(g). One tips-to-base sweep
evaluates all of them: each body k holds the group of frames in its subtree with a
single pending transfer ψ(k, a) to the group's anchor body a. A group moving up an
edge costs one 6×6 product (O(N) over the tree); where groups meet (at a body with
frames of its own, or with two children carrying frames) the pending transfers are
applied to the frames, Λ(f, g) = X_f* Υ(k) X_g is formed for every new pair, and the
merged group is anchored at k — O(m²) in all. Total: O(N + m²) after the O(N) ATBI,
the fastest available algorithm for the EOSCM ([Jain24]).
"""
from __future__ import annotations

from collections import namedtuple


from ..core.jit import helper, kernel
from ..core.layout import carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK
from .innovations import atbi, spo_adjoint_blocks

# --------------------------------------------------------------------------- 6×6 helpers
@helper(forceinline=True)
def _mul6(A, B, out, transpose_a=False):
    """out = A B, or Aᵀ B with ``transpose_a`` (6×6)."""
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for k in range(6):
                acc += (A[k, a] if transpose_a else A[a, k]) * B[k, b]
            out[a, b] = acc


# --------------------------------------------------------------------------- Υ
@helper
def upsilon_pass(mi, mf, ws, A, Ups, tmp):
    """Υ(k) = A_k Υ(℘(k)) A_kᵀ + H*(k)D⁻¹(k)H(k) with A_k = ψ*(℘(k), k), base to tips.

    [Jain24] (backward Lyapunov scatter for the EOSCM), [Jain23p, eq. 22]. Needs
    :func:`~.innovations.atbi` and ``spo_adjoint_blocks(..., psi=True, A)`` first; ``tmp``
    is a (6, 6) scratch array.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    S, Dinv, scratch = w.S, w.Dinv, w.scratch
    for k in range(m.nb):
        vi = m.v_index[k]
        n = m.joint_nv[k]
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
        p = m.parent[k]
        if p >= 0:
            _mul6(A[k], Ups[p], tmp)
            for a in range(6):
                for b in range(6):
                    acc = 0.0
                    for c in range(6):
                        acc += tmp[a, c] * A[k, b, c]
                    Ups[k, a, b] += acc


@kernel
def eoscm_diagonal_kernel(mi, mf, ws, q, A, Ups):
    """Υ(k) for every body into ``Ups`` (nb, 6, 6); ``A`` (nb, 6, 6) scratch."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    if A.shape[0] != m.nb or Ups.shape[0] != m.nb:
        return BAD_SHAPE
    spo_adjoint_blocks(mi, mf, ws, True, A)
    upsilon_pass(mi, mf, ws, A, Ups, carve(workspace_views(ws, m).aux, 0, (6, 6)))  # a 6×6 scratch
    return OK


# --------------------------------------------------------------------------- Λ
@helper(forceinline=True)
def _copy6(dst, src, transpose=False):
    """dst ← src (or srcᵀ), 6×6. Element loops, not ``dst[:, :] = src``: Numba compiles
    the shape-mismatch error path of an array assignment (~4 s per kernel)."""
    for r in range(6):
        for c in range(6):
            dst[r, c] = src[c, r] if transpose else src[r, c]


@helper(forceinline=True)
def _transfer_group(head, nxt, T, X, tmp):
    """X_f ← T X_f for every frame f of the list starting at ``head`` (X_f: 6 × w)."""
    w = X.shape[2]
    f = head
    while f >= 0:
        Xf = X[f]
        for a in range(6):
            for b in range(w):
                acc = 0.0
                for k in range(6):
                    acc += T[a, k] * Xf[k, b]
                tmp[a, b] = acc
        for a in range(6):
            for b in range(w):
                Xf[a, b] = tmp[a, b]
        f = nxt[f]


@helper(forceinline=True)
def _add_pair(Lam, of, og, same, Xf, Wg):
    """Λ(f, g) = X_fᵀ W_g added to the block (of, og) of ``Lam`` and its transpose to the
    block (og, of) — once only for a frame with itself (``same``). Blocks of w = X.shape[1]
    rows: frames with one owner (the two sides of a contact) sum into its block."""
    w = Xf.shape[1]
    for a in range(w):
        # a frame with itself: the upper triangle, mirrored, so that the block is exactly
        # symmetric (X_fᵀ Υ X_f evaluated at (a, b) and (b, a) rounds differently)
        for b in range(a if same else 0, w):
            acc = 0.0
            for k in range(6):
                acc += Xf[k, a] * Wg[k, b]
            Lam[w * of + a, w * og + b] += acc
            if not same:
                Lam[w * og + b, w * of + a] += acc
            elif b != a:
                Lam[w * of + b, w * og + a] += acc


@helper(forceinline=True)
def _meet(Lam, owner, Ups, head, nxt, X, W, new, among_new):
    """Λ(f, g) = X_f* Υ X_g for every frame g of the list ``new`` and f of the list ``head``
    (both anchored at the body of Υ) and, with ``among_new``, for every pair within ``new``."""
    w = X.shape[2]
    g = new
    while g >= 0:
        Xg, Wg = X[g], W[g]
        for a in range(6):
            for b in range(w):
                acc = 0.0
                for k in range(6):
                    acc += Ups[a, k] * Xg[k, b]
                Wg[a, b] = acc
        f = head
        while f >= 0:
            _add_pair(Lam, owner[f], owner[g], False, X[f], Wg)
            f = nxt[f]
        if among_new:
            f = new
            while f != nxt[g]:
                _add_pair(Lam, owner[f], owner[g], f == g, X[f], Wg)
                f = nxt[f]
        g = nxt[g]


#: The scratch of the frame-pair sweep for m frames of w columns each (w = 6 for frames,
#: 3 for contact points): per body, ``A`` = ψ*(℘(k), k), ``Ups`` = Υ(k) and ``T`` the
#: pending transfer of the body's frame group; per frame, ``X`` (6, w) its pick-off carried
#: to the group's anchor and ``W`` = Υ X; ``tmp`` (2, 6, 6). Per frame also ``body`` (the
#: body it is fixed to, −1: none) and ``owner`` (its block of the result). Frame groups are
#: linked lists: ``head``/``tail`` of each body's group, ``pending`` (1: the group's X still
#: await the transfer T(k)), ``own``/``own_tail`` the frames fixed to each body, ``nxt``
#: the links.
OscmScratch = namedtuple("OscmScratch", ["A", "Ups", "T", "X", "W", "tmp", "head", "tail", "pending", "own",
                                         "own_tail", "nxt", "body", "owner"])


@helper(forceinline=True)
def buffer_sizes(nb, m, w=6):
    """Lengths of the float and integer scratch of the frame-pair sweep for m frames of
    w columns."""
    return 3 * nb * 36 + 2 * m * 6 * w + 2 * 36, 5 * nb + 3 * m


@helper(forceinline=True)
def oscm_scratch(fbuf, ibuf, nb, m, w=6):
    """Named views (:class:`OscmScratch`) of the float and integer scratch."""
    o = 0
    A = carve(fbuf, o, (nb, 6, 6)); o += nb * 36
    Ups = carve(fbuf, o, (nb, 6, 6)); o += nb * 36
    T = carve(fbuf, o, (nb, 6, 6)); o += nb * 36
    X = carve(fbuf, o, (m, 6, w)); o += m * 6 * w
    W = carve(fbuf, o, (m, 6, w)); o += m * 6 * w
    tmp = carve(fbuf, o, (2, 6, 6))
    return OscmScratch(A, Ups, T, X, W, tmp, carve(ibuf, 0, nb), carve(ibuf, nb, nb), carve(ibuf, 2 * nb, nb),
                       carve(ibuf, 3 * nb, nb), carve(ibuf, 4 * nb, nb), carve(ibuf, 5 * nb, m),
                       carve(ibuf, 5 * nb + m, m), carve(ibuf, 5 * nb + 2 * m, m))


@kernel(nogil=True)
def oscm_kernel(mi, mf, ws, q, fbody, Bf, fbuf, ibuf, Lam):
    """Λ of :func:`_oscm_state` (its scratch ``fbuf``, ``ibuf`` reused from state to state)
    for B = len(q) / nq states stored one after another
    (:func:`~soadyn.core.layout.state_of`: one state for a call, a block of a batch's rows).
    Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _oscm_state(mi, mf, ws, state_of(q, b, B), fbody, Bf, fbuf, ibuf, state_of(Lam, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _oscm_state(mi, mf, ws, q, fbody, Bf, fbuf, ibuf, Lam):
    """Λ (6m × 6m) for frames on bodies ``fbody`` with pick-off blocks ``Bf[f]`` = φ(b_f, O_f);
    ``fbuf``, ``ibuf`` scratch of the sizes :func:`buffer_sizes` gives."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    parent = model_tables(mi, mf).parent
    nb = parent.shape[0]
    m = fbody.shape[0]
    nf, ni = buffer_sizes(nb, m)
    if Lam.shape[0] != 6 * m or Lam.shape[1] != 6 * m or fbuf.shape[0] < nf or ibuf.shape[0] < ni:
        return BAD_SHAPE
    s = oscm_scratch(fbuf, ibuf, nb, m)
    spo_adjoint_blocks(mi, mf, ws, True, s.A)
    upsilon_pass(mi, mf, ws, s.A, s.Ups, s.tmp[0])
    for f in range(m):
        s.body[f] = fbody[f]
        s.owner[f] = f
        _copy6(s.X[f], Bf[f])
    Lam[:] = 0.0
    frame_pair_sweep(parent, s, Lam)
    return OK


@helper(forceinline=True)
def frame_pair_sweep(parent, s, Lam):
    """Λ(f, g) = X_f* Ω(b_f, b_g) X_g added into ``Lam`` for every pair of the frames of the
    scratch ``s`` (:class:`OscmScratch`: ``body``, ``owner`` and the pick-offs ``X`` set,
    ``A`` and ``Ups`` from :func:`upsilon_pass`), by the tips-to-base sweep of the module
    docstring: block (owner[f], owner[g]) of w × w, w = X.shape[2]. Frames with
    ``body`` −1 (on the world) are left out. The pick-offs ``X`` are overwritten."""
    A, Ups, T, X, W, tmp = s.A, s.Ups, s.T, s.X, s.W, s.tmp
    head, tail, pending, own, own_tail, nxt, owner = s.head, s.tail, s.pending, s.own, s.own_tail, s.nxt, s.owner
    nb = parent.shape[0]
    head[:] = -1
    tail[:] = -1
    pending[:] = 0
    own[:] = -1
    for f in range(X.shape[0]):
        b = s.body[f]
        nxt[f] = -1
        if b >= 0:
            if own[b] < 0:
                own[b] = f
            else:
                nxt[own_tail[b]] = f
            own_tail[b] = f
    for k in range(nb - 1, -1, -1):
        if own[k] >= 0:
            # frames fixed to k meet everything below k here: anchor the group at k
            if pending[k]:
                _transfer_group(head[k], nxt, T[k], X, tmp[0])
                pending[k] = 0
            _meet(Lam, owner, Ups[k], head[k], nxt, X, W, own[k], True)
            if head[k] < 0:
                head[k] = own[k]
            else:
                nxt[tail[k]] = own[k]
            tail[k] = own_tail[k]
        p = parent[k]
        if head[k] < 0 or p < 0:
            continue
        # the group's transfer to the parent: ψ(p, k) T(k), with ψ(p, k) = A_kᵀ
        if pending[k]:
            _mul6(A[k], T[k], tmp[1], True)
        else:
            _copy6(tmp[1], A[k], True)
        if head[p] < 0:
            head[p] = head[k]
            tail[p] = tail[k]
            _copy6(T[p], tmp[1])
            pending[p] = 1
            continue
        # two groups meet at p: anchor both there and pair them through Υ(p)
        if pending[p]:
            _transfer_group(head[p], nxt, T[p], X, tmp[0])
            pending[p] = 0
        _transfer_group(head[k], nxt, tmp[1], X, tmp[0])
        _meet(Lam, owner, Ups[p], head[p], nxt, X, W, head[k], False)
        nxt[tail[p]] = head[k]
        tail[p] = tail[k]
