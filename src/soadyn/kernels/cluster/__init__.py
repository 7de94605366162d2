"""Compiled cluster algorithms of constraint embedding [Chignoli23]: the explicit map,
cluster kinematics and inertias, C-ABA, C-RNEA, the cluster mass matrix and C-EFPA — one
algorithm per module, over the named views of :mod:`.layout`."""
