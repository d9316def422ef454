"""The command line answers --help without the heavy imports, and ends a user error with one line and exit 2
(playground/cli.py)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import HANG, REPO

HEAVY = ("torch", "numpy", "matplotlib", "cv2", "lmdb", "optuna", "torchvision")
PROBE = ("import runpy, sys\n"
         "sys.argv = {argv!r}\n"
         "try:\n"
         "    runpy.run_path({script!r}, run_name='__main__')\n"
         "except SystemExit:\n"
         "    pass\n"
         "print('imported:', *[m for m in {heavy!r} if m in sys.modules])\n")


@pytest.mark.parametrize("script, argv", [
    ("AnyExpOnTerm.py", ["AnyExpOnTerm.py", "--help"]),
    ("playground/cli.py", ["playground", "--help"]),
    ("playground/cli.py", ["playground", "run", "--help"]),
    ("playground/cli.py", ["playground", "sweep", "--help"]),
    ("playground/cli.py", ["playground", "sweep", "run", "--help"]),
    ("playground/cli.py", ["playground", "sweep", "agent", "--help"]),
])
def test_help_imports_none_of_the_heavy_libraries(script, argv):
    code = PROBE.format(argv=argv, script=str(REPO / script), heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "imported:"


def test_version_is_answered_by_both_entry_points(capsys):
    from importlib.metadata import version

    from playground.cli import main, run_main
    for entry, name in ((main, "playground"), (run_main, "AnyExpOnTerm.py")):
        with pytest.raises(SystemExit) as done:
            entry(["--version"])
        assert done.value.code == 0
        assert capsys.readouterr().out.strip() == f"{name} {version('playground')}"


@pytest.mark.parametrize("entry", [["AnyExpOnTerm.py"], ["-m", "playground", "run"]])
def test_a_user_error_that_reaches_an_entry_point_is_one_line_and_exit_2(entry, tmp_path):
    missing = tmp_path / "no_module_map.py"
    proc = subprocess.run([sys.executable, *entry, "--parameters-file", "experiments/smoke.json", "--module-map",
                           str(missing), "--run-dir", str(tmp_path / "run")], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"playground: error: --module-map {missing}: no such file"]
    assert not (tmp_path / "run").exists()
