"""The README a newcomer reads: one screen of it, no session dates, and everything it shows
works — each Python block runs on the base install (the optional extras hidden), each
`soadyn` command it lists exists, and each test and result file it names is in the
repository."""
import os
import re
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")

#: what `make demo` does not install (extras `test`, `viewer`, `mjcf`, `distributed`)
EXTRAS = ("pinocchio", "mujoco", "coal", "example_robot_data", "viser", "trimesh", "collada", "dask",
          "distributed", "hypothesis", "pytest")

#: run before the README's code: the extras' imports fail as on the base install
HIDE_EXTRAS = textwrap.dedent(f"""
    import importlib.abc, sys
    class _NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in {EXTRAS!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}} (not on the base install)")
            return None
    sys.meta_path.insert(0, _NotInstalled())
""")


def _text():
    with open(README, encoding="utf-8") as f:
        return f.read()


def _blocks(language):
    """The bodies of the fenced blocks whose opening fence names ``language`` ("" none)."""
    blocks, body, lang = [], None, None
    for line in _text().splitlines():
        if line.startswith("```"):
            if body is None:
                body, lang = [], line[3:].strip()
            else:
                if lang == language:
                    blocks.append("\n".join(body) + "\n")
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def test_the_readme_is_one_screen_of_at_most_200_lines():
    assert len(_text().splitlines()) <= 200


def test_the_readme_carries_no_date_or_clock_time():
    text = _text()
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "a date (YYYY-MM-DD)"
    assert not re.search(r"\b(19|20)\d\d\b", text), "a year"
    assert not re.search(r"\b\d\d:\d\d(:\d\d)?\b", text), "a clock time"
    assert not re.search(r"\b(January|February|March|April|May|June|July|August|September|October|November|"
                         r"December)\b", text), "a month"


def test_every_python_block_runs_on_the_base_install(tmp_path):
    blocks = _blocks("python")
    assert len(blocks) >= 3
    script = tmp_path / "readme.py"
    script.write_text(HIDE_EXTRAS + "\n".join(blocks))  # in order: later blocks use earlier names
    env = dict(os.environ, SOADYN_COMPILE_NOTICE="0", MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]


def test_every_soadyn_command_of_the_readme_exists():
    commands = [line.split()[1] for block in _blocks("") for line in block.splitlines()
                if line.startswith("soadyn ")]
    assert {"models", "demo", "info", "view"} <= set(commands)
    for sub in sorted(set(commands)):
        run = subprocess.run([sys.executable, "-m", "soadyn", sub, "--help"], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, f"soadyn {sub}: {run.stderr[-2000:]}"


def test_every_file_the_readme_names_exists():
    named = [p for p in re.findall(r"`((?:tests|benchmarks|docs)/[^`\s,]+)`", _text())
             if not p.startswith("docs/_build")]  # the built documentation is not in the repository
    assert len(named) >= 10
    for path in named:
        assert os.path.exists(os.path.join(ROOT, path)), path
    # a capability row names its test directory or file; a file named after a comma in the same cell
    # (`tests/io/test_urdf_collisions.py`, `test_mjcf_collisions.py`) lives beside the first
    for first, second in re.findall(r"`(tests/[^`]+/)[^`/]+`, `(test_[^`/]+\.py)`", _text()):
        assert os.path.exists(os.path.join(ROOT, first, second)), first + second
