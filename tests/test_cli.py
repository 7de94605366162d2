"""Smoke test of ``soadyn bench --quick``: it runs and writes its files (not the times)."""
import csv
import os

import pytest

import soadyn as sd

from soadyn import cli


@pytest.mark.slow
def test_quick_bench_writes_tables_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "bench"
    assert cli.main(["bench", "--quick", "--no-progress", "--output", str(out)]) == 0
    files = set(os.listdir(out))
    for name in ("machine.txt", "summary.md", "per_call.csv", "overhead.csv", "chains.csv", "startup.csv",
                 "ratios.png", "scaling.png"):
        assert name in files, name
    with open(out / "chains.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["algorithm"] for r in rows} == {"rnea", "aba", "mass_matrix"}
    assert all(float(r["soadyn_us"]) > 0 for r in rows)
    with open(out / "startup.csv") as f:
        assert float(next(csv.DictReader(f))["ready_s"]) > 0
    summary = (out / "summary.md").read_text()
    assert "Per call" in summary and "Fitted exponents" in summary


@pytest.mark.parametrize("model", ["four_bar_linkage", "mini_cheetah"])
def test_demo_of_a_closed_chain_uses_the_closed_chain_functions(model, tmp_path, capsys):
    """The tree functions refuse closed chains: the demo shows C-ABA and constrained forward
    dynamics at a consistent state instead, and they agree."""
    assert cli.main(["demo", "--model", model, "--duration", "0.004", "--dt", "0.002", "--output",
                     str(tmp_path)]) == 0
    out = capsys.readouterr().out
    method = sd.closed.default_method(getattr(sd.models, model)())  # the compiled direct method
    assert "GᵀMG" in out and f"Forward dynamics ({method} method)" in out
    err = float(out.split(f"Constraint embedding check: |C-ABA - {method}| = ")[1].split()[0])
    assert err < 1e-8
