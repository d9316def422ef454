"""The digits MLP written three ways, as components (experiments/digits_mlp.json), as a CANDLE script with the
checkpoint helper (experiments/candle_digits/) and as a trial class (experiments/digits_trial.json): same init,
same data order, same final weights, bitwise; the CANDLE run survives SIGTERM and SIGKILL and the trial class
a SIGKILL, each resuming exactly."""
from __future__ import annotations

import json
import os
import signal

import pytest
import torch

from playground.api import run
from playground.candle.runner import CandleCommand, run_candle
from playground.checkpoints.files import load_state, read_pointer
from tests.conftest import REPO, load_experiment, run_cli

SCRIPT = str(REPO / "experiments" / "candle_digits" / "digits_mlp_candle.py")
EPOCHS = 3
# Session 1 is stopped by SIGTERM inside epoch 2; session 2 SIGKILLs itself right after its first checkpoint
# moved the `last` pointer (before `best`, ckpt.log and the keep limit); session 3 finishes.
WRAPPER = f'''
import os, signal, sys
sys.path.insert(0, {os.path.dirname(SCRIPT)!r})
from digits_mlp_candle import *
import playground.candle.checkpoint as helper
import playground.checkpoints.published as published
if os.environ.get("STOP_IN_EPOCH"):
    _save = helper.CandleCheckpoint.save
    def save(self, epoch, logs=None, samples=None):
        if epoch + 1 == int(os.environ["STOP_IN_EPOCH"]):
            os.kill(os.getpid(), signal.SIGTERM)
        return _save(self, epoch, logs, samples)
    helper.CandleCheckpoint.save = save
if os.environ.get("KILL_AFTER_POINTER"):
    _pointer = published.set_pointer
    def set_pointer(*args):
        _pointer(*args)
        os.kill(os.getpid(), signal.SIGKILL)
    published.set_pointer = set_pointer
'''


@pytest.fixture(scope="module")
def candle_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("candle") / "run"
    assert run_candle(CandleCommand(SCRIPT, sets=[f"epochs={EPOCHS}"], run_dir=str(run_dir))) == 0
    return run_dir


def final_weights(checkpoints) -> dict:
    return load_state(read_pointer(str(checkpoints), "last"))["model"]


