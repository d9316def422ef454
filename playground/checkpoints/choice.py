"""Which checkpoint to resume from, and under which name to write a new one, in a checkpoint folder.

Shared by the trainer's Checkpointer and the CANDLE helper: follow `last`; a checkpoint failing its checksum,
its load, or its info file is reported (log and ckpt.log) and the previous one is tried; a file written by
another run is never overwritten.
"""
from __future__ import annotations

import glob
import logging
import os

from playground.checkpoints.files import (CheckpointError, append_log, info_path, list_checkpoints, load_state,
                                         read_info, read_pointer)


def choose_checkpoint(folder: str, checksum: bool, log: logging.Logger) -> tuple[str | None, dict | None]:
    """(path, state) of the newest usable checkpoint at or before `last`, or (None, None)."""
    for stale in glob.glob(os.path.join(folder, ".*.tmp")):  # left by a write that was killed
        os.unlink(stale)
    last = read_pointer(folder, "last")
    if last is None:
        if list_checkpoints(folder):
            log.warning("%s has checkpoints but no 'last' pointer: starting from scratch (point 'last' at "
                        "a checkpoint to resume from it)", folder)
            append_log(folder, "no 'last' pointer: started from scratch")
        return None, None
    last_info = read_info(last) or {}
    position = (int(last_info.get("epoch", 1 << 30)), int(last_info.get("epoch_iter", 0)))
    older = [c.path for c in list_checkpoints(folder) if c.position < position and c.path != last]
    for path in [last, *older]:
        try:
            return path, verified_state(path, checksum, log)
        except CheckpointError as err:
            log.warning("%s; trying the previous checkpoint", err)
            append_log(folder, f"unusable {os.path.basename(path)}: {err}")
    append_log(folder, "no usable checkpoint: started from scratch")
    return None, None


def verified_state(path: str, checksum: bool, log: logging.Logger) -> dict:
    """The state in `path` once its checksum (when `checksum` and recorded) and its info file agree with it."""
    from playground.checkpoints.files import sha256_of
    info = read_info(path)
    if info is None:
        log.warning("%s has no info file: its checksum cannot be checked", path)
    elif checksum and info.get("sha256"):
        actual = sha256_of(path)
        if actual != info["sha256"]:
            raise CheckpointError(f"checkpoint {path} fails its checksum (sha256 {actual[:12]}..., expected "
                                  f"{info['sha256'][:12]}...)")
    state = load_state(path)
    if info is not None and (state["epoch"], state["epoch_iter"]) != (info.get("epoch"), info.get("epoch_iter")):
        raise CheckpointError(f"checkpoint {path} does not match its info file {info_path(path)} (epoch "
                              f"{state['epoch']} iteration {state['epoch_iter']} vs {info.get('epoch')} "
                              f"{info.get('epoch_iter')})")
    return state


def own_name(path: str, run_id: str, log: logging.Logger) -> str:
    """`path`, or a name with this run's id when `path` holds a file this run did not write."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    except OSError as err:
        raise CheckpointError(f"could not write checkpoint {path}: cannot create its folder: {err}") from err
    if not os.path.exists(path):
        return path
    owner = (read_info(path) or {}).get("run_id")
    if owner == run_id:
        log.info("overwriting %s, written earlier by this run (it was rolled back or re-done)", path)
        return path
    root, ext = os.path.splitext(path)
    log.warning("%s belongs to %s; writing %s.%s%s instead", path,
                f"another run ({owner})" if owner else "no run (it has no info file)", root, run_id, ext)
    return f"{root}.{run_id}{ext}"
