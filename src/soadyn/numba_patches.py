"""How soadyn changes Numba's compilation of its own functions: patches of Numba's internals,
each optional, each applied to soadyn's registered functions only (a user's functions compile
as Numba compiles them), each keeping the results of the code the same.

:func:`compile_for_plain_types` stops Numba from compiling a helper again for each
constant argument it receives; :func:`link_helpers_only` stops it from optimizing and
emitting machine code for helpers that only compiled code calls;
:func:`remember_call_types` stops it from resolving the type of the same operation on
the same argument types again and again while typing soadyn's functions;
:func:`lighter_passes` runs lighter LLVM pipelines over soadyn's code where the kernels
optimize it again anyway; :func:`pass_views_whole` passes the
named views to the always-inlined helpers as one argument each;
:func:`return_views_from_helpers` lets helpers compiled without reference counting return
array views.

**Stock Numba is a supported configuration.** ``SOADYN_NUMBA_PATCHES=0`` applies none of
them (soadyn then runs on Numba as released: the same results, slower cold compiles);
``SOADYN_NUMBA_PATCHES=name,name`` applies the ones named (``1`` or unset: all), and
``SOADYN_NUMBA_PATCH_<NAME>=0`` or ``=1`` switches one off or on over that
(``SOADYN_NUMBA_PATCH_LIGHTER_PASSES=0``). Read once, when soadyn's compiled code is first
imported (:func:`install`).

**Each patch checks its ground first** (:class:`Patch`): the Numba version is in the range
it was written and tested for (:data:`TESTED`), and every internal it replaces or relies on
exists with the signature it was written for. Otherwise it stays out, with one
:class:`NumbaPatchWarning` naming it and what was found; soadyn is then correct as on stock
Numba (the one patch the kernels need to compile, :func:`return_views_from_helpers`, has its
stock form: soadyn's helpers then count references, :func:`helpers_count_references`).

**Soadyn's functions** are the ones its decorators :func:`soadyn.core.jit.kernel` and
:func:`soadyn.core.jit.helper` registered, not the functions of modules whose name starts
with ``soadyn.``; what a function is (a kernel Python enters, a helper only compiled code
calls) is the registry's answer (:func:`soadyn.core.jit.kind`), not Numba's flags.

What these patches write into Numba's cache is named by :func:`cache_format` (the applied
patches and the form of each), part of the cache's tag (:mod:`soadyn.numba_cache`): bump a
patch's ``form`` when it changes the code made.
"""
from __future__ import annotations

import copy
import importlib
import inspect
import os
import re
import threading
import warnings

import numba

from . import jit_registry

#: the Numba versions the patches were written and tested for: (first, past the last),
#: as (major, minor); a Numba outside it runs soadyn without them
TESTED = ((0, 68), (0, 69))


class NumbaPatchWarning(UserWarning):
    """A patch of Numba's internals that could not apply (another Numba version, or an
    internal that changed); soadyn runs without it, with the same results."""


#: Numba's own versions of what the patches replace, kept when a patch applies (the
#: replacements call them for everything that is not soadyn's)
_numba_call_template = _numba_get_executable = _numba_finalize = _numba_serialize = _numba_unserialize = None
_numba_referenced_environments = _numba_get_call_type = _get_local_target = _numba_optimize_functions = None
_numba_declare_function = _numba_decode_arguments = _numba_call_function = _numba_type_inference = None


# --- soadyn's compiled functions ---------------------------------------------------------


def _registry():
    """:mod:`soadyn.jit_registry`, which says which functions are soadyn's and of which kind
    (written by the decorators of :mod:`soadyn.core.jit`)."""
    return jit_registry


def is_soadyns(py_func):
    """True for a Python function that soadyn's decorators compile (a kernel or a helper)."""
    return _registry().kind(py_func) is not None


def _is_helper_named(modname, qualname):
    """True when the function ``qualname`` of module ``modname`` (Numba's function
    descriptor names both) is a soadyn helper (:func:`soadyn.core.jit.helper`)."""
    registry = _registry()
    return registry.kind_named(modname, qualname) == registry.HELPER


# --- the patches, their switches and their checks -----------------------------------------


