"""Early stopping (output.early_stopping): end the run once `metric` has not improved for `patience` full test
passes in a row.

Only full test passes count (the record point of an epoch's end, kind "epoch"): an interval point measures a
few test batches. An improvement is a value better than the best so far by more than `min_delta` (below it with
mode min, above it with max); NaN or a missing value never improves. After the `patience`-th pass without one,
the hook sets `trainer.should_stop` (patience 0 acts as 1, as in Keras and Lightning, whose check follows a pass
without improvement only: the first such pass stops the run): the epoch still ends as usual (its checkpoint, fun_per_epoch_aftRunNet) and
no other epoch starts. Epochs are counted from 1 here, as in checkpoint names (`stopped_epoch` 5: five epochs
trained). The state is checkpointed, so a resumed run stops at the same epoch as an uninterrupted one, and a run
resumed after it stopped trains no further.
"""
from __future__ import annotations

import logging
import math

from playground.trainer.hook import Hook


class EarlyStopping(Hook):
    name = "early_stopping"

    def __init__(self, trainer) -> None:
        super().__init__(trainer)
        settings = trainer.opts["output"]["early_stopping"]
        self.metric: str = settings["metric"]
        self.mode: str = settings["mode"]
        self.patience: int = settings["patience"]
        self.min_delta: float = settings["min_delta"]
        self.best: float | None = None
        self.best_epoch: int | None = None
        self.passes_without_improvement = 0
        self.stopped_epoch: int | None = None

    def before_train(self) -> None:
        if self.stopped_epoch is not None:     # resumed from the checkpoint of the epoch it stopped at
            self.trainer.should_stop = True

    def after_record(self, record: dict) -> None:
        if record["kind"] != "epoch" or self.stopped_epoch is not None:
            return
        epochs_done = record["epoch"] + 1
        value = record.get(self.metric)
        if self._improves(value):
            self.best, self.best_epoch, self.passes_without_improvement = value, epochs_done, 0
            return
        self.passes_without_improvement += 1
        if self.passes_without_improvement >= self.patience:
            self.stopped_epoch = epochs_done
            self.trainer.should_stop = True
            logging.getLogger("playground").info(
                "early stopping after epoch %d: %s has not improved for %d full test passes (best %s at epoch %s)",
                epochs_done, self.metric, self.patience, self.best, self.best_epoch)

    def _improves(self, value: float | None) -> bool:
        if value is None or math.isnan(value):
            return False
        if self.best is None:
            return True
        return value < self.best - self.min_delta if self.mode == "min" else value > self.best + self.min_delta

    def summary(self) -> dict:
        """What results.json reports under "early_stopping"."""
        return {"metric": self.metric, "mode": self.mode, "patience": self.patience, "min_delta": self.min_delta,
                "stopped_early": self.stopped_epoch is not None, "stopped_epoch": self.stopped_epoch,
                "best_value": self.best, "best_epoch": self.best_epoch}

    def state_dict(self) -> dict:
        return {"best": self.best, "best_epoch": self.best_epoch,
                "passes_without_improvement": self.passes_without_improvement, "stopped_epoch": self.stopped_epoch}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.best_epoch = state["best"], state["best_epoch"]
        self.passes_without_improvement = state["passes_without_improvement"]
        self.stopped_epoch = state["stopped_epoch"]
