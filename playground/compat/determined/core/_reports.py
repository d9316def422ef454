"""Where a Core API script's reports land: the trial's run folder (metrics.jsonl, det_checkpoints.jsonl,
det_preempted; playground/determined/core_files.py) when playground started the process for a Determined
experiment; nowhere but the log off-cluster.

metrics.jsonl holds the records every playground run writes (playground/candle/candle_run.py): a validation
report is a `kind: "epoch"` record with `iteration` (steps_completed, in batches), `samples` and `epochs` when
the experiment's global_batch_size (and records_per_epoch) give them, `wall_time`, then the metrics (a metric
named `epochs` or `batches`, as Determined's time_metric reads it, is the script's own and wins); a training
report is `kind: "train"`; `report_metrics(group, ...)` of another group is `kind: <group>`. Only rank 0
writes (Determined's tutorials report on rank 0 only). Before an attempt's first report or checkpoint, the
records after its latest checkpoint are dropped (they will be reported again), so a resumed run's
metrics.jsonl is an uninterrupted run's.
"""
from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Dict, Optional

from playground.determined import core_files
from playground.outputs.atomic_files import atomic_open
from playground.outputs.run_folder import RunFolder
from playground.restarts.fence import Fence


def jsonable(value: Any) -> Any:
    """A metric value as JSON holds it (tensors and numpy scalars as numbers); None when it has no such form."""
    if isinstance(value, (bool, int, str)) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    item = getattr(value, "item", None)          # a one-element tensor or numpy value
    if callable(item):
        try:
            return jsonable(item())
        except (ValueError, RuntimeError, TypeError):
            return None
    return None


class TrialReports:
    """The run folder of this trial as the Core API writes it (rank 0), or a folder that writes nothing."""

    def __init__(self, record: Optional[Dict[str, Any]], rank: int) -> None:
        self.record = record or {}
        self.run_dir: Optional[str] = self.record.get("run_dir") if rank == 0 else None
        self.checkpoint_dir: Optional[str] = self.record.get("checkpoint_dir")
        self.count = 0
        self.started = time.time()
        self.prior_wall_time = 0.0
        self.fence = Fence.from_env(self.run_dir) if self.run_dir else None
        self._resumed = False

    @property
    def metrics_path(self) -> str:
        return RunFolder(self.run_dir or "").metrics

    def start(self) -> None:
        self.started = time.time()

    def _resume(self) -> None:
        """Before the first write: keep the records the latest checkpoint had (all of them without one), drop
        the rest. Not before: a process that reports nothing through the Core API (a trial run by playground's
        trainer, which writes metrics.jsonl itself) leaves the file alone."""
        if self._resumed or not self.run_dir:
            return
        self._resumed = True
        entry = core_files.find_entry(self.run_dir, self.record.get("latest_checkpoint"))
        keep = int(entry["records"]) if entry else 0
        records = []
        if os.path.exists(self.metrics_path):
            with open(self.metrics_path, encoding="utf-8") as handle:
                for line in handle:
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue     # a line cut by a kill
            records = records[:keep]
            self.fence.check("metrics.jsonl")
            with atomic_open(self.metrics_path, "w") as handle:
                handle.writelines(json.dumps(r) + "\n" for r in records)
        self.count = len(records)
        self.prior_wall_time = float(records[-1].get("wall_time", 0.0)) if records else 0.0

    def append(self, kind: str, steps_completed: int, metrics: Dict[str, Any]) -> Optional[dict]:
        if not self.run_dir:
            return None
        self._resume()
        record: Dict[str, Any] = {"index": self.count, "kind": kind, "iteration": int(steps_completed)}
        batch, per_epoch = self.record.get("global_batch_size"), self.record.get("records_per_epoch")
        if kind == "epoch" and batch:
            record["samples"] = int(steps_completed) * int(batch)
            if per_epoch:
                record["epochs"] = record["samples"] / float(per_epoch)
        record["wall_time"] = self.prior_wall_time + time.time() - self.started
        for name, value in metrics.items():
            value = jsonable(value)
            if value is not None and name not in ("index", "kind"):
                record[name] = value
        self.fence.check("metrics.jsonl")
        with open(self.metrics_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        self.count += 1
        return record

    def checkpoint_stored(self, storage_id: str, checkpoint_dir: str, metadata: Dict[str, Any]) -> None:
        if self.run_dir:
            self._resume()
            self.fence.check(core_files.INDEX)
            core_files.append_checkpoint(self.run_dir, checkpoint_dir, storage_id, metadata.get("steps_completed"),
                                         self.count)

    def operation_completed(self, length: int, searcher_metric: Any) -> None:
        """det_searcher.jsonl: the searcher operations completed, with their metric (the master's record)."""
        if self.run_dir:
            self.fence.check(core_files.SEARCHER)
            with open(RunFolder(self.run_dir).det_searcher, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"length": length, "searcher_metric": jsonable(searcher_metric),
                                         "time": time.time()}) + "\n")

    def preempted(self) -> None:
        if self.run_dir:
            core_files.mark_preempted(self.run_dir)
