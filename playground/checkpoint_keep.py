"""`ckpt_keep_limit`: delete this run's older checkpoints beyond the limit, never a protected one.

Only checkpoints whose info file carries this run's id are candidates (the id survives resumes, so a run
preempted many times does not pile up files). Files of other runs, files without an info file, and the
protected ones (the checkpoint this session resumed from, the best one, the one `last` points to) are never
deleted. Info files of this run left without their state file (by a kill) are removed too. As in CANDLE,
walking from the newest: a protected checkpoint is kept, any other is kept while fewer
than `limit` have been kept, and the rest are deleted.
"""
from __future__ import annotations

import contextlib
import os

from playground.checkpoint_files import FORMAT, append_log, info_path, list_checkpoints, read_info


def apply_keep_limit(folder: str, run_id: str, limit: int, protected: set[str | None]) -> list[str]:
    """Delete what the limit drops; return the deleted paths. Each deletion is noted in ckpt.log."""
    protected_paths = {os.path.realpath(p) for p in protected if p}
    mine = [c for c in list_checkpoints(folder) if c.info.get("run_id") == run_id]
    mine.sort(key=lambda c: c.info.get("timestamp", 0), reverse=True)
    deleted = []
    kept = 0
    for candidate in mine:
        if os.path.realpath(candidate.path) in protected_paths or kept < limit:
            kept += 1
            continue
        # The state file first: a kill in between leaves a small orphan info file, never a state without info
        # that a later run could mistake for someone else's file.
        os.unlink(candidate.path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(info_path(candidate.path))
        append_log(folder, f"deleted {os.path.basename(candidate.path)} (output.ckpt_keep_limit {limit})")
        deleted.append(candidate.path)
    return deleted + _remove_orphan_infos(folder, run_id)


def _remove_orphan_infos(folder: str, run_id: str) -> list[str]:
    """This run's info files whose state file is gone (a kill between two deletions, or before a rename)."""
    removed = []
    for name in os.listdir(folder):
        if not name.endswith(".json") or name.startswith("."):
            continue
        info = read_info(os.path.join(folder, name))
        if info and info.get("format") == FORMAT and info.get("run_id") == run_id and info.get("file") \
                and not os.path.exists(os.path.join(folder, info["file"])):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
            removed.append(os.path.join(folder, name))
    return removed
