"""docs/algorithms.md cannot drift from the code: every public function of ``soadyn.__all__`` is
in its tables exactly once, defined in the module named; every file named exists; every kernel
named is imported by the function's module or by one of the *via* modules (or is that module,
when it compiles its own kernels), and every via module is imported by the function's module;
the test file named calls the function."""
import ast
import importlib.util
import inspect
import os
import re

import pytest

import soadyn as sd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "algorithms.md")
PACKAGE = os.path.join(ROOT, "src", "soadyn")
COLUMNS = ["Public function", "Module", "Via", "Kernels", "Tests"]


def _rows():
    """{function name: {column: [the backticked .py paths of the cell]}} of the page's tables,
    and the names in the order met (to find duplicates)."""
    with open(PAGE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    rows, order = {}, []
    header = None
    for line in lines:
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == COLUMNS[0]:
            assert cells == COLUMNS, f"{PAGE}: table header {cells}, expected {COLUMNS}"
            header = cells
            continue
        if header is None or set(cells[0]) <= {"-"}:
            continue
        name = cells[0].strip("`")
        order.append(name)
        rows[name] = {col: re.findall(r"`([^`]+\.py)`", cell) for col, cell in zip(COLUMNS[1:], cells[1:])}
    return rows, order


ROWS, ORDER = _rows()
FUNCTIONS = [n for n in sd.__all__ if inspect.isfunction(getattr(sd, n))]


def _module_name(path):
    """soadyn's dotted module name of a path relative to src/soadyn."""
    return "soadyn." + path[:-len(".py")].replace("/", ".")


def _imported_modules(path):
    """The soadyn modules a source file imports from (``from X import a`` gives X, and X.a
    when X.a is a module)."""
    name = _module_name(path)
    package = name.rpartition(".")[0]
    with open(os.path.join(PACKAGE, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_every_public_function_is_mapped_once():
    assert len(ORDER) == len(set(ORDER)), sorted({n for n in ORDER if ORDER.count(n) > 1})
    assert sorted(set(FUNCTIONS) - set(ROWS)) == []
    assert sorted(set(ROWS) - set(FUNCTIONS)) == []


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_row_matches_the_code(name):
    row = ROWS[name]
    [module] = row["Module"]
    for col in ("Module", "Via", "Kernels"):
        for path in row[col]:
            assert os.path.isfile(os.path.join(PACKAGE, path)), f"{name}: {col} src/soadyn/{path} does not exist"
    assert row["Tests"], f"{name}: no test file"
    for path in row["Tests"]:
        assert os.path.isfile(os.path.join(ROOT, path)), f"{name}: test file {path} does not exist"
    # the public function is defined in the module named
    defined = os.path.relpath(inspect.getsourcefile(getattr(sd, name)), PACKAGE).replace(os.sep, "/")
    assert defined == module, f"{name}: defined in {defined}, the map says {module}"
    imports = _imported_modules(module)
    for via in row["Via"]:
        assert _module_name(via) in imports, f"{name}: {module} does not import the via module {via}"
    reachable = imports.union(*(_imported_modules(v) for v in row["Via"])) | {_module_name(module)}
    for kernel in row["Kernels"]:
        assert _module_name(kernel) in reachable, f"{name}: {kernel} is imported by neither {module} nor {row['Via']}"
    # the test file calls the function
    calls = re.compile(rf"\b{name}\(")
    texts = [open(os.path.join(ROOT, p), encoding="utf-8").read() for p in row["Tests"]]
    assert any(calls.search(t) for t in texts), f"{name}: {row['Tests']} never call it"

