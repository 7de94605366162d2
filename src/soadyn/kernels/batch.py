"""Helpers of the batched kernels.

A batched kernel runs ``prange`` over blocks of ``BATCH_BLOCK`` states; each thread
works with the workspace ``wss[numba.get_thread_id()]``. Threads take blocks one at a
time (``parallel_chunksize(1)`` around the call), so a thread slowed down by other work
on its core takes fewer of them instead of holding up the whole call.
"""
from __future__ import annotations

from numba import njit

#: states per scheduling unit of the batched kernels
BATCH_BLOCK = 16


@njit(inline="always", cache=True)
def batch_blocks(batch):
    """Number of ``BATCH_BLOCK``-state blocks of a batch of ``batch`` states."""
    return (batch + BATCH_BLOCK - 1) // BATCH_BLOCK
