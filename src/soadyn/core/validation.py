"""Argument checks for the public functions.

The public functions first call their kernel directly (the exact-type fast path of
:mod:`soadyn.core.fast_path`): Numba's dispatcher checks the argument types and the kernel
checks lengths and finiteness. Any other input goes through the functions here, which
convert it or raise an error naming the argument, the expected and the received value
(:func:`call_arguments`: every argument of a compiled function's general path).
"""
from __future__ import annotations

import os

import numpy as np


#: Stand-ins for absent arguments. Every kernel has one signature (each compiled version
#: costs seconds), so an absent rate (zero velocity or acceleration) is an empty vector and
#: absent external forces an empty (0, 6) array, never None: public functions pass these.
ABSENT = np.zeros(0)
NO_FORCES = np.zeros((0, 6))


def state_argument(arg, x, model, c, batch, batch_ok):
    """The state argument ``x`` described by ``arg`` (a :class:`~soadyn.core.call.Arg`)
    validated, for the compiled model ``c`` and a batch of ``batch`` states (None: one
    state); an absent argument (None, ``ABSENT``, ``NO_FORCES``) as the empty array of the
    batch."""
    if arg.size == "forces":
        if x is None or x is NO_FORCES:
            return NO_FORCES if batch is None else np.zeros((batch, 0, 6))
        return external_forces(x, c.nb, batch)
    if arg.optional and (x is None or x is ABSENT):
        return ABSENT if batch is None else np.zeros((batch, 0))
    n = getattr(c, arg.size) if isinstance(arg.size, str) else arg.size(model)
    return vector(x, n, arg.name, batch_ok)


def call_arguments(function, model, d, state, params, out):
    """Every argument of a call of ``function`` (a :class:`~soadyn.core.call.CompiledFunction`)
    on ``model`` (whose current :class:`~soadyn.core.compile.Derived` store is ``d``)
    validated: ``(values, params, outs, batch)`` — the state arguments (a batch refused
    by a function without one), the
    parameters converted, the output arrays (``out`` checked, or new ones), and the batch
    size B, or None for one state."""
    c = d.compiled
    params = tuple(p if conv is None else conv(p) for conv, p in zip(function.params, params)) \
        + tuple(params[len(function.params):])
    batch_ok = function.batch is not None
    args = function.args
    first = state_argument(args[0], state[0], model, c, None, batch_ok)
    batch = first.shape[0] if first.ndim == 2 else None
    values = (first,) + tuple(state_argument(a, x, model, c, batch, batch_ok) for a, x in zip(args[1:], state[1:]))
    same_batch(first, *((a.name, x) for a, x in zip(args[1:], values[1:])))
    shapes = function.outputs.shapes(c, values, params)
    lead = () if batch is None else (batch,)
    if shapes is None:  # an internal kernel whose caller provides every output
        outs = out
    elif out is not None:
        given = out if isinstance(out, tuple) else (out,)
        if len(given) != len(shapes):
            raise TypeError(f"out: expected {len(shapes)} output arrays, got {len(given)}")
        outs = tuple(None if s is None else output(o, lead + s, f"out[{k}]" if len(shapes) > 1 else "out")
                     for k, (o, s) in enumerate(zip(given, shapes)))
    else:
        outs = tuple(None if s is None else np.empty(lead + s) for s in shapes)
    return values, params, outs, batch


def kernel_vector(x, n=None):
    """True when ``x`` is of the type the plain-call kernels are compiled for: a
    C-contiguous float64 vector (of length ``n`` when given). A fast path checks its
    arguments with this before it compiles a kernel for them; anything else takes the
    validated path, which converts it or names what is wrong."""
    return (type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous
            and (n is None or x.shape[0] == n))


