"""What a run leaves in its folder: metrics.jsonl (a line per record point, as it happens), results.json,
the PNG plots of output.plots and train.log (TensorBoard events are a hook: playground/trainer/hooks/tensorboard.py).
Only rank 0 writes, and only while its attempt holds the folder: each write first checks the fence
(playground/restarts/fence.py, one `stat`) and raises Fenced once a later attempt has claimed the folder.
"""
from __future__ import annotations

import json
import logging
import math
import os
from typing import Any

from playground.options.metric_modes import mode_by_name
from playground.outputs.atomic_files import atomic_open, write_json
from playground.outputs.line_append import append_failure, append_whole
from playground.outputs.plots import draw_runs
from playground.outputs.run_folder import RunFolder
from playground.outputs.run_log import take_log_failure
from playground.processes.exit_codes import UserError
from playground.restarts.fence import Fence

log = logging.getLogger("playground")


class RunOutputError(UserError, RuntimeError):
    """A run's output could not be written (a full disk); the message names the file."""


class RunOutputs:
    def __init__(self, run_dir: str, enabled: bool) -> None:
        self.run_dir, self.enabled = run_dir, enabled
        self.folder = RunFolder(run_dir)
        self.metrics_path, self.results_path = self.folder.metrics, self.folder.results
        self.fence = Fence.from_env(run_dir)

    def open_log(self, opts: dict) -> None:
        if not self.enabled:
            return
        os.makedirs(self.run_dir, exist_ok=True)

    def append_record(self, record: dict) -> None:
        """One line more in metrics.jsonl. A write that fails (a full disk) leaves the file as it was, no line cut
        short, and raises RunOutputError naming it: one line, as for a checkpoint, where the run then stops."""
        if not self.enabled:
            return
        self.fence.check("metrics.jsonl")
        _raise_log_failure()   # this record point's line in train.log could not be written: the run stops here
        line = (json.dumps(record) + "\n").encode("utf-8")
        with open(self.metrics_path, "ab", buffering=0) as handle:
            try:
                append_whole(handle, line)
            except OSError as err:
                raise RunOutputError(append_failure("a record", self.metrics_path, err)) from err

    def rewrite_records(self, records: list[dict]) -> None:
        """After a resume: metrics.jsonl holds exactly the checkpoint's record points, no duplicates."""
        if not self.enabled:
            return
        self.fence.check("metrics.jsonl")
        os.makedirs(self.run_dir, exist_ok=True)
        with atomic_open(self.metrics_path, "w") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")

    def draw_plots(self, specs: list[dict], lists: dict, book: Any = None) -> list[str]:
        """One PNG per spec; with the book, test metrics tell interval points from full test passes."""
        if not self.enabled:
            return []
        self.fence.check("plots")
        if book is not None:
            lists = dict(lists, kind=[record["kind"] for record in book.records])
        tests = {name for name, entry in book.metrics.items() if not entry["is_train"]} if book is not None else set()
        return [draw_runs(spec, [("", lists)], self.folder.plot(i, spec), tests)
                for i, spec in enumerate(specs)]

    def write_results(self, result: dict, book: Any, wall_time: float, early_stopping: dict | None = None,
                      metrics: dict | None = None) -> None:
        """results.json: the result dict's JSON values, the metrics lists with what the trainer's metrics_output
        adds to them (`metrics`: an extendMetricsOutput override's own lists), each test metric's best, and with
        output.early_stopping whether and when the run stopped early."""
        if not self.enabled:
            return
        out = {key: value for key, value in result.items() if _is_json(value)}
        out.setdefault("model", None)
        out["metrics"] = {**book.lists(), **_json_entries(metrics or {}, "metrics_output")}
        out["best"] = best_values(book)
        out["wall_time_s"] = wall_time
        out["records"] = len(book.records)
        if early_stopping is not None:
            out["early_stopping"] = early_stopping
        _raise_log_failure()
        self.fence.check("results.json")
        write_json(self.results_path, out)


def _raise_log_failure() -> None:
    """RunOutputError when train.log lost a line since the last check (run_log.py: a full disk), so that the run
    stops at its next output as it does for metrics.jsonl, with one line, not one traceback per log line."""
    failure = take_log_failure()
    if failure is not None:
        raise RunOutputError(failure)


def best_values(book: Any) -> dict[str, dict]:
    """Best value of each test metric (its mode: min or max, playground/options/metric_modes.py) and where it was.

    Only full test passes (record kind "epoch") count: an interval point measures num_test_iter batches only.
    """
    best = {}
    full = {i for i, record in enumerate(book.records) if record.get("kind") == "epoch"}
    for name, entry in book.metrics.items():
        full_passes = [v if i in full else None for i, v in enumerate(entry["output"])]
        point = None if entry["is_train"] else best_point(name, full_passes, entry.get("mode"))
        if point is not None:
            best[name] = {"value": point[0], "index": point[1], "epochs": book.record_epochs[point[1]]}
    return best


def best_point(name: str, values: list, mode: str | None = None) -> tuple[float, int] | None:
    """(best value, its index) among the finite values: the least with mode min, the greatest with max; without a
    mode, by its name (metric_modes.mode_by_name)."""
    points = [(v, i) for i, v in enumerate(values) if isinstance(v, (int, float)) and math.isfinite(v)]
    if not points:
        return None
    return (min if (mode or mode_by_name(name)) == "min" else max)(points)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def _json_entries(entries: dict, where: str) -> dict:
    """The entries of `entries` that JSON can hold (tensors and arrays as lists); the others are left out with
    a warning naming them, never silently."""
    kept, left = {}, []
    for key, value in entries.items():
        try:
            kept[key] = json.loads(json.dumps(value, default=_as_list))
        except (TypeError, ValueError):
            left.append(str(key))
    if left:
        log.warning("results.json leaves out %s entries that JSON cannot hold: %s", where, ", ".join(left))
    return kept


def _as_list(value: Any) -> Any:
    if hasattr(value, "tolist"):    # a tensor or a numpy array or scalar
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
