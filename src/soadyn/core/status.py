"""Status codes that the compiled kernels return, and the exceptions they become.

Kernels never raise: they return one of these codes (``OK`` = 0) and the public function
turns a nonzero code into an error that names the argument (:func:`raise_status`).
"""
from __future__ import annotations

import numpy as np

OK, BAD_FIRST, BAD_SECOND, BAD_THIRD, BAD_FEXT, BAD_QUATERNION, SINGULAR, BAD_SHAPE = range(8)


def raise_status(status, names, batch_index=None, model=None):
    """Raise the error a kernel reported.

    ``names`` are the kernel's state arguments in order (``BAD_FIRST`` names
    ``names[0]``, ...); ``model``, when given, lets a ``SINGULAR`` status name the
    joints that move no inertia.
    """
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
        cause = "some joint drives only mass-less bodies with no rotational inertia"
        if model is not None:
            joints = model.joints_moving_no_inertia()
            if joints:
                cause = f"the joints {joints} move no mass or inertia"
        raise np.linalg.LinAlgError(
            f"the mass matrix is singular at this configuration{where}: {cause}; this function "
            "needs M⁻¹ (kinematics, rnea and mass_matrix work on such a model)")
    raise RuntimeError(f"kernel status {status}{where}")


def check_batch_status(status, names, model=None):
    """Raise for the first nonzero entry of a batched call's status array."""
    bad = np.flatnonzero(status)
    if bad.size:
        raise_status(int(status[bad[0]]), names, int(bad[0]), model)
