"""What ``pip install .`` and the wheel ship: pyproject.toml finds the packages under src/
(``[tool.setuptools.packages.find] where = ["src"]``) and ships their .py files only, so
every folder of the package that holds Python files must be a package (an __init__.py),
and the package must hold no data files (the built-in models are written in code)."""
import os

import pytest

import soadyn

ROOT = os.path.dirname(os.path.abspath(soadyn.__file__))


def _folders():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        yield dirpath, filenames


def test_every_folder_with_python_files_is_a_package_the_wheel_finds():
    setuptools = pytest.importorskip("setuptools")
    found = set(setuptools.find_packages(os.path.dirname(ROOT)))
    for dirpath, filenames in _folders():
        if any(f.endswith(".py") for f in filenames):
            name = os.path.relpath(dirpath, os.path.dirname(ROOT)).replace(os.sep, ".")
            assert name in found, f"{name}: not a package (no __init__.py), left out of the wheel"


def test_no_package_data():
    data = [os.path.join(d, f) for d, files in _folders() for f in files if not f.endswith(".py")]
    assert data == [], f"files the wheel would leave out (declare them as package data): {data}"
