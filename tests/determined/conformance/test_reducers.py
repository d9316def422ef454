"""Custom reducers as Determined's harness computes them (test_pytorch_trial.py's test_custom_reducers):
reset at the start of each training window and of each validation, reported with the training metrics of each
window and with each validation's metrics, over 1 and 2 slots."""
from __future__ import annotations

import pytest

from tests.determined.conformance.trial_runs import config, records, run_trial

BATCH = 4


def label_index_sum(batch_size: int, first: int, end: int) -> int:
    """What a window of batches first..end-1 gives: each batch's label sum (its size: labels are 1) x index."""
    return sum(batch_size * index for index in range(first, end))


@pytest.mark.parametrize("slots", [1, 2])
def test_reducers_reset_per_window_and_per_validation_as_determined(tmp_path, slots):
    """Determined's test configuration: 30 batches, validation at 30, scheduling_unit 10, global batch 4."""
    seen = run_trial("onevar:OneVarTrial", tmp_path / "run",
                     config(max_batches=30, validation=30, scheduling_unit=10), ranks=slots)
    assert len(seen.training) == 3
    for window, metrics in enumerate(seen.training):
        expect = label_index_sum(BATCH, 10 * window, 10 * (window + 1))
        assert metrics["cls_reducer"] == expect and metrics["fn_reducer"] == expect
    validation_batches = 64 // BATCH
    assert [v["cls_reducer"] for v in seen.validation] == [label_index_sum(BATCH, 0, validation_batches)] == [480]
    # the function reducer indexes the ranks' interleaved updates: each rank made 16 updates of 4 / slots
    per_update, updates = BATCH // slots, validation_batches * slots
    assert [v["fn_reducer"] for v in seen.validation] == [label_index_sum(per_update, 0, updates)]
    found = records(tmp_path / "run")
    assert [(r["kind"], r["iteration"]) for r in found] == [("interval", 10), ("interval", 20), ("epoch", 30)]
    assert [r["train_cls_reducer"] for r in found] == [m["cls_reducer"] for m in seen.training]
    assert found[-1]["cls_reducer"] == 480


def test_in_a_100_batch_run_every_validation_gives_480(tmp_path):
    seen = run_trial("onevar:OneVarTrial", tmp_path / "run", config(max_batches=100, validation=30, scheduling_unit=10))
    assert [v["cls_reducer"] for v in seen.validation] == [480, 480, 480, 480]     # at 30, 60, 90 and the end
    assert [r["cls_reducer"] for r in records(tmp_path / "run", "epoch")] == [480] * 4
