"""`ckpt_keep_limit` and `ckpt_keep_mode`: delete this run's older checkpoints, never a protected one.

Only checkpoints whose info file carries this run's id are candidates (the id survives resumes, so a run
preempted many times does not pile up files). Files of other runs, files without an info file, and the
protected ones (the checkpoint this session resumed from, the best one, the one `last` points to) are never
deleted. Info files of this run left without their state file (by a kill) are removed too. As in CANDLE,
walking from the newest: a protected checkpoint is kept, any other is kept while fewer
than `limit` have been kept, and the rest are deleted. In `exponential` mode (CANDLE named it but never built
it) only some older checkpoints are candidates for keeping, on a grid that grows coarser with age: one d >= 1
epochs older than the newest is a candidate when its epoch is a multiple of the largest power of two <= d
(and it is the newest of its epoch). Kept checkpoints then lie about 1, 2, 4, 8, ... epochs back, two per
doubling of age; a file once dropped never becomes wanted again, so applying the rule after every save is stable.
"""
from __future__ import annotations

import contextlib
import os

from playground.checkpoints.files import FORMAT, append_log, info_path, list_checkpoints, read_info


def apply_keep_limit(folder: str, run_id: str, limit: int, protected: set[str | None],
                     mode: str = "linear", key_prefix: str = "") -> list[str]:
    """Delete what the limit (and the mode) drops; return the deleted paths. Each deletion is noted in ckpt.log,
    naming the keys as the user wrote them: `key_prefix` is "output." for opts, "" for CANDLE's flat params."""
    protected_paths = {os.path.realpath(p) for p in protected if p}
    mine = [c for c in list_checkpoints(folder) if c.info.get("run_id") == run_id]
    mine.sort(key=lambda c: c.info.get("timestamp", 0), reverse=True)
    deleted = []
    kept = 0
    newest_epoch = int(mine[0].info.get("epoch", 0)) if mine else 0
    epochs_seen: set[int] = set()
    for index, candidate in enumerate(mine):
        epoch = int(candidate.info.get("epoch", 0))
        wanted = mode == "linear" or index == 0 or (epoch not in epochs_seen and _on_grid(epoch, newest_epoch - epoch))
        epochs_seen.add(epoch)
        if os.path.realpath(candidate.path) in protected_paths or (wanted and kept < limit):
            kept += 1
            continue
        delete_checkpoint(folder, candidate.path, f"{key_prefix}ckpt_keep_limit {limit}, "
                                                  f"{key_prefix}ckpt_keep_mode {mode}")
        deleted.append(candidate.path)
    return deleted + _remove_orphan_infos(folder, run_id)


def delete_checkpoint(folder: str, path: str, why: str) -> None:
    """Delete checkpoint `path` and its info file, with a ckpt.log line saying `why`. The state file first: a
    kill in between leaves a small orphan info file, never a state without info that a later run could mistake
    for someone else's file."""
    os.unlink(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(info_path(path))
    append_log(folder, f"deleted {os.path.basename(path)} ({why})")


def _on_grid(epoch: int, age: int) -> bool:
    """Whether a checkpoint `age` epochs older than the newest lies on the exponential grid for that age."""
    if age <= 0:
        return False   # an older file of the newest epoch (a mid-epoch save): the newest one supersedes it
    return epoch % (1 << (age.bit_length() - 1)) == 0


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
