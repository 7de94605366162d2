"""Flat array form of a model and of the kernels' workspace.

Every compiled kernel receives the model as two arrays — ``mi`` (integers, one row
per body) and ``mf`` (all real parameters in one flat float64 buffer) — and one flat
float64 workspace ``ws``. Each crossing from Python into Numba costs about 0.1 µs
per array argument, so packing keeps the per-call overhead small; inside a kernel
``model_views`` and ``workspace_views`` carve the buffers into named, shaped views
once per call (free: no copy, no allocation of data).

Body quantities are indexed by body ``i`` (parent-first order); dof quantities by
the velocity index. All vectors are angular-first and expressed in the body frame
unless the name says world.
"""
from __future__ import annotations

import numpy as np
from numba import njit, get_num_threads

# columns of the integer model array ``mi``
PARENT, JTYPE, QIDX, VIDX, NQ, NV, NSUB, SUBKINDS = range(8)
N_INT_COLUMNS = 8


def model_float_size(nb):
    return nb * (36 + 9 + 3 + 9 + 1 + 1 + 3) + 3


@njit(inline="always", cache=True)
def model_views(mf, nb):
    """Views of the flat model buffer.

    Returns ``(inertia (nb,6,6), rot_tree (nb,3,3), pos_tree (nb,3), axes (nb,3,3),
    pitch (nb,), mass (nb,), com (nb,3), gravity (3,))``: body spatial inertia about the
    body origin; pose of the joint frame in the parent body frame; joint axes (rows);
    helical pitch; mass, centre of mass (body frame) and gravity (world frame).
    """
    o = 0
    inertia = mf[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    rot_tree = mf[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    pos_tree = mf[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    axes = mf[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    pitch = mf[o:o + nb]; o += nb
    mass = mf[o:o + nb]; o += nb
    com = mf[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    gravity = mf[o:o + 3]
    return inertia, rot_tree, pos_tree, axes, pitch, mass, com, gravity


def workspace_size(nb, nv):
    return nb * (9 + 3 + 9 + 3 + 9 + 3 + 6 * 5 + 36 * 2) + nv * (6 * 3 + 1) + 6 * 6 * 4


@njit(inline="always", cache=True)
def workspace_views(ws, nb, nv):
    """Views of the flat workspace buffer.

    Returns ``(R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch)``:

    * ``R, t`` (nb,3,3), (nb,3): pose of body i in its parent (joint included), which
      defines φ*(℘(i), i);
    * ``Rw, pw``: world pose of body i; ``Rj, pj``: pose across the joint alone;
    * ``S`` (nv,6): columns of the joint maps H*;
    * ``V, A, F, C, pb`` (nb,6): velocity, acceleration, force, Coriolis term a(k),
      articulated bias force z(k);
    * ``P, Dinv`` (nb,6,6): articulated (or composite) inertia, D⁻¹ (top-left nv×nv);
    * ``U, Y`` (nv,6): P H* columns and a second per-dof scratch; ``u`` (nv,);
    * ``scratch`` (4,6,6).
    """
    o = 0
    R = ws[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    t = ws[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    Rw = ws[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    pw = ws[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    Rj = ws[o:o + nb * 9].reshape((nb, 3, 3)); o += nb * 9
    pj = ws[o:o + nb * 3].reshape((nb, 3)); o += nb * 3
    V = ws[o:o + nb * 6].reshape((nb, 6)); o += nb * 6
    A = ws[o:o + nb * 6].reshape((nb, 6)); o += nb * 6
    F = ws[o:o + nb * 6].reshape((nb, 6)); o += nb * 6
    C = ws[o:o + nb * 6].reshape((nb, 6)); o += nb * 6
    pb = ws[o:o + nb * 6].reshape((nb, 6)); o += nb * 6
    P = ws[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    Dinv = ws[o:o + nb * 36].reshape((nb, 6, 6)); o += nb * 36
    S = ws[o:o + nv * 6].reshape((nv, 6)); o += nv * 6
    U = ws[o:o + nv * 6].reshape((nv, 6)); o += nv * 6
    Y = ws[o:o + nv * 6].reshape((nv, 6)); o += nv * 6
    u = ws[o:o + nv]; o += nv
    scratch = ws[o:o + 144].reshape((4, 6, 6))
    return R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch


def pack_model(bodies, gravity, nq, nv):
    """Build ``(mi, mf)`` from a list of bodies (see :class:`soadyn.model.Body`)."""
    nb = len(bodies)
    mi = np.zeros((nb, N_INT_COLUMNS), dtype=np.int64)
    mf = np.zeros(model_float_size(nb))
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    for i, b in enumerate(bodies):
        j = b.joint
        kinds = j.subkinds()
        mi[i] = (b.parent, j.code, j.q_index, j.v_index, j.nq, j.nv, len(kinds),
                 sum(1 << k for k, kind in enumerate(kinds) if kind == 1))
        inertia[i] = b.inertia
        rot_tree[i] = b.placement[0]
        pos_tree[i] = b.placement[1]
        axes[i] = j.axes()
        pitch[i] = j.pitch
        mass[i] = b.mass
        com[i] = b.com
    g[:] = gravity
    return mi, mf


class Workspace:
    """Preallocated buffers for the compiled algorithms of one model.

    Pass it as ``workspace=`` to the public functions (together with ``out=``) to
    avoid any allocation per call. A workspace must not be shared between threads
    running at the same time; batched calls use one buffer per worker thread.
    """

    def __init__(self, model):
        c = model.compiled
        self.model = model
        self.nb, self.nv = c.nb, c.nv
        self.buffer = np.zeros(workspace_size(c.nb, c.nv))
        self._batch = None

    def batch_buffers(self, nchunks):
        """(nchunks, size) buffers, one per parallel chunk of a batched call."""
        if self._batch is None or self._batch.shape[0] < nchunks:
            self._batch = np.zeros((nchunks, self.buffer.size))
        return self._batch


def batch_chunks(batch):
    """Number of parallel chunks for a batch of ``batch`` states."""
    return max(1, min(batch, get_num_threads()))
