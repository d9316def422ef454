"""The run folder of `playground candle`, in the contract every run follows (the sweep layer reads it).

`opts.json` (`{"opts": resolved params, "script": path}`), `metrics.jsonl` (one record per epoch: `index`,
`kind: "epoch"`, `epoch` (0-based), `epochs` (epochs done, float), `samples` when known, `wall_time`, one key
per metric), `results.json`, `train.log`. Records come from the checkpoint helper as epochs end; when the
script did not use it, they are made from the history `run(params)` returned. One folder per process: the
runner activates it, the helper finds it with `active_run()`. Every write first checks the fence (`fence`,
playground/restarts/fence.py): once a later attempt has claimed the folder, writing raises Fenced.
"""
from __future__ import annotations

import os
import time
from typing import Any

from playground.outputs.atomic_files import write_json
from playground.outputs.run_outputs import RunOutputs, best_point
from playground.checkpoints.preemption import Preemption
from playground.restarts.fence import Fence

_ACTIVE: "CandleRun | None" = None


class CandleRun:
    def __init__(self, run_dir: str, script: str) -> None:
        self.run_dir, self.script = os.path.abspath(run_dir), os.path.abspath(script)
        self.outputs = RunOutputs(self.run_dir, enabled=True)
        self.fence: Fence = self.outputs.fence
        self.records: list[dict] = []
        self.preemption = Preemption()
        self.prior_wall_time = 0.0     # seconds spent before the last resume (restored by the helper)
        self.model_path: str | None = None
        self.test_mode = False         # `--test`: the helper reads each checkpoint back and compares it
        self._started = time.time()
        self._stop_handled = False

    def handle_stop_signals(self) -> None:
        """From now on SIGTERM/SIGINT request a checkpoint and a stop (once per run, however many helpers)."""
        if not self._stop_handled:
            self.preemption.install()
            self._stop_handled = True

    def write_opts(self, params: dict) -> None:
        self.fence.check("opts.json")
        os.makedirs(self.run_dir, exist_ok=True)
        write_json(self.outputs.folder.opts, {"opts": recordable(params), "script": self.script})

    def wall_time(self) -> float:
        return time.time() - self._started + self.prior_wall_time

    def epoch_record(self, epoch: int, logs: dict, samples: int | None) -> dict:
        """Append (to memory and metrics.jsonl) the record of 0-based `epoch` with the metric values `logs`."""
        record: dict[str, Any] = {"index": len(self.records), "kind": "epoch", "epoch": epoch,
                                  "epochs": float(epoch + 1), "wall_time": self.wall_time()}
        if samples is not None:
            record["samples"] = int(samples)
        record.update({name: value for name, value in logs.items() if name not in record})
        self.records.append(record)
        self.outputs.append_record(record)
        return record

    def restore_records(self, records: list[dict], prior_wall_time: float) -> None:
        """After a resume: metrics.jsonl holds exactly the checkpoint's records, no duplicates."""
        self.records = [dict(r) for r in records]
        self.prior_wall_time = prior_wall_time
        self._started = time.time()
        self.outputs.rewrite_records(self.records)

    def add_lists(self, lists: dict[str, list]) -> None:
        """Per-epoch values from another source (the returned history, the printed lines): each epoch's record
        gets the values it lacks (a value already recorded, say at full precision from the checkpoint callback,
        stays), an epoch without a record gets one; metrics.jsonl is rewritten when anything was added."""
        by_epoch = {r["epoch"]: r for r in self.records if r.get("kind") == "epoch"}   # the last, after a re-run
        added = False
        for epoch in range(max((len(v) for v in lists.values()), default=0)):
            values = {k: v[epoch] for k, v in lists.items() if epoch < len(v) and v[epoch] is not None}
            record = by_epoch.get(epoch)
            if record is None:
                by_epoch[epoch] = self.epoch_record(epoch, values, None)
                continue
            missing = {k: v for k, v in values.items() if k not in record}
            record.update(missing)
            added = added or bool(missing)
        if added:
            self.outputs.rewrite_records(self.records)

    def write_results(self, returned: dict[str, list]) -> None:
        names = [k for k in dict.fromkeys(k for r in self.records for k in r) if k not in _RECORD_KEYS]
        metrics = {name: [r.get(name) for r in self.records] for name in names}
        metrics["epochs"] = [r["epochs"] for r in self.records]
        self.fence.check("results.json")
        write_json(self.outputs.results_path, {
            "model": self.model_path, "metrics": metrics, "best": _best(metrics, self.records),
            "history": returned, "wall_time_s": self.wall_time(), "records": len(self.records)})


def recordable(value: Any) -> Any:
    """`value` as JSON that says what it was: numpy and torch scalars and arrays as numbers (lists), a class or
    function by its qualified name (`numpy.float32`, as candle_lib puts it in data_type), a path as its string,
    a tuple or set as a list, anything else as its str()."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(key): recordable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [recordable(item) for item in value]
    if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', None) or 'builtins'}.{value.__qualname__}"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype") and not _is_dtype(value):
        return recordable(value.tolist())
    return str(value)


def _is_dtype(value: Any) -> bool:
    return "dtype" in type(value).__name__.lower() or type(value).__name__ == "dtype"


_RECORD_KEYS = ("index", "kind", "epoch", "epochs", "samples", "wall_time")


def _best(metrics: dict[str, list], records: list[dict]) -> dict[str, dict]:
    best = {}
    for name, values in metrics.items():
        point = None if name == "epochs" else best_point(name, values)
        if point is not None:
            best[name] = {"value": point[0], "index": point[1], "epochs": records[point[1]]["epochs"]}
    return best


def activate(folder: CandleRun | None) -> None:
    global _ACTIVE
    _ACTIVE = folder


def active_run() -> CandleRun | None:
    """The run folder of the `playground candle` command running this script, or None when run standalone."""
    return _ACTIVE
