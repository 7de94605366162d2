"""A call path into compiled kernels whose type checks cost nothing.

Validating every argument in Python (type, dtype, layout, shape) costs ~0.1 µs per
array, as much as the dynamics of several bodies. Numba's dispatcher inspects the
argument types anyway to pick a compiled version, so the public functions first try
:attr:`ExactCall.fast`: a second dispatcher over the same kernel that holds only the
versions already compiled and never compiles. Any other argument types (a list, a
batch, a strided, read-only or integer array) raise ``TypeError`` in ~2 µs and the
public function takes its general path, which validates and converts the arguments
with clear errors and calls :attr:`ExactCall.general` (compiling or loading from the
cache as needed). The kernels check the lengths themselves (status
``BAD_SHAPE``), so a fast call is as safe as a validated one.
"""
from __future__ import annotations

from numba import njit


def _mismatch(*args, **kwargs):
    raise TypeError("argument types need the general path")


def _no_conversion(*args, **kwargs):
    return False


class ExactCall:
    """``general``: the kernel's dispatcher; ``fast``: its non-compiling twin."""

    __slots__ = ("general", "fast")

    def __init__(self, kernel):
        self.general = kernel
        fast = njit(kernel.py_func)
        # Numba's dispatcher calls these hooks when no compiled version matches; the
        # defaults compile, search type conversions or format a message (~50 µs).
        fast._can_compile = False
        fast._compile_for_args = _mismatch
        fast._search_new_conversions = _no_conversion
        fast._explain_matching_error = _mismatch
        fast._explain_ambiguous = _mismatch
        self.fast = fast
        self.share()

    def share(self):
        """Make every version ``general`` has compiled callable through ``fast``."""
        fast = self.fast
        for sig, cres in list(self.general.overloads.items()):
            if sig not in fast.overloads:
                fast.add_overload(cres)

    def __call__(self, *args):
        """Call through the general dispatcher, then share what it compiled."""
        result = self.general(*args)
        self.share()
        return result
