"""A GAN-shaped PyTorchTrial (two models, two optimizers stepped in alternation, LR schedulers stepped per epoch
and per batch, a TensorBoard writer) on 1 and 2 ranks: every model, optimizer and scheduler is checkpointed, and
a run killed mid-way resumes to the uninterrupted result bitwise."""
from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_cli
from tests.determined.ranks import final_state, kill_and_rerun, records, run, trial_main

GAN = trial_main("gan_trial:GANTrial")


def gan_info() -> dict:
    return dict(experiment_config={"min_validation_period": {"batches": 3}, "min_checkpoint_period": {"batches": 2}},
                hparams={"global_batch_size": 8, "lr": 0.01, "b1": 0.5, "b2": 0.999}, trial_id=1,
                experiment_id=1, max_length={"batches": 10})


@pytest.mark.parametrize("ranks", [2])   # one rank's resume: test_pytorch_trial.py (the same trial state, saved once)
def test_a_two_model_trial_killed_mid_run_resumes_to_the_uninterrupted_result_bitwise(tmp_path, ranks):
    whole = tmp_path / "whole"
    run(GAN, whole, gan_info(), ranks)
    state = final_state(whole)
    assert list(state["models"]) == ["model", "model_1"]
    assert list(state["optimizers"]) == ["optimizer", "optimizer_1"]
    schedulers = state["hooks"]["determined"]["lr_schedulers"]
    assert [s["last_epoch"] for s in schedulers] == [1, 5]     # 1 epoch end (6 batches), 10 batches / 2
    assert state["global_iter"] == 10
    found = records(whole)
    assert {"train_loss", "train_g_loss", "train_d_loss", "loss", "batch_idx"} <= set(found[-1])
    # validations every 3 batches and at the end of training (10); the checkpoints every 2 batches end training
    # windows too, each reported: one record per window end
    assert [(r["kind"], r["iteration"], r["epochs"]) for r in found] == [
        ("interval", 2, 2 / 6), ("epoch", 3, 0.5), ("interval", 4, 4 / 6), ("epoch", 6, 1.0),
        ("interval", 8, 1 + 2 / 6), ("epoch", 9, 1.5), ("epoch", 10, 1 + 4 / 6)]
    scalars = [json.loads(line) for line in (whole / "tensorboard" / "scalars.jsonl").read_text().splitlines()]
    assert [s["step"] for s in scalars] == list(range(10)) and {s["tag"] for s in scalars} == {"d_loss_per_batch"}

    kill_and_rerun(GAN, tmp_path / "cut", gan_info(), ranks, whole)


def test_the_two_model_example_runs_with_test_through_the_runner(tmp_path):
    """experiments/determined_digits/two_models (a GAN on the digits) under `playground run const.yaml --test`:
    one batch of both models, a validation, a checkpoint of both."""
    done = run_cli("run", str(REPO / "experiments" / "determined_digits" / "two_models" / "const.yaml"), "--test",
                   "--run-dir", str(tmp_path / "run"), script="playground")
    assert done.returncode == 0, done.stderr[-3000:]
    found = records(tmp_path / "run")
    assert found[-1]["iteration"] == 1 and found[-1]["loss"] > 0 and found[-1]["train_g_loss"] > 0
    assert list(final_state(tmp_path / "run")["models"]) == ["model", "model_1"]
