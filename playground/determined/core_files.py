"""The run folder's files a Core API script (playground/compat/determined/core/) shares with its runner
(command_run.py): which checkpoints are complete and in what order, and whether the script acknowledged a
preemption.

- `det_checkpoints.jsonl`: one line per complete checkpoint of this trial, oldest first, written by rank 0
  after the checkpoint's folder got its final name: `{"storage_id", "checkpoint_dir", "steps_completed",
  "records", "time"}` (`records`: how many metrics.jsonl records the run had reported then). The trial's
  own list, so a checkpoint folder shared by several trials (checkpoint_storage's host_path) never gives one
  trial another's checkpoint. A line cut by a kill is skipped; a line whose folder is gone (deleted) too.
- A checkpoint is written into `<checkpoint_dir>/.partial-<storage_id>/` and renamed to
  `<checkpoint_dir>/<storage_id>/` once complete (files and metadata.json), so a killed write never looks
  complete.
- `det_searcher.jsonl`: one line per completed searcher operation, `{"length", "searcher_metric", "time"}`
  (what Determined's master recorded; the sweep reads the validation records of metrics.jsonl).
- `det_preempted`: rank 0 acknowledged a preemption (`should_preempt()` returned True); the runner removes it
  before each attempt and turns the attempt's exit 0 into 75 when it is there, as Determined's master
  reschedules a task that acknowledged its preemption.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from playground.outputs.run_folder import RunFolder

INDEX, SEARCHER = RunFolder.DET_CHECKPOINTS, RunFolder.DET_SEARCHER   # the names, for the fence's messages
PARTIAL = ".partial-"


def partial_path(checkpoint_dir: str, storage_id: str) -> str:
    return os.path.join(checkpoint_dir, PARTIAL + storage_id)


def is_complete(checkpoint_dir: str, storage_id: str) -> bool:
    return os.path.isfile(os.path.join(checkpoint_dir, storage_id, "metadata.json"))


def append_checkpoint(run_dir: str, checkpoint_dir: str, storage_id: str, steps_completed: Any,
                      records: int) -> None:
    entry = {"storage_id": storage_id, "checkpoint_dir": os.path.abspath(checkpoint_dir),
             "steps_completed": steps_completed, "records": records, "time": time.time()}
    with open(RunFolder(run_dir).det_checkpoints, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def checkpoints(run_dir: str) -> list[dict]:
    """This trial's complete checkpoints, oldest first (a folder deleted since is left out)."""
    out = []
    try:
        with open(RunFolder(run_dir).det_checkpoints, encoding="utf-8") as handle:
            lines = handle.readlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue     # a line cut by a kill
        if isinstance(entry, dict) and is_complete(entry.get("checkpoint_dir", ""), entry.get("storage_id", "")):
            out.append(entry)
    return out


def latest_checkpoint(run_dir: str) -> dict | None:
    """The newest complete checkpoint of this trial (its index entry), or None."""
    found = checkpoints(run_dir)
    return found[-1] if found else None


def find_entry(run_dir: str | None, storage_id: str | None) -> dict | None:
    if not run_dir or not storage_id:
        return None
    return next((e for e in reversed(checkpoints(run_dir)) if e["storage_id"] == storage_id), None)


def mark_preempted(run_dir: str) -> None:
    with open(RunFolder(run_dir).det_preempted, "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} {time.time()}\n")


def take_preempted(run_dir: str) -> bool:
    """Whether the mark was there; it is removed."""
    try:
        os.remove(RunFolder(run_dir).det_preempted)
        return True
    except FileNotFoundError:
        return False
