"""`--test` (playground/launch/one_batch_check.py, one_batch_run.py): one training and one validation batch, a checkpoint
round trip into a fresh trainer, every metric produced; it passes for each experiment and catches, in seconds, a
shape mismatch, a loss that is not a scalar, a metric never produced and a hook state that does not round-trip."""
from __future__ import annotations

import json
import os

import pytest

from playground.cli import main as playground_main
from playground.cli import run_main
from tests.conftest import REPO, load_experiment, run_cli
from tests.playground.trainer.test_anyexp import user_modules  # noqa: F401 - the fixture: modules outside the repository

EXPERIMENTS = sorted(REPO.glob("experiments/**/*.json"))
BROKEN_TRIALS = '''
import torch
from torch import nn
from torch.nn import functional as F
from playground.trainer import Hook
from experiments.digits_trial.digits_trial import DigitsTrial


class ShapeMismatch(DigitsTrial):
    def build_model(self):
        return nn.Sequential(nn.Linear(63, 10))


class VectorLoss(DigitsTrial):
    def train_batch(self, batch, epoch_idx, batch_idx):
        data, labels = batch
        return {"loss": F.cross_entropy(self.model(data), labels, reduction="none")}


class Forgetful(Hook):
    def __init__(self, trainer=None):
        super().__init__(trainer)
        self.steps = 0

    def after_step(self):
        self.steps += 1

    def state_dict(self):
        return {"steps": self.steps}

    def load_state_dict(self, state):
        pass        # forgets to restore self.steps


class ForgetfulHook(DigitsTrial):
    def build_hooks(self):
        return [Forgetful()]


class NoValidation(DigitsTrial):
    def build_validation_data_loader(self):
        return None
'''


SMALL_BATCH = 4


def run_test(tmp_path, opts: dict, *extra: str) -> int:
    path = tmp_path / "opts.json"
    path.write_text(json.dumps({"opts": opts}))
    return run_main(["--parameters-file", str(path), "--test", *extra])


def broken(user_modules, name: str) -> dict:
    module = user_modules("broken_trials", BROKEN_TRIALS)
    opts = load_experiment("digits_trial.json")
    opts["model"]["trial_py"] = f"{module}.{name}"
    return opts


def test_test_mode_passes_prints_what_it_did_and_leaves_no_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert run_test(tmp_path, load_experiment("digits_trial.json")) == 0
    out = capsys.readouterr().out
    assert "test passed" in out and "resumed into a fresh trainer equal to the file" in out and "test_accuracy" in out
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("playground-test-")]


def test_test_mode_writes_into_the_run_dir_when_given(tmp_path):
    assert run_test(tmp_path, load_experiment("digits_mlp.json"), "--run-dir", str(tmp_path / "run")) == 0
    assert (tmp_path / "run" / "checkpoints").is_dir()
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["iteration"] == 1


@pytest.mark.parametrize("trial, message", [
    ("ShapeMismatch", "mat1 and mat2 shapes cannot be multiplied"),
    ("VectorLoss", "the training loss must be a scalar tensor"),
    ("ForgetfulHook", "does not round-trip: hooks.Forgetful.steps is 1 in the file but 0 in memory after loading"),
    ("NoValidation", "opts.output.metrics[1] ('test_loss', ComputeMean): no value after a validation batch"),
])
def test_test_mode_catches_the_first_error_with_exit_1(tmp_path, capsys, user_modules, trial, message):
    assert run_test(tmp_path, broken(user_modules, trial)) == 1
    err = capsys.readouterr().err
    assert message in err and "test FAILED" in err


def test_test_mode_catches_a_metric_the_step_never_gives(tmp_path, capsys):
    opts = load_experiment("digits_trial.json")
    opts["output"]["metrics"][2]["meter_kargs"]["blob_name"] = "acc"
    assert run_test(tmp_path, opts) == 1
    assert "no blob named 'acc'; this step gives" in capsys.readouterr().err


def test_test_mode_refuses_bad_opts_with_exit_2(tmp_path, capsys):
    opts = load_experiment("digits_trial.json")
    opts["output"]["plots"][0]["ys"] = ["train_los"]
    assert run_test(tmp_path, opts) == 2
    assert "opts.output.plots[0].ys[0]: 'train_los' is not a metric" in capsys.readouterr().err


@pytest.mark.slow   # two spawned ranks
def test_test_mode_of_a_trial_on_two_ranks_exits_0(tmp_path):
    done = run_cli("run", "--parameters-file", str(REPO / "experiments" / "digits_trial.json"), "--test",
                   "--set", "distributed.num_cpus=2", script="playground", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "test passed" in done.stdout and "on 2 rank(s)" in done.stdout


@pytest.fixture(scope="module")
def digits_lmdb(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "digits"
    assert playground_main(["make-lmdb", "--digits", str(out), "--test-fraction", "0.2", "--no-progress"]) == 0
    return out


@pytest.mark.slow   # one test run per experiment file
@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: str(p.relative_to(REPO / "experiments")))
def test_test_mode_passes_for_every_experiment(path, digits_lmdb, tmp_path):
    """How long each takes is measured, not asserted (a loaded machine is no measure): benchmarks/README.md."""
    opts = json.loads(path.read_text())["opts"]
    sets = []
    if opts["input"].get("train_input_path"):   # the digits LMDBs `make demo` builds, here in tmp_path
        sets = ["--set", f"input.train_input_path={digits_lmdb / 'train'}",
                "--set", f"input.test_input_path={digits_lmdb / 'test'}"]
    if opts["epoch_iter"]["batch_per_device"] > SMALL_BATCH:
        # the same wiring on a few images: a ResNet-50 batch of 32 at 224 px costs a minute of CPU per test here
        sets += ["--set", f"epoch_iter.batch_per_device={SMALL_BATCH}"]
    assert run_test(tmp_path, opts, *sets) == 0
