"""The benchmark pages (benchmarks/report.py, ``soadyn bench --report``) regenerate from the
committed results alone: no benchmark run, no network; every committed result file is shown
on a page with its machine, date and commit; every figure a page names exists; and each
JSON twin of a Markdown result is what its converter gives for that Markdown file."""
import importlib.util
import json
import os
import re
import shutil
import socket
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")
RESULTS = os.path.join(BENCH, "results")

pytest.importorskip("matplotlib")


def _module(name):
    if BENCH not in sys.path:
        sys.path.insert(0, BENCH)
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(BENCH, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _committed():
    out = []
    for folder, _, files in os.walk(RESULTS):
        out += [os.path.relpath(os.path.join(folder, f), RESULTS).replace(os.sep, "/") for f in files
                if f.endswith(".json")]
    return sorted(out)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The pages built from the committed results with the network unreachable."""
    out = tmp_path_factory.mktemp("bench_pages")
    report = _module("report")

    def no_network(*args, **kwargs):
        raise AssertionError("the benchmark report tried to open a network connection")
    mp = pytest.MonkeyPatch()
    mp.setattr(socket.socket, "connect", no_network)
    mp.setattr(socket, "create_connection", no_network)
    try:
        pages = report.build(RESULTS, str(out))
    finally:
        mp.undo()
    return out, pages


def test_every_committed_result_is_shown_on_a_page(built):
    out, pages = built
    committed = _committed()
    # every Markdown result has its JSON twin (bench/summary.md: bench/bench.json)
    for folder, _, files in os.walk(RESULTS):
        for f in files:
            if f.endswith(".md"):
                twin = "bench.json" if f == "summary.md" else f[:-3] + ".json"
                rel = os.path.relpath(os.path.join(folder, twin), RESULTS).replace(os.sep, "/")
                assert rel in committed, f"{f} has no JSON twin {rel}"
    shown = {key for name, keys in pages.items() if name != "index" for key in keys}
    assert set(committed) - shown == set(), "results on no page"
    for name, keys in pages.items():
        if name == "index":
            continue
        with open(out / f"{name}.md", encoding="utf-8") as f:
            text = f.read()
        for key in keys:
            assert f"`benchmarks/results/{key}`" in text


def test_every_page_names_machine_date_and_commit(built):
    out, pages = built
    for name in pages:
        if name == "index":
            continue
        with open(out / f"{name}.md", encoding="utf-8") as f:
            lines = [ln for ln in f if ln.startswith("*Data:*")]
        assert lines, name
        for ln in lines:
            m = re.match(r"\*Data:\* `[^`]+` — machine: (.+?); date: (.+?); commit: `([^`]+)` — ", ln)
            assert m, ln
            machine, date, commit = m.groups()
            assert re.match(r"20\d\d-\d\d-\d\d", date), ln
            assert re.fullmatch(r"[0-9a-f]{7,40}", commit), ln
            assert machine, ln


def test_pages_and_figures_exist(built):
    out, pages = built
    assert set(pages) == {"index", "trees", "closed_chains", "simulation", "contacts", "compile"}
    figures = set()
    for name in pages:
        with open(out / f"{name}.md", encoding="utf-8") as f:
            text = f.read()
        for fig in re.findall(r"!\[[^\n]*?\]\((figures/[\w.]+\.png)\)", text):
            assert (out / fig).stat().st_size > 5000, fig  # a drawn figure, not an empty canvas
            figures.add(fig)
    for needed in ("per_call_ratios", "chignoli23_scaling", "loop_chain_scaling", "rollout_vs_mujoco",
                   "cold_compile", "contact_delassus", "collision", "control_ident"):
        assert f"figures/{needed}.png" in figures
    with open(out / "index.md", encoding="utf-8") as f:
        index = f.read()
    for name in pages:
        if name != "index":
            assert f"\n{name}\n" in index  # in the toctree


def test_a_result_on_no_page_is_reported(tmp_path):
    """The coverage check can fail: a result file no page knows makes the command fail."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    with open(results / "unknown_benchmark.json", "w") as f:
        json.dump({"meta": {"date": "2026-01-01", "commit": "abcdef0"}, "rows": []}, f)
    report = _module("report")
    assert report.main(["--results", str(results), "--output", str(tmp_path / "pages")]) == 1


def test_soadyn_bench_report_writes_the_pages(tmp_path):
    """The command of the issue: ``soadyn bench --report --output DIR``."""
    from soadyn import cli
    assert cli.main(["bench", "--report", "--output", str(tmp_path)]) == 0
    assert {"index.md", "trees.md", "closed_chains.md", "figures"} <= set(os.listdir(tmp_path))
    with pytest.raises(SystemExit, match="--results is an option of --report"):
        cli.main(["bench", "--results", str(tmp_path)])


def test_fitted_exponent_of_a_power_law():
    report = _module("report")
    n = [8, 16, 32, 64]
    assert report.fit_exponent(n, [3.0 * x ** 1.5 for x in n]) == pytest.approx(1.5, abs=1e-12)


def test_markdown_twins_are_their_conversion():
    """Each JSON twin of a Markdown result holds the tables of that Markdown file, as the
    converter (benchmarks/results_json.py, the route that made them) reads them."""
    pytest.importorskip("markdown_it")
    results_json = _module("results_json")
    twins = 0
    for key in _committed():
        with open(os.path.join(RESULTS, key), encoding="utf-8") as f:
            data = json.load(f)
        source = data.get("source", "")
        if source.endswith(".md"):
            fresh = results_json.twin(os.path.join(RESULTS, os.path.dirname(key), source))
            assert fresh["sections"] == data["sections"], key
            assert fresh["title"] == data["title"], key
            twins += 1
        elif source.endswith("/"):
            fresh = results_json.bench_twin(os.path.join(RESULTS, os.path.dirname(key)))
            assert fresh["sections"] == data["sections"], key
            twins += 1
    assert twins >= 13


def test_table_cells_become_numbers():
    pytest.importorskip("markdown_it")
    results_json = _module("results_json")
    sections = results_json.markdown_tables("# T\n\nBefore.\n\n| a | b | c |\n|---|---|---|\n"
                                            "| x | 1,234 | **3.20** |\n| y | - | 1e-3 |\n\nAfter `it`.\n")
    assert sections == [{"heading": "T",
                         "paragraphs": [{"text": "Before.", "after_tables": 0}, {"text": "After `it`.", "after_tables": 1}],
                         "tables": [{"columns": ["a", "b", "c"], "rows": [["x", 1234, 3.2], ["y", None, 0.001]]}]}]
