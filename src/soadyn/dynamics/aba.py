"""Forward dynamics: q̈ = M⁻¹(τ − C q̇ − g + Σ J_kᵀ f_ext(k)) by the articulated-body algorithm
([Jain23p, eq. 7], run in its partitioned form, eq. 8: :mod:`soadyn.kernels.aba`)."""
from __future__ import annotations

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import Arg, CompiledFunction, Outputs
from ..kernels.aba import aba_batch, aba_kernel
from ..kernels.plain import aba_plain_kernel

__all__ = ["aba"]

_ABA = CompiledFunction(aba_kernel, Batch.twin(aba_batch),
                        (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("tau", "nv"), Arg("f_ext", "forces")),
                        Outputs.shaped("v_shape"), params=(val.GRAVITY,), tree_function="aba",
                        plain=aba_plain_kernel, plain_params=(True,))


def aba(model, q, v, tau, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Forward dynamics: joint accelerations q̈ = M⁻¹(τ − C(q, v)v − g(q) + Σ J_kᵀ f_ext(k)).

    O(N) articulated-body algorithm ([Jain23p, eq. 7]; [Jain24, topics 5–7]), in the
    partitioned form of [Jain23p, eq. 8]: a multi-dof hinge is eliminated one sub-hinge at
    a time (scalar D, no matrix inverse; :mod:`soadyn.kernels.aba`).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v : (nv,) or (B, nv) velocity; None means zero.
    tau : (nv,) or (B, nv) generalized forces [N m, N].
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on the bodies,
        body frame.
    gravity : include the model's gravity (default True).
    out, workspace : optional preallocated output and :class:`~soadyn.Workspace` (the
        fastest way to call it repeatedly).

    Returns q̈, (nv,) or (B, nv). Raises ``numpy.linalg.LinAlgError`` naming the cause
    when M is singular or indefinite (``Model.singular_mass_matrix_causes``: a body inertia
    that is not positive semi-definite, joints that move no inertia, redundant joints), and
    ``OverflowError`` naming the largest argument (and the batch entry) when finite
    arguments give a result beyond the floating-point range (a velocity of 1e300: its
    Coriolis terms overflow).
    """
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    # (out, workspace) passed by position: keywords cost the generated call a tenth of it
    # (absent arguments as None: the rendered call takes them so, see soadyn.core.fast_path)
    return _ABA.call(model, q, v, tau, f_ext, gravity, out, workspace)
