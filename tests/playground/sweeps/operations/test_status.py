"""`sweep status`: trials stopped after a checkpoint show as paused or released (not running), and a reader
that goes away (`| head`) ends it quietly."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from playground.cli import main
from tests.conftest import HANG

GRID = {"model_param.base_learning_rate": {"type": "log", "minval": -2, "maxval": -1, "count": 2},
        "epoch_iter.num_epochs": 3}


def _wait_running(sweep, trials) -> None:
    deadline = time.monotonic() + HANG
    while not all((sweep / "trials" / t / "contract_attempts").is_file() for t in trials):
        assert time.monotonic() < deadline, "timed out waiting for the trials to start"
        time.sleep(0.05)


def _sweep_run(spec, sweep) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--workers", "2",
                             "--sweep-dir", str(sweep), "--quiet"], stderr=subprocess.PIPE, text=True)


def test_status_shows_paused_and_released_trials_as_such(write_spec, base_file, tmp_path, capsys):
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"]["contract_hold_file"] = str(tmp_path / "never")   # trials wait for SIGTERM
    base_file.write_text(json.dumps(opts))
    spec, sweep = write_spec({"name": "grid"}, GRID), tmp_path / "sweep"
    run = _sweep_run(spec, sweep)
    _wait_running(sweep, ["t0000", "t0001"])
    assert main(["sweep", "pause", str(sweep)]) == 0
    assert run.wait(timeout=HANG) == 75, run.stderr.read()
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "2 paused" in out and "running" not in out
    assert main(["sweep", "resume", str(sweep)]) == 0
    for trial in ("t0000", "t0001"):
        (sweep / "trials" / trial / "contract_attempts").unlink()
    run = _sweep_run(spec, sweep)
    _wait_running(sweep, ["t0000", "t0001"])
    run.send_signal(signal.SIGTERM)                   # Ctrl-C: the agent releases its trials for the next one
    assert run.wait(timeout=HANG) == 75, run.stderr.read()
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "2 released" in out and "running" not in out
    assert "  t0000        released" in out


def test_status_into_a_closed_pipe_ends_quietly(write_spec, tmp_path):
    spec, sweep = write_spec({"name": "random", "max_trials": 1}, {"epoch_iter.num_epochs": 1}), tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    reader, writer = os.pipe()
    os.close(reader)                                  # `| head` that has read what it wanted and gone
    done = subprocess.run([sys.executable, "-m", "playground", "sweep", "status", str(sweep)], stdout=writer,
                          stderr=subprocess.PIPE, text=True, timeout=HANG)
    os.close(writer)
    assert done.returncode == 0 and done.stderr == ""
