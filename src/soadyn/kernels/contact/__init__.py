"""Numba kernels of the contact dynamics: the contact Jacobian's products (points), the
Delassus operator (delassus), the friction cones (cones) and the NCP solvers (admm, pgs)."""
