"""Recursive O(N) algorithms over the flat model arrays, compiled with Numba."""
