"""Cheap input checks for the public functions.

The public functions first call their kernel directly (see
``dynamics/_fastcall.py``): Numba's dispatcher checks the argument types, the kernel
checks lengths (``BAD_SHAPE``) and finiteness and returns a status code. Any other
input goes through the functions here, which convert it or raise an error naming the
argument, the expected and the received shape; :func:`raise_status` turns a kernel's
status into such an exception.
"""
from __future__ import annotations

import numpy as np

OK, BAD_FIRST, BAD_SECOND, BAD_THIRD, BAD_FEXT, BAD_QUATERNION, SINGULAR, BAD_SHAPE = range(8)


def vector(x, n, name, batch_ok=True):
    """Return ``x`` as a C-contiguous float64 array of shape (n,) or (B, n)."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous:
        try:
            x = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name}: expected an array of {n} real numbers ({e})") from None
    if not x.flags.writeable:  # one compiled version per argument type: use the mutable one
        x = x.copy()
    shape = x.shape
    if shape == (n,):
        return x
    if batch_ok and len(shape) == 2 and shape[1] == n:
        return x
    want = f"({n},) or (B, {n})" if batch_ok else f"({n},)"
    raise ValueError(f"{name}: expected shape {want}, got {shape}")


def same_batch(ref, *others):
    """Check that arrays share ``ref``'s batch dimension (or lack of one)."""
    for name, x in others:
        if x is None:
            continue
        if ref.ndim == 1 and x.ndim != 1 or ref.ndim == 2 and x.ndim != 2 + (name == "f_ext"):
            raise ValueError(f"{name}: a batched call needs every state argument batched "
                             f"(got {name} with shape {x.shape} next to q with shape {ref.shape})")
        if ref.ndim == 2 and x.shape[0] != ref.shape[0]:
            raise ValueError(f"{name}: batch size {x.shape[0]} does not match q's {ref.shape[0]}")


def external_forces(f_ext, nb, batch):
    """Validate ``f_ext``: (nbodies, 6) spatial forces in the body frames (or (B, nbodies, 6))."""
    if f_ext is None:
        return None
    if type(f_ext) is not np.ndarray or f_ext.dtype != np.float64 or not f_ext.flags.c_contiguous:
        f_ext = np.ascontiguousarray(f_ext, dtype=np.float64)
    if not f_ext.flags.writeable:
        f_ext = f_ext.copy()
    want = (nb, 6) if batch is None else (batch, nb, 6)
    if f_ext.shape != want:
        raise ValueError(f"f_ext: expected shape {want} (one spatial force [n; f] per body, "
                         f"body frame), got {f_ext.shape}")
    return f_ext


def output(out, shape, name="out"):
    if out is None:
        return np.empty(shape)
    if type(out) is not np.ndarray or out.dtype != np.float64 or out.shape != shape \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name}: expected a C-contiguous float64 array of shape {shape}, "
                         f"got {getattr(out, 'shape', type(out))}")
    return out


def raise_status(status, names, batch_index=None):
    """Raise the error a kernel reported; ``names`` are its state arguments in order."""
    where = "" if batch_index is None else f" (batch entry {batch_index})"
    if status in (BAD_FIRST, BAD_SECOND, BAD_THIRD):
        raise ValueError(f"{names[status - 1]}: expected finite values, got NaN or inf{where}")
    if status == BAD_FEXT:
        raise ValueError(f"f_ext: expected finite values, got NaN or inf{where}")
    if status == BAD_QUATERNION:
        raise ValueError(f"q: a quaternion of a free or spherical joint is zero{where}")
    if status == BAD_SHAPE:
        raise ValueError(f"workspace: it was built for a different model{where}")
    if status == SINGULAR:
        raise np.linalg.LinAlgError(
            f"the mass matrix is not positive definite at this configuration{where}: "
            "some joint drives only mass-less bodies with no rotational inertia")
    raise RuntimeError(f"kernel status {status}{where}")


def check_batch_status(status, names):
    bad = np.flatnonzero(status)
    if bad.size:
        raise_status(int(status[bad[0]]), names, int(bad[0]))


def workspace_buffer(model, workspace):
    """The flat buffer of ``workspace`` (default: the calling thread's own for ``model``)."""
    if workspace is None:
        return model.workspace().buffer
    from .dynamics._layout import Workspace
    c = model.compiled
    if not isinstance(workspace, Workspace) or workspace.nb != c.nb or workspace.nv != c.nv \
            or workspace.buffer.size != workspace.size:
        raise ValueError(f"workspace: expected a soadyn.Workspace built for model {model.name!r} "
                         f"({c.nb} bodies, nv = {c.nv}), got {workspace!r}")
    return workspace.buffer
