"""Callbacks called as often as Determined's controller calls them (test_pytorch_trial.py's test_callbacks and
test_trainer_callbacks): 2 epochs of the one-weight trial, with no periods, a validation period of half the
run, or a checkpoint period of half the run, then periods of 5 and 10 batches."""
from __future__ import annotations

import sys

import pytest

from tests.determined.conformance.trial_runs import config, run_trial

EPOCHS, BATCH = 2, 2
BATCHES = EPOCHS * 64 // BATCH
NEVER = sys.maxsize


def counts(validations: int, checkpoints: int, workloads: int) -> dict:
    return {"trial_startups": 1, "trial_shutdowns": 1, "training_started_times": 1,
            "training_epochs_started": EPOCHS, "training_epochs_ended": EPOCHS, "training_workloads_ended": workloads,
            "validation_steps_started": validations, "validation_steps_ended": validations,
            "checkpoints_written": checkpoints, "checkpoints_uploaded": checkpoints}


@pytest.mark.parametrize("validation, checkpoint, expected", [
    (NEVER, NEVER, counts(validations=1, checkpoints=1, workloads=1)),         # the end: validation, checkpoint
    (BATCHES // 2, NEVER, counts(validations=2, checkpoints=2, workloads=2)),  # each validation the best: saved
    (NEVER, BATCHES // 2, counts(validations=1, checkpoints=2, workloads=2)),  # the end's validation: saved already
])
def test_callbacks_are_called_as_determineds_controller_calls_them(tmp_path, validation, checkpoint, expected):
    seen = run_trial("counter:OneVarCallbacksTrial", tmp_path / "run",
                     config(BATCHES, validation=validation, checkpoint=checkpoint, scheduling_unit=NEVER,
                            hparams={"global_batch_size": BATCH}))
    assert seen.counts["counter"] == expected
    assert seen.counts["legacy"] == {"epoch_starts": EPOCHS}     # the form without epoch_idx is called too


def test_callbacks_with_periods_that_do_not_divide_the_run(tmp_path):
    """test_trainer_callbacks: Epoch(2) of 16 batches each, checkpoints every 5 and validations every 10
    batches: one more of each at the end, and one training workload per window end."""
    info = config(0, validation=10, checkpoint=5, scheduling_unit=100)
    info["max_length"] = {"epochs": 2}
    seen = run_trial("counter:OneVarCallbacksTrial", tmp_path / "run", info)
    total = 2 * 64 // 4
    checkpoints = total // 5 + (1 if total % 5 else 0)
    validations = total // 10 + (1 if total % 10 else 0)
    assert seen.counts["counter"] == dict(counts(validations, checkpoints, max(checkpoints, validations)))
