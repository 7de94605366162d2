"""Operational-space compliance Λ = 𝒥M⁻¹𝒥* and inertia Λ⁻¹ for any set of frames
(kernels in :mod:`soadyn.kernels.oscm`; [Jain24], [Jain23p, eq. 21–22])."""
from __future__ import annotations

import numpy as np

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..core.compile import derived, snapshot
from ..kernels.oscm import buffer_sizes, eoscm_diagonal_kernel, oscm_kernel
from .frames import frame_set

__all__ = ["operational_space_compliance", "operational_space_inertia", "eoscm_diagonal"]

_OSCM = CompiledFunction(oscm_kernel, Batch.stacked(private=(2, 3)), (Arg("q", "nq"),),
                         Outputs.computed(lambda c, state, params: ((6 * len(params[0]), 6 * len(params[0])),)),
                         tree_function="operational_space_compliance")  # fbuf, ibuf: scratch
_EOSCM = CompiledFunction(eoscm_diagonal_kernel, Batch.loop(), (Arg("q", "nq"),),
                          Outputs.computed(lambda c, state, params: ((c.nb, 6, 6),)), tree_function="eoscm_diagonal")


def _scratch(model, m):
    """This thread's float and integer scratch of the OSCM kernel for m frames."""
    d = derived(model)

    def build(snapshot):
        nf, ni = buffer_sizes.py_func(derived(snapshot).compiled.nb, m)  # Python's own: no compiled entry point
        return np.zeros(nf), np.zeros(ni, dtype=np.int64)

    return d.per_thread(("oscm", m), build)


def operational_space_compliance(model, q, frames, *, out=None, workspace=None):
    """Operational-space compliance Λ = 𝒥M⁻¹𝒥* = ℬ*Ωℬ [Jain24] of a set of frames.

    Computed from the ATBI and the Υ recursion ([Jain23p, eq. 22]) in time linear in the
    number of bodies plus quadratic in the number of frames, without the mass matrix.

    Parameters
    ----------
    model : Model
    q : (nq,) configuration, or (B, nq) for a batch (one compiled multi-threaded call).
    frames : a frame name or index, or a sequence of m of them (repeats allowed).

    Returns Λ (6m, 6m) (or (B, 6m, 6m)), symmetric positive semi-definite: block (f, g) maps a spatial
    force [n; f] applied at frame g to the spatial acceleration [ω̇; v̇] it induces at
    frame f, both angular first in the frames' own (local) axes — i.e. Λ = J M⁻¹ Jᵀ with
    J the stacked ``frame_jacobian(model, q, f, "local")``. A frame fixed to the world
    has zero rows and columns.
    """
    model = snapshot(model)
    fs = frame_set(model, frames)
    fbuf, ibuf = _scratch(model, len(fs.names))
    return _OSCM(model, (q,), (fs.body, fs.pickoff, fbuf, ibuf), out, workspace)


def operational_space_inertia(model, q, frames, *, rcond=1e-12, workspace=None):
    """Operational-space inertia Λ⁻¹ = (𝒥M⁻¹𝒥*)⁻¹ ([Jain24]: the OSIM) of a set of frames.

    Same arguments and block layout as :func:`operational_space_compliance`. Λ is always
    defined but singular when the frames' Jacobian rows are dependent (redundant frames,
    fewer dofs than constrained directions, a frame fixed to the world): then
    ``numpy.linalg.LinAlgError`` is raised, stating the rank. ``rcond``: eigenvalues of Λ
    below ``rcond`` × its largest count as zero.

    Returns (6m, 6m) symmetric positive definite, or (B, 6m, 6m) for batched q.
    """
    model = snapshot(model)
    rcond = val.finite_scalar(rcond, "rcond")
    if not 0.0 <= rcond < 1.0:  # (a negative one would invert a singular Λ)
        raise ValueError(f"rcond: expected a relative threshold in [0, 1), got {rcond!r}")
    Lam = operational_space_compliance(model, q, frames, workspace=workspace)
    w, Vec = np.linalg.eigh(Lam)  # also on a stack (B, 6m, 6m)
    tol = rcond * np.maximum(w[..., -1:], 0.0)
    singular = ~(w[..., 0] > tol[..., 0])
    if np.any(singular):
        bad = int(np.argmax(singular)) if singular.ndim else None
        rank = int(np.count_nonzero(w[bad] > tol[bad])) if bad is not None else int(np.count_nonzero(w > tol))
        names = frame_set(model, frames).names
        where = f" (batch entry {bad})" if bad is not None else ""
        raise np.linalg.LinAlgError(
            f"frames: the operational-space compliance of {names} is singular{where} (rank {rank} of "
            f"{Lam.shape[-1]}): the frames' Jacobian rows are dependent, so the operational-space "
            "inertia does not exist")
    return (Vec / w[..., None, :]) @ np.swapaxes(Vec, -1, -2)


def eoscm_diagonal(model, q, *, workspace=None):
    """The block-diagonal Υ of the EOSCM decomposition Ω = Υ + ψ̃*Υ + Υψ̃ + R ([Jain24];
    [Jain23p, eq. 21–22]): Υ(k) = Ω(k, k), the operational-space compliance of body k's frame.

    Returns (nb, 6, 6), body frames, angular first.
    """
    model = snapshot(model)
    c = model.compiled
    return _EOSCM(model, (q,), (np.empty((c.nb, 6, 6)),), None, workspace)
