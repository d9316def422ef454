"""Where a Determined trial validates, as Determined 0.38's PyTorch trial controller decides: after every k-th
batch for a period Batch(k), at the end of every k-th epoch for Epoch(k), at the listed steps of a schedule, at a
sweep's ASHA rungs, and once at the end of training; never at an epoch end merely because an epoch ended (those
nothing: the window goes on), and a stop the trial requested ends training at the end of its window. Training
metrics are recorded at the end of each window: after every `scheduling_unit` batches (Trainer.fit's
reporting_period) and at each validation or checkpoint.

The tiny MNIST trial: epochs of 6 global batches of 8 (tests/determined/trials/mnist_trial.py)."""
from __future__ import annotations

import sys

import pytest

from playground.determined.trials.fit import rung_batches, rung_epochs
from playground.determined.trials.trial import Batch, Epoch, TrainUnit
from tests.determined.ranks import final_state, kill_and_rerun, records, run, trial_main

HPARAMS = {"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25, "learning_rate": 1.0}


def _kinds(run_dir) -> list[tuple[str, int]]:
    return [(r["kind"], r["iteration"]) for r in records(run_dir)]


def test_periods_and_schedules_end_where_determineds_train_units_say():
    # a period divides the step (Determined's _divides: below 1, every step); a schedule lists its steps
    assert [s for s in range(1, 13) if Batch(4).should_stop(s)] == [4, 8, 12]
    assert [s for s in range(1, 5) if Epoch(0).should_stop(s)] == [1, 2, 3, 4]
    assert [s for s in range(1, 13) if Batch([1, 5, 10]).should_stop(s)] == [1, 5, 10]
    assert not Batch(4).should_stop(0)
    # an experiment configuration's 0 is a period that never comes (TrainUnit._from_values: sys.maxsize)
    assert TrainUnit.from_config({"batches": 0}, 8) == Batch(sys.maxsize) and Batch(sys.maxsize).is_never()
    assert TrainUnit.from_config({"records": 20}, 8) == Batch(2)
    assert TrainUnit.from_config({"records": 4}, 8) == Batch(1)
    assert TrainUnit.from_config({"epochs": 3}, 8) == Epoch(3)
    with pytest.raises(ValueError, match="a training length is a positive whole number"):
        Batch([4, 8]).length()
    with pytest.raises(ValueError, match="a number of batches or a collection"):
        Batch("4")


def test_rungs_in_epochs_are_epoch_ends_and_rungs_in_batches_or_records_are_batches():
    assert rung_epochs({"max_length": {"epochs": 9}, "rungs": [1, 3, 9]}) == {1, 3, 9}
    assert rung_batches({"max_length": {"epochs": 9}, "rungs": [1, 3, 9]}, 32) == set()
    assert rung_epochs({"max_length": {"batches": 64}, "rungs": [4, 16, 64]}) == set()


def test_an_epoch_period_validates_every_kth_epoch_end_the_rungs_and_the_end_and_nothing_else(tmp_path):
    info = dict(experiment_config={"min_validation_period": {"epochs": 2}}, hparams=HPARAMS, trial_id=1,
                experiment_id=1, max_length={"epochs": 5}, rungs=[1])
    run(trial_main("mnist_trial:MNistTrial"), tmp_path / "run", info, 1)
    # epoch 1: the rung; 2 and 4: the period; 3: nothing (inside the window from 12 to 24); 5: the end of training
    assert _kinds(tmp_path / "run") == [("epoch", 6), ("epoch", 12), ("epoch", 24), ("epoch", 30)]
    found = records(tmp_path / "run")
    assert all((r.get("validation_loss") is not None) == (r["kind"] == "epoch") and r["train_loss"] > 0
               for r in found), found


def test_without_a_validation_period_a_trial_validates_once_at_the_end_of_training(tmp_path):
    info = dict(experiment_config={}, hparams=HPARAMS, trial_id=1, experiment_id=1, max_length={"batches": 13})
    run(trial_main("mnist_trial:MNistTrial"), tmp_path / "run", info, 1)
    # no window ends before (scheduling_unit 100): one record, the validation at the end
    assert _kinds(tmp_path / "run") == [("epoch", 13)]


def test_a_stop_the_trial_requests_ends_training_at_the_end_of_its_window(tmp_path):
    """The trial asks to stop during its 4th batch; Determined's controller looks at the request when a window
    ends: the validation period's, after the 6th batch, which validates, checkpoints and ends."""
    info = dict(experiment_config={"min_validation_period": {"batches": 3}}, hparams=HPARAMS, trial_id=1,
                experiment_id=1, max_length={"epochs": 2})
    run(trial_main("full_dataset_trial:FullDatasetTrial"), tmp_path / "run", info, 1)
    assert _kinds(tmp_path / "run") == [("epoch", 3), ("epoch", 6)]
    assert final_state(tmp_path / "run")["global_iter"] == 6


def test_training_metrics_every_scheduling_unit_batches_and_a_resume_after_sigkill_records_the_same(tmp_path):
    """scheduling_unit 3 (Determined's REPORT boundary, counted from the trial's first batch), epochs of 6
    batches, 13 batches, no validation period, checkpoints every 2 batches; killed after its batch-4 checkpoint
    and re-run: the same records."""
    info = dict(experiment_config={"scheduling_unit": 3, "min_checkpoint_period": {"batches": 2}}, hparams=HPARAMS,
                trial_id=1, experiment_id=1, max_length={"batches": 13})
    run(trial_main("mnist_trial:MNistTrial"), tmp_path / "whole", info, 1)
    # every window end reports: the scheduling unit's (3, 6, 9, 12) and the checkpoint period's (2, 4, 6...);
    # 13: the end, validated
    assert _kinds(tmp_path / "whole") == [("interval", 2), ("interval", 3), ("interval", 4), ("interval", 6),
                                          ("interval", 8), ("interval", 9), ("interval", 10), ("interval", 12),
                                          ("epoch", 13)]
    assert all(r["train_loss"] > 0 for r in records(tmp_path / "whole")[:-1])
    kill_and_rerun(trial_main("mnist_trial:MNistTrial"), tmp_path / "cut", info, 1, tmp_path / "whole")
