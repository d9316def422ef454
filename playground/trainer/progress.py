"""Terminal progress on rank 0: a tqdm bar (epoch, iteration, loss, samples/s) on a terminal, with a line for
each end of epoch (full test pass), else one log line per record point. `output.progress` forces bar, log or
none.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any

records_log = logging.getLogger("playground.records")


def wants_bar(opts: dict, rank: int) -> bool:
    """A bar on rank 0 when asked, or (auto) on a terminal that reports its width: one that reports zero columns
    (some consoles, IDE panes) would get a torn bar, so it gets plain log lines."""
    mode = opts["output"]["progress"]
    return rank == 0 and (mode == "bar" or (mode == "auto" and sys.stderr.isatty() and _columns() > 0))


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        return 0


class Progress:
    def __init__(self, opts: dict, ctx: Any, iterations_per_epoch: int) -> None:
        self.enabled = ctx.rank == 0 and opts["output"]["progress"] != "none"
        self.use_bar = self.enabled and wants_bar(opts, ctx.rank)
        self.num_epochs = opts["epoch_iter"]["num_epochs"]
        self.total = iterations_per_epoch
        declared = opts["output"]["metrics"]
        self.loss_name = next((m["name"] for m in declared if m["is_train"] and "loss" in m["name"]),
                              None if declared else "train_loss")   # with none declared the book measures it
        self._bar: Any = None
        self._epoch: int | None = None

    def step(self, epoch: int, epoch_iter: int) -> None:
        if not self.use_bar:
            return
        if self._epoch != epoch:
            self._new_bar(epoch, epoch_iter)
        self._bar.update(1)

    def record(self, record: dict) -> None:
        if not self.enabled:
            return
        records_log.info(format_record(record))
        if self._bar is not None and record["kind"] == "epoch":   # each full test pass stays on screen as a line
            self._bar.write(format_record(record), file=sys.stderr)
        if self._bar is not None:
            postfix = {}
            if self.loss_name and record.get(self.loss_name) is not None:
                postfix["loss"] = f"{record[self.loss_name]:.4f}"
            if record.get("samples_per_sec"):
                postfix["samples/s"] = f"{record['samples_per_sec']:.0f}"
            self._bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _new_bar(self, epoch: int, epoch_iter: int) -> None:
        from tqdm import tqdm
        self.close()
        self._epoch = epoch
        self._bar = tqdm(total=self.total, initial=epoch_iter, desc=f"epoch {epoch + 1}/{self.num_epochs}",
                         unit="it", dynamic_ncols=True, leave=True, file=sys.stderr)


def format_record(record: dict) -> str:
    skip = {"index", "kind", "epoch", "epoch_iter", "iteration", "samples", "epochs", "samples_per_sec", "secs_per_train",
            "wall_time", "lr"}
    parts = [f"epoch {record['epochs']:.2f}", f"iter {record['iteration']}"]
    if record["kind"] == "epoch":      # a full test pass: at an epoch's end, or a validation inside one
        parts[0] += " (end of epoch)" if record["epochs"] == record["epoch"] + 1 else " (validation)"
    for key, value in record.items():
        if key not in skip and value is not None:
            parts.append(f"{key} {value:.4f}")
    if record.get("samples_per_sec"):
        parts.append(f"{record['samples_per_sec']:.0f} samples/s")
    if record.get("lr") is not None:
        parts.append(f"lr {record['lr']:.4g}")
    return " | ".join(parts)
