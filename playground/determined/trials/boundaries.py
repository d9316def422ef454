"""Where Determined's PyTorch trial controller ends a training window (0.38's `_train_with_boundaries`).

After each batch, four boundaries are checked, each a TrainUnit counted from the trial's first batch: TRAIN
(`max_length`; one batch in test mode), VALIDATE (`validation_period`, plus, here, a sweep's adaptive ASHA
rungs), CHECKPOINT (`checkpoint_period`) and REPORT (`reporting_period`, the configuration's `scheduling_unit`).
A Batch unit is reached after the batch whose 1-based number it divides (or lists); an Epoch unit only at the
last batch of an epoch whose 1-based number it divides (or lists). A batch that reaches none is inside a
window; one that reaches any ends the window: the training metrics since the window began are reported, then
the validation and checkpoint it reached are made (loop_hook.py). An epoch end that reaches nothing ends no
window: its work (epoch-stepped LR schedulers, on_training_epoch_end) happens, nothing is reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playground.determined.trials.trial import Batch, Epoch, TrainUnit


@dataclass(frozen=True)
class Reached:
    """The boundaries one batch reached."""
    train_end: bool = False
    validate: bool = False
    checkpoint: bool = False
    report: bool = False

    def ends_window(self) -> bool:
        return self.train_end or self.validate or self.checkpoint or self.report


def hits(unit: TrainUnit | None, batches_done: int, epochs_done: int | None) -> bool:
    """Whether `unit` is reached after batch `batches_done` (1-based); `epochs_done` is the number of epochs
    completed when this batch ended one, else None."""
    if unit is None or unit.is_never():
        return False
    if isinstance(unit, Batch):
        return unit.should_stop(batches_done)
    return isinstance(unit, Epoch) and epochs_done is not None and unit.should_stop(epochs_done)


def reached(session: Any, batches_done: int, epochs_done: int | None) -> Reached:
    """The boundaries batch `batches_done` of the trial reaches, for the lengths and periods of `session`
    (fit.TrialSession)."""
    if session.test_mode:
        train_end = True
    elif session.max_batches is not None:
        train_end = batches_done >= session.max_batches
    else:
        train_end = hits(session.max_length, batches_done, epochs_done)
    validate = hits(session.validation_period, batches_done, epochs_done) or batches_done in session.rung_batches \
        or (epochs_done is not None and epochs_done in session.rung_epochs)
    return Reached(train_end=train_end, validate=validate,
                   checkpoint=hits(session.checkpoint_period, batches_done, epochs_done),
                   report=hits(session.reporting_period, batches_done, epochs_done))
