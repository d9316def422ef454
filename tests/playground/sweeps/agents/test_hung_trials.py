"""Hung trials (agent.py, progress_watch.py): an attempt with no new output for trial_stall_timeout, or running
past trial_timeout, is stopped (SIGTERM, SIGKILL trial_stop_grace later), counted as a failed attempt under
max_restarts, and named in `sweep status`; `sweep pause` ends every trial within the grace, hung ones included."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from playground.cli import main
from playground.sweeps.agents.heartbeat import process_alive

HANGING = [sys.executable, str(Path(__file__).resolve().parent / "hanging_trial.py")]
SPACE = {"epoch_iter.num_epochs": 2}


def _hanging_base(base_file, **param) -> None:
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"].update(param)
    base_file.write_text(json.dumps(opts))


def _attempts(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines()]


def test_a_trial_that_ignores_sigterm_and_stops_writing_is_killed_and_retried_as_a_failed_attempt(
        write_spec, base_file, tmp_path, capsys):
    _hanging_base(base_file, hang_mode="ignore_term", hang_attempts=1)
    spec = write_spec({"name": "single"}, SPACE, contract=False, trial_program=HANGING, trial_stall_timeout=2, trial_stop_grace=1,
                      max_restarts=1)
    sweep = tmp_path / "sweep"
    began = time.monotonic()
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    assert time.monotonic() - began < 60
    ended = [a for a in _attempts(sweep / "trials" / "t0000") if "end" in a]
    first, second = ended
    assert first["stopped"] == "no output for 2 s" and first["exit_code"] == -9      # SIGTERM ignored: SIGKILL
    assert first["retry"] and first["restart_consumed"] and first["reason"].startswith("stopped: no output for 2 s")
    assert 3.0 <= first["end"] - first["start"] < 15          # 2 s without output, 1 s of grace, then the kill
    hung_pid = next(a["child_pid"] for a in _attempts(sweep / "trials" / "t0000") if a.get("attempt") == 1
                    and "child_pid" in a)
    assert not process_alive(hung_pid, None)
    assert second["exit_code"] == 0
    trial = json.loads((sweep / "trials" / "t0000" / "trial.json").read_text())
    assert trial["state"] == "complete" and trial["restarts_used"] == 1


def test_a_stalled_trial_with_no_restarts_left_fails_and_status_names_why(write_spec, base_file, tmp_path, capsys):
    _hanging_base(base_file, hang_mode="handle_term")
    spec = write_spec({"name": "single"}, SPACE, contract=False, trial_program=HANGING, trial_stall_timeout="2s",
                      trial_stop_grace=5, max_restarts=0)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 1      # its trial failed
    last = _attempts(sweep / "trials" / "t0000")[-1]
    assert last["exit_code"] == 75 and not last["retry"] and last["stopped"] == "no output for 2 s"
    assert last["end"] - last["start"] < 5                  # it ended on SIGTERM, well within the grace
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("t0000"))
    assert "fail" in row and "attempt 1 stopped: no output for 2 s (exit 75)" in row


def test_a_trial_still_writing_is_stopped_once_past_trial_timeout(write_spec, base_file, tmp_path):
    _hanging_base(base_file, hang_mode="chatty")
    spec = write_spec({"name": "single"}, SPACE, contract=False, trial_program=HANGING, trial_stall_timeout=1, trial_timeout=3,
                      trial_stop_grace=5, max_restarts=0)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 1
    last = _attempts(sweep / "trials" / "t0000")[-1]
    assert last["stopped"] == "ran past trial_timeout (3 s)" and last["exit_code"] == 75
    assert json.loads((sweep / "trials" / "t0000" / "trial.json").read_text())["state"] == "fail"


def test_pause_ends_a_trial_that_ignores_sigterm_within_the_grace(write_spec, base_file, tmp_path, capsys):
    _hanging_base(base_file, hang_mode="ignore_term")
    spec = write_spec({"name": "single"}, SPACE, contract=False, trial_program=HANGING, trial_stall_timeout="30m",
                      trial_stop_grace=1)
    sweep = tmp_path / "sweep"
    run = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep),
                            "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        log = sweep / "trials" / "t0000" / "sweep-trial.log"
        deadline = time.monotonic() + 120
        while not (log.is_file() and "hanging trial" in log.read_text()):
            assert time.monotonic() < deadline and run.poll() is None, "the trial never started"
            time.sleep(0.05)
        time.sleep(1.5)
        capsys.readouterr()
        assert main(["sweep", "status", str(sweep)]) == 0      # while it hangs: how long it has been silent
        row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("t0000"))
        assert re.search(r"running .*last output [1-9]\d* s ago", row), row
        assert main(["sweep", "pause", str(sweep)]) == 0
        paused = time.monotonic()
        assert run.wait(timeout=30) == 75
        assert time.monotonic() - paused < 1 + 4            # the grace, the agent's polls and its exit
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    last = _attempts(sweep / "trials" / "t0000")[-1]
    assert last["exit_code"] == -9 and not last["restart_consumed"]
    assert json.loads((sweep / "trials" / "t0000" / "trial.json").read_text())["state"] == "paused"
    child = next(a["child_pid"] for a in _attempts(sweep / "trials" / "t0000") if "child_pid" in a)
    assert not process_alive(child, None)


def test_timeouts_are_checked_with_the_spec_and_may_change_on_resume(write_spec, tmp_path, capsys):
    spec = write_spec({"name": "single"}, SPACE, trial_stall_timeout="soon", trial_timeout=-1, trial_stop_grace=None)
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    for key in ("trial_stall_timeout", "trial_timeout", "trial_stop_grace"):
        assert f"{key} must be a positive number of seconds" in err
    sweep = tmp_path / "ok"
    assert main(["sweep", "run", str(write_spec({"name": "single"}, SPACE)), "--sweep-dir", str(sweep), "--quiet"]) == 0
    spec = write_spec({"name": "single"}, SPACE, trial_stall_timeout="45m", trial_timeout="2h")
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0   # same sweep
