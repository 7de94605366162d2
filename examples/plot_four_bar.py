"""
Four-bar linkage: energy and constraint drift
=============================================

A planar crank-rocker four-bar is a closed chain: three revolute joints in a spanning
tree (crank, coupler, rocker) and one loop joint that closes it. The equations of motion
are a DAE — the tree's dynamics plus the loop constraint 𝔡(q) = 0 — solved here by the
cut-joint "augmented" method ([Jain24]). Integrated as an ODE, the acceleration-level
constraint holds but the position and velocity constraints drift; Baumgarte stabilization
(𝔡̈ + 2α𝔡̇ + β²𝔡 = 0) or a projection after each step keeps the state on the manifold.
"""
import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd
from soadyn.simulate import simulate

model = sd.models.get("four_bar_linkage")
print(model.summary())

# %%
# A consistent initial state: the crank angle and its rate are given, the other two
# joints are solved from the loop closure (position and velocity).
q0, v0 = sd.close_loops(model, [0.5, 1.0, 1.5], [2.0, 0.0, 0.0])
print("q0 =", q0, " residual:", np.abs(sd.constraint_residual(model, q0)).max())

# %%
# Two seconds of free motion under gravity, RK4 with a 2 ms step and Baumgarte
# stabilization (α = β = 10/s). ``plot`` draws the joint angles and rates, the total
# energy (conserved: no damping, no input) and the constraint residual ``max |𝔡(q(t))|``.
res = simulate(model, q0, v0, 2.0, dt=2e-3, stabilization="baumgarte", baumgarte=(10.0, 10.0))
print(f"energy drift {res.energy_drift:.2e} J of E(0) = {res.energy[0]:.3f} J, "
      f"max constraint residual {res.constraint_drift:.2e}")
fig = res.plot()

# %%
# The same motion without stabilization, with Baumgarte and with projection: the
# position residual of the loop over time. Unstabilized, the integration error
# accumulates; the stabilized runs stay near round-off.
fig, ax = plt.subplots(figsize=(7, 3.5))
for stabilization in ("none", "baumgarte", "projection"):
    r = simulate(model, q0, v0, 2.0, dt=2e-3, stabilization=stabilization)
    ax.semilogy(r.t, np.maximum(r.constraint_residual, 1e-17), label=f"{stabilization}: energy drift "
                f"{r.energy_drift:.1e} J")
ax.set_xlabel("t [s]")
ax.set_ylabel("max |d(q)| [m, rad]")
ax.set_title("four-bar loop residual, RK4 dt = 2 ms (values below 1e-17 drawn at 1e-17)", fontsize=9)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
