"""When to checkpoint: CANDLE's keys `ckpt_save_interval`, `ckpt_skip_epochs`, `ckpt_save_best` (with its metric
and direction), plus `ckpt_every_n_iters` for checkpoints inside long epochs.

Epochs are counted from 1 here, as CANDLE counts them: the checkpoint after the first epoch is epoch 1.
- Nothing is written during the first `ckpt_skip_epochs` epochs (preemption checkpoints aside), and the best
  metric is not tracked there either.
- After that, epoch n is saved when `n % ckpt_save_interval == 0`, when n is the final epoch (so a run always
  ends with its final state, as CANDLE does), or when the best metric improved. `ckpt_save_interval: 0` turns
  the periodic and final checkpoints off; only best ones remain (with ckpt_save_best).
- "Improved" is strictly better than every earlier epoch-end value of this run (NaN never is).
"""
from __future__ import annotations

import math

from playground.options.metric_modes import mode_of


class SavePolicy:
    """The save decisions of one run; `best_value` is part of the run's state (saved and restored with it)."""

    def __init__(self, output: dict, num_epochs: int) -> None:
        self.interval = output["ckpt_save_interval"]
        self.skip_epochs = output["ckpt_skip_epochs"]
        self.every_n_iters = output["ckpt_every_n_iters"]
        self.save_best = output["ckpt_save_best"]
        self.num_epochs = num_epochs
        self.best_metric, self.best_mode = best_metric_of(output)
        self.best_value: float | None = None

    def epoch_due(self, epochs_done: int, record: dict | None) -> tuple[bool, bool]:
        """(save?, is it the best so far?) after `epochs_done` epochs, given the epoch's last record point.
        Updates `best_value` when the metric improved."""
        if epochs_done <= self.skip_epochs:
            return False, False
        improved = self._improved(record)
        periodic = self.interval > 0 and (epochs_done % self.interval == 0 or epochs_done == self.num_epochs)
        return periodic or improved, improved

    def end_at(self, epochs_done: int) -> None:
        """The run ends after `epochs_done` epochs, before num_epochs (early stopping): that epoch's checkpoint is
        the final one, saved whatever the interval."""
        self.num_epochs = epochs_done

    def iteration_due(self, epoch: int, global_iter: int, iters_done: int, epoch_iterations: int) -> bool:
        """Whether to save inside 0-based `epoch` after `iters_done` of its iterations (never at its end: the
        epoch checkpoint decides there)."""
        return (self.every_n_iters > 0 and epoch >= self.skip_epochs and global_iter % self.every_n_iters == 0
                and iters_done < epoch_iterations)

    def _improved(self, record: dict | None) -> bool:
        if not self.save_best or not self.best_metric or not record:
            return False
        value = record.get(self.best_metric)
        if value is None or math.isnan(value):
            return False
        best = self.best_value
        if best is not None and not (value < best if self.best_mode == "min" else value > best):
            return False
        self.best_value = value
        return True


def best_metric_of(output: dict) -> tuple[str | None, str]:
    """The metric that decides `best` and its direction: the named one, else the first test metric; mode auto
    is the metric's own (its `mode` in output.metrics, playground/options/metric_modes.py)."""
    name = output["ckpt_save_best_metric"] or next((m["name"] for m in output["metrics"] if not m["is_train"]), None)
    mode = output["ckpt_save_best_mode"]
    if mode == "auto":
        mode = mode_of(output, name) if name else "max"
    return name, mode
