"""The one-weight trial against the closed form, as Determined's test_pytorch_trial.py checks it: every batch's
loss and weight (w_n = 1 - (1 - 2R)^n), the training metrics of every batch with scheduling_unit 1, on 1 and 2
slots and through both data loader kinds; a trial checkpointed, then continued to a longer length, equals one
trained to that length at once; the evaluation reducers; the errors Determined raises for wrapped reducers."""
from __future__ import annotations

import math

import pytest

from tests.determined.conformance.trial_runs import config, records, run_trial
from tests.determined.ranks import final_state, output

RATE = 0.001


def weight_after(batches: int) -> float:
    return 1 - (1 - 2 * RATE) ** batches


def assert_closed_form(batches: list[dict]) -> None:
    """Each batch's measured loss and weight are the expected ones, and the loss falls."""
    for index, metrics in enumerate(batches):
        assert metrics["loss"] == pytest.approx(metrics["loss_exp"], abs=1e-6), index
        assert metrics["w_after"] == pytest.approx(metrics["w_exp"], abs=1e-6), index
        assert metrics["w_after"] == pytest.approx(weight_after(index + 1), abs=1e-6), index
    assert all(newer["loss"] <= older["loss"] for older, newer in zip(batches, batches[1:]))


@pytest.mark.parametrize("slots, loader", [(1, "determined"), (2, "determined"), (1, "torch"), (2, "torch")])
def test_every_batch_follows_the_closed_form(tmp_path, slots, loader):
    seen = run_trial("onevar:OneVarTrial", tmp_path / "run",
                     config(max_batches=100, hparams={"dataloader_type": loader}), ranks=slots)
    assert len(seen.batches) == 100 and len(seen.training) == 100      # scheduling_unit 1: a window a batch
    assert_closed_form(seen.batches)
    found = records(tmp_path / "run")
    assert [r["iteration"] for r in found] == list(range(1, 101))
    assert [r["train_w_after"] for r in found] == pytest.approx([weight_after(n) for n in range(1, 101)], abs=1e-6)
    weight = final_state(tmp_path / "run")["models"]["model"]["weight"].item()
    assert weight == pytest.approx(weight_after(100), abs=1e-6)


def test_a_checkpointed_trial_continued_to_a_longer_length_equals_one_trained_at_once(tmp_path):
    """Determined's checkpoint_and_check_metrics with an LR scheduler stepped every batch: 100 batches and a
    checkpoint, then the same trial continued to 200, against 200 at once (validations every 100)."""
    hparams = {"lr_step_mode": 2}      # STEP_EVERY_BATCH
    first = run_trial("onevar:OneVarTrial", tmp_path / "cut", config(100, validation=100, checkpoint=100,
                                                                      hparams=hparams))
    assert len(first.batches) == 100 and len(first.checkpoints) == 1
    second = run_trial("onevar:OneVarTrial", tmp_path / "cut", config(200, validation=100, hparams=hparams))
    assert "resumed from" in output(tmp_path / "cut")
    whole = run_trial("onevar:OneVarTrial", tmp_path / "whole", config(200, validation=100, hparams=hparams))
    assert first.batches + second.batches == whole.batches           # same values, batch by batch
    assert first.validation + second.validation == whole.validation
    assert [b["lr"] for b in whole.batches] == pytest.approx([RATE * n for n in range(1, 201)])   # its step count
    timeless = [{k: v for k, v in r.items() if k not in ("wall_time", "samples_per_sec", "secs_per_train")}
                for r in records(tmp_path / "cut")]
    assert timeless == [{k: v for k, v in r.items() if k not in ("wall_time", "samples_per_sec", "secs_per_train")}
                        for r in records(tmp_path / "whole")]
    assert final_state(tmp_path / "cut")["global_iter"] == 200


@pytest.mark.parametrize("mode, expected", [(1, lambda b: b // 16 + 1), (2, lambda b: b + 1), (3, lambda b: b + 1),
                                            (4, lambda b: b + 1)])
def test_lr_schedulers_step_as_their_step_mode_says(tmp_path, mode, expected):
    """StepMode 1 every epoch (16 batches), 2 every batch, 3 by the trial itself (it steps every batch), 4 every
    optimizer step; the rate is RATE x the scheduler's step count, read in train_batch before the batch's step."""
    seen = run_trial("onevar:OneVarTrial", tmp_path / "run", config(40, hparams={"lr_step_mode": mode}))
    assert [b["lr"] for b in seen.batches] == pytest.approx([RATE * expected(b) for b in range(40)])


def test_evaluate_full_dataset_gives_the_validation_of_evaluate_batch(tmp_path):
    batch = run_trial("onevar:OneVarTrial", tmp_path / "batch", config(60, validation=20))
    full = run_trial("onevar:OneVarFullDatasetTrial", tmp_path / "full", config(60, validation=20))
    assert [v["val_loss"] for v in full.validation] == pytest.approx([v["val_loss"] for v in batch.validation])
    assert [t["loss"] for t in full.training] == pytest.approx([t["loss"] for t in batch.training])


def test_per_metric_evaluation_reducers(tmp_path):
    seen = run_trial("onevar:OneVarPerMetricReducers", tmp_path / "run", config(2, validation=1))
    for metrics, batches in zip(seen.validation, (1, 2)):
        loss = (1 - weight_after(batches)) ** 2
        assert metrics["val_loss"] == pytest.approx(loss)                    # AVG over the 16 batches
        assert metrics["mse"] == pytest.approx(16 * loss)                    # SUM
        assert metrics["worst"] == pytest.approx(loss)                       # MAX


@pytest.mark.parametrize("trial, message", [
    ("OneVarUnnamedNonDictReducer", "name=None but it did not return a dict"),
    ("OneVarNamedDictReducer", "with name set but it returned a dict anyway")])
def test_a_wrapped_reducer_of_the_wrong_kind_stops_the_trial_with_one_line(tmp_path, trial, message):
    run_trial(f"onevar:{trial}", tmp_path / "run", config(10, validation=5), expect=1)
    said = output(tmp_path / "run")
    assert message in said and "Traceback" not in said


def test_a_trial_resumed_at_or_past_its_length_trains_and_validates_nothing_more(tmp_path):
    run_trial("onevar:OneVarTrial", tmp_path / "run", config(10, validation=10, checkpoint=10))
    again = run_trial("onevar:OneVarTrial", tmp_path / "run", config(5, validation=1, checkpoint=1))
    assert again.training == [] and again.validation == []
    assert final_state(tmp_path / "run")["global_iter"] == 10


def test_test_mode_trains_one_batch(tmp_path):
    seen = run_trial("onevar:OneVarTrial", tmp_path / "run", dict(config(100), test_mode=True))
    assert len(seen.batches) == 1 and len(seen.validation) == 1 and len(seen.checkpoints) == 1
    assert math.isclose(final_state(tmp_path / "run")["models"]["model"]["weight"].item(), weight_after(1),
                        abs_tol=1e-7)