def assert_bitwise_equal(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_the_candle_script_and_the_components_end_with_the_same_weights(tmp_path, candle_run):
    opts = load_experiment("digits_mlp.json")
    opts["epoch_iter"]["num_epochs"] = EPOCHS
    opts["output"].update(progress="none", plots=[])
    run(opts, run_dir=str(tmp_path / "components"))
    assert_bitwise_equal(final_weights(tmp_path / "components" / "checkpoints"),
                         final_weights(candle_run / "checkpoints"))
    components = [json.loads(x) for x in (tmp_path / "components" / "metrics.jsonl").read_text().splitlines()]
    candle = [json.loads(x) for x in (candle_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["val_accuracy"] for r in candle] == [r["test_accuracy_top1"] for r in components if r["kind"] == "epoch"]


def test_sigterm_then_sigkill_then_rerun_resumes_the_candle_script_exactly(tmp_path, candle_run):
    (tmp_path / "killable.py").write_text(WRAPPER)
    command = ["candle", str(tmp_path / "killable.py"), "--set", f"epochs={EPOCHS}", "--run-dir", str(tmp_path / "run")]
    stopped = run_cli(*command, script="playground", env={"STOP_IN_EPOCH": "2"})
    assert stopped.returncode == 75, stopped.stderr
    killed = run_cli(*command, script="playground", env={"KILL_AFTER_POINTER": "1"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    finished = run_cli(*command, script="playground")
    assert finished.returncode == 0, finished.stderr
    assert_bitwise_equal(final_weights(tmp_path / "run" / "checkpoints"), final_weights(candle_run / "checkpoints"))
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    whole = [json.loads(x) for x in (candle_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["index"] for r in lines] == list(range(EPOCHS))
    assert [(r["val_loss"], r["samples"]) for r in lines] == [(r["val_loss"], r["samples"]) for r in whole]
    log = (tmp_path / "run" / "checkpoints" / "ckpt.log").read_text()
    assert "resumed from model_checkpoint_epoch2.pt" in log and "resumed from model_checkpoint_epoch3.pt" in log


# The digits trial, SIGKILLed by itself inside its second epoch when KILL_AT_BATCH says so.
KILLABLE_TRIAL = '''
import os, signal
from experiments.digits_trial.digits_trial import DigitsTrial


class KillableTrial(DigitsTrial):
    def train_batch(self, batch, epoch_idx, batch_idx):
        if batch_idx == int(os.environ.get("KILL_AT_BATCH", "-1")):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().train_batch(batch, epoch_idx, batch_idx)
'''


def trial_opts() -> dict:
    opts = load_experiment("digits_trial.json")
    opts["epoch_iter"]["num_epochs"] = EPOCHS
    opts["output"].update(progress="none", plots=[])
    return opts


@pytest.fixture(scope="module")
def trial_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("trial") / "run"
    run(trial_opts(), run_dir=str(run_dir))
    return run_dir


def test_the_trial_class_ends_with_the_weights_of_the_candle_script(trial_run, candle_run):
    assert_bitwise_equal(final_weights(trial_run / "checkpoints"), final_weights(candle_run / "checkpoints"))
    trial = [json.loads(x) for x in (trial_run / "metrics.jsonl").read_text().splitlines()]
    candle = [json.loads(x) for x in (candle_run / "metrics.jsonl").read_text().splitlines()]
    assert [r["val_accuracy"] for r in candle] == [r["test_accuracy"] for r in trial]


@pytest.mark.slow   # two sessions of a 3-epoch run as real processes
def test_sigkill_then_rerun_resumes_the_trial_class_exactly(tmp_path, trial_run):
    (tmp_path / "killable_trial.py").write_text(KILLABLE_TRIAL)
    opts = trial_opts()
    opts["model"]["trial_py"] = "killable_trial.KillableTrial"
    (tmp_path / "opts.json").write_text(json.dumps({"opts": opts}))
    command = ["run", "--parameters-file", str(tmp_path / "opts.json"), "--run-dir", str(tmp_path / "run")]
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    killed = run_cli(*command, script="playground", cwd=REPO, env=dict(env, KILL_AT_BATCH="60"))   # epoch 2 of 44-batch epochs
    assert killed.returncode != 0 and not (tmp_path / "run" / "results.json").exists(), killed.stderr
    finished = run_cli(*command, script="playground", cwd=REPO, env=env)
    assert finished.returncode == 0, finished.stderr
    assert_bitwise_equal(final_weights(tmp_path / "run" / "checkpoints"), final_weights(trial_run / "checkpoints"))
    timing = ("samples_per_sec", "secs_per_train", "wall_time")
    lines = [{k: v for k, v in json.loads(x).items() if k not in timing}
             for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    whole = [{k: v for k, v in json.loads(x).items() if k not in timing}
             for x in (trial_run / "metrics.jsonl").read_text().splitlines()]
    assert lines == whole


def test_docs_trials_md_shows_the_digits_trial_of_experiments():
    text = (REPO / "docs" / "trials.md").read_text()
    block = text.split("<!-- example: experiments/digits_trial/digits_trial.py -->", 1)[1]
    assert block.split("```python\n", 1)[1].split("```", 1)[0] == \
        (REPO / "experiments" / "digits_trial" / "digits_trial.py").read_text()


def test_candle_test_mode_runs_one_epoch_reads_the_checkpoint_back_and_removes_its_folder(tmp_path, capsys,
                                                                                          monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert run_candle(CandleCommand(SCRIPT, test=True)) == 0
    out = capsys.readouterr().out
    assert "test passed" in out and "read back and equal to the model, optimizer and random state" in out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("playground-test-")]
