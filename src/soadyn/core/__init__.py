"""The model and what every other layer builds on: spatial algebra, joint types and their
kernels, the configuration space, constraint descriptions, the versioned Model, its flat
array form with named views, the one cache of derived data and the one call path into
compiled code. Imports nothing from the rest of the package but the Numba setup at its
root (:func:`soadyn.numba_cache.setup`), which must run before the first kernel is defined:
every module that defines compiled code imports this package first."""
from .. import numba_cache

numba_cache.setup()
