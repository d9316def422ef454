"""Early stopping (output.early_stopping, playground/trainer/hooks/early_stopping.py) on the diabetes regression of
experiments/first_model, which overfits after its third epoch: where it stops, what results.json says, exact
resume after a kill, the opts check, and a sweep trial that stops early."""
from __future__ import annotations

import json
import math
import os
import signal
import time

import pytest

from playground.api import run
from tests.conftest import HANG, REPO, load_experiment, run_cli
from tests.playground.checkpoints.interrupted_runs import (OVERRIDE_NAME, UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, kill_group)

STOPPING = {"metric": "test_mse", "patience": 2, "min_delta": 0.001}


def regression(**stopping) -> dict:
    opts = load_experiment("first_model/diabetes_mlp.json")
    opts["epoch_iter"]["num_epochs"] = 12
    opts["output"].update(early_stopping=dict(STOPPING, **stopping), progress="log", plots=[])
    return opts


def expected_stop(values: list[float], patience: int, min_delta: float) -> tuple[int | None, int]:
    """(epoch it stops after, best epoch), counting epochs from 1, by the rule of the docs (Lightning's: the count
    is checked after a pass without improvement only)."""
    best, best_epoch, waiting = math.inf, 0, 0
    for epoch, value in enumerate(values, start=1):
        if value < best - min_delta:
            best, best_epoch, waiting = value, epoch, 0
            continue
        waiting += 1
        if waiting >= patience:
            return epoch, best_epoch
    return None, best_epoch


def full_passes(records: list[dict], metric: str) -> list[float]:
    return [r[metric] for r in records if r["kind"] == "epoch"]


@pytest.fixture
def at_repo(monkeypatch):
    monkeypatch.chdir(REPO)     # the example's components are named by dotted paths from the repository root


def test_the_run_stops_after_patience_full_passes_without_improvement_and_results_say_so(tmp_path, at_repo):
    whole = tmp_path / "whole"
    run(dict(regression(), output=dict(regression()["output"], early_stopping=None)), run_dir=str(whole))
    values = full_passes([json.loads(x) for x in (whole / "metrics.jsonl").read_text().splitlines()], "test_mse")
    stop, best_epoch = expected_stop(values, STOPPING["patience"], STOPPING["min_delta"])
    assert stop is not None and stop < 12      # the uninterrupted 12 epochs overfit: the rule stops them

    stopped = tmp_path / "stopped"
    opts = regression()
    opts["output"]["ckpt_save_interval"] = stop + 1     # the stopping epoch is the final one: saved all the same
    run(opts, run_dir=str(stopped))
    results = json.loads((stopped / "results.json").read_text())
    assert results["early_stopping"] == {
        "metric": "test_mse", "mode": "min", "patience": 2, "min_delta": 0.001, "stopped_early": True,
        "stopped_epoch": stop, "best_value": values[best_epoch - 1], "best_epoch": best_epoch}
    assert results["metrics"]["test_mse"] == values[:stop]          # the same epochs, then no more
    assert os.path.basename(results["model"]) == f"model_checkpoint_epoch{stop}.pt"


def test_patience_0_is_accepted_and_stops_at_the_first_pass_without_improvement_as_keras_and_lightning_do(
        tmp_path, at_repo):
    results = {}
    for patience in (0, 1):
        run(regression(patience=patience), run_dir=str(tmp_path / f"patience{patience}"))
        results[patience] = json.loads((tmp_path / f"patience{patience}" / "results.json").read_text())
    values = results[0]["metrics"]["test_mse"]
    stop = results[0]["early_stopping"]["stopped_epoch"]
    assert stop is not None and stop >= 2 and len(values) == stop     # not after the first pass, which improves
    assert (stop, results[0]["early_stopping"]["best_epoch"]) == expected_stop(values, 1, STOPPING["min_delta"])
    assert results[0]["early_stopping"] == dict(results[1]["early_stopping"], patience=0)   # 0 acts as 1