def vector(x, n, name, batch_ok=True):
    """``x`` as a C-contiguous, writeable float64 array of shape (n,) or (B, n)."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or not x.flags.c_contiguous:
        x = _real_array(x, f"an array of {n} real numbers", name)
    if not x.flags.writeable:  # one compiled version per argument type: use the mutable one
        x = x.copy()
    shape = x.shape
    if shape == (n,):
        return x
    if batch_ok and len(shape) == 2 and shape[1] == n:
        return x
    want = f"({n},) or (B, {n})" if batch_ok else f"({n},)"
    raise ValueError(f"{name}: expected shape {want}, got {shape}")


def _real_array(x, expected, name):
    """``x`` as a C-contiguous float64 array of at least one dimension, or a TypeError /
    ValueError saying what it is instead (None, a scalar, complex numbers, text, a ragged
    list)."""
    if x is None:
        raise TypeError(f"{name}: expected {expected}, got None")
    try:
        a = np.asarray(x)
    except ValueError:  # numpy refuses ragged nested sequences
        raise TypeError(f"{name}: expected {expected}, got a ragged nested sequence") from None
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: expected {expected}, got complex values (dtype {a.dtype})")
    if a.ndim == 0:
        if a.dtype.kind in "biuf":
            raise ValueError(f"{name}: expected {expected}, got the scalar {x!r}")
        raise TypeError(f"{name}: expected {expected}, got {type(x).__name__} {x!r}")
    try:
        return np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected {expected}, got {type(x).__name__} with dtype {a.dtype} ({e})") from None


def flag(name):
    """A converter for a boolean parameter ``name``: True/False (numpy booleans and the
    integers 0 and 1 too); anything else — None, a string — raises TypeError instead of
    being read by its truth value (``bool("no")`` is True)."""
    def convert(x):
        if isinstance(x, (bool, np.bool_)) or (isinstance(x, (int, np.integer)) and x in (0, 1)):
            return bool(x)
        raise TypeError(f"{name}: expected True or False, got {x!r}")
    convert.__name__ = f"flag_{name}"
    return convert


#: the converter of the ``gravity`` flag of the public functions
GRAVITY = flag("gravity")


def optional_vector(x, n, name, batch_ok=True):
    """:func:`vector`, or None for None (an argument whose absence means zero)."""
    return None if x is None else vector(x, n, name, batch_ok)


def same_batch(ref, *others):
    """Check that ``(name, array)`` pairs share ``ref``'s batch dimension (or lack of one)."""
    for name, x in others:
        if x is None:
            continue
        if ref.ndim == 1 and x.ndim != 1 + (name == "f_ext") or ref.ndim == 2 and x.ndim != 2 + (name == "f_ext"):
            raise ValueError(f"{name}: a batched call needs every state argument batched "
                             f"(got {name} with shape {x.shape} next to q with shape {ref.shape})")
        if ref.ndim == 2 and x.shape[0] != ref.shape[0]:
            raise ValueError(f"{name}: batch size {x.shape[0]} does not match q's {ref.shape[0]}")


def external_forces(f_ext, nb, batch):
    """``f_ext``: (nbodies, 6) spatial forces [n; f] in the body frames, or (B, nbodies, 6)."""
    if f_ext is None:
        return None
    if type(f_ext) is not np.ndarray or f_ext.dtype != np.float64 or not f_ext.flags.c_contiguous:
        f_ext = _real_array(f_ext, "an array of spatial forces", "f_ext")
    if not f_ext.flags.writeable:
        f_ext = f_ext.copy()
    want = (nb, 6) if batch is None else (batch, nb, 6)
    if f_ext.shape != want:
        raise ValueError(f"f_ext: expected shape {want} (one spatial force [n; f] per body, "
                         f"body frame), got {f_ext.shape}")
    return f_ext


def output(out, shape, name="out"):
    """``out`` checked as a C-contiguous, writeable float64 array of ``shape``, or a new one."""
    if out is None:
        return np.empty(shape)
    if type(out) is not np.ndarray:
        raise TypeError(f"{name}: expected a numpy array of shape {shape}, got {type(out).__name__}")
    problems = []
    if out.dtype != np.float64:
        problems.append(f"dtype {out.dtype}")
    if out.shape != shape:
        problems.append(f"shape {out.shape}")
    if not out.flags.c_contiguous:
        problems.append("a non-contiguous layout")
    if not out.flags.writeable:
        problems.append("a read-only array")
    if problems:
        raise ValueError(f"{name}: expected a C-contiguous, writeable float64 array of shape {shape}, "
                         f"got {', '.join(problems)}")
    return out


