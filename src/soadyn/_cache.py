"""Where Numba caches soadyn's compiled kernels.

Numba invalidates a cached kernel only when the source file that defines it changes.
soadyn's kernels inline helpers from other modules (the spatial primitives, the
workspace layout), so editing one of those would leave stale machine code behind. The
cache therefore lives in a directory named after a hash of the whole package source
(and the Numba version): any change to any module starts a fresh cache, and older
directories are removed.

A user who sets ``NUMBA_CACHE_DIR`` keeps full control; nothing is changed then.
"""
from __future__ import annotations

import hashlib
import os
import shutil


def _source_tag(root):
    import numba
    h = hashlib.sha1(numba.__version__.encode())
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()[:16]


def _writable_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".write-test")
        with open(probe, "w"):
            pass
        os.remove(probe)
        return True
    except OSError:
        return False


def configure():
    """Point Numba's cache at ``<package>/__pycache__/numba-<tag>`` (or a per-user cache
    directory when the package directory is read-only). Call before any kernel is defined."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    from numba.core import config
    root = os.path.dirname(os.path.abspath(__file__))
    tag = _source_tag(root)
    base = os.path.join(root, "__pycache__")
    if not _writable_dir(base):
        base = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "soadyn")
        if not _writable_dir(base):
            return  # Numba falls back to its own locations
    target = os.path.join(base, f"numba-{tag}")
    for old in os.listdir(base):
        if old.startswith("numba-") and old != os.path.basename(target):
            shutil.rmtree(os.path.join(base, old), ignore_errors=True)
    config.CACHE_DIR = target
