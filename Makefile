# Two entry points on a fresh machine with only Python:
#   make demo   create/refresh .venv, install soadyn, run the demo on a built-in model
#   make test   install the test extras and run the whole suite
#   make test-stock  the tree algorithms' part of the suite (core, kernels, dynamics, interop, the
#               patches' own tests; not marked slow) on Numba as released: soadyn's patches of
#               Numba off (SOADYN_NUMBA_PATCHES=0, soadyn.numba_patches). The whole suite also
#               passes that way (`SOADYN_NUMBA_PATCHES=0 pytest`, about twice make test's time):
#               CI runs this part to stay within its budget
#   make docs   install the docs extra and build the documentation into docs/_build/html
#   make bench-report   the benchmark pages of the documentation from the committed results
PYTHON ?= python3
# VENV=<dir> builds a target in another virtual environment (CI builds the docs in a fresh one)
VENV ?= .venv
BIN := $(VENV)/bin
STAMP_BASE := $(VENV)/.installed-base
STAMP_TEST := $(VENV)/.installed-test
STAMP_DOCS := $(VENV)/.installed-docs

.PHONY: demo test test-stock docs bench bench-report clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP_BASE): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[plot]"
	touch $@

$(STAMP_TEST): $(STAMP_BASE) pyproject.toml
	$(BIN)/python -m pip install -e ".[test,plot,symbolic]"
	touch $@

$(STAMP_DOCS): $(STAMP_BASE) pyproject.toml
	$(BIN)/python -m pip install -e ".[docs]"
	touch $@

demo: $(STAMP_BASE)
	$(BIN)/python -m soadyn demo

# kernels are compiled first, in parallel processes, into Numba's on-disk cache
test: $(STAMP_TEST)
	$(BIN)/python -m soadyn precompile --jobs 2
	$(BIN)/python -m pytest

# stock Numba: the kernels compiled without soadyn's patches (a cache folder of their own,
# beside the patched one), then every test not marked slow (the slow ones start processes
# that compile cold; their patch-specific checks skip on stock anyway)
test-stock: $(STAMP_TEST)
	SOADYN_NUMBA_PATCHES=0 $(BIN)/python -m soadyn precompile --jobs 2 tree control batches
	SOADYN_NUMBA_PATCHES=0 $(BIN)/python -m pytest -m "not slow" tests/core tests/kernels tests/dynamics \
		tests/interop tests/test_numba_patches.py tests/test_inlining.py tests/test_lazy_import.py

# warnings are errors (-E: every page re-read, so a second run reports them too); every gallery
# example runs (sphinx-gallery; unchanged ones are not re-run), after the kernels are in
# Numba's cache (make test compiles them first; alone, the examples compile what they call)
docs: $(STAMP_DOCS)
	$(BIN)/python -m sphinx -b html -E -W --keep-going docs docs/_build/html

bench: $(STAMP_TEST)
	$(BIN)/python -m soadyn bench

# the documentation's benchmark pages (docs/benchmarks) from the committed results, no benchmark run
# (make docs regenerates them too)
bench-report: $(STAMP_BASE)
	$(BIN)/python -m soadyn bench --report

clean:
	rm -rf .venv .venv-docs build *.egg-info src/*.egg-info .pytest_cache docs/_build docs/generated docs/auto_examples docs/sg_execution_times.rst docs/benchmarks
	find . -name __pycache__ -prune -exec rm -rf {} +
