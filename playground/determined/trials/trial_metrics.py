"""A Determined trial's metrics in the run's metrics book: names, meters, wrapped reducers, callbacks' views.

- Names: what train_batch returns is recorded as `train_<name>` (always prefixed, so a training `loss` and a
  training `train_loss` stay two metrics), what evaluate_batch / evaluate_full_dataset return under its own
  name (the name a searcher's `metric` gives); a wrapped reducer's value goes under `train_<name>` in a training
  report and `<name>` in a validation. A name that would be both (a validation metric named `train_x` beside a
  training `x`) or that is one of a record's own fields (`epochs`, `iteration`...) is refused with one message
  when it first appears: two values are never written under one name.
- Meters: a meter is added when its name first appears (every rank sees the same names); the names are saved
  with the determined hook's state, so a resumed run has its meters before their sums are loaded. Training
  values are averaged over the window's batches and ranks (Determined's default); validation values are reduced
  per the trial's `evaluation_reducer()`. Reducer values are set into `ValueMeter`s by `close_training_window`
  and `close_validation` (reducers.py).
- Callbacks' views: `on_training_workload_end(avg_metrics, batch_metrics)` gets the window's means under the
  bare names, with `batches` and `epochs`, and each batch's values averaged over ranks (kept only when a
  callback overrides that method: it costs a conversion per batch).
"""
from __future__ import annotations

import math
from typing import Any

import torch

from playground.processes.exit_codes import UserError
from playground.determined.trials.reducers import (ReducedMetric, Reducer, ValueMeter, WrappedReducer,
                                                   reduce_wrapped)

TRAIN_PREFIX = "train_"
# a record's own fields (MetricsBook.record): a metric of one of these names would overwrite it
RECORD_FIELDS = frozenset({"index", "kind", "epoch", "epoch_iter", "iteration", "samples", "epochs",
                           "samples_per_sec", "secs_per_train", "lr", "wall_time"})


class MetricNameError(UserError, ValueError):
    """A trial metric's name cannot be recorded without colliding with another; the message names both."""


def recorded_name(key: str, is_train: bool) -> str:
    return TRAIN_PREFIX + key if is_train else key


