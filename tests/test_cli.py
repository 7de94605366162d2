"""The ``soadyn`` command: the demo on trees and closed chains, one-line errors, ``soadyn models``,
the help texts, and ``soadyn bench`` (a smoke test of --quick, and where it writes)."""
import csv
import os
import subprocess
import sys

import pytest

import soadyn as sd

from soadyn import cli


@pytest.mark.slow
def test_quick_bench_writes_tables_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "bench"
    # (the distributed section starts two Dask clusters: timed by hand, not in the suite)
    assert cli.main(["bench", "--quick", "--no-progress", "--skip", "distributed", "--output", str(out)]) == 0
    files = set(os.listdir(out))
    for name in ("machine.txt", "summary.md", "per_call.csv", "overhead.csv", "chains.csv", "startup.csv",
                 "rollout.csv", "ratios.png", "scaling.png", "bench.json"):
        assert name in files, name
    with open(out / "chains.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["algorithm"] for r in rows} == {"rnea", "aba", "mass_matrix"}
    assert all(float(r["soadyn_us"]) > 0 for r in rows)
    with open(out / "startup.csv") as f:
        assert float(next(csv.DictReader(f))["ready_s"]) > 0
    with open(out / "rollout.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["robot"], r["integrator"]) for r in rows} == {(r, i) for r in ("panda", "ur5")
                                                              for i in ("semi-implicit-euler", "rk4")}
    assert all(float(r["q_step1"]) < 1e-9 for r in rows)  # one step agrees with MuJoCo to rounding
    summary = (out / "summary.md").read_text()
    assert "Per call" in summary and "Fitted exponents" in summary and "mujoco.rollout" in summary
    assert "frame_velocity" in summary


@pytest.mark.parametrize("model", ["four_bar_linkage", "mini_cheetah"])
def test_demo_of_a_closed_chain_uses_the_closed_chain_functions(model, tmp_path, capsys):
    """The tree functions refuse closed chains: the demo shows C-ABA and constrained forward
    dynamics at a consistent state instead, and they agree; the simulation integrates the
    constrained dynamics with Baumgarte stabilization and says so, and the energy of the
    closed system stays constant (no tree ABA, labelled or not)."""
    assert cli.main(["demo", "--model", model, "--duration", "0.02", "--dt", "0.001", "--output",
                     str(tmp_path)]) == 0
    out = capsys.readouterr().out
    method = sd.closed.default_method(getattr(sd.models, model)())
    check = "direct" if method == "embedding" else method  # C-ABA is checked against a cut-joint method
    assert "GᵀMG" in out and "forward dynamics (C-ABA)" in out
    assert "(ABA)" not in out and "loops closed from random independent coordinates" in out
    err = float(out.split(f"check |C-ABA - {check} method|")[1].split()[0])
    assert err < 1e-8
    assert "constrained forward dynamics (augmented method), Baumgarte stabilization" in out
    drift = float(out.split("energy drift max |E(t) - E(0)|")[1].split()[0])
    assert drift < 1e-6  # of several J
    position = float(out.split("constraint drift max |d(q)|")[1].split()[0])
    assert position < 1e-8
    assert (tmp_path / f"{model}_energy.png").exists() or "matplotlib is not installed" in out


def test_demo_energy_drift_of_the_four_bar_is_small(tmp_path, capsys):
    """Issue 11: the demo reported a drift of 5.96 J (of 1.74 J) in 1 s on the four-bar,
    from a state off the constraint manifold. Now: RK4 dt = 1 ms, 1 s, drift below 1e-6 of the
    energy (2e-7 J of 2.8 J at the demo's state)."""
    assert cli.main(["demo", "--model", "four_bar_linkage", "--duration", "1", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    e0 = float(out.split("J of E(0) = ")[1].split()[0])
    drift = float(out.split("energy drift max |E(t) - E(0)|")[1].split()[0])
    assert abs(e0) > 1.0 and drift < 1e-6 * abs(e0)


def test_demo_of_a_tree(tmp_path, capsys):
    assert cli.main(["demo", "--model", "double_pendulum", "--duration", "0.01", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "forward dynamics (ABA)" in out and "Baumgarte" not in out and "C-ABA" not in out
    assert float(out.split("energy drift max |E(t) - E(0)|")[1].split()[0]) < 1e-9


def _one_line_error(capsys, command):
    cap = capsys.readouterr()
    assert cap.out == ""
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"soadyn {command}: error: "), cap.err
    assert "Traceback" not in cap.err
    return lines[0]


def test_unknown_model_is_a_one_line_error_listing_the_builtins(capsys):
    assert cli.main(["demo", "--model", "nope"]) == 2
    line = _one_line_error(capsys, "demo")
    assert "--model" in line and "'nope'" in line
    assert all(name in line for name in sd.models.BUILTIN)


def test_info_on_a_missing_or_broken_file_is_a_one_line_error(tmp_path, capsys):
    assert cli.main(["info", str(tmp_path / "nope.urdf")]) == 1
    assert "nope.urdf: cannot read" in _one_line_error(capsys, "info")
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="x"><link name="a"/><joint')
    assert cli.main(["info", str(bad)]) == 1
    assert "bad.urdf: not well-formed XML" in _one_line_error(capsys, "info")


def test_bad_duration_names_the_option(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["demo", "--duration", "-1"])
    assert e.value.code == 2
    assert "argument --duration: expected a positive number of seconds, got '-1'" in capsys.readouterr().err


def test_errors_from_the_command_line_have_no_traceback(tmp_path):
    """The installed command (python -m soadyn): one line on stderr, exit status 1 or 2."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for argv, status in ((["info", str(tmp_path / "nope.urdf")], 1), (["demo", "--model", "nope"], 2)):
        r = subprocess.run([sys.executable, "-m", "soadyn", *argv], capture_output=True, text=True, env=env,
                           cwd=tmp_path)
        assert r.returncode == status, r.stderr
        assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_models_lists_every_builtin_with_a_description(capsys):
    assert set(sd.models.DESCRIPTIONS) == set(sd.models.BUILTIN)
    assert cli.main(["models"]) == 0
    out = capsys.readouterr().out
    for name, text in sd.models.DESCRIPTIONS.items():
        line = next(l for l in out.splitlines() if l.startswith(name + " "))
        assert text in line and ("closed chain" in line) == sd.models.get(name).has_constraints


def test_help_names_the_builtin_models(capsys):
    for argv in (["--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 0
        # argparse wraps the text: compare without line breaks
        out = " ".join(capsys.readouterr().out.split())
        assert all(name in out for name in sd.models.BUILTIN), argv
    assert "models" in cli.parser().format_help()


def test_bench_writes_to_a_new_folder_by_default(tmp_path, monkeypatch):
    """``soadyn bench`` without --output (run in the repository root, say) writes to a new
    folder soadyn-bench-<date>-<time> of the current directory — never into the committed
    benchmarks/results/bench — and a second run in the same second gets another folder.
    Every section skipped: only machine.txt and summary.md, in a second or two."""
    pytest.importorskip("matplotlib")
    committed = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "results", "bench")
    before = {f: os.path.getmtime(os.path.join(committed, f)) for f in os.listdir(committed)}
    monkeypatch.chdir(tmp_path)
    args = ["bench", "--skip", "robots,overhead,chains,batch,startup,rollout,distributed", "--no-progress"]
    assert cli.main(args) == 0 and cli.main(args) == 0
    folders = sorted(os.listdir(tmp_path))
    assert len(folders) == 2 and all(f.startswith("soadyn-bench-") for f in folders)
    for f in folders:
        assert {"machine.txt", "summary.md"} <= set(os.listdir(tmp_path / f))
    assert {f: os.path.getmtime(os.path.join(committed, f)) for f in os.listdir(committed)} == before
    assert cli._bench_module().parse_args([]).output is None  # the default: chosen at run time


#: packages of the test environment that the base install (``make demo``'s) does not have
_NOT_IN_THE_BASE_INSTALL = ("pinocchio", "pin", "coal", "mujoco", "dask", "distributed", "matplotlib", "viser",
                            "trimesh", "collada", "example_robot_data", "hypothesis", "pytest")


def test_every_builtin_model_and_its_demo_on_the_base_install(tmp_path):
    """Issue 43: every built-in model builds, and its demo runs, with only the base
    dependencies of pyproject.toml importable (the test environment's other packages are
    blocked in a fresh interpreter); sympy, which Tello's differentials need, is one of them."""
    import tomllib

    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as f:
        base = tomllib.load(f)["project"]["dependencies"]
    assert any(d.startswith("sympy") for d in base)
    script = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {_NOT_IN_THE_BASE_INSTALL!r}:
            raise ImportError(f"blocked: {{name}} is not in the base install", name=name)
sys.meta_path.insert(0, Block())
from soadyn import cli, models
for name, factory in models.BUILTIN.items():
    factory()
assert "needs" not in models.listing(), models.listing()
sys.exit(cli.main(["demo", "--model", "tello", "--duration", "0.002", "--output", {str(tmp_path)!r}]))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "matplotlib is not installed" in run.stdout and "forward dynamics (C-ABA)" in run.stdout


def test_demo_prints_a_summary_and_the_arrays_only_when_verbose(tmp_path, capsys):
    """Issue 43: one line per quantity (the demo of the Mini Cheetah printed 87 lines, M in
    full); --verbose prints the body tree and the arrays."""
    args = ["demo", "--model", "mini_cheetah", "--duration", "0.002", "--output", str(tmp_path)]
    assert cli.main(args) == 0
    short = capsys.readouterr().out.splitlines()
    assert len(short) <= 20, "\n".join(short)
    assert cli.main(args + ["--verbose"]) == 0
    long = capsys.readouterr().out.splitlines()
    model = sd.models.mini_cheetah()
    assert len(long) > len(short) + model.nbodies  # the body tree, then H (18 x 18) and the accelerations


def test_unwritable_output_is_a_one_line_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["demo", "--output", str(blocker / "plots"), "--duration", "0.01"]) == 1
    assert "--output: cannot create the directory" in _one_line_error(capsys, "demo")


def test_info_reads_mjcf_files(tmp_path, capsys):
    pytest.importorskip("mujoco")
    path = tmp_path / "arm.xml"
    path.write_text("""<mujoco model="arm">
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.2" mass="1" diaginertia="0.01 0.01 0.001"/>
      <body name="lower" pos="0 0 -0.4">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="0.5" diaginertia="0.005 0.005 0.0005"/>
      </body>
    </body>
  </worldbody>
</mujoco>""")
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "upper" in out and "lower" in out and "shoulder" in out and "elbow" in out
    assert cli.main(["info", str(tmp_path / "missing.xml")]) == 1
    assert "missing.xml" in _one_line_error(capsys, "info")
