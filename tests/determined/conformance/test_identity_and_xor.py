"""Data order and state across slots and resumes (Determined's identity and XOR fixtures' checks): the identity
trial's weight after every batch follows the closed form of consecutive global batches on 1 and 2 slots; the
XOR trial killed mid-run and re-run ends bitwise equal to an uninterrupted run, on 1 and 2 slots."""
from __future__ import annotations

import signal

import pytest

from tests.determined.conformance.trial_runs import TRIALS, config, records, run_trial
from tests.determined.ranks import assert_same_training, interrupt, run, trial_main

RATE = 0.001


def identity_weights(batches: int, global_batch: int = 4, records_per_epoch: int = 64) -> list[float]:
    """The weight after each batch: SGD on the mean squared error of the batch's consecutive records."""
    weight, out = 0.0, []
    for batch in range(batches):
        first = batch * global_batch % records_per_epoch
        values = [1 + 0.1 * i for i in range(first, first + global_batch)]
        weight += 2 * RATE * sum(v * (v - v * weight) for v in values) / global_batch
        out.append(weight)
    return out


@pytest.mark.parametrize("slots", [1, 2])
def test_the_identity_trial_trains_on_consecutive_global_batches_on_any_number_of_slots(tmp_path, slots):
    seen = run_trial("identity:IdentityTrial", tmp_path / "run", config(20, validation=1), ranks=slots)
    assert [v["weight"] for v in seen.validation] == pytest.approx(identity_weights(20), rel=1e-5)
    assert [r["weight"] for r in records(tmp_path / "run", "epoch")] == pytest.approx(identity_weights(20), rel=1e-5)


XOR = {"hidden_size": 16, "learning_rate": 0.5, "dataset_size": 64, "global_batch_size": 8}


@pytest.mark.parametrize("slots", [1, 2])
def test_an_xor_trial_killed_mid_run_resumes_to_the_uninterrupted_result_bitwise(tmp_path, slots):
    info = config(40, validation=8, checkpoint=4, scheduling_unit=5, hparams=XOR)
    command = trial_main("xor:XorTrial")
    run(command, tmp_path / "whole", info, slots, cwd=TRIALS)
    validations = records(tmp_path / "whole", "epoch")
    assert validations[-1]["val_loss"] < validations[0]["val_loss"]      # it learns
    codes = interrupt(command, tmp_path / "cut", info, slots, signal.SIGKILL,
                      after="checkpoints/model_checkpoint_batch12.pt", cwd=TRIALS)
    assert codes == [-signal.SIGKILL] * slots
    run(command, tmp_path / "cut", info, slots, cwd=TRIALS)
    assert_same_training(tmp_path / "cut", tmp_path / "whole")
