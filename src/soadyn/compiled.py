"""soadyn's tree algorithms called from your own Numba code: no dispatcher, no Python per call.

A public function such as :func:`soadyn.rnea` costs a fixed overhead on top of its kernel
(Numba's dispatch of the arrays, the Python front, the output allocation:
``benchmarks/results/bench/summary.md``): on a 6-joint arm that is more than the
dynamics. A loop written with ``numba.njit`` — a controller, an
integrator, a sampler — can call the kernels directly instead, at the kernel's speed::

    import numba, soadyn as sd
    from soadyn import compiled

    model = sd.load_urdf("ur5.urdf")
    k = compiled.arguments(model)      # the model's tables and a workspace (one per thread)

    @numba.njit
    def inverse_dynamics(k, Q, V, A, TAU):
        for i in range(Q.shape[0]):
            if compiled.rnea(k, Q[i], V[i], A[i], TAU[i]) != compiled.OK:
                return i               # the state that failed (compiled.check names why)
        return -1

Every function here returns a status code — ``OK`` (0), or the code that
:func:`check` turns into the error the public function would raise — and writes its
result into the last argument, with the shapes and units of the public function of the
same name (gravity included, no external forces, velocities [ω; v] angular first). The
arrays must be C-contiguous float64 vectors and matrices (rows of a C-contiguous 2-D array
are); ``k.absent`` for ``v`` or ``a`` means zero. Other array types work too, at the
price of a new compilation. The kernels check lengths and finiteness themselves.

:func:`arguments` returns copies of the model's tables and a new workspace: a pure value
(rebuild it after changing the model); a workspace must not be used by two threads at the
same time — give each thread its own :func:`arguments`.

Frames: :func:`frame` makes a frame's arguments once (body, pose in the body, reference
axes) for :func:`frame_placement`, :func:`frame_jacobian` and :func:`frame_velocity`.

Closed chains (loops, couplings, transmissions): :func:`constrained_arguments` and
:func:`constrained_forward_dynamics`, the compiled direct method of
:func:`soadyn.constrained_forward_dynamics`.

Your function's first compilation links the kernel's code into it and optimizes the whole
(seconds of CPU time even with the kernels cached, ``benchmarks/results/design_notes.md``);
``numba.njit(cache=True)`` keeps it on disk.
Per state from such a loop, against Pinocchio's Python call on one state:
``benchmarks/results/compiled_api.md``.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .closed.direct import direct_tables, packed_plain_tables
from .core import status as st
from .core.compile import derived
from .core.jit import kernel
from .dynamics.frames import model_frame
from .dynamics.jacobians import REFERENCES
from .kernels.aba import aba_kernel
from .kernels.crba import mass_matrix_kernel
from .kernels.direct import direct_plain_kernel
from .kernels.frames import frame_placement_kernel, frame_velocity_kernel
from .kernels.jacobians import frame_jacobian_kernel
from .kernels.kinematics import poses_kernel
from .kernels.minverse import mass_matrix_inverse_kernel
from .kernels.rnea import rnea_kernel

__all__ = ["KernelArguments", "arguments", "check", "OK", "rnea", "aba", "mass_matrix", "mass_matrix_inverse",
           "body_placements", "FrameArguments", "frame", "frame_placement", "frame_jacobian", "frame_velocity",
           "ConstrainedArguments", "constrained_arguments", "constrained_forward_dynamics",
           "OFF_MANIFOLD"]

#: the status of a call that succeeded
OK = st.OK
#: the status of :func:`constrained_forward_dynamics` for a state off the constraints
OFF_MANIFOLD = st.OFF_MANIFOLD

KernelArguments = namedtuple("KernelArguments", ("mi", "mf", "ws", "absent", "no_forces"))
KernelArguments.__doc__ = """The arrays every function of :mod:`soadyn.compiled` takes first: ``mi``
(int64) and ``mf`` (float64) the model's tables, ``ws`` a workspace (float64), ``absent`` an
empty vector (a zero velocity or acceleration), ``no_forces`` an empty (0, 6) array."""


def arguments(model):
    """:class:`KernelArguments` for ``model``: copies of its compiled tables and a new
    workspace. Raises :class:`~soadyn.ClosedChainError` for a model with loops, couplings
    or user constraints (these are tree algorithms: pass ``model.spanning_tree()`` to
    mean the spanning tree)."""
    d = derived(model)
    c = d.compiled
    if c.closed:
        raise st.closed_chain_error(model, "soadyn.compiled")
    return KernelArguments(c.mi.copy(), c.mf.copy(), np.zeros(d.workspace_size), np.zeros(0), np.zeros((0, 6)))


FrameArguments = namedtuple("FrameArguments", ("body", "rotation", "translation", "reference"))
FrameArguments.__doc__ = """A frame for :func:`frame_placement`, :func:`frame_jacobian` and
:func:`frame_velocity`: its ``body`` (−1: the world), its pose in the body frame
(``rotation`` (3, 3), ``translation`` (3,) [m]) and the ``reference`` code of the axes."""


def frame(model, name, reference="local"):
    """:class:`FrameArguments` of the frame ``name`` (a name or index) of ``model``, with
    ``reference`` ``"local"``, ``"local_world_aligned"`` or ``"world"`` (as
    :func:`soadyn.frame_jacobian`) for the Jacobian and the velocity. Copies: a pure value."""
    if reference not in REFERENCES:
        raise ValueError(f"reference: expected one of {list(REFERENCES)}, got {reference!r}")
    f = model_frame(model, name)
    return FrameArguments(int(f.body), np.array(f.kernel_rotation, dtype=np.float64),
                          np.array(f.kernel_translation, dtype=np.float64), REFERENCES[reference])


ConstrainedArguments = namedtuple("ConstrainedArguments", ("tables", "nv", "output_size"))
ConstrainedArguments.__doc__ = """What :func:`constrained_forward_dynamics` takes first: ``tables`` the
model's and its constraints' tables and a workspace in one float64 array, ``nv`` and
``output_size`` (the length of its output)."""


def constrained_arguments(model):
    """:class:`ConstrainedArguments` for ``model`` (loops, couplings, transmissions): a copy
    of the tables of the compiled direct method and a new workspace. Raises ValueError for a
    model with a user constraint given as Python callables (not compiled: use
    :func:`soadyn.constrained_forward_dynamics`)."""
    tables = direct_tables(model)
    if tables is None:
        raise ValueError(f"model: {model.name!r} has a constraint evaluated in Python (a user constraint), which "
                         "compiled code cannot call; use soadyn.constrained_forward_dynamics")
    return ConstrainedArguments(packed_plain_tables(model, tables), model.nv, int(tables.output_size))


_NAMES = {"frame_placement": ("q",), "frame_jacobian": ("q",), "frame_velocity": ("q", "v"), "rnea": ("q", "v", "a"), "aba": ("q", "v", "tau"), "mass_matrix": ("q",), "mass_matrix_inverse": ("q",),
          "body_placements": ("q",), "constrained_forward_dynamics": ("q", "v", "tau")}


def check(model, status, function="rnea"):
    """Raise the error that ``function`` (a name of this module) reported as ``status`` on
    ``model`` — the message the public function gives — or return None for ``OK``."""
    if function not in _NAMES:
        raise ValueError(f"function: expected one of {sorted(_NAMES)}, got {function!r}")
    if status == st.BAD_SHAPE:
        raise ValueError(f"{function}: an array has the wrong length or shape (expected those of the public "
                         f"function soadyn.{function}), or the arguments were made for a model other than "
                         f"{model.name!r}")
    if status != OK:
        st.raise_status(int(status), _NAMES[function], model=model)


@kernel(forceinline=True)
def rnea(k, q, v, a, tau):
    """τ = M(q)a + C(q, v)v + g(q) into ``tau`` (nv,) [N m, N] (:func:`soadyn.rnea`);
    ``k.absent`` for a zero ``v`` or ``a``. Returns a status."""
    return rnea_kernel(k.mi, k.mf, k.ws, q, v, a, k.no_forces, True, tau)


@kernel(forceinline=True)
def aba(k, q, v, tau, qdd):
    """q̈ = M⁻¹(τ − C(q, v)v − g(q)) into ``qdd`` (nv,) [rad/s², m/s²] (:func:`soadyn.aba`);
    ``k.absent`` for a zero ``v``. Returns a status."""
    return aba_kernel(k.mi, k.mf, k.ws, q, v, tau, k.no_forces, True, qdd)


@kernel(forceinline=True)
def mass_matrix(k, q, M):
    """M(q) into ``M`` (nv, nv), both triangles (:func:`soadyn.mass_matrix`). Returns a
    status."""
    return mass_matrix_kernel(k.mi, k.mf, k.ws, q, M)


@kernel(forceinline=True)
def mass_matrix_inverse(k, q, Minv):
    """M⁻¹(q) into ``Minv`` (nv, nv), both triangles (:func:`soadyn.mass_matrix_inverse`).
    Returns a status."""
    return mass_matrix_inverse_kernel(k.mi, k.mf, k.ws, q, Minv)


@kernel(forceinline=True)
def body_placements(k, q, R, p):
    """The world pose of every body into ``R`` (nb, 3, 3) (its axes in world coordinates)
    and ``p`` (nb, 3) (its origin [m]) (:func:`soadyn.forward_kinematics` without rates).
    Returns a status."""
    return poses_kernel(k.mi, k.mf, k.ws, q, R, p)


@kernel(forceinline=True)
def frame_placement(k, f, q, T):
    """The 4×4 world pose of frame ``f`` (:func:`frame`) into ``T`` (4, 4) [m]
    (:func:`soadyn.frame_placement`). Returns a status."""
    return frame_placement_kernel(k.mi, k.mf, k.ws, q, f.body, f.rotation, f.translation, T)


@kernel(forceinline=True)
def frame_jacobian(k, f, q, J):
    """The Jacobian of frame ``f`` (:func:`frame`, in its reference axes) into ``J``
    (6, nv) (:func:`soadyn.frame_jacobian`). Returns a status."""
    return frame_jacobian_kernel(k.mi, k.mf, k.ws, q, f.body, f.rotation, f.translation, f.reference, J)


@kernel(forceinline=True)
def frame_velocity(k, f, q, v, V):
    """The spatial velocity [ω; v] [rad/s, m/s] of frame ``f`` (:func:`frame`, in its
    reference axes) into ``V`` (6,) (:func:`soadyn.frame_velocity`). Returns a status."""
    return frame_velocity_kernel(k.mi, k.mf, k.ws, q, v, f.body, f.rotation, f.translation, f.reference, V)


@kernel(forceinline=True)
def constrained_forward_dynamics(k, q, v, tau, residual_tol, out):
    """Constrained forward dynamics by the compiled direct method (the KKT system of
    :func:`soadyn.constrained_forward_dynamics` with ``method="direct"``: a tree-sparse
    factorization of M, then a pivoted one of G_c M⁻¹ G_cᵀ that drops redundant rows), no
    external forces, gravity on: q̈ (nv,) [rad/s², m/s²] into ``out[:k.nv]``; ``out`` has
    ``k.output_size`` entries (the rest is the kernel's, unspecified). ``q``, ``v`` must
    satisfy the constraints: returns ``OFF_MANIFOLD`` (see :func:`check`) when a position
    or velocity residual exceeds ``residual_tol`` [m, rad; per second]. Returns a status."""
    return direct_plain_kernel(k.tables, q, v, tau, residual_tol, out)
