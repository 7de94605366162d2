"""The Delassus operator G = J M⁻¹ Jᵀ of a set of contact points (kernels in
:mod:`soadyn.kernels.contact.delassus`; on cluster models C-EFPA, [Chignoli23, §VIII])."""
from __future__ import annotations

import numpy as np

from ..closed.embedding.algorithms import efpa_at_poses
from ..closed.embedding.clusters import independent_state
from ..core import status as st
from ..core import validation as val
from ..core.compile import derived, snapshot
from ..core.fast_path import ExactCall, GeneralPath
from ..core.layout import pack_parts
from ..dynamics.kinematics import body_placements
from ..geometry.contacts import Contacts
from ..kernels.contact.delassus import delassus_buffer_sizes, delassus_kernel

__all__ = ["delassus", "contact_arrays"]

#: the kernel's dispatcher and its twin that never compiles (the fast path of :func:`delassus`)
_KERNEL = ExactCall(delassus_kernel)


def contact_arrays(model, contacts, argname="contacts"):
    """``(bodies (k, 2), point (k, 3), frame (k, 3, 3))`` of ``contacts``, checked to be of
    ``model`` at its current version (:meth:`~soadyn.Contacts.check`): the writeable copies
    the kernels take (:func:`~soadyn.geometry.contacts.kernel_arrays`; not to be written),
    so that the general path compiles the version the fast path calls."""
    if type(contacts) is not Contacts:
        raise TypeError(f"{argname}: expected soadyn.Contacts (from detect_contacts or Contacts.from_points), got "
                        f"{type(contacts).__name__}")
    contacts.check(model, argname)
    return contacts._kernel


def _tables(model, k):
    """This thread's packed tables of the Delassus kernel for k contacts
    (:data:`~soadyn.kernels.contact.delassus.DELASSUS_PARTS`: the model's tables, the
    kernel's scratch, a workspace of this thread's own)."""
    d = derived(model)

    def build(snapshot):
        store = derived(snapshot)
        c = store.compiled
        nf, ni = delassus_buffer_sizes.py_func(c.nb, c.nv, k)
        return pack_parts((c.mi, np.zeros(ni, dtype=np.int64)), (c.mf, np.zeros(store.workspace_size), np.zeros(nf)))

    return d.per_thread(("delassus", k), build)


def delassus(model, q, contacts):
    """The Delassus operator G = J M⁻¹ Jᵀ (3k, 3k) of k contact points [m/s per N s].

    J (3k, nv) is the contact Jacobian: its rows 3i..3i+2 map v to the contact velocity σ_i
    of contact i, the velocity of the second body's material point relative to the first's
    at the point, in the contact frame (t1, t2, n) of ``contacts.frame[i]``
    (:mod:`soadyn.geometry.contacts`): J_i = C_iᵀ (J_second(p_i) − J_first(p_i)). Block
    (i, j) of G is the velocity change at contact i per unit impulse at contact j.

    On a tree from the factored operational-space compliance Ω = ψ*H*D⁻¹Hψ ([Jain24],
    [Jain23p, eq. 21]: :mod:`soadyn.kernels.contact.delassus`), G(i, j) = Y_iᵀD⁻¹Y_j with
    Y_i = HψX_i gathered along the contact's paths to the root after the ATBI, in
    O(N + k·depth + k²) without M or M⁻¹. On a
    model with loops, couplings or user constraints, in the independent coordinates ẏ of
    its cluster tree (q̇ = G_y ẏ, [Chignoli23, eq. 3]) by C-EFPA ([Chignoli23, §VIII]):
    G = (J G_y) H⁻¹ (J G_y)ᵀ with H = G_yᵀ M G_y, the Delassus operator of the closed chain.

    Parameters
    ----------
    model : Model
    q : (nq,) configuration (for a model with loops, a spanning configuration that satisfies
        them, e.g. from ``close_loops`` or ``spanning_state``: it fixes the assembly branch).
    contacts : :class:`~soadyn.Contacts` of this model at its current version, made at q.

    Returns G (3k, 3k), symmetric positive semi-definite (singular when contacts constrain
    more directions than the bodies have dofs).
    """
    # The fast path (the common call: a tree model whose store is current, Contacts of its
    # version, this thread's tables made by an earlier call, q a float64 vector): the checks
    # of the general path below in a few attribute reads; the kernel checks q and the
    # contact arrays itself. Anything else takes the general path, which names what is
    # wrong.
    try:
        d = model._derived
        if (type(contacts) is Contacts and contacts.model_version == d.version and contacts._model() is model
                and not d.compiled.closed):
            cbody, cpoint, cframe = contacts._kernel  # (writeable copies: the dispatcher types them faster)
            k = cbody.shape[0]
            G = np.empty((3 * k, 3 * k))
            if _KERNEL.fast(d.threads.objects[("delassus", k)], q, cbody, cpoint, cframe, G) == 0:
                return G
    except (AttributeError, KeyError, GeneralPath):
        pass
    model = snapshot(model)  # one model state for the check, the tables and the kernel
    cbody, cpoint, cframe = contact_arrays(model, contacts)
    if model.has_constraints:
        return _cluster_delassus(model, q, cbody, cpoint, cframe)
    q = val.vector(q, model.nq, "q", batch_ok=False)
    k = cbody.shape[0]
    G = np.empty((3 * k, 3 * k))
    status = _KERNEL(_tables(model, k), q, cbody, cpoint, cframe, G)
    if status != st.OK:
        st.raise_status(status, ("q",), model=model, state=(q,), function="delassus")
    return G


def _cluster_delassus(model, q, cbody, cpoint, cframe):
    """G by C-EFPA over the cluster tree: each side of a contact a frame at the point with
    the contact axes; the linear rows of Ω, signed and summed per contact."""
    R, p = body_placements(model, q)
    k = cbody.shape[0]
    side = np.flatnonzero(cbody.reshape(-1) >= 0)  # sides on bodies, h = 2i + s
    owner, s = side // 2, side % 2
    b = cbody.reshape(-1)[side]
    fR = np.einsum("hji,hjk->hik", R[b], cframe[owner])  # R_bᵀ C_i
    fp = np.einsum("hji,hj->hi", R[b], cpoint[owner] - p[b])  # R_bᵀ(p_i − p_b)
    y, _ = independent_state(model, q, None)
    Omega = efpa_at_poses(model, None, y, np.ascontiguousarray(b, dtype=np.int64), np.ascontiguousarray(fR),
                          np.ascontiguousarray(fp), q=np.asarray(q, dtype=float))
    m = len(side)
    lin = Omega.reshape(m, 6, m, 6)[:, 3:, :, 3:]  # the velocity of the point, in the contact axes
    sign = 2.0 * s - 1.0
    lin = lin * sign[:, None, None, None] * sign[None, None, :, None]
    P = np.zeros((k, m))  # which contact each side belongs to
    P[owner, np.arange(m)] = 1.0
    return np.einsum("ih,hagb,jg->iajb", P, lin, P).reshape(3 * k, 3 * k)
