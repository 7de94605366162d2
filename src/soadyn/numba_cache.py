"""Where Numba caches soadyn's compiled kernels, and the notice of a first compilation.

Numba invalidates a cached kernel only when the source file that defines it changes.
soadyn's kernels inline helpers from other modules (the spatial primitives, the
workspace layout), so editing one of those would leave stale machine code behind. The
cache therefore lives in a directory named after a hash of every module that defines
compiled code (a ``@njit`` or ``@intrinsic`` function), of the Numba version and of the
form of what soadyn's changes to Numba's compilation write
(:data:`soadyn.numba_patches.CACHE_FORMAT`): a change to any of them starts a fresh
cache, and older directories are removed. Modules without compiled code (the Python
front, the command line, this module and :mod:`soadyn.numba_patches`) can change without
a recompilation.

A user who sets ``NUMBA_CACHE_DIR`` keeps full control; nothing is changed then.

The first call of a kernel on a machine compiles it, which takes seconds: so that a first
call does not look like a hang, :func:`announce_compilations` prints one line on stderr
when the first soadyn kernel of a process starts compiling (a cache miss), with the time
it usually takes and the way to do it ahead of time (``soadyn precompile``). Set
``SOADYN_COMPILE_NOTICE=0`` to silence it. How soadyn makes that compilation shorter:
:mod:`soadyn.numba_patches`.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time

import numba
from numba.core import config, event

from .numba_patches import CACHE_FORMAT


#: what a module that defines compiled code contains (this module and numba_patches name
#: them but define none: they are skipped, so editing them keeps the cache)
_COMPILED_CODE = (b"@njit", b"@intrinsic", b"@overload", b"@register_jitable")

#: the modules at the package root that are not part of the tag (module docstring)
_NOT_HASHED = ("numba_cache.py", "numba_patches.py")


def _source_tag(root):
    h = hashlib.sha1(numba.__version__.encode() + CACHE_FORMAT)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") and not (dirpath == root and name in _NOT_HASHED):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    source = f.read()
                if any(mark in source for mark in _COMPILED_CODE):
                    h.update(os.path.relpath(path, root).encode())
                    h.update(source)
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


#: cold compile time of one public function's kernels, measured on a 2-core machine
#: (range over the tree, operator and closed-chain functions in benchmarks/results/cold_compile.md,
#: 2026-11-28 21:3x: 2.8 s frame_jacobian to 28.5 s for cluster_aba on a batch of a model with an
#: implicit loop)
TYPICAL_COMPILE = "3-30 s"


class _CompileNotice(event.Listener):
    """Prints one line on stderr when the first soadyn kernel of the process starts
    compiling (a cache miss); later compilations print nothing."""

    def __init__(self, stream):
        self.stream = stream
        self.said = False

    def on_start(self, ev):
        if self.said or os.environ.get("SOADYN_COMPILE_NOTICE", "1") == "0":
            return
        # a user's function made by exec() has no module name (None): not ours
        module = getattr(getattr(ev.data["dispatcher"], "py_func", None), "__module__", None)
        if isinstance(module, str) and module.startswith("soadyn."):
            self.said = True
            print(f"soadyn: compiling kernels for this machine ({time.strftime('%H:%M:%S')}; first use only: usually "
                  f"{TYPICAL_COMPILE} per public function, then cached on disk; `soadyn precompile` compiles every "
                  "kernel ahead of time)", file=self.stream, flush=True)

    def on_end(self, ev):
        pass


_notice = None


def announce_compilations(stream=None):
    """Register the one-line compile notice (once per process; ``stream`` default
    ``sys.stderr``, looked up at each message when None)."""
    global _notice
    if _notice is None:
        _notice = _CompileNotice(stream if stream is not None else _Stderr())
        event.register("numba:compile", _notice)
    return _notice


class _Stderr:
    """``sys.stderr`` as it is when written to (pytest and notebooks replace it)."""

    def write(self, text):
        return sys.stderr.write(text)

    def flush(self):
        sys.stderr.flush()