def _resolve(path):
    """The object at ``"module:Class.attribute"``, or None when any part is missing."""
    module, _, attributes = path.partition(":")
    try:
        obj = importlib.import_module(module)
    except ImportError:
        return None
    for name in filter(None, attributes.split(".")):
        obj = inspect.getattr_static(obj, name, None) if isinstance(obj, type) else getattr(obj, name, None)
        if obj is None:
            return None
    return obj


def _parameters(obj):
    function = getattr(obj, "__func__", obj)  # a classmethod or staticmethod: its function
    try:
        return ", ".join(str(p) for p in inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None


class Patch:
    """One patch of Numba's internals.

    ``replaces`` maps the internals it replaces (``"module:Class.method"``) to the
    parameters they were written for (``"self, args, kws"``); ``uses`` names what else of
    Numba it relies on: ``"module:Class.attribute"`` must exist, ``"module:Class.method
    name, name"`` must read or set those names (an attribute set in ``__init__``).
    ``form``: the version of what the patch writes into the cache. ``apply`` installs it.
    """

    def __init__(self, name, apply, replaces, uses=(), form=1):
        self.name, self.apply, self.replaces, self.uses, self.form = name, apply, dict(replaces), tuple(uses), form

    def ground(self):
        """Why the patch cannot apply here (a sentence), or None when it can."""
        version = tuple(int(x) for x in re.findall(r"\d+", numba.__version__)[:2])
        if not TESTED[0] <= version < TESTED[1]:
            return (f"written for Numba {TESTED[0][0]}.{TESTED[0][1]} up to {TESTED[1][0]}.{TESTED[1][1]} "
                    f"(excluded), found {numba.__version__}")
        for path, expected in self.replaces.items():
            obj = _resolve(path)
            if obj is None:
                return f"{path} not found"
            found = _parameters(obj)
            if found != expected:
                return f"{path} takes ({found}), the patch was written for ({expected})"
        for use in self.uses:
            path, _, names = use.partition(" ")
            obj = _resolve(path)
            if obj is None:
                return f"{path} not found"
            if names:
                code = getattr(getattr(obj, "__func__", obj), "__code__", None)
                missing = [n for n in names.replace(",", " ").split() if code is None or n not in code.co_names]
                if missing:
                    return f"{path} no longer uses {', '.join(missing)}"
        return None


def _wanted(name):
    """Whether the switches (module docstring) ask for the patch ``name``."""
    one = os.environ.get(f"SOADYN_NUMBA_PATCH_{name.upper()}")
    if one is not None:
        return one.strip() not in ("0", "", "off", "false")
    every = os.environ.get("SOADYN_NUMBA_PATCHES", "1").strip().lower()
    if every in ("1", "all", "on", "true"):
        return True
    if every in ("0", "", "none", "off", "false"):
        return False
    names = {n.strip() for n in every.split(",")}
    unknown = names - set(PATCHES)
    if unknown:
        raise ValueError(f"SOADYN_NUMBA_PATCHES: expected 0, 1 or names among {', '.join(PATCHES)}; "
                         f"got unknown {', '.join(sorted(unknown))}")
    return name in names


_applied = []  # the names of the patches installed, in order
_installed = False
_install_lock = threading.Lock()


def install():
    """Apply the patches the switches ask for whose ground holds (once per process; the
    others stay out, each with one :class:`NumbaPatchWarning` when its ground fails). Runs
    when soadyn's compiled code is first imported (``soadyn/core/__init__.py``), before any
    kernel is defined, compiled or loaded from the cache."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
        if any(_wanted(name) for name in PATCHES):
            # the record of which function is being compiled, before the first compilation
            # (several patches ask it; registered in the middle of one, it would miss its start)
            _soadyn_compiling()
        for name, patch in PATCHES.items():
            if not _wanted(name):
                continue
            reason = patch.ground()
            if reason is not None:
                warnings.warn(f"soadyn: Numba patch {name!r} not applied: {reason}; soadyn runs without it "
                              "(the same results, a slower first compilation)", NumbaPatchWarning, stacklevel=2)
                continue
            patch.apply()
            _applied.append(name)


def applied(name=None):
    """The names of the patches in place (a tuple), or, given a ``name``, whether it is."""
    return tuple(_applied) if name is None else name in _applied


def cache_format():
    """The form of what the applied patches write into Numba's cache (bytes): part of the
    cache's tag, so that a process whose patches differ never loads entries it cannot
    read, nor machine code its own pipelines would not have made."""
    return "; ".join(f"{n}: {PATCHES[n].form}" for n in _applied).encode() or b"stock"


def helpers_count_references():
    """True when soadyn's helpers (no Python entry point) must be compiled with reference
    counting in this process: :func:`return_views_from_helpers` is not applied, and stock
    Numba refuses a function without counting that returns an array view (soadyn's
    helper decorator asks, :func:`soadyn.core.jit.helper`)."""
    return not applied("return_views_from_helpers")


def _plain_types(args, kws):
    from numba.core import types
    return tuple(types.unliteral(a) for a in args), {k: types.unliteral(t) for k, t in kws.items()}


def _call_template(self, args, kws):
    """:meth:`CPUDispatcher.get_call_template`, with soadyn's functions called from
    compiled code compiled for the plain types of their arguments (see
    :func:`compile_for_plain_types`)."""
    if is_soadyns(self.py_func):
        args, kws = _plain_types(args, kws)
    return _numba_call_template(self, args, kws)


def compile_for_plain_types():
    """Numba compiles a separate version of a function for every constant argument it is
    called with from compiled code: ``f(x, True)`` and ``f(x, False)``, or ``g(a, 0)`` and
    ``g(a, i)``, are two compilations each (the constant's type is a literal type). No soadyn
    kernel or helper needs a literal argument, and these versions were 43 extra
    compilations in ``soadyn precompile``. With this, a call from compiled code to a soadyn
    function is compiled for the plain types (bool, int64) of its arguments. Calls to
    Numba's and numpy's functions are unchanged."""
    global _numba_call_template
    from numba.core.registry import CPUDispatcher
    _numba_call_template = CPUDispatcher.get_call_template
    CPUDispatcher.get_call_template = _call_template


# --- helpers compiled for linking only -------------------------------------------------
#
# Numba finalizes the code library of every function it compiles: it links in the
# libraries of the functions it calls, optimizes the linked module (LLVM's module passes)
# and emits machine code for all of it. A caller then links the callee's optimized module
# into its own and does both again. soadyn's helpers (``@helper``: compiled without a
# Python or a C entry point) are never run on their own, only inside the kernels that call
# them, so with a few layers of helpers under a kernel the same code was optimized and
# turned into machine code once per layer. A helper's library now stops after lowering and
# the per-function passes: it is linked into its callers as it is, and only the kernel
# that Python calls optimizes and emits the whole. Its cache entry holds that IR (bitcode)
# and no machine code. A kernel's module passes run over the same linked code as before,
# its helpers' part having had the per-function passes only (call times unchanged within
# the noise; skipping those too made the kernels' passes slower: 45 s against 36 s for
# the first cluster_aba with q=). The measurements:
# benchmarks/results/design_notes.md.


def _is_link_only(library, fndesc):
    """A soadyn helper (:func:`soadyn.core.jit.helper`, the registry's answer): compiled
    without a Python or a C entry point, nothing runs it except compiled code that links
    it in."""
    return _is_helper_named(fndesc.modname, fndesc.qualname)


def _get_executable(self, library, fndesc, env):
    """:meth:`CPUContext.get_executable` without finalizing a link-only library: its
    "executable" has no entry point (address 0), as Numba gives any function compiled
    without a Python wrapper (calling it from Python is an error either way)."""
    link_only = getattr(library, "_soadyn_link_only", None)
    if link_only is None:
        link_only = not library._finalized and _is_link_only(library, fndesc)
        library._soadyn_link_only = link_only
    if not link_only:
        return _numba_get_executable(self, library, fndesc, env)
    from numba import _dynfunc
    return _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1],
                                  f"linked-only helper {fndesc.qualname!r}", 0, env, (library,))


def _finalize(self):
    """:meth:`CPUCodeLibrary.finalize` of a link-only library: link the libraries it
    calls and stop (no module passes, no machine code)."""
    if not getattr(self, "_soadyn_link_only", False):
        return _numba_finalize(self)
    from numba.core import codegen
    codegen.require_global_compiler_lock()
    self._raise_if_finalized()
    for library in dict.fromkeys(self._linking_libraries):
        self._reload_init.update(library._reload_init)
        self._final_module.link_in(library._get_module_for_linking(), preserve=True)
    self._final_module.verify()
    self._finalized = True


_LINK_ONLY = "soadyn-link-only"  # the kind of a link-only library's cache entry


def _serialize(self):
    """A link-only library's cache entry: its module for linking, as bitcode."""
    if not getattr(self, "_soadyn_link_only", False):
        return _numba_serialize(self)
    return (self.name, _LINK_ONLY, self._get_module_for_linking().as_bitcode())


def _unserialize(cls, codegen, state):
    """:meth:`CPUCodeLibrary._unserialize`, reading a link-only library's entry back."""
    import llvmlite.binding as llvm
    name, kind, data = state
    if kind != _LINK_ONLY:
        return _numba_unserialize(cls, codegen, state)
    self = codegen.create_library(name)
    self._soadyn_link_only = True
    self._shared_module = llvm.parse_bitcode(data)
    self._finalized = True
    return self


def _referenced_environments(self):
    """The environments a cache entry sets when it is loaded: none for a link-only
    library (no module of its own in the execution engine; the kernels that link it in
    set the ones their machine code holds)."""
    if getattr(self.library, "_soadyn_link_only", False):
        return []
    return _numba_referenced_environments(self)


def link_helpers_only():
    """Compile soadyn's helpers (functions without a Python or C entry point) for linking
    into their callers only: no module optimization and no machine code of their own
    (see the comment above). Call before any kernel is compiled or loaded."""
    global _numba_get_executable, _numba_finalize, _numba_serialize, _numba_unserialize
    global _numba_referenced_environments
    from numba.core import codegen, compiler, cpu
    _numba_get_executable = cpu.CPUContext.get_executable
    _numba_finalize = codegen.CPUCodeLibrary.finalize
    _numba_serialize = codegen.CPUCodeLibrary.serialize_using_object_code
    _numba_unserialize = codegen.CPUCodeLibrary._unserialize.__func__
    _numba_referenced_environments = compiler.CompileResult._find_referenced_environments
    cpu.CPUContext.get_executable = _get_executable
    codegen.CPUCodeLibrary.finalize = _finalize
    codegen.CPUCodeLibrary.serialize_using_object_code = _serialize
    codegen.CPUCodeLibrary._unserialize = classmethod(_unserialize)
    compiler.CompileResult._find_referenced_environments = _referenced_environments


# --- call types remembered --------------------------------------------------------------
#
# Typing ``x[i, 0] * y`` asks each of the templates registered for ``getitem`` and ``mul``
# (a dozen, most of them overloads for other types, each hashing the compile flags) whether
# it accepts the argument types; the kernels hold tens of thousands of such operations on
# a few distinct type combinations (8 245 resolutions, 280 distinct, in the first
# ``cluster_aba`` call), and Numba resolves each anew, in typing and again in lowering.
# The measurements: benchmarks/results/design_notes.md.


class _SoadynTyping:
    """Whether the function being compiled in this thread is one of soadyn's: a stack
    of the dispatchers being compiled (a caller types its callees inside its own compile
    event), kept per thread."""

    def __init__(self):
        self.local = threading.local()

    def on_start(self, ev):
        stack = self.local.__dict__.setdefault("stack", [])
        stack.append(is_soadyns(getattr(ev.data["dispatcher"], "py_func", None)))

    def on_end(self, ev):
        stack = self.local.__dict__.get("stack")
        if stack:  # (empty for a compilation that started before the listener was registered)
            stack.pop()

    def active(self):
        stack = getattr(self.local, "stack", None)
        return bool(stack) and stack[-1]


_soadyn_typing = None


def _soadyn_compiling():
    """The per-thread record of whether the function Numba is compiling is soadyn's
    (one listener for every patch that asks)."""
    global _soadyn_typing
    if _soadyn_typing is None:
        from numba.core import event
        listener = type("SoadynTyping", (_SoadynTyping, event.Listener), {})()
        event.register("numba:compile", listener)
        _soadyn_typing = listener
    return _soadyn_typing


#: (function type, typing context, target, argument types, keyword types) → (signature,
#: implementation key) of the resolutions that succeeded
_call_types = {}


def _get_call_type(self, context, args, kws):
    """:meth:`BaseFunction.get_call_type`, remembered while typing soadyn's functions."""
    if not _soadyn_compiling().active():
        return _numba_get_call_type(self, context, args, kws)
    key = (self, context, _get_local_target(context), tuple(args), tuple(sorted(kws.items())) if kws else ())
    known = _call_types.get(key)
    if known is not None:
        signature, impl_key = known
        self._impl_keys[signature.args] = impl_key  # what a resolution records for lowering
        return signature
    signature = _numba_get_call_type(self, context, args, kws)
    if signature is not None:
        _call_types[key] = (signature, self._impl_keys[signature.args])
    return signature


def remember_call_types():
    """While Numba types one of soadyn's functions, resolve the type of an operation
    (``getitem``, ``mul``, ``math.sqrt``, ...) on given argument types once and remember
    the result (see the comment above). The answer is the one Numba gives: the key holds
    the function type (a new overload registered for the operation makes a new function
    type), the typing context, the target and the argument types; failed resolutions are
    not remembered (Numba raises its own error each time). A user's functions are typed as
    Numba types them."""
    global _numba_get_call_type, _get_local_target
    from numba.core.target_extension import get_local_target
    from numba.core.types.functions import BaseFunction
    _numba_get_call_type, _get_local_target = BaseFunction.get_call_type, get_local_target
    _soadyn_compiling()
    BaseFunction.get_call_type = _get_call_type


# --- lighter LLVM pipelines for soadyn's code -------------------------------------------
#
# Numba runs LLVM's -O3 function pipeline over each function's IR as it enters its library,
# and over each finalized library's linked module two module pipelines: a "cheap" one whose
# inlining gathers reference-count operations into the same functions for Numba's
# reference-count pruner, then the full -O3 pipeline. For soadyn's functions both are more
# than the code needs: their IR is optimized again inside every kernel that links it in
# (link_helpers_only: the kernel's module pipeline simplifies, inlines and optimizes the
# whole), so the per-function passes run at -O1 (the simplifications that shrink the IR
# before it is linked; skipping them outright made the kernels' module pipelines slower,
# see above); and a module without reference counts (soadyn's kernels count none,
# core/jit.py) goes through the full pipeline alone. A module that does count references
# (the few kernels compiled with counting) keeps Numba's two. The measurements, and what was
# tried and not taken: benchmarks/results/design_notes.md.

#: LLVM's optimization level of the per-function passes over soadyn's IR (Numba's: 3)
FUNCTION_PASS_LEVEL = 1

def _optimize_functions(self, ll_module):
    """:meth:`CPUCodeLibrary._optimize_functions` at ``FUNCTION_PASS_LEVEL`` (or Numba's
    level ``NUMBA_OPT`` when lower) for soadyn's functions (Numba's own for anyone else's)."""
    if not _soadyn_compiling().active():
        return _numba_optimize_functions(self, ll_module)
    from numba.core import config
    ll_module.data_layout = self._codegen._data_layout
    level = min(FUNCTION_PASS_LEVEL, int(config.OPT))  # (a lower NUMBA_OPT, e.g. 0 for debugging, is kept)
    for func in ll_module.functions:
        fpm, pb = self._codegen._function_pass_manager(opt=level)
        with self._recorded_timings.record(f"Function passes on {func.name!r}", pb):
            fpm.run(func, pb)


def counts_references(module):
    """True when the LLVM ``module`` calls Numba's reference counting."""
    for name in ("NRT_incref", "NRT_decref"):
        try:
            module.get_function(name)
            return True
        except NameError:
            pass
    return False


def _optimize_final_module(self):
    """:meth:`CPUCodeLibrary._optimize_final_module`: for a soadyn module without reference
    counts, the full module pipeline alone (:func:`lighter_passes`: Numba's cheap pre-pass
    exists for the pruning of reference counts)."""
    if not _soadyn_compiling().active():
        return _numba_optimize_final_module(self)
    if not _lighter_module_passes or counts_references(self._final_module):
        return _numba_optimize_final_module(self)
    mpm, pb = self._codegen._module_pass_manager()
    with self._recorded_timings.record("Module passes (full optimization)", pb):
        mpm.run(self._final_module, pb)


_lighter_module_passes = False
_numba_optimize_final_module = None


def _patch_final_module():
    """Replace :meth:`CPUCodeLibrary._optimize_final_module` (once: two patches share it)."""
    global _numba_optimize_final_module
    from numba.core import codegen
    if _numba_optimize_final_module is None:
        _numba_optimize_final_module = codegen.CPUCodeLibrary._optimize_final_module
        codegen.CPUCodeLibrary._optimize_final_module = _optimize_final_module


def lighter_passes():
    """Optimize soadyn's functions with the lighter LLVM pipelines described above. Call
    before any kernel is compiled."""
    global _numba_optimize_functions, _lighter_module_passes
    from numba.core import codegen
    _numba_optimize_functions = codegen.CPUCodeLibrary._optimize_functions
    codegen.CPUCodeLibrary._optimize_functions = _optimize_functions
    _lighter_module_passes = True
    _patch_final_module()


# --- named views passed whole to the always-inlined helpers -----------------------------
#
# Numba passes a struct argument as its members, one LLVM argument each, recursively: a
# call with the model tables (tens of arrays, seven members each) is hundreds of
# ``extractvalue`` instructions at the call site and as many ``insertvalue`` in the callee
# to put the struct together again. soadyn's small helpers (the per-cluster accessors of
# the workspace, the per-body steps: ``forceinline``) take the named views and are inlined
# into every caller, where LLVM then removes all of it; in the first ``cluster_aba`` call
# with ``q=`` those calls were most of the arguments Numba built (the count:
# benchmarks/results/design_notes.md). A named view
# passed to such a helper is now one argument, the struct value itself. Only named tuples,
# and only for helpers (``@helper``: nothing but compiled code calls them; a Python or C
# entry point would build its own calls) that LLVM always inlines (``forceinline=True``):
# passing arrays whole too, or views to every function, inlined or not, measured slower
# (benchmarks/results/design_notes.md). The choice is the decorators' registry's answer
# (soadyn.core.jit: the kind and the options the decorator gives, the same at the
# definition and at every call, whether the function was compiled in this process or
# loaded from the cache).


_WholeView = None  # the type of a named view passed whole (made when the patch applies)


def _whole_view_type():
    """Make :class:`WholeView`, a Numba type, and register its data model (the view's own,
    with the argument form equal to the value form): when the patch applies only, so that
    importing this module asks nothing of Numba's type system."""
    global _WholeView
    if _WholeView is not None:
        return _WholeView
    from numba.core import types
    from numba.core.datamodel import models as datamodel

    class WholeView(types.Type):
        """The type of a named view passed to an always-inlined soadyn helper as one LLVM
        argument (its struct value): used only to choose the argument convention."""

        def __init__(self, view):
            self.view = view
            super().__init__(name=f"whole({view})")

    @datamodel.register_default(WholeView)
    class WholeViewModel(datamodel.DataModel):
        """The view's own model, with the argument form equal to its value form."""

        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type)
            self._view = dmm.lookup(fe_type.view)

        def get_value_type(self):
            return self._view.get_value_type()

        def get_argument_type(self):
            return self._view.get_value_type()

        def as_argument(self, builder, value):
            return value

        def from_argument(self, builder, value):
            return value

    _WholeView = WholeView
    return WholeView


_whole_views = {}  # view type -> its WholeView
_takes_views_whole = {}  # a function's mangled name -> whether it takes its named views whole


def _passed_whole(fe_type):
    """The argument type of a named view when passed whole, else ``fe_type``."""
    from numba.core import types
    if not isinstance(fe_type, (types.NamedTuple, types.NamedUniTuple)):
        return fe_type
    whole = _whole_views.get(fe_type)
    if whole is None:
        whole = _whole_views[fe_type] = _WholeView(fe_type)
    return whole


def takes_views_whole(fndesc):
    """True when the function of ``fndesc`` (Numba's function descriptor) is a soadyn
    helper (only compiled code calls it) that LLVM always inlines (``forceinline=True``):
    the registry of :mod:`soadyn.core.jit` says."""
    name = fndesc.mangled_name
    known = _takes_views_whole.get(name)
    if known is None:
        registry = _registry()
        found = registry.entry_named(fndesc.modname, fndesc.qualname)
        known = bool(found is not None and found.kind == registry.HELPER and found.options.get("forceinline"))
        _takes_views_whole[name] = known
    return known


def _whole_argument_types(argtypes):
    return tuple(_passed_whole(t) for t in argtypes)


def _declare_function(self, module, fndesc):
    """:meth:`BaseContext.declare_function` (a definition or a callee's declaration), with
    the named views as whole arguments for the helpers of :func:`takes_views_whole`."""
    if not takes_views_whole(fndesc):
        return _numba_declare_function(self, module, fndesc)
    shadow = copy.copy(fndesc)
    shadow.argtypes = _whole_argument_types(fndesc.argtypes)
    return _numba_declare_function(self, module, shadow)


def _decode_arguments(self, builder, argtypes, func):
    """:meth:`BaseCallConv.decode_arguments` in the callee, by its own convention."""
    if _takes_views_whole.get(func.name):
        argtypes = _whole_argument_types(argtypes)
    return _numba_decode_arguments(self, builder, argtypes, func)


def _call_function(self, builder, callee, resty, argtys, args, attrs=None):
    """:meth:`CPUCallConv.call_function` at a call site, by the callee's convention (the
    callee was declared in this module first)."""
    if _takes_views_whole.get(callee.name):
        argtys = _whole_argument_types(argtys)
    return _numba_call_function(self, builder, callee, resty, argtys, args, attrs)


def pass_views_whole():
    """Pass the named views to soadyn's always-inlined helpers whole (see the comment
    above). Call before any kernel is compiled or loaded."""
    global _numba_declare_function, _numba_decode_arguments, _numba_call_function
    from numba.core.base import BaseContext
    from numba.core.callconv import BaseCallConv, CPUCallConv
    _whole_view_type()
    _numba_declare_function = BaseContext.declare_function
    _numba_decode_arguments = BaseCallConv.decode_arguments
    _numba_call_function = CPUCallConv.call_function
    BaseContext.declare_function = _declare_function
    BaseCallConv.decode_arguments = _decode_arguments
    CPUCallConv.call_function = _call_function


# --- array views returned without reference counting ------------------------------------
#
# soadyn compiles its kernels and helpers without Numba's reference counting
# (soadyn.core.jit, ``_nrt=False``: see there). Numba then refuses a function whose
# return type is an array unless it returns one of its arguments unchanged, because an
# array returned to Python is boxed as its parent object: a view would come back as the
# array it was cut from. A helper without a Python entry point is never boxed: the views
# it returns (``carve``, ``state_of``, ``borrow``) go to the compiled code that called it,
# where no reference is counted. The check is skipped for those alone; a function that
# Python can call keeps it.


def _type_inference(self, state):
    """:meth:`BaseTypeInference.run_pass`, letting a soadyn helper (no Python entry
    point, :func:`soadyn.core.jit.helper`) compiled without reference counting return an
    array view."""
    context = state.targetctx
    registry = _registry()
    if context.enable_nrt or registry.kind(state.func_id.func) != registry.HELPER:
        return _numba_type_inference(self, state)
    # the context is this compilation's own (Numba makes one per compilation); typing
    # reads enable_nrt only in the return-type check, and lowering sees it restored
    context.enable_nrt = True
    try:
        return _numba_type_inference(self, state)
    finally:
        context.enable_nrt = False


def return_views_from_helpers():
    """Let soadyn's helpers (no Python entry point) compiled without reference counting
    return array views (see the comment above). Call before any kernel is compiled.
    Without it, soadyn's helpers count references (:func:`helpers_count_references`)."""
    global _numba_type_inference
    from numba.core import typed_passes
    _numba_type_inference = typed_passes.BaseTypeInference.run_pass
    typed_passes.BaseTypeInference.run_pass = _type_inference


_LIBRARY = "numba.core.codegen:CPUCodeLibrary"

#: every patch, in the order they are applied, with the internals each replaces (and the
#: parameters it was written for) and the others it relies on
PATCHES = {p.name: p for p in (
    Patch("compile_for_plain_types", compile_for_plain_types,
          {"numba.core.registry:CPUDispatcher.get_call_template": "self, args, kws"},
          uses=("numba.core.types:unliteral",)),
    Patch("link_helpers_only", link_helpers_only,
          {"numba.core.cpu:CPUContext.get_executable": "self, library, fndesc, env",
           f"{_LIBRARY}.finalize": "self",
           f"{_LIBRARY}.serialize_using_object_code": "self",
           f"{_LIBRARY}._unserialize": "cls, codegen, state",
           "numba.core.compiler:CompileResult._find_referenced_environments": "self"},
          uses=("numba._dynfunc:make_function", "numba.core.codegen:require_global_compiler_lock",
                f"{_LIBRARY}._get_module_for_linking", f"{_LIBRARY}._raise_if_finalized",
                f"{_LIBRARY}.__init__ _linking_libraries, _final_module, _shared_module",
                "numba.core.codegen:CodeLibrary.__init__ _reload_init",
                "numba.core.funcdesc:FunctionDescriptor.__init__ modname, qualname",
                "numba.core.funcdesc:FunctionDescriptor.lookup_module")),
    Patch("remember_call_types", remember_call_types,
          {"numba.core.types.functions:BaseFunction.get_call_type": "self, context, args, kws"},
          uses=("numba.core.types.functions:BaseFunction.__init__ _impl_keys",
                "numba.core.target_extension:get_local_target", "numba.core.event:register")),
    Patch("lighter_passes", lighter_passes,
          {f"{_LIBRARY}._optimize_functions": "self, ll_module",
           f"{_LIBRARY}._optimize_final_module": "self"},
          uses=("numba.core.codegen:CPUCodegen._function_pass_manager",
                "numba.core.codegen:CPUCodegen._module_pass_manager",
                "numba.core.codegen:CodeLibrary.__init__ _codegen, _recorded_timings", "numba.core.config:OPT")),
    Patch("pass_views_whole", pass_views_whole,
          {"numba.core.base:BaseContext.declare_function": "self, module, fndesc",
           "numba.core.callconv:BaseCallConv.decode_arguments": "self, builder, argtypes, func",
           "numba.core.callconv:CPUCallConv.call_function": "self, builder, callee, resty, argtys, args, attrs=None"},
          uses=("numba.core.datamodel.models:register_default", "numba.core.datamodel.models:DataModel",
                "numba.core.funcdesc:FunctionDescriptor.__init__ modname, qualname, argtypes, mangled_name")),
    Patch("return_views_from_helpers", return_views_from_helpers,
          {"numba.core.typed_passes:BaseTypeInference.run_pass": "self, state"},
          uses=("numba.core.base:BaseContext.enable_nrt",)),
)}

#: not a patch but the same kind of reliance: the private hooks of Numba's dispatcher that
#: the call path's non-compiling twin of each kernel sets (:class:`soadyn.core.fast_path.ExactCall`);
#: without them every call takes the validated path (the same results, slower)
DISPATCHER_HOOKS = Patch(
    "dispatcher_hooks", None,
    {f"numba.core.dispatcher:Dispatcher.{n}": "self, *args, **kws"
     for n in ("_compile_for_args", "_search_new_conversions", "_explain_matching_error", "_explain_ambiguous")}
    | {"numba.core.dispatcher:Dispatcher.add_overload": "self, cres"},
    uses=("numba.core.dispatcher:Dispatcher._can_compile", "numba.core.dispatcher:_DispatcherBase.__init__ overloads"))

_hooks_usable = None


def dispatcher_hooks_usable():
    """Whether :data:`DISPATCHER_HOOKS` hold in this process (checked once; one
    :class:`NumbaPatchWarning` when they do not). ``SOADYN_NUMBA_PATCH_DISPATCHER_HOOKS=0``
    turns them off."""
    global _hooks_usable
    if _hooks_usable is None:
        reason = DISPATCHER_HOOKS.ground()
        if os.environ.get("SOADYN_NUMBA_PATCH_DISPATCHER_HOOKS", "1").strip() in ("0", "off", "false"):
            reason = "switched off"
        if reason is not None and reason != "switched off":
            warnings.warn(f"soadyn: 'dispatcher_hooks' (the private hooks of Numba's dispatcher that the fast call "
                          f"path sets) not used: {reason}; every call takes the validated path (the same results, "
                          "slower calls)", NumbaPatchWarning, stacklevel=2)
        _hooks_usable = reason is None
    return _hooks_usable
