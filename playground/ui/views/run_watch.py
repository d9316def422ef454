"""One run folder as the pages show it, kept in step with its files: opts.json, metrics.jsonl and train.log
followed as they grow (each byte read once), results.json, trial.json and attempts.jsonl read again only when
they change, and the checkpoint folder's info files.

What a run folder holds is docs/checkpoints.md's and playground/outputs/run_outputs.py's; a sweep's trial folder
adds trial.json, attempts.jsonl and sweep-trial.log (docs/sweeps.md, "The sweep folder"). Nothing is written.
"""
from __future__ import annotations

import os
import time
from datetime import datetime
from typing import Any

from playground.options.metric_modes import mode_of
from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED, EXIT_STOPPED, EXIT_USAGE
from playground.ui.files.checkpoint_list import CheckpointList
from playground.ui.files.followed_file import FollowedLog, FollowedRecords, JsonFile, file_stamp

LOGS = (RunFolder.LOG, RunFolder.TERMINAL_LOG)   # the run's own log; a sweep trial's terminal output where it has none
ACTIVE_SECONDS = 60.0                     # written this recently without a process seen here: running elsewhere
STATE_OF_EXIT = {EXIT_DONE: "finished", EXIT_STOPPED: "stopped", EXIT_USAGE: "unusable opts", EXIT_FAILED: "failed"}


class RunWatch:
    def __init__(self, path: str) -> None:
        self.path, self.folder = path, RunFolder(path)
        self.opts = JsonFile(self.folder.opts)
        self.results = JsonFile(self.folder.results)
        self.trial = JsonFile(self.folder.trial)
        self.records = FollowedRecords(self.folder.metrics)
        self.attempts = FollowedRecords(self.folder.attempts)
        self.logs = {RunFolder.LOG: FollowedLog(self.folder.log),
                     RunFolder.TERMINAL_LOG: FollowedLog(self.folder.terminal_log)}
        self.checkpoints = CheckpointList()
        self.version = 0          # counts changes of what is not followed line by line (opts, results, checkpoints)
        self._started: float | None = None

    def poll(self, checkpoints_allowed: bool = True) -> None:
        changed = self.opts.poll() | self.results.poll() | self.trial.poll()
        self.records.poll()
        self.attempts.poll()
        changed |= self.checkpoints.poll(self.checkpoint_folder() if checkpoints_allowed else None)
        if changed:
            self.version += 1

    def poll_logs(self) -> None:
        for log in self.logs.values():
            log.poll()

    @property
    def opts_section(self) -> dict:
        value = self.opts.value
        return value.get("opts", {}) if isinstance(value, dict) and isinstance(value.get("opts"), dict) else {}

    def checkpoint_folder(self) -> str:
        given = (self.opts_section.get("output") or {}).get("checkpoint_folder")
        return os.path.abspath(os.path.join(self.path, given)) if isinstance(given, str) and given else \
            self.folder.checkpoints

    def state(self, pid: int | None) -> tuple[str, int | None]:
        """(state in words, exit code or None). A live process here says running; then the sweep's trial.json,
        the last attempt's end, results.json, a preemption checkpoint (a stop), recent writes (`active`: running
        on another host, or just ended), any checkpoint left, in that order."""
        if pid is not None:
            return "running", None
        trial = self.trial.value if isinstance(self.trial.value, dict) else None
        if trial and trial.get("state"):
            return str(trial["state"]), trial.get("exit_code")
        ended = [a for a in self.attempts.records if "end" in a]
        if self.attempts.records and "end" not in self.attempts.records[-1] and not self._recently_written():
            return "killed", None
        if ended and not self._recently_written():
            code = ended[-1].get("exit_code")
            return STATE_OF_EXIT.get(code, "failed"), code
        if isinstance(self.results.value, dict):
            return "finished", EXIT_DONE
        newest = max(self.checkpoints.items, key=lambda item: item["time"], default=None)
        if newest is not None and newest["kind"] == "preemption":     # written on SIGTERM, before exit 75
            return "stopped", EXIT_STOPPED
        if self._recently_written():
            return "active", None
        if self.checkpoints.items:
            return "stopped", None
        return "incomplete", None

    def _recently_written(self) -> bool:
        return time.time() - self.last_written() < ACTIVE_SECONDS

    def last_written(self) -> float:
        stamps = [file_stamp(path) for path in (self.folder.metrics, self.folder.log, self.folder.terminal_log)]
        return max((s[2] / 1e9 for s in stamps if s is not None), default=0.0)

    def started(self) -> float | None:
        """When the run first started: its first attempt's start, else train.log's first line, else opts.json's
        time."""
        if self._started is None:
            first = next((a.get("start") for a in self.attempts.records if isinstance(a.get("start"), (int, float))),
                         None)
            self._started = first or _first_log_time(self.folder.log)
        if self._started is not None:
            return self._started
        stamp = file_stamp(self.folder.opts)
        return None if stamp is None else stamp[2] / 1e9

    def length(self, running: bool) -> float | None:
        """Seconds of training: results.json's wall time when finished, else from the start to now or to the
        last write."""
        results = self.results.value
        if isinstance(results, dict) and isinstance(results.get("wall_time_s"), (int, float)) and not running:
            return float(results["wall_time_s"])
        started = self.started()
        if started is None:
            return None
        return max((time.time() if running else self.last_written()) - started, 0.0)

    def test_metrics(self) -> list[str]:
        """The run's test metrics (output.metrics with is_train false), else the test-like series it recorded."""
        named = [m.get("name") for m in (self.opts_section.get("output") or {}).get("metrics") or []
                 if isinstance(m, dict) and not m.get("is_train", True)]
        if named:
            return [n for n in named if isinstance(n, str)]
        seen = dict.fromkeys(k for r in self.records.records[:50] for k in r)
        return [k for k in seen if k.startswith(("test", "val"))]

    def best(self, metric: str | None = None, mode: str | None = None) -> dict[str, Any] | None:
        """{metric, mode, value, epochs} of `metric` (default: the first test metric) over full test passes;
        results.json's `best` once the run finished."""
        metric = metric or next(iter(self.test_metrics()), None)
        if metric is None:
            return None
        mode = mode or mode_of(self.opts_section.get("output") or {}, metric)
        results = self.results.value
        stored = results.get("best", {}).get(metric) if isinstance(results, dict) and isinstance(
            results.get("best"), dict) else None
        if isinstance(stored, dict) and isinstance(stored.get("value"), (int, float)):
            return {"metric": metric, "mode": mode, "value": stored["value"], "epochs": stored.get("epochs")}
        points = [(r[metric], r.get("epochs")) for r in self.records.records
                  if r.get("kind", "epoch") == "epoch" and isinstance(r.get(metric), (int, float))]
        if not points:
            return None
        value, epochs = (min if mode == "min" else max)(points, key=lambda p: p[0])
        return {"metric": metric, "mode": mode, "value": value, "epochs": epochs}

    def series(self) -> list[str]:
        """Names with a numeric value in some record: what a chart can draw."""
        names: dict[str, None] = {}
        for record in self.records.records:
            for key, value in record.items():
                if key not in names and key != "index" and isinstance(value, (int, float)) and \
                        not isinstance(value, bool):
                    names[key] = None
        return list(names)


def _first_log_time(path: str) -> float | None:
    """The time of train.log's first line (`2026-01-31 12:00:00,123 INFO ...`, local time), or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(64)
        return datetime.strptime(first[:19], "%Y-%m-%d %H:%M:%S").timestamp()
    except (OSError, ValueError):
        return None