def is_scalar(value: Any) -> bool:
    """A number, or a tensor / array of one element (what a metric's mean can be taken of)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    return callable(getattr(value, "numel", None)) and value.numel() == 1 or getattr(value, "size", None) == 1


class TrialMetrics:
    """The metric side of the determined hook (one per run, on every rank)."""

    def __init__(self, trainer: Any, trial: Any, wrapped: list[WrappedReducer], keep_batches: bool) -> None:
        self.trainer, self.wrapped = trainer, wrapped
        self.names: dict[str, list[str]] = {"train": [], "validation": []}
        chosen = getattr(trial, "evaluation_reducer", None)
        chosen = chosen() if callable(chosen) else Reducer.AVG
        self._reducers = chosen if isinstance(chosen, dict) else {}
        self._default = chosen if isinstance(chosen, Reducer) else Reducer.AVG
        self._skipped: set[str] = set()
        self.keep_batches = keep_batches
        self.batch_values: list[dict[str, float]] = []    # this window's, when a callback wants them

    # ------------------------------------------------------------------ per batch
    def add(self, is_train: bool, values: dict, samples: int) -> None:
        """One batch's metrics to the train or validation meters (a meter added on a name's first sight)."""
        book = self.trainer.book
        named = {}
        for key, value in values.items():
            if not is_scalar(value):
                self._skip(key, value)
                continue
            if recorded_name(key, is_train) not in book.metrics:
                self.add_meter(key, is_train)
            named[key] = value
        book.add(is_train, None, None, None, named=named, samples=samples)
        if is_train and self.keep_batches:
            self.batch_values.append({k: float(v) for k, v in named.items()})

    def add_meter(self, key: str, is_train: bool, reducer_value: bool = False) -> None:
        name = recorded_name(key, is_train)
        book = self.trainer.book
        self._check_name(name, key, is_train)
        how = Reducer.AVG if is_train else self._reducers.get(key, self._default)
        meter = ValueMeter(name) if reducer_value else ReducedMetric(key, how)
        book.add_meter(name, meter, is_train, None)
        book.metrics[name]["output"].extend(record.get(name) for record in book.records)
        self.names["train" if is_train else "validation"].append(key)

    def _check_name(self, name: str, key: str, is_train: bool) -> None:
        phase = "train_batch" if is_train else "validation"
        if name in RECORD_FIELDS:
            raise MetricNameError(f"the {phase} metric {key!r} would be recorded as {name!r}, a field every "
                                  f"metrics.jsonl record has: rename it (docs/determined-pytorch.md, metric names)")
        entry = self.trainer.book.metrics.get(name)
        if entry is not None and entry["is_train"] != is_train:
            raise MetricNameError(f"the validation metric {name!r} and the training metric "
                                  f"{name[len(TRAIN_PREFIX):]!r} (recorded as {name!r}) would share one name: "
                                  "rename one of them (docs/determined-pytorch.md, metric names)")

    def _skip(self, key: str, value: Any) -> None:
        if value is not None and key not in self._skipped:
            self._skipped.add(key)
            self.trainer.log.warning("metric %s is a %s, not a number: it is not recorded in metrics.jsonl", key,
                                     type(value).__name__)

    # ------------------------------------------------------------------ at window ends and validations
    def close_training_window(self) -> dict[str, float | None]:
        """The training reducers' values, set into their meters; returns them (bare names)."""
        return self._set_reducer_values(True)

    def close_validation(self) -> dict[str, float | None]:
        return self._set_reducer_values(False)

    def _set_reducer_values(self, for_training: bool) -> dict[str, float | None]:
        values = reduce_wrapped(self.wrapped, for_training, self._allgather)
        book, out = self.trainer.book, {}
        for key, value in values.items():
            if not is_scalar(value):
                self._skip(key, value)
                continue
            name = recorded_name(key, for_training)
            if name not in book.metrics:
                self.add_meter(key, for_training, reducer_value=True)
            out[key] = book.metrics[name]["calculator"].value = float(value)
        return out

    def share_names(self, is_train: bool, values: dict | None) -> None:
        """After rank 0 alone added `values` (evaluate_full_dataset), the other ranks add meters of the same
        names, in rank 0's order, so every rank reduces the same meters; theirs add nothing, the record is rank
        0's. Called on every rank alike."""
        if self.trainer.world_size < 2:
            return
        import torch.distributed as dist
        names = [[key for key, value in values.items() if is_scalar(value)] if values is not None else None]
        dist.broadcast_object_list(names, src=0)
        for key in names[0]:
            if recorded_name(key, is_train) not in self.trainer.book.metrics:
                self.add_meter(key, is_train)

    def _allgather(self, mine: Any) -> list:
        if self.trainer.world_size < 2:
            return [mine]
        import torch.distributed as dist
        every: list = [None] * self.trainer.world_size
        dist.all_gather_object(every, mine)
        return every

    def workload_view(self, reducer_values: dict, batches: int, epochs: int) -> tuple[dict, list[dict]]:
        """(avg_metrics, batch_metrics) of the window just closed, as Determined's on_training_workload_end gets
        them: per batch, the mean over ranks; avg, the mean over batches, plus reducer values, batches, epochs."""
        mine, self.batch_values = self.batch_values, []
        every = self._allgather(mine)
        per_batch = []
        for rows in zip(*every):
            keys = {k for row in rows for k in row}
            per_batch.append({k: sum(r[k] for r in rows if k in r) / sum(1 for r in rows if k in r) for k in keys})
        averages: dict[str, Any] = {}
        for key in {k for row in per_batch for k in row}:
            found = [row[key] for row in per_batch if key in row and not math.isnan(row[key])]
            averages[key] = sum(found) / len(found) if found else None
        averages.update(reducer_values)
        averages.setdefault("batches", batches)
        averages.setdefault("epochs", epochs)
        return averages, per_batch

    def validation_view(self, record: dict, reducer_values: dict) -> dict:
        """What on_validation_end gets: the validation metrics under their own names."""
        view = {key: record[key] for key in self.names["validation"] if record.get(key) is not None}
        view.update(reducer_values)
        return view

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        reducer_keys = {"train": [], "validation": []}
        for phase, keys in self.names.items():
            for key in keys:
                if isinstance(self.trainer.book.metrics[recorded_name(key, phase == "train")]["calculator"],
                              ValueMeter):
                    reducer_keys[phase].append(key)
        return {"names": {k: list(v) for k, v in self.names.items()}, "reducer_names": reducer_keys}

    def load_state_dict(self, state: dict) -> None:
        names = state.get("names", state.get("metric_names", {}))
        from_reducers = state.get("reducer_names", {})
        for phase, keys in names.items():
            for key in keys:
                if recorded_name(key, phase == "train") not in self.trainer.book.metrics:
                    self.add_meter(key, phase == "train", reducer_value=key in from_reducers.get(phase, []))


def plain_state(reducer: Any) -> dict | None:
    """A reducer's attributes when they are plain data a checkpoint can hold and load without unpickling code
    (numbers, strings, tensors, and lists / tuples / dicts of them); None otherwise."""
    state = getattr(reducer, "__dict__", None)
    if not isinstance(state, dict):
        return None
    items = {k: v for k, v in state.items() if not callable(v)}
    return items if _plain(items) else None


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in value.items())
    return False
