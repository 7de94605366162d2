"""The plain calls of C-ABA, C-RNEA and C-EFPA on models with implicit clusters: the
position solve q = γ(y) from the clusters' references and the explicit form G, g of the
implicit clusters (:func:`~.implicit.prepare_implicit`, mode SOLVE) followed by the
algorithm, in one kernel call with the tables in one array
(:func:`~.layout.pack_plain_tables`: each array argument costs Numba's dispatcher).

Every length is checked here, before the solve reads y and ẏ; any status other than OK
(a wrong shape, a non-finite value, a solve that does not converge, a singular
configuration) sends the caller to its validated path, which names the cause or runs the
Python solve.
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.status import BAD_SHAPE, OK
from .aba import cluster_aba_linked
from .efpa import cluster_efpa_linked
from .implicit import SOLVE, prepare_implicit
from .kinematics import cluster_configuration_status, cluster_state_status
from .layout import cluster_tables, split_plain_tables
from .rnea import cluster_rnea_linked


# inlined by Numba into its two callers: compiled on its own, this wrapper of the solve
# recompiled the solve's whole closure (~2 s of a cold compile)
@helper(inline="always")
def _solved_state(mi, mf, ws, ci, cf, cws, y, yd, third, out_length, with_bias, fext):
    """Status of the plain call's state (``fext`` empty), then the implicit clusters solved
    and prepared from their references."""
    st = cluster_state_status(mi, mf, ci, y, yd, third, fext, out_length)
    if st != OK:
        return st
    return prepare_implicit(mi, mf, ws, ci, cf, cws, y, yd, y[:0], SOLVE, with_bias)


@kernel
def cluster_aba_solved_kernel(tables, y, yd, tau, gravity, ydd):
    """C-ABA after the position solve (module docstring), no external forces: ÿ into
    ``ydd``; returns a status."""
    ok, mi, mf, ws, ci, cf, cws, no_forces = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    st = _solved_state(mi, mf, ws, ci, cf, cws, y, yd, tau, ydd.shape[0], True, no_forces)
    if st != OK:
        return st
    return cluster_aba_linked(mi, mf, ws, y, yd, tau, no_forces, ci, cf, cws, gravity, ydd)


@kernel
def cluster_rnea_solved_kernel(tables, y, yd, ydd, gravity, tau):
    """C-RNEA after the position solve (module docstring), no external forces: τ_ind into
    ``tau``; returns a status."""
    ok, mi, mf, ws, ci, cf, cws, no_forces = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    st = _solved_state(mi, mf, ws, ci, cf, cws, y, yd, ydd, tau.shape[0], True, no_forces)
    if st != OK:
        return st
    return cluster_rnea_linked(mi, mf, ws, y, yd, ydd, no_forces, ci, cf, cws, gravity, tau)


@kernel
def cluster_efpa_solved_kernel(tables, y, fbody, fR, fp, Z, Omega):
    """C-EFPA after the position solve (module docstring): Ω (6m, 6m) of the m frames at
    poses (fR, fp)[e] in bodies ``fbody[e]`` into ``Omega``, ``Z`` the scratch of
    :func:`~.efpa.cluster_efpa_kernel`; returns a status."""
    ok, mi, mf, ws, ci, cf, cws, _ = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    c = cluster_tables(ci)
    st = cluster_configuration_status(ci, y, c.nyv)
    if st != OK:
        return st
    st = prepare_implicit(mi, mf, ws, ci, cf, cws, y, y[:0], y[:0], SOLVE, False)
    if st != OK:
        return st
    return cluster_efpa_linked(mi, mf, ws, y, fbody, fR, fp, Z, ci, cf, cws, Omega)
