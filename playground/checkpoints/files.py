"""Checkpoint files on disk: the state file, its JSON info file, the `last`/`best` pointers and ckpt.log.

A state file is written atomically (temporary file, fsync, rename) and read with `weights_only=True`, so
loading never runs code from the file. Its info file (`<name>.json`) holds position, metrics, SHA-256,
timestamp, metadata, the opts hash and the run id, and is written before the state file takes its name, so a
state file under its final name always has its info. The pointers are relative symbolic links replaced
atomically, so rolling back is `ln -sfn model_checkpoint_epoch3.pt last`.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import IO, Any, Callable

import torch

from playground.outputs.atomic_files import fsync_folder, write_json, write_with
from playground.processes.exit_codes import UserError
from playground.restarts.fence import Fenced

FORMAT = "playground-checkpoint"
VERSION = 1


class CheckpointError(UserError, RuntimeError):
    """A checkpoint could not be written or read; the message names the file."""


@dataclass
class CheckpointInfo:
    path: str
    info: dict

    @property
    def position(self) -> tuple[int, int]:
        return int(self.info.get("epoch", 0)), int(self.info.get("epoch_iter", 0))


def info_path(path: str) -> str:
    return os.path.splitext(path)[0] + ".json"


def save_state(path: str, state: dict, before_rename: Callable[[str, str | None], None] | None = None,
               checksum: bool = False) -> None:
    """Write `state` atomically to `path`. `before_rename(temporary_path, sha256 or None)` runs when the bytes
    are on disk, before they take the name (to write the info file first); the SHA-256 (with `checksum`) is
    computed from the bytes as they are written. Raises CheckpointError naming the file."""
    writer = _Writer(checksum)

    def write(handle: IO[bytes]) -> None:
        writer.handle = handle
        torch.save(state, writer)
    try:
        write_with(path, write, before_replace=before_rename and (lambda tmp: before_rename(tmp, writer.hexdigest())))
    except Fenced:   # `before_rename` found a later attempt holding the folder: not a failed write
        raise
    except (OSError, RuntimeError) as err:
        err = writer.error or err
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise CheckpointError(f"could not write checkpoint {path}: {reason}. Earlier checkpoints are intact; "
                              "free space or choose another output.checkpoint_folder.") from err


class _Writer:
    """The file torch.save writes to: hashes the bytes on their way (no second read of the file) and keeps the
    first OSError, since torch.save reports a failed write (EFBIG, ENOSPC) only as "unexpected pos"."""

    def __init__(self, checksum: bool) -> None:
        self.handle: IO[bytes] | None = None
        self.error: OSError | None = None
        self._sha = hashlib.sha256() if checksum else None

    def write(self, data: bytes) -> int:
        try:
            written = self.handle.write(data)
        except OSError as err:
            self.error = self.error or err
            raise
        if self._sha is not None:
            self._sha.update(data)
        return written

    def flush(self) -> None:
        self.handle.flush()

    def hexdigest(self) -> str | None:
        return self._sha.hexdigest() if self._sha is not None else None


def load_state(path: str, map_location: Any = "cpu") -> dict:
    """Read a state file without unpickling arbitrary objects."""
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # truncated zip, wrong format, disallowed global ...
        raise CheckpointError(f"could not read checkpoint {path}: {type(err).__name__}: {err}") from err
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a playground checkpoint (no format marker)")
    return state


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def write_info(path: str, info: dict) -> None:
    write_json(info_path(path), info)


def write_completed_info(path: str, written: str, sha256: str | None, info: dict) -> None:
    """Complete `info` with the size and SHA-256 of the state bytes in `written` and the time; write it beside
    `path` (called by save_state's `before_rename`, so the info exists before the state takes its name)."""
    info.update(size=os.path.getsize(written), sha256=sha256, timestamp=time.time(),
                time=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    write_info(path, info)


def read_info(path: str) -> dict | None:
    try:
        with open(info_path(path), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def set_pointer(folder: str, name: str, target: str) -> None:
    """Atomically point `folder/name` at `target` with a relative symlink (what `ln -sfn` would do)."""
    link = os.path.join(folder, name)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    os.symlink(os.path.relpath(target, folder), tmp)
    os.replace(tmp, link)
    fsync_folder(folder)


def read_pointer(folder: str, name: str) -> str | None:
    """The file `folder/name` points to, or None when the pointer is missing or dangling."""
    link = os.path.join(folder, name)
    if os.path.islink(link):
        target = os.path.join(folder, os.readlink(link))
    elif os.path.isfile(link):  # a plain file holding a file name, for filesystems without symlinks
        with open(link, encoding="utf-8") as handle:
            target = os.path.join(folder, handle.read().strip())
    else:
        return None
    return target if os.path.isfile(target) else None


def list_checkpoints(folder: str) -> list[CheckpointInfo]:
    """Checkpoints in `folder` that have an info file, newest position first."""
    found = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.endswith(".json") or name.startswith(".") or os.path.islink(path) or not os.path.isfile(path):
                continue
            info = read_info(path)
            if info is not None and info.get("format") == FORMAT:
                found.append(CheckpointInfo(path, info))
    found.sort(key=lambda c: (c.position, c.info.get("timestamp", 0)), reverse=True)
    return found


def append_log(folder: str, message: str) -> None:
    """Add a line to the folder's human-readable ckpt.log (created with the folder when missing)."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "ckpt.log"), "a", encoding="utf-8") as handle:
        handle.write(f"{stamp} {message}\n")
