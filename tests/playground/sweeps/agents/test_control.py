"""`sweep pause` / `sweep resume` (control.py) against a running `sweep run`: the running trials stop after a
checkpoint, nothing new starts, and the resumed sweep ends bit for bit as one never paused."""
from __future__ import annotations

import json
import os
import re
import threading
import time

from playground.cli import main
from tests.conftest import HANG

EPOCHS = 5
GRID = {"model_param.base_learning_rate": {"type": "log", "minval": -2, "maxval": -1, "count": 3},
        "epoch_iter.num_epochs": EPOCHS}
TRIALS = ("t0000", "t0001")    # the two that run when the pause comes; t0002 waits


def _epochs_recorded(trial_dir) -> int:
    path = trial_dir / "metrics.jsonl"
    if not path.is_file():
        return 0
    return sum(1 for line in path.read_text().splitlines() if '"kind": "epoch"' in line)


def _wait_for(condition, what: str, seconds: float = HANG) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_pause_stops_two_running_trials_after_a_checkpoint_and_resume_ends_as_if_never_paused(
        write_spec, base_file, tmp_path, capsys):
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"]["contract_epoch_seconds"] = 0.2
    base_file.write_text(json.dumps(opts))
    spec = write_spec({"name": "grid"}, GRID)
    reference, sweep = tmp_path / "reference", tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--workers", "3", "--sweep-dir", str(reference), "--quiet"]) == 0

    paused: list[int] = []

    def pause_once_both_train() -> None:   # what a user at another terminal does; the sweep only sees the file
        _wait_for(lambda: all(_epochs_recorded(sweep / "trials" / t) >= 1 for t in TRIALS), "both trials to train")
        paused.append(main(["sweep", "pause", str(sweep)]))

    pauser = threading.Thread(target=pause_once_both_train, daemon=True)
    pauser.start()
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 75
    pauser.join()
    assert paused == [0]
    assert "stops its 2 running trial(s) after a checkpoint" in capsys.readouterr().out
    paused_at = json.loads((sweep / "control" / "PAUSE").read_text())["paused_at"]
    for trial in TRIALS:
        folder = sweep / "trials" / trial
        assert json.loads((folder / "trial.json").read_text())["state"] == "paused"
        last = [json.loads(line) for line in (folder / "attempts.jsonl").read_text().splitlines()][-1]
        assert last["exit_code"] == 75 and last["reason"].startswith("paused") and not last["restart_consumed"]
        done = json.loads((folder / "checkpoint.json").read_text())["epochs_done"]
        # the sweep sent SIGTERM on seeing the flag (it polls every 0.2 s; 3 s allows for a loaded machine), and
        # the trial stopped at the first checkpoint after it: the iteration it was in, then the checkpoint
        when, signalled, stopped = re.search(r"SIGTERM at ([\d.]+) in epoch (\d+), stopped after epoch (\d+)",
                                             (folder / "sweep-trial.log").read_text()).groups()
        assert paused_at <= float(when) < paused_at + 3.0
        assert int(stopped) == int(signalled) == done < EPOCHS
        assert _epochs_recorded(folder) == done
    assert sorted(os.listdir(sweep / "trials")) == list(TRIALS)   # claimed nothing new
    assert main(["sweep", "status", str(sweep)]) == 0
    assert "paused" in capsys.readouterr().out
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 75
    # a study lost while paused and rebuilt from the folders continues the same way (paused trials stay running)
    (sweep / "study.journal").unlink()
    assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    assert main(["sweep", "resume", str(sweep)]) == 0
    assert "t0000, t0001 first" in capsys.readouterr().out
    assert not (sweep / "control" / "PAUSE").exists()
    assert main(["sweep", "run", str(spec), "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 0
    for trial in (*TRIALS, "t0002"):
        ours, theirs = sweep / "trials" / trial, reference / "trials" / trial
        assert json.loads((ours / "trial.json").read_text())["state"] == "complete"
        for name in ("metrics.jsonl", "checkpoint.json", "results.json"):
            assert (ours / name).read_bytes() == (theirs / name).read_bytes(), f"{trial}/{name}"


def test_pause_on_a_folder_that_is_not_a_sweep_exits_2_with_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a sweep")
    assert main(["sweep", "pause", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert str(tmp_path) in err and "not a sweep folder" in err and "sweep.json" in err
    assert not (tmp_path / "control").exists()
    assert main(["sweep", "resume", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
