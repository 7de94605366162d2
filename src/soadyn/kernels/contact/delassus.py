"""The Delassus operator G = J M⁻¹ Jᵀ (3k, 3k) of k contact points on a tree, by the Υ
recursion of the operational-space compliance, never forming M⁻¹.

[Jain24] ("Applying the Backward Lyapunov decomposition to the EOSCM"), [Jain23p, eq. 21–22]:
Λ = ℬ*Ωℬ with Ω(i, j) = ψ*(k, i)Υ(k)ψ(k, j) at the bodies' nearest common ancestor k. A
contact is the difference of two points (J_i = J_second − J_first, :mod:`.points`), each a
frame of three columns: its pick-off X = ±[[r]× C; C] (6 × 3) is the frame pick-off ℬ
restricted to the contact axes. The sweep of :func:`~soadyn.kernels.oscm.frame_pair_sweep`
pairs the 2k sides through Υ in O(N + k²) after the O(N) ATBI, and sums the four terms
X_a*ΩX_b of each pair of contacts into its 3 × 3 block of G.
"""
from __future__ import annotations

from ...core.jit import njit
from ...core.layout import model_tables, workspace_views
from ...core.status import BAD_SHAPE, OK
from ..innovations import atbi, spo_adjoint_blocks
from ..kinematics import world_poses
from ..oscm import buffer_sizes, frame_pair_sweep, oscm_scratch, upsilon_pass
from .points import contacts_shape_ok, point_pickoff


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def contact_delassus(mi, mf, ws, cbody, cpoint, cframe, s, G):
    """G (3k, 3k) ← the Delassus operator of the contacts on the ATBI already in the
    workspace (:func:`~soadyn.kernels.innovations.atbi`, or the block ABA's gather,
    :func:`~soadyn.kernels.aba.articulated_body_pass`, which leaves the same P⁺, D⁻¹ and U)
    and the world poses (``world_poses``): ψ*, the Υ scatter, the 2k pick-offs and the
    pair sweep. ``s``: the scratch views of :func:`~soadyn.kernels.oscm.oscm_scratch` for
    the 2k sides of three columns (k = len(cbody))."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    k = cbody.shape[0]
    spo_adjoint_blocks(mi, mf, ws, True, s.A)
    upsilon_pass(mi, mf, ws, s.A, s.Ups, s.tmp[0])
    for i in range(k):  # side h = 2i (first body, −X) and 2i + 1 (second body, +X)
        for side in range(2):
            h = 2 * i + side
            b = cbody[i, side]
            s.body[h] = b
            s.owner[h] = i
            if b >= 0:
                point_pickoff(w.Rw, w.pw, b, cpoint, cframe, i, 2.0 * side - 1.0, s.X[h])
    G[:] = 0.0
    frame_pair_sweep(m.parent, s, G)


@njit(nogil=True, cache=True)
def delassus_kernel(mi, mf, ws, q, cbody, cpoint, cframe, fbuf, ibuf, G):
    """G (3k, 3k) at q for the contacts (``cbody`` (k, 2), ``cpoint`` (k, 3), ``cframe``
    (k, 3, 3): :mod:`.points`), rows and columns of contact i at 3i..3i+2 in its frame
    (t1, t2, n); ``fbuf``, ``ibuf`` scratch of the sizes
    ``buffer_sizes(nb, 2k, 3)`` (:func:`~soadyn.kernels.oscm.buffer_sizes`: the 2k sides of
    three columns). Returns a status."""
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    nb = m.nb
    k = cbody.shape[0]
    nf, ni = buffer_sizes(nb, 2 * k, 3)
    if (not contacts_shape_ok(m, cbody, cpoint, cframe) or G.shape[0] != 3 * k or G.shape[1] != 3 * k
            or fbuf.shape[0] < nf or ibuf.shape[0] < ni):
        return BAD_SHAPE
    world_poses(mi, mf, ws)
    contact_delassus(mi, mf, ws, cbody, cpoint, cframe, oscm_scratch(fbuf, ibuf, nb, 2 * k, 3), G)
    return OK
