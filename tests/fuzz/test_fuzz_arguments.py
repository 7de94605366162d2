"""Fuzz: every keyword of the main public functions given every value of a pool of bad ones
(NaN, ±inf, negative, zero, huge, tiny, wrong types, wrong shapes). The invariant: the call
raises an error that names the argument, or it returns a finite result that is right — the
result of what the value means (a flag given 1 is True; a tolerance or a time that does
not matter to a consistent, time-invariant state leaves the result as it is).

Each (function, keyword, value) is one test: the pool is small enough to try whole, so no
sampling can miss a case. Cases that fail for reasons another branch fixes are marked
``xfail(strict=True)`` with that branch (``KNOWN``): they must fail until it is merged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.clusters import random_independent_state

#: the pool of bad values: (id, value)
BAD = [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("negative", -1.0), ("zero", 0.0),
       ("huge", 1e300), ("tiny", 1e-300), ("one", 1), ("true", True), ("text", "x"), ("numeric text", "0.1"), ("none", None),
       ("list", [1.0, 2.0, 3.0]), ("object", object()), ("nan array", np.array([math.nan]))]


def _is_real(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _flag_meaning(x):
    """What a flag value means: True/False, numpy booleans, 0 and 1 (else refused)."""
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, (int, np.integer)) and x in (0, 1)):
        return bool(x)
    raise LookupError


def _positive(x):
    """A tolerance: a finite positive number means itself (and leaves a consistent,
    well-conditioned state's result as it is)."""
    if _is_real(x) and math.isfinite(x) and x > 0:
        return x
    raise LookupError


def _finite(x):
    if _is_real(x) and math.isfinite(x):
        return x
    raise LookupError


def _threshold(x):
    """A relative threshold: a number in [0, 1)."""
    if _is_real(x) and 0 <= x < 1:
        return x
    raise LookupError


def _vector(n):
    """A state vector of ``n`` finite numbers (a list too) means itself."""
    def meaning(x):
        try:
            a = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise LookupError from None
        if a.shape == (n,) and np.all(np.isfinite(a)) and not isinstance(x, str):
            return x
        raise LookupError
    return meaning


def _never(x):
    raise LookupError


def _index(x):
    """A frame: an index means that frame (the reference is the call with it)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return x
    raise LookupError


@dataclass
class Keyword:
    """A keyword of a case: ``meaning(value)`` is the value the call should then use, or
    raises LookupError when the value must be refused; ``changes``: whether an accepted
    value changes the result (then the reference is the call with ``meaning(value)``);
    ``optional``: None is its default (absent: zero, or the default behaviour)."""
    meaning: object
    changes: bool = False
    optional: bool = False


def _any(x):
    """Any accepted value: the result must stay the default one (close_loops' independent
    coordinates of a state already on the constraints)."""
    return x


_TREE = sd.models.random_tree(6, 11, floating_base=True)
_RNG = np.random.default_rng(7)
_Q = sd.random_configuration(_TREE, _RNG)
_V, _T = _RNG.normal(size=(2, _TREE.nv))
_F = _RNG.normal(size=(_TREE.nbodies, 6))
_FOUR_BAR = sd.models.four_bar_linkage()
_Y, _YD = random_independent_state(_FOUR_BAR, _RNG, 0.6)
_QC, _VC = sd.spanning_state(_FOUR_BAR, _Y, _YD)
_TC = _RNG.normal(size=_FOUR_BAR.nv)
_TAU_IND = _RNG.normal(size=len(_YD))
_FRAME = _TREE.frames[-1].name

#: function -> (call(**keywords), its keywords)
CASES = {
    "aba": (lambda **k: sd.aba(_TREE, k.pop("q", _Q), k.pop("v", _V), k.pop("tau", _T), k.pop("f_ext", _F), **k),
            {"gravity": Keyword(_flag_meaning, True), "q": Keyword(_never), "v": Keyword(_never, True, True),
             "tau": Keyword(_never), "f_ext": Keyword(_never, True, True), "workspace": Keyword(_never, False, True)}),
    "rnea": (lambda **k: sd.rnea(_TREE, k.pop("q", _Q), k.pop("v", _V), k.pop("a", _T), **k),
             {"gravity": Keyword(_flag_meaning, True), "q": Keyword(_never), "v": Keyword(_never, True, True),
              "a": Keyword(_never, True, True), "out": Keyword(_never, False, True)}),
    "mass_matrix": (lambda **k: sd.mass_matrix(_TREE, k.pop("q", _Q), **k),
                    {"method": Keyword(_never), "q": Keyword(_never), "out": Keyword(_never, False, True)}),
    "mass_matrix_inverse": (lambda **k: sd.mass_matrix_inverse(_TREE, k.pop("q", _Q), **k),
                            {"method": Keyword(_never), "q": Keyword(_never)}),
    "frame_jacobian": (lambda **k: sd.frame_jacobian(_TREE, k.pop("q", _Q), k.pop("frame", _FRAME), **k),
                       {"reference": Keyword(_never), "frame": Keyword(_index, True), "q": Keyword(_never)}),
    "forward_kinematics": (lambda **k: sd.forward_kinematics(_TREE, _Q, _V, _T, **k).accelerations,
                           {"gravity": Keyword(_flag_meaning, True)}),
    "operational_space_inertia": (lambda **k: sd.operational_space_inertia(_TREE, _Q, k.pop("frames", _FRAME), **k),
                                  {"rcond": Keyword(_threshold), "frames": Keyword(_index, True)}),
    "constrained_forward_dynamics": (
        lambda **k: sd.constrained_forward_dynamics(_FOUR_BAR, _QC, k.pop("v", _VC), k.pop("tau", _TC), **k).qdd,
        {"method": Keyword(_never, False, True), "t": Keyword(_finite), "rank_tol": Keyword(_positive),
         "residual_tol": Keyword(_positive), "check": Keyword(_flag_meaning),
         "baumgarte": Keyword(_never, False, True), "f_ext": Keyword(_never, False, True),
         "tau_ind": Keyword(_never, False, True), "v": Keyword(_vector(_FOUR_BAR.nv), True, True),
         "tau": Keyword(_vector(_FOUR_BAR.nv), True, True)}),
    "close_loops": (lambda **k: np.concatenate(sd.close_loops(_FOUR_BAR, _QC, _VC, **k)),
                    {"tol": Keyword(_positive), "max_iter": Keyword(lambda x: x if isinstance(x, int) and not
                                                                      isinstance(x, bool) and x > 0 else _never(x)),
                     "t": Keyword(_finite), "independent": Keyword(_any, False, True)}),
    "cluster_aba": (lambda **k: sd.cluster_aba(_FOUR_BAR, k.pop("y", _Y), _YD, _TAU_IND, **k),
                    {"gravity": Keyword(_flag_meaning, True), "q": Keyword(_never, False, True),
                     "q_guess": Keyword(_vector(_FOUR_BAR.nq), False, True), "y": Keyword(_never)}),
    "integrate": (lambda **k: sd.integrate(_TREE, _Q, _V, **k), {"dt": Keyword(_finite, True)}),
    "rollout": (lambda **k: np.concatenate([x.ravel() for x in sd.rollout(
        _TREE, _Q, _V, np.zeros((3, _TREE.nv)), k.pop("dt", 1e-3), **k)]),
        {"dt": Keyword(_positive, True), "integrator": Keyword(_never)}),
}

#: the meaningful values of keywords that take names or objects (refused otherwise)
_CHOICES = {("mass_matrix", "method"): ("crba", "jtmj"), ("mass_matrix_inverse", "method"): ("innovations", "ltdl"),
            ("frame_jacobian", "reference"): ("local", "local_world_aligned", "world"),
            ("constrained_forward_dynamics", "method"): ("direct", "augmented", "projection", "embedding"),
            ("rollout", "integrator"): ("semi-implicit-euler", "rk4")}

#: known failures fixed elsewhere: (function, keyword, value id) -> branch and reason (none
#: left: trust-closed's and trust-integrate's fixes of issue 45 are merged)
KNOWN = {}


def _params():
    for function, (_, keywords) in CASES.items():
        for keyword in keywords:
            for vid, value in BAD:
                reason = KNOWN.get((function, keyword, vid))
                marks = [pytest.mark.xfail(strict=True, reason=f"issue 45, branch {reason}")] if reason else []
                yield pytest.param(function, keyword, value, id=f"{function}-{keyword}-{vid}", marks=marks)


def _finite_result(x):
    return all(np.all(np.isfinite(np.asarray(a, dtype=float))) for a in (x if isinstance(x, tuple) else (x,)))


def _equal(a, b, tol=1e-9):
    a, b = (x if isinstance(x, tuple) else (x,) for x in (a, b))
    return all(np.allclose(x, y, rtol=tol, atol=tol * (1 + np.abs(y).max(initial=0.0))) for x, y in zip(a, b))


@pytest.mark.parametrize("function, keyword, value", list(_params()))
def test_a_bad_value_is_refused_by_name_or_gives_the_right_result(function, keyword, value):
    call, keywords = CASES[function]
    kw = keywords[keyword]
    choices = _CHOICES.get((function, keyword))
    try:
        if value is None and kw.optional:
            meaning = None
        elif choices:
            meaning = value if isinstance(value, str) and value in choices else _never(value)
        else:
            meaning = kw.meaning(value)
    except LookupError:
        meaning = LookupError
    try:
        with np.errstate(all="ignore"):
            result = call(**{keyword: value})
    except (ValueError, TypeError, sd.ConstraintError, np.linalg.LinAlgError, OverflowError) as e:
        # (a list argument's error may name one of its entries: "frame" for ``frames``)
        assert keyword.rstrip("s") in str(e), f"the error does not name {keyword!r}: {type(e).__name__}: {e}"
        return
    assert meaning is not LookupError, f"{keyword}={value!r} accepted, expected an error naming {keyword!r}"
    assert _finite_result(result), f"{keyword}={value!r} gave a result that is not finite"
    reference = call(**{keyword: meaning}) if (kw.changes or choices) else call()
    assert _equal(result, reference), f"{keyword}={value!r} gave another result than {keyword}={meaning!r}"
