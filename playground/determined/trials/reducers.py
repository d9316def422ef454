"""Determined's metric reducers: `Reducer` (how a trial's `evaluation_reducer()` combines its per-batch validation
metrics: AVG, SUM, MAX, MIN) and `MetricReducer` / `context.wrap_reducer` (a custom reduction over every rank's
values), as meters of the run's metrics book (loop_hook.py registers them).

A reducer wrapped `for_validation` is computed at each validation from what the trial gave it in evaluate_batch
since the last one; one wrapped only `for_training`, at each record point from train_batch's values. Its `name`
is the metric's name; a reducer without one (its cross_slot_reduce gives a dict) is not supported.
"""
from __future__ import annotations

import abc
import enum
from typing import Any, Callable

import torch

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
    """What `wrap_reducer(fn)` returns for a plain function: `update(value)`, then `fn(all values of all ranks)`."""

    def __init__(self, fn: Callable[[list], Any]) -> None:
        self.fn, self.values = fn, []

    def reset(self) -> None:
        self.values = []

    def update(self, value: Any) -> None:
        self.values.append(value)

    def per_slot_reduce(self) -> Any:
        return self.values

    def cross_slot_reduce(self, per_slot_metrics: list) -> Any:
        return self.fn([value for values in per_slot_metrics for value in values])


class ReducedMetric(Meter):
    """One named value of evaluate_batch's dicts, combined over batches and ranks by a Reducer."""

    def __init__(self, blob_name: str, how: Reducer = Reducer.AVG) -> None:
        self.how = how
        self.state_reduce = {"total": {Reducer.MAX: "max", Reducer.MIN: "min"}.get(how, "sum"), "count": "sum"}
        super().__init__(blob_name=blob_name)

    def Reset(self) -> None:
        self.total = {Reducer.MAX: -float("inf"), Reducer.MIN: float("inf")}.get(self.how, 0.0)
        self.count = 0.0

    def Add(self, blobs: Any) -> None:
        try:
            value = torch.as_tensor(blobs[self.blob_name]).detach().double().cpu()
        except KeyError:      # this batch did not return it (a GAN's alternating steps)
            return
        if self.how == Reducer.MAX:
            self.total = torch.maximum(torch.as_tensor(self.total, dtype=torch.float64), value)
        elif self.how == Reducer.MIN:
            self.total = torch.minimum(torch.as_tensor(self.total, dtype=torch.float64), value)
        else:
            self.total = self.total + value
        self.count = self.count + 1.0

    def Compute(self) -> float | None:
        if not float(self.count):
            return None
        return float(self.total) / float(self.count) if self.how == Reducer.AVG else float(self.total)


class CustomReducerMeter(Meter):
    """A wrapped MetricReducer as a meter: Compute gathers every rank's per_slot_reduce() (a collective: every
    rank computes every meter at a record point) and returns cross_slot_reduce of them."""

    def __init__(self, reducer: MetricReducer, name: str) -> None:
        self.reducer, self.name = reducer, name
        super().__init__(blob_name=name)

    def Reset(self) -> None:
        self.reducer.reset()

    def Add(self, blobs: Any) -> None:
        pass   # the trial calls the reducer's own update methods

    def Compute(self) -> float | None:
        import torch.distributed as dist
        mine = self.reducer.per_slot_reduce()
        every = [mine]
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            every = [None] * dist.get_world_size()
            dist.all_gather_object(every, mine)
        value = self.reducer.cross_slot_reduce(every)
        if isinstance(value, dict):
            raise TypeError(f"the reducer {self.name!r} returned a dict from cross_slot_reduce; with a name given "
                            "to wrap_reducer it must return one value")
        return None if value is None else float(value)

    def state(self) -> dict:
        return {}     # computed within one record point: nothing to carry across a checkpoint

    def load_state(self, state: dict) -> None:
        pass
