"""The run's metrics: the meters, and the index-aligned lists of the original (epochs, samples_per_sec,
secs_per_train, one per metric), plus the full record of each point as written to metrics.jsonl.

A record point reduces every reducible meter of every rank in one collective, computes, resets, and appends
one value to every list, so the lists stay aligned (null where a metric had nothing to measure).
"""
from __future__ import annotations

import logging
from typing import Any, Callable

import torch

from playground.trainer.meter_state import MeterStates, has_state, reduce_states
from playground.trainer.meters import Blobs


class MetricsBook:
    def __init__(self) -> None:
        # name -> {"calculator": meter, "output": [...], "is_train": bool, "mode": "min" | "max" | None}
        self.metrics: dict[str, dict] = {}
        self.meters = MeterStates(self.metrics)   # per rank, saved apart from the record points
        self.record_epochs: list[float | None] = []
        self.samples_per_sec: list[float | None] = []
        self.secs_per_train: list[float | None] = []
        self.records: list[dict] = []
        self.prior_wall_time = 0.0            # seconds spent before the run was last resumed
        self._phase: dict[bool, list] = {True: [], False: []}
        self._warned: set[str] = set()

    def add_meter(self, name: str, meter: Any, is_train: bool, mode: str | None = None) -> None:
        """Measure `meter` as metric `name` (AnyExp.add_metric), best by `mode` (min|max; None: by its name); a second
        meter of the same name replaces the first."""
        old = self.metrics.get(name)
        if old is not None:
            self._phase[old["is_train"]].remove(old["calculator"])
        self.metrics[name] = {"calculator": meter, "output": [], "is_train": bool(is_train), "mode": mode}
        self._phase[bool(is_train)].append(meter)

    def add(self, is_train: bool, loss: torch.Tensor | None, output: Any, labels: Any, named: dict | None = None,
            samples: int | None = None) -> None:
        """One step's outputs to the train or test meters; `named` holds a trial's values by name."""
        meters = self._phase[is_train]
        if meters:
            named = {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in (named or {}).items()}
            blobs = Blobs(loss.detach() if loss is not None else None,
                          output.detach() if isinstance(output, torch.Tensor) else output, labels, named, samples)
            for meter in meters:
                meter.Add(blobs)

    def record(self, *, kind: str, epoch: int, epoch_iter: int, iteration: int, samples: int, epochs: float,
               samples_per_sec: float | None, secs_per_train: float | None, lr: float | None, wall_time: float,
               reduce: Callable[[torch.Tensor], torch.Tensor] | None) -> dict:
        if reduce is not None:
            self._reduce(reduce)
        values = {}
        for name, entry in self.metrics.items():
            meter = entry["calculator"]
            value = meter.Compute()
            values[name] = None if value is None else float(value)
            meter.Reset()
        record = {"index": len(self.records), "kind": kind, "epoch": epoch, "epoch_iter": epoch_iter,
                  "iteration": iteration, "samples": samples, "epochs": epochs, "samples_per_sec": samples_per_sec,
                  "secs_per_train": secs_per_train, "lr": lr, "wall_time": wall_time, **values}
        self._append(record)
        return record

    def lists(self) -> dict[str, list]:
        """The original `metrics_output`, in its order: epochs, samples_per_sec, secs_per_train, one list per metric."""
        out = {"epochs": self.record_epochs, "samples_per_sec": self.samples_per_sec, "secs_per_train": self.secs_per_train}
        out.update((name, entry["output"]) for name, entry in self.metrics.items())
        return out

    def state_dict(self) -> dict:
        """The record points so far; meter states since the last point are per rank (`self.meters`), saved apart."""
        return {"records": list(self.records), "prior_wall_time": self.prior_wall_time}

    def load_state_dict(self, state: dict, wall_time_at_save: float) -> None:
        for lst in (self.record_epochs, self.samples_per_sec, self.secs_per_train, self.records):
            lst.clear()
        for entry in self.metrics.values():
            entry["output"].clear()
        for record in state["records"]:
            self._append(dict(record))
        self.prior_wall_time = wall_time_at_save

    def _append(self, record: dict) -> None:
        self.records.append(record)
        self.record_epochs.append(record["epochs"])
        self.samples_per_sec.append(record["samples_per_sec"])
        self.secs_per_train.append(record["secs_per_train"])
        for name, entry in self.metrics.items():
            entry["output"].append(record.get(name))

    def _reduce(self, reduce: Callable[[torch.Tensor], torch.Tensor]) -> None:
        for name, entry in self.metrics.items():
            if not has_state(entry["calculator"]) and name not in self._warned:
                self._warned.add(name)
                logging.getLogger("playground").warning(
                    "metric %s: its meter has no state()/load_state(), so each rank computes it alone "
                    "(see 'Meter' in docs/components.md to reduce it across ranks)", name)

        def by_op(tensor: torch.Tensor, op: str) -> torch.Tensor:
            if op == "sum":
                return reduce(tensor)
            from playground.distribution.collectives import all_reduce_max
            return all_reduce_max(tensor) if op == "max" else -all_reduce_max(-tensor)
        reduce_states([e["calculator"] for e in self.metrics.values()], by_op)
