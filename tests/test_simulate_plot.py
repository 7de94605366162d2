"""SimulationResult.plot: the figure's axes hold the result's data (q, v, energy) and, for
a closed chain, the constraint residual history, which is checked against the residual
recomputed with :func:`soadyn.constraint_residual` at every recorded configuration."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import models
from soadyn.simulate import simulate

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _ydata(ax):
    return [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]


def test_tree_figure_holds_trajectories_and_energy():
    model = models.serial_chain(3)
    res = simulate(model, [0.3, -0.2, 0.5], [0.0, 1.0, 0.0], 0.2, dt=5e-3)
    fig = res.plot()
    try:
        assert isinstance(fig, matplotlib.figure.Figure)
        axes = fig.axes
        assert len(axes) == 3  # q, v, energy: no residual panel for a tree
        for ax, x in ((axes[0], res.q), (axes[1], res.v)):
            lines = ax.get_lines()
            assert len(lines) == x.shape[1]
            for k, line in enumerate(lines):
                np.testing.assert_array_equal(line.get_xdata(), res.t)
                np.testing.assert_array_equal(line.get_ydata(), x[:, k])
        (energy,) = _ydata(axes[2])
        np.testing.assert_array_equal(energy, res.energy)
        # and the energy drawn is T + U at the recorded states
        expected = [sd.kinetic_energy(model, q, v) + sd.potential_energy(model, q) for q, v in zip(res.q, res.v)]
        np.testing.assert_allclose(energy, expected, rtol=1e-12, atol=1e-12)
    finally:
        plt.close(fig)


def test_selected_coordinates():
    model = models.serial_chain(3)
    res = simulate(model, [0.3, -0.2, 0.5], None, 0.05, dt=5e-3)
    fig = res.plot(q_index=[2], v_index=[0, 1])
    try:
        np.testing.assert_array_equal(_ydata(fig.axes[0]), [res.q[:, 2]])
        np.testing.assert_array_equal(_ydata(fig.axes[1]), [res.v[:, 0], res.v[:, 1]])
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match=r"q_index: expected a sequence of indices in \[0, 3\)"):
        res.plot(q_index=[3])


def test_closed_chain_figure_holds_the_constraint_residual():
    model = models.four_bar_linkage()
    q, v = sd.close_loops(model, [0.5, 1.0, 1.5], [2.0, 0.0, 0.0])
    # no stabilization: the residual grows from the integration error, so it is not all zeros
    res = simulate(model, q, v, 0.3, dt=1e-2, stabilization="none")
    fig = res.plot()
    try:
        assert len(fig.axes) == 4
        (residual,) = _ydata(fig.axes[3])
        expected = np.array([np.abs(sd.constraint_residual(model, x, t)).max() for t, x in zip(res.t, res.q)])
        assert expected.max() > 1e-12  # a drift to see
        np.testing.assert_allclose(residual, expected, rtol=1e-12, atol=1e-15)
        assert fig.axes[3].get_yscale() == "log"
        (energy,) = _ydata(fig.axes[2])
        np.testing.assert_array_equal(energy, res.energy)
    finally:
        plt.close(fig)
