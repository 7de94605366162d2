"""docs/coming_from.md cannot drift: every soadyn, Pinocchio and MuJoCo name of its tables
exists, and its Python examples run (they compare soadyn's numbers with Pinocchio's and
MuJoCo's on the same robot, with asserts)."""
import importlib
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "coming_from.md")

#: the page's abbreviations (its first code block) and the modules they stand for
PREFIXES = {"sd": "soadyn", "sdpin": "soadyn.interop.pinocchio", "sdmj": "soadyn.io.mjcf", "pin": "pinocchio",
            "mujoco": "mujoco"}
_NAME = re.compile(r"\b(sd|sdpin|sdmj|pin|mujoco)\.([A-Za-z_][\w.]*[A-Za-z0-9_])")


def _page():
    with open(PAGE, encoding="utf-8") as f:
        return f.read()


def _code_spans(text):
    """The inline ``code`` of the page outside fenced blocks (the tables and the prose)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"`([^`]+)`", prose)


def _resolve(module, dotted):
    """The object ``module.dotted``; submodules (``mujoco.rollout``) are imported on the way."""
    obj, path = importlib.import_module(module), module
    for part in dotted.split("."):
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(path)
            except ModuleNotFoundError:
                raise AttributeError(f"{path} does not exist") from None
    return obj


def test_every_name_on_the_page_exists():
    names = sorted({m.groups() for span in _code_spans(_page()) for m in _NAME.finditer(span)})
    assert len(names) > 60, names  # the tables were read: about 90 names
    pytest.importorskip("pinocchio")
    pytest.importorskip("mujoco")
    missing = []
    for prefix, dotted in names:
        try:
            _resolve(PREFIXES[prefix], dotted)
        except (AttributeError, ImportError):
            missing.append(f"{prefix}.{dotted}")
    assert not missing, f"docs/coming_from.md names what does not exist: {missing}"


def test_a_missing_name_is_caught():
    """The check above can fail: a name that does not exist is not resolved."""
    with pytest.raises(AttributeError):
        _resolve("soadyn", "no_such_function")


def _examples():
    blocks = re.findall(r"```python\n(.*?)```", _page(), flags=re.S)
    assert len(blocks) == 2, "the page has a Pinocchio and a MuJoCo example"
    return blocks


@pytest.mark.parametrize("index, needs", [(0, ("pinocchio",)), (1, ("mujoco",))])
def test_example_runs_and_agrees(index, needs):
    for module in needs:
        pytest.importorskip(module)
    code = _examples()[index]
    exec(compile(code, f"docs/coming_from.md example {index + 1}", "exec"), {"__name__": "coming_from_example"})