def test_a_max_metric_stops_by_its_own_direction(tmp_path, at_repo):
    """test_r2's meter says higher is better: its best is the greatest, which is the epoch of the least MSE."""
    run(regression(metric="test_r2", min_delta=0.0), run_dir=str(tmp_path / "r2"))
    results = json.loads((tmp_path / "r2" / "results.json").read_text())
    stopping = results["early_stopping"]
    assert stopping["mode"] == "max" and stopping["stopped_early"]
    assert stopping["best_value"] == max(results["metrics"]["test_r2"]) == results["best"]["test_r2"]["value"]


@pytest.mark.slow   # three sessions as processes
def test_a_run_killed_before_it_stops_resumes_and_stops_at_the_same_epoch_with_the_same_records(tmp_path, at_repo):
    opts = regression()
    opts["model"]["additional_override_py"] = OVERRIDE_NAME     # marks training, slows each iteration
    whole = RunFolder(tmp_path, "whole", opts)
    code, output = whole.run(env=UNHINDERED)
    assert code == 0, output
    stop = whole.results()["early_stopping"]["stopped_epoch"]
    assert stop is not None and stop >= 3

    killed = RunFolder(tmp_path, "killed", opts)
    process = killed.start(env={"PLAYGROUND_TEST_ITER_SLEEP": "0.05"})
    before_last = killed.dir / "checkpoints" / f"model_checkpoint_epoch{stop - 1}.pt"
    deadline = time.monotonic() + HANG
    while not before_last.exists():     # the epoch before the stop is saved: its hook state counts one pass
        assert process.poll() is None and time.monotonic() < deadline, killed.output()
        time.sleep(0.01)
    kill_group(process, signal.SIGKILL)
    assert process.wait(timeout=HANG) == -signal.SIGKILL
    assert not (killed.dir / "results.json").exists()

    code, output = killed.run(env=UNHINDERED)
    assert code == 0, output
    assert killed.results()["early_stopping"] == whole.results()["early_stopping"]
    assert_same_records(killed, whole)
    assert_same_training_state(killed.checkpoint(), whole.checkpoint())
    assert killed.checkpoint()["hooks"]["early_stopping"] == whole.checkpoint()["hooks"]["early_stopping"]


def test_an_unknown_early_stopping_metric_exits_2_naming_the_key_and_the_metrics(tmp_path, opts_file):
    proc = run_cli("--parameters-file", opts_file(regression(metric="test_msee")), "--run-dir", str(tmp_path / "r"),
                   cwd=REPO)
    assert proc.returncode == 2, proc.stderr
    assert ("opts.output.early_stopping.metric: 'test_msee' is not a metric; the metrics are train_loss, test_mse, "
            "test_r2. Did you mean 'test_mse'?") in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "r").exists()


@pytest.mark.slow   # two runs as processes
def test_a_sweep_trial_that_stops_early_is_a_complete_trial_with_its_metrics(tmp_path, at_repo):
    from playground.cli import main
    (tmp_path / "base.json").write_text(json.dumps({"opts": regression()}))
    spec = {"name": "stops", "base": str(tmp_path / "base.json"), "searcher": {"name": "grid"},
            "objective": {"metric": "test_mse", "mode": "min", "reduce": "best"},
            "space": {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.003, 0.01]}}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--workers", "2", "--sweep-dir", str(sweep),
                 "--quiet"]) == 0
    trials = sorted((sweep / "trials").iterdir())
    assert len(trials) == 2
    for trial in trials:
        results = json.loads((trial / "results.json").read_text())
        assert results["early_stopping"]["stopped_early"], trial
        assert len(results["metrics"]["test_mse"]) == results["early_stopping"]["stopped_epoch"] < 12
        assert float((trial / "result.txt").read_text()) == min(results["metrics"]["test_mse"])
