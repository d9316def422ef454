"""checkpoint_storage's retention at the end of a trial, as Determined's checkpoint garbage collection keeps
them: the newest `save_trial_latest` checkpoints and the best `save_trial_best` by the searcher metric
(defaults 1 and 1); `save_experiment_best` n keeps each trial's n best too (a superset of the experiment's n
best: a trial here sees no other trial). The newest is always kept, whatever save_trial_latest says: a resume or
a `sweep continue` needs it. A checkpoint is ranked by the validation record reported at its step (metrics.jsonl
`iteration`); one without any is never a best one.

The runner applies it when a trial completes (command_run.py), to the Trial API's checkpoints (the run folder's
checkpoints/, this run's files only) and to the Core API's (det_checkpoints.jsonl's folders). Each deletion is a
line of the folder's ckpt.log (Trial API) or of train.log's output (Core API).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
from typing import Any

from playground.checkpoints.files import list_checkpoints, read_pointer
from playground.checkpoints.keep import delete_checkpoint
from playground.determined import core_files
from playground.outputs.run_folder import RunFolder


def counts(config: dict) -> tuple[int, int]:
    """(latest to keep, best to keep) from the experiment configuration (Determined's defaults 1, 1, 0)."""
    storage = config.get("checkpoint_storage") or {}
    latest = _count(storage, "save_trial_latest", 1)
    best = max(_count(storage, "save_trial_best", 1), _count(storage, "save_experiment_best", 0))
    return max(1, latest), best


def _count(storage: dict, key: str, default: int) -> int:
    value = storage.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def validation_values(run_dir: str, metric: str | None) -> dict[int, float]:
    """The searcher metric of every validation record, by its step (batches)."""
    if not metric:
        return {}
    values = {}
    with contextlib.suppress(FileNotFoundError):
        with open(RunFolder(run_dir).metrics, encoding="utf-8") as handle:
            for line in handle:
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    value = record.get(metric)
                    if isinstance(value, (int, float)) and value == value and "iteration" in record:
                        values[int(record["iteration"])] = float(value)
    return values


def kept(steps: list[int], values: dict[int, float], latest: int, best: int, smaller: bool) -> set[int]:
    """Indices (into `steps`, oldest first) of the checkpoints to keep."""
    keep = set(range(max(0, len(steps) - latest), len(steps)))
    ranked = sorted((i for i, step in enumerate(steps) if step in values),
                    key=lambda i: values[steps[i]] if smaller else -values[steps[i]])
    return keep | set(ranked[:best])


def apply(run_dir: str, config: dict) -> list[str]:
    """Delete what the retention drops, in the run folder's Trial API and Core API checkpoints; the deleted."""
    latest, best = counts(config)
    searcher = config.get("searcher") or {}
    values = validation_values(run_dir, searcher.get("metric"))
    smaller = bool(searcher.get("smaller_is_better", True))
    return _trial_api(run_dir, values, latest, best, smaller) + _core_api(run_dir, values, latest, best, smaller)


def _trial_api(run_dir: str, values: dict[int, float], latest: int, best: int, smaller: bool) -> list[str]:
    folder = RunFolder(run_dir).checkpoints
    last = read_pointer(folder, "last")
    run_id = _info_run_id(last)
    mine = [c for c in reversed(list_checkpoints(folder)) if run_id and c.info.get("run_id") == run_id]
    steps = [int(c.info.get("global_iter", -1)) for c in mine]
    keep = kept(steps, values, latest, best, smaller)
    deleted = []
    for index, checkpoint in enumerate(mine):
        if index in keep or os.path.realpath(checkpoint.path) == os.path.realpath(last or ""):
            continue
        delete_checkpoint(folder, checkpoint.path, f"checkpoint_storage: save_trial_latest {latest}, "
                                                   f"save_trial_best {best}")
        deleted.append(checkpoint.path)
    return deleted


def _info_run_id(path: str | None) -> Any:
    if not path:
        return None
    info = next((c.info for c in list_checkpoints(os.path.dirname(path)) if os.path.samefile(c.path, path)), None)
    return (info or {}).get("run_id")


def _core_api(run_dir: str, values: dict[int, float], latest: int, best: int, smaller: bool) -> list[str]:
    entries = core_files.checkpoints(run_dir)
    steps = [int(e["steps_completed"]) if isinstance(e.get("steps_completed"), int) else -1 for e in entries]
    keep = kept(steps, values, latest, best, smaller)
    deleted = []
    for index, entry in enumerate(entries):
        if index in keep:
            continue
        folder = os.path.join(entry["checkpoint_dir"], entry["storage_id"])
        shutil.rmtree(folder, ignore_errors=True)
        print(f"playground: deleted checkpoint {entry['storage_id']} (checkpoint_storage: save_trial_latest "
              f"{latest}, save_trial_best {best})", flush=True)
        deleted.append(folder)
    return deleted
