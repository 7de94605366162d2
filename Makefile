# Two entry points on a fresh machine with only Python:
#   make demo   create/refresh .venv, install soadyn, run the demo on a built-in model
#   make test   install the test extras and run the whole suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_BASE := $(VENV)/.installed-base
STAMP_TEST := $(VENV)/.installed-test

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP_BASE): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[plot]"
	touch $@

$(STAMP_TEST): $(STAMP_BASE) pyproject.toml
	$(BIN)/python -m pip install -e ".[test,plot,symbolic]"
	touch $@

demo: $(STAMP_BASE)
	$(BIN)/python -m soadyn demo

# kernels are compiled first, in parallel processes, into Numba's on-disk cache
test: $(STAMP_TEST)
	$(BIN)/python -m soadyn precompile --jobs 2
	$(BIN)/python -m pytest

bench: $(STAMP_TEST)
	$(BIN)/python -m soadyn bench

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
