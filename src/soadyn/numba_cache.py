"""Where Numba caches soadyn's compiled kernels, and the notice of a first compilation.

Numba invalidates a cached kernel only when the source file that defines it changes.
soadyn's kernels inline helpers from other modules (the spatial primitives, the
workspace layout), so editing one of those would leave stale machine code behind. The
cache therefore lives in a directory named after a hash of every module that defines
compiled code (a ``@kernel``, ``@helper`` or ``@intrinsic`` function) and of the Numba version, and after
it a hash of the Numba patches applied (:func:`soadyn.numba_patches.cache_format`): a
change to the sources or to Numba starts a fresh cache, and the directories of older
sources are removed; processes with different patches switched on
(``SOADYN_NUMBA_PATCHES``) keep a cache each, side by side. Modules without compiled code (the Python
front, the command line, this module and :mod:`soadyn.numba_patches`) can change without
a recompilation.

A user who sets ``NUMBA_CACHE_DIR`` keeps full control; nothing is changed then.

Inside that directory each module's entries sit under its path in the package
(``kernels/contact``, ...; :class:`PackageCacheLocator`), not under a hash of its absolute
path as Numba files them: a copy of the package directory made after ``soadyn
precompile`` (a container layer, a moved virtual environment) loads its kernels without
compiling wherever it lands. Numba checks each entry against a hash of its source file's
content, not its modification time, and keys it by the CPU (name and features) it was
compiled for: a copy on another CPU compiles what it needs and adds its own entries.

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
from numba.core import caching, config, event

from . import numba_patches


#: what a module that defines compiled code contains (this module and numba_patches name
#: them but define none: they are skipped, so editing them keeps the cache)
_COMPILED_CODE = (b"@kernel", b"@helper", b"@intrinsic", b"@overload", b"@register_jitable")

#: the modules at the package root that are not part of the tag (module docstring)
_NOT_HASHED = ("numba_cache.py", "numba_patches.py")


def _source_tag(root):
    h = hashlib.sha1(numba.__version__.encode())
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


#: the package directory, whose layout the cache's subdirectories repeat
_ROOT = os.path.dirname(os.path.abspath(__file__))

#: the cache directory :func:`configure` chose (None: Numba's own choice, or the user's)
_configured_dir = None


class PackageCacheLocator(caching.UserProvidedCacheLocator):
    """Numba's cache locator for soadyn's compiled functions in the cache directory that
    :func:`configure` chose: the entries of ``<package>/kernels/contact/step.py`` go to
    ``<cache>/kernels.contact``, those of the package's root modules to ``<cache>/soadyn``
    (Numba's :class:`~numba.core.caching.UserProvidedCacheLocator` names the subdirectory
    after a hash of the source's absolute directory, so a moved copy of the package would
    miss). Anything else (a user's function, a cache directory the user set) goes to
    Numba's own locators: :meth:`from_function` answers None."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        relative = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), _ROOT)
        self._cache_path = os.path.join(config.CACHE_DIR,
                                        "soadyn" if relative == os.curdir else relative.replace(os.sep, "."))

    @classmethod
    def from_function(cls, py_func, py_file):
        if _configured_dir is None or config.CACHE_DIR != _configured_dir:
            return None
        if not numba_patches.is_soadyns(py_func):
            return None
        try:
            if os.path.commonpath([os.path.abspath(py_file), _ROOT]) != _ROOT:
                return None
        except ValueError:  # (on another drive, on Windows)
            return None
        return super().from_function(py_func, py_file)


def _use_package_locator():
    """Put :class:`PackageCacheLocator` before Numba's locators (Numba's
    ``NUMBA_CACHE_LOCATOR_CLASSES`` setting, left alone when the user set it). False when
    this Numba has no such setting: the cache then works as Numba files it, bound to the
    package's path."""
    if os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES") or not hasattr(config, "CACHE_LOCATOR_CLASSES"):
        return False
    numbas = getattr(caching.CacheImpl, "_locator_classes", None)
    if not numbas:
        return False
    names = [f"{PackageCacheLocator.__module__}.{PackageCacheLocator.__qualname__}"]
    names += [f"{c.__module__}.{c.__qualname__}" for c in numbas]
    config.CACHE_LOCATOR_CLASSES = ",".join(names)
    return True


def configure():
    """Point Numba's cache at ``<package>/__pycache__/numba-<tag>`` (or a per-user cache
    directory when the package directory is read-only), its entries filed by their path
    in the package (:class:`PackageCacheLocator`). Call before any kernel is defined."""
    global _configured_dir
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    root = _ROOT
    tag = _source_tag(root)
    patches = hashlib.sha1(numba_patches.cache_format()).hexdigest()[:8]
    base = os.path.join(root, "__pycache__")
    if not _writable_dir(base):
        base = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "soadyn")
        if not _writable_dir(base):
            return  # Numba falls back to its own locations
    target = os.path.join(base, f"numba-{tag}-{patches}")
    for old in os.listdir(base):
        if old.startswith("numba-") and not old.startswith(f"numba-{tag}-"):
            shutil.rmtree(os.path.join(base, old), ignore_errors=True)
    config.CACHE_DIR = target
    _configured_dir = target
    _use_package_locator()


_set_up = False


def setup():
    """Prepare Numba for soadyn's kernels, once per process, before the first one is
    defined: the patches the switches ask for (:func:`soadyn.numba_patches.install`), the
    cache directory of those patches and these sources (:func:`configure`), the notice of
    a first compilation (:func:`announce_compilations`). ``soadyn/core/__init__.py`` calls
    it: every module that defines compiled code imports :mod:`soadyn.core.jit`."""
    global _set_up
    if _set_up:
        return
    _set_up = True
    numba_patches.install()
    configure()
    announce_compilations()


#: cold compile time of one public function's kernels, measured on a 2-core machine
#: (the range over every public function in
#: benchmarks/results/cold_compile.md)
TYPICAL_COMPILE = "2-55 s"


class _CompileNotice(event.Listener):
    """Prints one line on stderr when the first soadyn kernel of the process starts
    compiling (a cache miss); later compilations print nothing."""

    def __init__(self, stream):
        self.stream = stream
        self.said = False

    def on_start(self, ev):
        if self.said or os.environ.get("SOADYN_COMPILE_NOTICE", "1") == "0":
            return
        if numba_patches.is_soadyns(getattr(ev.data["dispatcher"], "py_func", None)):
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
