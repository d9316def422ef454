"""`--max-restarts N` on a single run: the same command re-run in the same folder, resuming its checkpoint."""
from __future__ import annotations

import json

from playground.cli import main
from tests.conftest import run_cli, tiny_opts


def test_a_run_failing_its_first_attempt_is_rerun_in_its_folder_and_resumes_from_its_checkpoint(tmp_path, opts_file):
    marker = tmp_path / "failed-once"
    (tmp_path / "fail_once.py").write_text(
        "import os\n"
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        f"    if epoch == 1 and not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        raise ValueError('injected failure in epoch 2 of the first attempt')\n")
    opts = tiny_opts(model={"additional_override_py": "fail_once"})
    run_dir = tmp_path / "run"
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(run_dir), "--max-restarts", "1",
                   env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "injected failure" in proc.stderr and "restart 1 of max_restarts 1" in proc.stderr
    attempts = [a for a in map(json.loads, (run_dir / "attempts.jsonl").read_text().splitlines()) if "end" in a]
    assert [(a["exit_code"], a["restart_consumed"]) for a in attempts] == [(1, True), (0, False)]
    assert "resumed from" in (run_dir / "train.log").read_text()
    results = json.loads((run_dir / "results.json").read_text())
    assert results["metrics"]["epochs"] == [0.5, 1.0, 1.0, 1.5, 2.0, 2.0]   # one record of each, nothing twice


def test_a_negative_max_restarts_is_refused_before_anything_runs(tmp_path, opts_file, capsys):
    assert main(["run", "--parameters-file", opts_file(tiny_opts()), "--run-dir", str(tmp_path / "run"),
                 "--max-restarts", "-1"]) == 2
    assert "--max-restarts must be 0 or more" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
