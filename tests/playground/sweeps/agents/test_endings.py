"""How a sweep ends (endings.py), told by its exit code and its last line: 1 after failed trials once everything else
ran, naming them (0 with --allow-failed-trials); a pause or a stop says which running trials wrote a checkpoint and
which were killed without one; and the sweep's own stop never costs a trial a restart, even in its start-up."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from playground.cli import main
from playground.sweeps.files.sweep_folder import SweepFolder
from tests.conftest import HANG
from tests.playground.sweeps.agents.test_agent import _contract, _states, _wait_for
from tests.playground.sweeps.agents.test_hung_trials import HANGING

THREE = {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01, 0.001]},
         "epoch_iter.num_epochs": 2}


def _last_line(err: str) -> str:
    return err.strip().splitlines()[-1]


def test_a_sweep_with_a_failed_trial_runs_the_others_then_exits_1_naming_it(write_spec, base_file, tmp_path, capsys):
    _contract(base_file, contract_fail_learning_rates=[0.01])
    spec = write_spec({"name": "grid"}, THREE, max_restarts=0)
    sweep = tmp_path / "sweep"
    run = ["sweep", "run", str(spec), "--sweep-dir", str(sweep)]
    assert main(run) == 1
    assert _last_line(capsys.readouterr().err) == "sweep done: 2 complete, 1 failed (t0001: see sweep status); exit code 1"
    assert _states(sweep) == {"t0000": "COMPLETE", "t0001": "FAIL", "t0002": "COMPLETE"}
    # a re-run finds nothing to do, and says the same, also with --quiet (a failure is always said)
    assert main([*run, "--quiet"]) == 1
    assert capsys.readouterr().err.strip() == "sweep done: 2 complete, 1 failed (t0001: see sweep status); exit code 1"
    assert main([*run, "--allow-failed-trials"]) == 0
    assert _last_line(capsys.readouterr().err) == ("sweep done: 2 complete, 1 failed (t0001: see sweep status); "
                                                  "allowed by --allow-failed-trials; exit code 0")
    assert main(["sweep", "agent", str(sweep), "--quiet"]) == 1      # every agent on it ends the same way


def test_a_sweep_whose_trials_all_completed_or_were_pruned_exits_0_saying_so(write_spec, base_file, tmp_path, capsys):
    spec = write_spec({"name": "grid"}, THREE)
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(tmp_path / "sweep")]) == 0
    assert _last_line(capsys.readouterr().err) == "sweep done: 3 complete; exit code 0"


def test_a_pause_says_which_trials_checkpointed_and_which_were_killed_after_the_grace(write_spec, base_file, tmp_path):
    # t0000 (learning rate 0.1) is an ordinary trial, t0001 (0.01) hangs and ignores SIGTERM: SIGKILL after 1 s
    _contract(base_file, contract_epoch_seconds=0.2, hang_mode="ignore_term", hang_learning_rates=[0.01])
    space = {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01]},
             "epoch_iter.num_epochs": 100}   # 20 s: still running when the pause comes, however loaded
    spec = write_spec({"name": "grid"}, space, contract=False, trial_program=HANGING, trial_stop_grace=1)
    sweep = tmp_path / "sweep"
    run = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep),
                            "--workers", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        trials = sweep / "trials"
        _wait_for(lambda: (trials / "t0000" / "checkpoint.json").is_file() and
                  "hanging trial" in _text(trials / "t0001" / "sweep-trial.log"), "both trials to run", run)
        assert main(["sweep", "pause", str(sweep)]) == 0
        assert run.wait(timeout=HANG) == 75
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    last = _last_line(run.stderr.read())
    run.stderr.close()
    assert last.startswith("sweep paused: t0000 stopped after a checkpoint; t0001 killed 1 s after an unanswered "
                           "SIGTERM (trial_stop_grace), no checkpoint written: it resumes from its previous checkpoint"), last
    assert last.endswith("then re-run the same command to continue. Exit code 75."), last
    folder = SweepFolder(str(sweep))
    assert [a["exit_code"] for a in folder.read_attempts("t0000") if "end" in a] == [75]
    assert [a["exit_code"] for a in folder.read_attempts("t0001") if "end" in a] == [-signal.SIGKILL]


def test_a_trial_stopped_by_the_sweep_in_its_start_up_costs_no_restart(write_spec, base_file, tmp_path):
    # the run takes 30 s to start, with no stop handler yet (a real run imports torch): the sweep's SIGTERM kills it
    _contract(base_file, contract_startup_seconds=30)
    spec = write_spec({"name": "single"}, {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 2},
                      max_restarts=5)
    sweep = tmp_path / "sweep"
    run = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: any("child_pid" in a for a in SweepFolder(str(sweep)).read_attempts("t0000"))
                  if (sweep / "trials" / "t0000").is_dir() else False, "the trial to start", run)
        time.sleep(0.5)
        os.kill(run.pid, signal.SIGTERM)
        assert run.wait(timeout=HANG) == 75
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    folder = SweepFolder(str(sweep))
    ended = [a for a in folder.read_attempts("t0000") if "end" in a]
    assert [a["exit_code"] for a in ended] == [-signal.SIGTERM]
    assert not ended[0]["restart_consumed"] and "restart" not in ended[0]["reason"], ended
    assert folder.read_trial("t0000")["restarts_used"] == 0 and folder.restarts_used() == 0
    last = _last_line(run.stderr.read())
    run.stderr.close()
    assert last == ("sweep stopped: t0000 ended without a checkpoint (killed by SIGTERM): it resumes from its "
                    "previous checkpoint (from the start if none). Re-run the same command to continue. Exit code 75.")


def _text(path: Path) -> str:
    return path.read_text() if path.is_file() else ""
