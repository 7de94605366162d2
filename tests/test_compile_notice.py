"""The first use of the kernels on a machine says on stderr that they compile
(soadyn.numba_cache): one line, and nothing once they are cached or when silenced."""
import os
import subprocess
import sys

import pytest

SCRIPT = """
import numpy as np
import soadyn as sd
m = sd.models.serial_chain(2)
sd.normalize(m, np.zeros(m.nq))
"""


def run(cache, **env):
    environment = dict(os.environ)
    environment.pop("SOADYN_COMPILE_NOTICE", None)  # as a user has it, unless the test sets it
    environment.update(NUMBA_CACHE_DIR=str(cache), **env)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=environment, capture_output=True, text=True,
                          timeout=600, check=True)


@pytest.mark.slow
def test_first_use_prints_one_line_then_nothing(tmp_path):
    cold = run(tmp_path)
    lines = [line for line in cold.stderr.splitlines() if line.startswith("soadyn: compiling")]
    assert len(lines) == 1, cold.stderr
    assert "first use" in lines[0] and "soadyn precompile" in lines[0]
    warm = run(tmp_path)
    assert "soadyn: compiling" not in warm.stderr


@pytest.mark.slow
def test_the_notice_can_be_silenced(tmp_path):
    quiet = run(tmp_path, SOADYN_COMPILE_NOTICE="0")
    assert "soadyn: compiling" not in quiet.stderr


def test_the_cache_follows_the_compiled_modules_only(tmp_path):
    """The cache directory's tag hashes the modules that define compiled code: editing a
    kernel starts a fresh cache, editing the Python front does not."""
    from soadyn.numba_cache import _source_tag
    (tmp_path / "kernels.py").write_text("from .core.jit import kernel\n@kernel\ndef f(x):\n    return x\n")
    (tmp_path / "helpers.py").write_text("from .core.jit import helper\n@helper\ndef h(x):\n    return x\n")
    (tmp_path / "front.py").write_text("import numba\ndef g(x):\n    return x\n")
    tag = _source_tag(str(tmp_path))
    (tmp_path / "front.py").write_text("import numba\ndef g(x):\n    return 2 * x\n")
    assert _source_tag(str(tmp_path)) == tag
    (tmp_path / "kernels.py").write_text("from .core.jit import kernel\n@kernel\ndef f(x):\n    return 2 * x\n")
    assert _source_tag(str(tmp_path)) != tag
    tag = _source_tag(str(tmp_path))
    (tmp_path / "helpers.py").write_text("from .core.jit import helper\n@helper\ndef h(x):\n    return 2 * x\n")
    assert _source_tag(str(tmp_path)) != tag


def test_a_users_function_without_a_module_name_compiles(tmp_path):
    """Numba code a user makes with exec() has ``__module__`` None; the notice's listener
    sees its compilation too and must neither fail nor speak for it."""
    script = ("import numba, soadyn\n"
              "ns = {}\n"
              "exec('def f(x):\\n    return x + 1\\n', ns)\n"
              "print(numba.njit(ns['f'])(1))\n")
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    environment.pop("SOADYN_COMPILE_NOTICE", None)
    out = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
    assert "soadyn: compiling" not in out.stderr
