"""Determined's metric reducers: `Reducer` (how a trial's `evaluation_reducer()` combines its per-batch validation
metrics: AVG, SUM, MAX, MIN) and `MetricReducer` / `context.wrap_reducer` (a custom reduction over every rank's
values), with Determined's harness semantics:

- every wrapped reducer is reset at the start of each training window and of each validation (`reset()`);
- one wrapped `for_training` is reduced at the end of each training window and reported with the training
  metrics; one wrapped `for_validation`, at the end of each validation, with the validation metrics;
- `reduce_wrapped` does Determined's `reduce_metrics`: every rank's `per_slot_reduce()` in one allgather, then
  `cross_slot_reduce(list of the ranks' values, rank order)`; a reducer wrapped with a `name` gives one metric
  (a dict is refused), one without gives a dict of metrics (anything else is refused);
- a function reducer's `cross_slot_reduce` interleaves the ranks' lists (rank 0's first value, rank 1's first,
  ..., then the second values), undoing the sharding of the data as Determined's `_SimpleReducer` does.

loop_hook.py calls these at the window ends and validations; the values are recorded through `ValueMeter`s.
"""
from __future__ import annotations

import abc
import enum
import itertools
from dataclasses import dataclass
from typing import Any, Callable

import torch

from playground.processes.exit_codes import UserError
from playground.trainer.meters import Meter


class Reducer(enum.Enum):
    AVG = 1
    SUM = 2
    MAX = 3
    MIN = 4


class MetricReducer(metaclass=abc.ABCMeta):
    """`determined.pytorch.MetricReducer`: reset(), per_slot_reduce() on each rank, cross_slot_reduce(list)."""

    @abc.abstractmethod
    def reset(self) -> None: ...

    @abc.abstractmethod
    def per_slot_reduce(self) -> Any: ...

    @abc.abstractmethod
    def cross_slot_reduce(self, per_slot_metrics: list) -> Any: ...


class SimpleReducer(MetricReducer):
    """What `wrap_reducer(fn)` returns for a plain function: `update(value)`, then `fn(every rank's values)`."""

    def __init__(self, fn: Callable[[list], Any]) -> None:
        self.fn = fn
        self.reset()

    def reset(self) -> None:
        self.values: list = []

    def update(self, value: Any) -> None:
        self.values.append(value)

    def per_slot_reduce(self) -> Any:
        return self.values

    def cross_slot_reduce(self, per_slot_metrics: list) -> Any:
        """`fn` of the ranks' values interleaved: the order of the unsharded data when update() is called once
        a batch (a rank with fewer values simply ends earlier)."""
        missing = object()
        interleaved = itertools.zip_longest(*per_slot_metrics, fillvalue=missing)
        return self.fn([value for values in interleaved for value in values if value is not missing])


class ReducerError(UserError, ValueError):
    """A wrapped reducer gave what its wrapping cannot record; the message names the reducer and the fix."""


@dataclass
class WrappedReducer:
    """One `context.wrap_reducer(reducer, name, for_training, for_validation)`."""
    reducer: MetricReducer
    name: str | None
    for_training: bool
    for_validation: bool

    def described(self) -> str:
        kind = f"function {self.reducer.fn.__name__}()" if isinstance(self.reducer, SimpleReducer) else \
            f"MetricReducer {type(self.reducer).__name__}"
        return f"the custom reduction {kind}"


def reduce_wrapped(wrapped: list[WrappedReducer], for_training: bool,
                   allgather: Callable[[Any], list]) -> dict[str, Any]:
    """Determined's reduce_metrics: the metrics of the reducers wrapped for this phase, reduced over every rank
    (one allgather, called on every rank alike)."""
    chosen = [w for w in wrapped if (w.for_training if for_training else w.for_validation)]
    if not chosen:
        return {}
    every = allgather([w.reducer.per_slot_reduce() for w in chosen])
    metrics: dict[str, Any] = {}
    for index, w in enumerate(chosen):
        value = w.reducer.cross_slot_reduce([slot[index] for slot in every])
        if w.name is None:
            if not isinstance(value, dict):
                raise ReducerError(f"{w.described()} was wrapped by wrap_reducer() with name=None but it did not "
                                   f"return a dict (it returned a {type(value).__name__}): give it a name to "
                                   "return one metric, or return a dict of metrics")
            metrics.update(value)
        elif isinstance(value, dict):
            raise ReducerError(f"{w.described()} was wrapped by wrap_reducer() with name set but it returned a "
                               "dict anyway: leave name=None to return a dict of metrics, or return one value")
        else:
            metrics[w.name] = value
    return metrics


def reset_all(wrapped: list[WrappedReducer]) -> None:
    for w in wrapped:
        w.reducer.reset()


class ReducedMetric(Meter):
    """One named value of train_batch's or evaluate_batch's dicts, combined over batches and ranks by a Reducer."""

    def __init__(self, blob_name: str, how: Reducer = Reducer.AVG) -> None:
        self.how = how
        self.state_reduce = {"total": {Reducer.MAX: "max", Reducer.MIN: "min"}.get(how, "sum"), "count": "sum"}
        super().__init__(blob_name=blob_name)

    def Reset(self) -> None:
        self.total = {Reducer.MAX: -float("inf"), Reducer.MIN: float("inf")}.get(self.how, 0.0)
        self.count = 0.0

    def Add(self, blobs: Any) -> None:
        try:
            value = blobs[self.blob_name]
        except KeyError:      # this batch did not return it (a GAN's alternating steps)
            return
        value = float(value.detach()) if isinstance(value, torch.Tensor) else float(value)
        if self.how == Reducer.MAX:
            self.total = max(self.total, value)
        elif self.how == Reducer.MIN:
            self.total = min(self.total, value)
        else:
            self.total += value
        self.count += 1.0

    def Compute(self) -> float | None:
        if not float(self.count):
            return None
        return float(self.total) / float(self.count) if self.how == Reducer.AVG else float(self.total)


class ValueMeter(Meter):
    """A metric whose value the determined hook computes itself (a wrapped reducer's) and sets before the record
    point; nothing to add over ranks or to checkpoint (the reducers' own states are the hook's)."""

    def __init__(self, name: str) -> None:
        super().__init__(blob_name=name)

    def Reset(self) -> None:
        self.value: float | None = None

    def Add(self, blobs: Any) -> None:
        pass

    def Compute(self) -> float | None:
        return self.value

    def state(self) -> dict:
        return {}

    def load_state(self, state: dict) -> None:
        pass