def not_a_model(model):
    """The TypeError for a ``model`` argument that is not a :class:`soadyn.Model`."""
    hint = ""
    if isinstance(model, (str, bytes, os.PathLike)):
        hint = " (load one first: soadyn.load_urdf(path) or soadyn.models.get(name))"
    elif isinstance(model, (np.ndarray, list, tuple)):
        hint = " (the model is the first argument: soadyn.function(model, q, ...))"
    return TypeError(f"model: expected a soadyn.Model, got {type(model).__name__}{hint}")


def model_argument(model):
    """``model`` itself, or :func:`not_a_model`'s TypeError when it is not a Model."""
    if not hasattr(model, "_derived"):
        raise not_a_model(model)
    return model


def count(x, name):
    """``x`` as a positive int; a bool, a float or text raises TypeError, zero or a
    negative number ValueError."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name}: expected a positive integer, got {type(x).__name__} {x!r}")
    if x < 1:
        raise ValueError(f"{name}: expected a positive integer, got {x!r}")
    return int(x)


def finite_scalar(x, name):
    """``x`` as a finite float: a real number (Python's or numpy's, or a 0-d array of
    one); text (``"0.1"``), booleans and None raise TypeError — ``float()`` would read
    the first two as numbers."""
    if isinstance(x, (str, bytes, bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind not in "iuf"):
        raise TypeError(f"{name}: expected a real number, got {x!r} (a {type(x).__name__})")
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a real number, got {x!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    return value


#: the smallest relative tolerance that means something: below the machine epsilon a
#: rank decision counts rounding errors as independent rows
MACHINE_EPSILON = float(np.finfo(float).eps)


def relative_tolerance(x, name):
    """``x`` as a float in [ε, 1), ε the machine epsilon: a relative threshold (singular
    values below x times the largest count as zero). From 1 on it would drop every row,
    below ε it counts rounding errors; NaN, inf, booleans and non-numbers are refused."""
    expected = f"a relative tolerance, a real number in [{MACHINE_EPSILON:.3g}, 1)"
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected {expected}, got {x!r}")
    if not MACHINE_EPSILON <= x < 1.0:  # (False for NaN)
        raise ValueError(f"{name}: expected {expected}, got {x!r}")
    return float(x)


def baumgarte_gains(baumgarte):
    """``baumgarte`` (the ``baumgarte=`` argument of the closed-chain functions) checked:
    None, or (α, β) as two finite non-negative floats [1/s] — the gains of
    𝔡̈ + 2α𝔡̇ + β²𝔡 = 0. Strings, booleans, other lengths, NaN, inf and negative gains are
    refused naming the argument."""
    if baumgarte is None:
        return None
    expected = "two finite non-negative gains (alpha, beta) [1/s]"
    if isinstance(baumgarte, (str, bytes)) or not np.iterable(baumgarte):
        raise TypeError(f"baumgarte: expected {expected}, got {baumgarte!r}")
    gains = list(baumgarte)
    if len(gains) != 2:
        raise ValueError(f"baumgarte: expected {expected}, got {len(gains)} values {baumgarte!r}")
    if any(isinstance(g, bool) or not isinstance(g, (int, float, np.integer, np.floating)) for g in gains):
        raise TypeError(f"baumgarte: expected {expected}, got {baumgarte!r}")
    alpha, beta = float(gains[0]), float(gains[1])
    if not (0.0 <= alpha < np.inf and 0.0 <= beta < np.inf):  # (False for NaN)
        raise ValueError(f"baumgarte: expected {expected}, got {baumgarte!r}")
    return alpha, beta
