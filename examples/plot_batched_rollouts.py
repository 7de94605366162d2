"""
Batched evaluation and rollouts
===============================

Most functions take a leading batch dimension: ``q`` of shape (B, nq), ``v`` and the
others likewise, and evaluate all B states in one call of a compiled loop, split into
blocks over ``NUMBA_NUM_THREADS`` threads. :func:`soadyn.rollout` integrates B control
sequences from B initial states in one compiled call. Trees only; closed chains have
:func:`soadyn.simulate` and the batched cluster functions.
"""
import time

import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd

# %%
# A batch of states of the Mini Cheetah's spanning tree (a floating base, twelve leg
# joints and their twelve rotors as free bodies): forward dynamics of all of them in one
# call equals the calls one by one.
model = sd.models.get("mini_cheetah").spanning_tree()
rng = np.random.default_rng(0)
B = 2000
q = np.stack([sd.random_configuration(model, rng) for _ in range(B)])
v = rng.normal(size=(B, model.nv))
tau = rng.normal(size=(B, model.nv))
qdd = sd.aba(model, q, v, tau)  # (B, nv)
one_by_one = np.stack([sd.aba(model, q[k], v[k], tau[k]) for k in range(B)])
print(f"batch of {B}: result {qdd.shape}, max difference to single calls {np.abs(qdd - one_by_one).max():.1e}")

# %%
# What the batch saves is the Python call per state. Timed on the machine that built
# this page (a shared machine: the numbers vary from run to run).
t0 = time.perf_counter()
sd.aba(model, q, v, tau)
t_batch = time.perf_counter() - t0
t0 = time.perf_counter()
for k in range(B):
    sd.aba(model, q[k], v[k], tau[k])
t_loop = time.perf_counter() - t0
print(f"ABA: {1e6 * t_batch / B:.1f} µs per state in a batch, {1e6 * t_loop / B:.1f} µs per single call")

# %%
# Rollouts: a double pendulum released from 64 initial states that differ by at most
# 1e-6 rad, integrated for 10 s with RK4 (dt = 1 ms, no input) in one compiled call. The
# swing is chaotic: the trajectories stay together for a few seconds, then separate.
pendulum = sd.models.get("double_pendulum")
B, T, dt = 64, 10000, 1e-3
q0 = np.array([2.0, 1.5]) + 1e-6 * np.linspace(-1.0, 1.0, B)[:, None] * np.array([1.0, 0.0])
qs, vs = sd.rollout(pendulum, q0, np.zeros((B, pendulum.nv)), np.zeros((B, T, pendulum.nv)), dt, "rk4")
print("configurations", qs.shape, "velocities", vs.shape)
t = dt * np.arange(T + 1)
energy = sd.kinetic_energy(pendulum, qs[:, ::100].reshape(-1, 2), vs[:, ::100].reshape(-1, 2)) + \
    sd.potential_energy(pendulum, qs[:, ::100].reshape(-1, 2))
energy = energy.reshape(B, -1)
print(f"energy drift over 10 s (RK4, batched energies): max {np.abs(energy - energy[:, :1]).max():.1e} J")
fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
for k in range(0, B, 4):
    ax[0].plot(t, qs[k, :, 1], lw=0.6, color=plt.cm.viridis(k / B))
ax[0].set_ylabel("elbow angle q[1] [rad]")
ax[0].set_title(f"double pendulum: {B} rollouts from initial angles within 1e-6 rad", fontsize=9)
spread = qs[:, :, 1].max(axis=0) - qs[:, :, 1].min(axis=0)
ax[1].semilogy(t[1:], spread[1:])
ax[1].set_ylabel("spread of q[1] [rad]")
ax[1].set_xlabel("t [s]")
fig.tight_layout()
plt.show()
