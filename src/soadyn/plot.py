"""Pictures of a model's structure (matplotlib, the optional extra ``plot``).

:func:`sparsity` draws the mass-matrix pattern that the topology predicts
([Jain12, §7], :func:`soadyn.mass_matrix_sparsity`) over the magnitudes |M(q)|, and marks
the entries the geometry zeroes beyond it; :func:`sparsity_data` is what the picture
shows, as arrays. matplotlib is imported when a picture is drawn, not before.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .core.configuration import random_configuration
from .core import validation as val
from .dynamics.crba import mass_matrix
from .graph import mass_matrix_sparsity

__all__ = ["SparsityData", "sparsity_data", "sparsity"]

#: What :func:`sparsity` draws. ``predicted`` (nv, nv) bool: where the topology lets M be
#: nonzero; ``magnitude`` (nv, nv): |M(q)| at the configuration drawn; ``observed`` (nv, nv)
#: bool: entries nonzero (above ``tol`` times the largest |M|) at one of the sampled
#: configurations; ``geometric_zeros`` (nv, nv) bool: predicted nonzero but zero at every
#: sample — zeros the geometry makes (orthogonal joint axes, a mass on an axis) and the
#: topology cannot see; ``q`` the configuration of ``magnitude``.
SparsityData = namedtuple("SparsityData", ["predicted", "magnitude", "observed", "geometric_zeros", "q"])


def sparsity_data(model, q=None, samples=8, rng=0, tol=1e-12):
    """The data of :func:`sparsity`.

    Parameters
    ----------
    model : a tree Model (a model with constraints: its ``spanning_tree()``).
    q : (nq,) configuration of the magnitudes (default: the first random sample).
    samples : random configurations (``soadyn.random_configuration``) over which an entry
        must vanish to count as a geometric zero; ``q`` is one of them when given.
    rng : seed or ``numpy.random.Generator`` of the samples.
    tol : an entry is zero when |M_ij| ≤ tol · max |M| at that configuration.

    Returns :class:`SparsityData`.
    """
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ValueError(f"samples: expected a positive number of configurations, got {samples!r}")
    if not (isinstance(tol, (float, int)) and 0.0 <= tol < 1.0):
        raise ValueError(f"tol: expected a relative tolerance in [0, 1), got {tol!r}")
    gen = np.random.default_rng(rng)
    configurations = [random_configuration(model, gen) for _ in range(samples)]
    if q is not None:
        q = val.vector(q, model.nq, "q", batch_ok=False)
        configurations[0] = q
    observed = np.zeros((model.nv, model.nv), dtype=bool)
    magnitude = None
    for x in configurations:
        M = np.abs(mass_matrix(model, x))
        observed |= M > tol * M.max()
        if magnitude is None:
            magnitude = M
    predicted = mass_matrix_sparsity(model)
    return SparsityData(predicted, magnitude, observed, predicted & ~observed, configurations[0])


def sparsity(model, q=None, ax=None, samples=8, rng=0):
    """Draw |M(q)| (log scale) with the pattern the topology predicts: entries the topology
    zeroes are left white, entries it allows are coloured by magnitude, and those the
    geometry zeroes at every sample (:func:`sparsity_data`) are marked with a grey dot.

    Parameters
    ----------
    model, q, samples, rng : as :func:`sparsity_data`.
    ax : a matplotlib Axes to draw on (default: a new figure).

    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt  # optional dependency (extra 'plot'): imported to draw only
    from matplotlib.colors import LogNorm

    d = sparsity_data(model, q, samples, rng)
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 5.4))
    else:
        fig = ax.figure
    shown = np.ma.masked_where(~d.predicted | (d.magnitude == 0.0), d.magnitude)
    positive = d.magnitude[d.magnitude > 0.0]
    norm = LogNorm(vmin=max(positive.min(), positive.max() * 1e-12), vmax=positive.max()) if positive.size else None
    image = ax.imshow(shown, cmap="viridis", norm=norm, interpolation="nearest")
    rows, cols = np.nonzero(d.geometric_zeros)
    ax.scatter(cols, rows, s=6, c="0.5", marker="o", label="zero by geometry")
    n = model.nv
    ax.set_title(f"{model.name}: |M(q)|, {int(d.predicted.sum())} of {n * n} entries allowed by the topology,\n"
                 f"{int(d.geometric_zeros.sum())} zero by geometry", fontsize=8)
    ax.set_xlabel("velocity coordinate")
    ax.set_ylabel("velocity coordinate")
    fig.colorbar(image, ax=ax, label="|M_ij| (white: zero by topology)")
    if rows.size:
        ax.legend(loc="upper right", fontsize=7)
    return fig
