"""
Mass-matrix sparsity
====================

The mass matrix M = Hφ M φ*H* couples the joints of two bodies only when one lies on the
other's path to the root ([Jain12, §7]): the joints of different branches never interact
through M, at any configuration. :func:`soadyn.mass_matrix_sparsity` predicts that
pattern from the topology alone; :func:`soadyn.plot.sparsity` draws it over the
magnitudes of M(q) and marks the entries that the geometry zeroes besides (orthogonal
joint axes, a mass on an axis), which the topology cannot see.
"""
import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd

# %%
# A branched tree: two children per body, three levels. The pattern is block-sparse:
# each joint couples with its ancestors and descendants only.
tree = sd.models.branched_tree(3, 2)
P = sd.mass_matrix_sparsity(tree)
print(f"{tree.name}: {int(P.sum())} of {P.size} entries of M may be nonzero")
fig = sd.plot.sparsity(tree)

# %%
# The Mini Cheetah: a floating base and four legs, each joint driven by a geared rotor.
# The rotors are bodies of the spanning tree (their gear constraints are handled by the
# closed-chain functions); the sparsity of the tree's M is the legs' independence:
# the four 6 x 6 leg blocks (three joints and three rotors each) couple only through the
# floating base.
cheetah = sd.models.get("mini_cheetah").spanning_tree()
P = sd.mass_matrix_sparsity(cheetah)
M = sd.mass_matrix(cheetah, sd.random_configuration(cheetah, np.random.default_rng(1)))
outside = np.abs(M[~P]).max()
print(f"mini_cheetah spanning tree: nv = {cheetah.nv}, {int(P.sum())} of {P.size} entries allowed by the "
      f"topology, largest |M_ij| outside the pattern: {outside:.1e}")
fig = sd.plot.sparsity(cheetah)
plt.show()
