"""Inverse dynamics: τ = M(q)q̈ + C(q, q̇)q̇ + g(q) − Σ J_kᵀ f_ext(k) by the RNEA
(:mod:`soadyn.kernels.rnea`, [Jain12, eq. 14–15])."""
from __future__ import annotations

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, NO_FORCES, Arg, CompiledFunction, Outputs
from ..kernels.plain import rnea_plain_kernel
from ..kernels.rnea import hinge_forces_kernel, rnea_batch, rnea_kernel

__all__ = ["rnea", "bias_forces", "generalized_gravity", "body_forces"]

_RNEA = CompiledFunction(rnea_kernel, Batch.twin(rnea_batch),
                         (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("a", "nv", optional=True),
                          Arg("f_ext", "forces")),
                         Outputs.shaped("v_shape"), params=(val.GRAVITY,), tree_function="rnea",
                         plain=rnea_plain_kernel, plain_params=(True,))
_HINGE = CompiledFunction(hinge_forces_kernel, Batch.stacked(), _RNEA.args,
                          Outputs.computed(lambda c, state, params: ((c.nb, 6),)), params=(val.GRAVITY,),
                          tree_function="body_forces")


def rnea(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
    """Inverse dynamics: generalized forces τ = M(q)a + C(q, v)v + g(q) − Σ_k J_kᵀ f_ext(k)
    (C the Coriolis matrix, :func:`~soadyn.coriolis_matrix`; g the generalized gravity force).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) configuration.
    v, a : (nv,) or (B, nv) velocity [rad/s, m/s] and acceleration [rad/s², m/s²];
        None means zero.
    f_ext : optional (nbodies, 6) or (B, nbodies, 6) spatial forces [n; f] on each
        body, in the body frame at the body origin [N m, N].
    gravity : include the model's gravity (default True).
    out : optional output array; workspace : optional :class:`~soadyn.Workspace` (the
        fastest way to call it repeatedly).

    Returns τ, (nv,) or (B, nv) [N m, N]. Raises ``OverflowError`` naming the largest
    argument (and the batch entry) when finite arguments give a τ beyond the floating-point
    range (a velocity of 1e300).
    """
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    # (out, workspace) passed by position: keywords cost the generated call a tenth of it
    # (absent arguments as None: the rendered call takes them so, see soadyn.core.fast_path)
    return _RNEA.call(model, q, v, a, f_ext, gravity, out, workspace)


def bias_forces(model, q, v, *, gravity=True, out=None, workspace=None):
    """Bias forces C(q, v)v + g(q) = Hφ(Mφ*a + b) ([Jain12, eq. 17], which writes them C),
    gravity included unless ``gravity=False``: the RNEA at zero acceleration. (nv,) or
    (B, nv)."""
    return rnea(model, q, v, None, gravity=gravity, out=out, workspace=workspace)


def generalized_gravity(model, q, *, out=None, workspace=None):
    """Generalized gravity forces g(q) (nv,): the RNEA at zero velocity and acceleration."""
    return rnea(model, q, None, None, out=out, workspace=workspace)


def body_forces(model, q, v, a, f_ext=None, *, gravity=True, out=None, workspace=None):
    """The spatial force f(k) = [n; f] that each body's hinge transmits to it from its parent,
    in the body frame at the body origin [N m, N]: the gathered forces of the RNEA,
    f(k) = Σ_{j ∈ children(k)} φ(k, j) f(j) + M(k)α(k) + b(k) − f_ext(k) [Jain12, eq. 12],
    whose projection onto the hinge axes is τ(k) = H(k) f(k); the rest is the constraint
    force of the hinge (a revolute joint's bearing loads).

    Parameters as :func:`rnea`: q (nq,), v, a (nv,) (None: zero), f_ext (nbodies, 6);
    batches with a leading dimension B.

    Returns (nbodies, 6), or (B, nbodies, 6). (Pinocchio's ``data.f`` after ``rnea`` holds
    the same forces linear-first, [f; n].)
    """
    if gravity is not True and gravity is not False:
        gravity = val.GRAVITY(gravity)
    return _HINGE(model, (q, ABSENT if v is None else v, ABSENT if a is None else a,
                          NO_FORCES if f_ext is None else f_ext), (gravity,), out, workspace)
