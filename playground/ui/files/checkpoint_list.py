"""A run's checkpoints as listed from its checkpoint folder: each file with its epoch, kind, size, time and
metrics from the JSON info file written beside it (docs/checkpoints.md), and where the `last` and `best`
pointers lead. Read again only when the folder changes; no checkpoint is ever opened.
"""
from __future__ import annotations

import os
from typing import Any

from playground.ui.files.followed_file import file_stamp, loads

POINTERS = ("last", "best")
NOT_CHECKPOINTS = {"ckpt.log"}
INFO_FORMAT = "playground-checkpoint"


class CheckpointList:
    def __init__(self) -> None:
        self.folder: str | None = None
        self.items: list[dict[str, Any]] = []
        self.pointers: dict[str, str] = {}
        self._stamp: tuple | None = None

    def poll(self, folder: str | None) -> bool:
        """Read `folder` again if it changed (None: list nothing); whether the list changed."""
        stamp = (folder, file_stamp(folder) if folder else None)
        if stamp == self._stamp:
            return False
        self._stamp, self.folder = stamp, folder
        items, pointers = _read(folder) if folder and stamp[1] is not None else ([], {})
        changed = (items, pointers) != (self.items, self.pointers)
        self.items, self.pointers = items, pointers
        return changed


def _read(folder: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return [], {}
    pointers, infos, files = {}, {}, []
    for entry in entries:
        if entry.name in POINTERS and entry.is_symlink():
            pointers[entry.name] = os.path.basename(os.readlink(entry.path))
        elif entry.name.endswith(".json"):
            info = _info(entry.path)
            if info is not None:
                infos[info.get("file") or entry.name[:-5]] = info
        elif entry.is_file() and entry.name not in NOT_CHECKPOINTS and not entry.name.startswith("."):
            files.append(entry)
    items = []
    for entry in files:
        info = infos.get(entry.name, {})
        status = entry.stat()
        items.append({"file": entry.name, "epoch": info.get("epoch"), "kind": info.get("kind"),
                      "size": status.st_size, "time": info.get("timestamp", status.st_mtime),
                      "metrics": info.get("metrics") if isinstance(info.get("metrics"), dict) else {},
                      "best": entry.name == pointers.get("best"), "last": entry.name == pointers.get("last")})
    items.sort(key=lambda item: (item["epoch"] is None, item["epoch"] or 0, item["time"]))
    return items, pointers


def _info(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            info = loads(handle.read())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) and info.get("format") == INFO_FORMAT else None
