"""Reads a trial's metrics.jsonl as it grows: its full test passes (`kind == "epoch"` records), each once.

The run rewrites the file atomically when it resumes, so the file is re-read whole on each poll (it holds one
line per record point) and records are told apart by their `index`. A line cut by a kill is skipped until it
is complete. `samples` is the step: the record's own count of training samples seen when it has one, else
iteration x batch_per_device x devices x shards from the trial's opts.json (monotone whatever the batch size).
"""
from __future__ import annotations

import json
from typing import Any

from playground.outputs.run_folder import RunFolder
from playground.sweeps.inputs.trial_length import global_batch_of


class MetricsTail:
    def __init__(self, run_dir: str) -> None:
        self.path, self.opts_path = RunFolder(run_dir).metrics, RunFolder(run_dir).opts
        self.seen: set[int] = set()
        self._global_batch: int | None = None

    def new_epoch_records(self) -> list[dict]:
        out = []
        for record in epoch_records(self.path):
            index = record.get("index")
            if index in self.seen:
                continue
            self.seen.add(index)
            record["samples"] = self.samples(record)
            out.append(record)
        return out

    def samples(self, record: dict) -> int:
        if record.get("samples") is not None:
            return int(record["samples"])
        if self._global_batch is None:
            self._global_batch = global_batch(self.opts_path)
        if not self._global_batch:  # not a playground opts.json (a CANDLE script's params): count records
            return int(record.get("iteration") or record.get("index") or 0)
        return int(record.get("iteration", 0)) * self._global_batch


def read_records(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return []
    records = []
    for line in text.split("\n")[:-1]:  # the last piece is "" or a line still being written
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def epoch_records(path: str) -> list[dict]:
    return [r for r in read_records(path) if r.get("kind") == "epoch"]


def global_batch(opts_path: str) -> int:
    try:
        with open(opts_path, encoding="utf-8") as handle:
            opts: dict[str, Any] = json.load(handle)["opts"]
    except (OSError, ValueError, KeyError):
        return 0
    return global_batch_of(opts)


def objective_value(records: list[dict], metric: str, mode: str, reduce: str) -> float | None:
    """The objective over full test passes: the last value, or the best one (`reduce: best`)."""
    values = [r[metric] for r in records if isinstance(r.get(metric), (int, float))]
    if not values:
        return None
    if reduce == "best":
        return min(values) if mode == "min" else max(values)
    return values[-1]
