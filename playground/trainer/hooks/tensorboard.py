"""TensorBoard event files in <run-dir>/tensorboard (output.tensorboard; rank 0): every number of each record
point (metrics, learning rate, samples_per_sec, secs_per_train, grad_norm...) as a scalar at its iteration.

At an epoch's end the last interval point and the full test pass often fall on the same iteration: one tag and
one step would hold two values, and TensorBoard shows one of them. So test metrics are tagged by what measured
them, `test/<name>` at interval points (num_test_iter batches) and `test_full/<name>` at full test passes, and
a full test pass on the step of an interval point writes only its test metrics (the loop's values are the
interval point's). Train metrics and the loop's values keep their plain names.
"""
from __future__ import annotations

import logging
from typing import Any

from playground.outputs.run_folder import RunFolder
from playground.trainer.hook import Hook

_NOT_SCALARS = ("index", "kind", "epoch", "epoch_iter", "iteration", "samples")


def scalars(record: dict, previous: dict | None, test_metrics: set[str]) -> list[tuple[str, float]]:
    """The (tag, value) pairs a record point writes at step record["iteration"] (see the module docstring)."""
    full_pass = record["kind"] == "epoch"
    shares_step = full_pass and previous is not None and previous["kind"] != "epoch" \
        and previous["iteration"] == record["iteration"]
    pairs = []
    for key, value in record.items():
        if key in _NOT_SCALARS or not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if key in test_metrics:
            pairs.append((f"{'test_full' if full_pass else 'test'}/{key}", value))
        elif not shares_step:
            pairs.append((key, value))
    return pairs


class TensorBoard(Hook):
    name = "tensorboard"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        self.writer: Any = None

    def before_train(self) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            logging.getLogger("playground").warning(
                "output.tensorboard is true but the tensorboard package is not installed; pip install tensorboard "
                "to get event files")
            return
        self.writer = SummaryWriter(RunFolder(self.trainer.run_dir).tensorboard)

    def after_record(self, record: dict) -> None:
        if self.writer is None:
            return
        self.trainer.outputs.fence.check("tensorboard events")
        records = self.trainer.book.records     # this record is the last one
        previous = records[-2] if len(records) > 1 else None
        tests = {name for name, entry in self.trainer.book.metrics.items() if not entry["is_train"]}
        for tag, value in scalars(record, previous, tests):
            self.writer.add_scalar(tag, value, record["iteration"])
        self.writer.flush()

    def close(self) -> None:
        # A fenced attempt drops its writer unclosed: closing writes to the event file, which is no longer ours.
        if self.writer is not None and not self.trainer.outputs.fence.superseded():
            self.writer.close()
        self.writer = None
