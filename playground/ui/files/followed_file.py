"""A file read as it grows: each poll reads only the bytes appended since the last one, never a byte twice.

A file replaced whole (a new inode: the atomic rewrite a resumed run makes of metrics.jsonl) or cut shorter is
read again from its start, and the poll says so (`restarted`). A last line still being written (no newline yet)
is held back until it is complete. Nothing is ever written; a file that is absent reads as empty.
"""
from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass
from typing import Any


def file_stamp(path: str) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns): what tells a file replaced, rewritten or appended to; None when absent."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_ino, status.st_size, status.st_mtime_ns


@dataclass
class Appended:
    restarted: bool     # the file was replaced, cut or removed since the last poll: `text` starts from its beginning
    text: str           # complete lines appended since the last poll


class FollowedFile:
    """`poll()` -> what was appended since the last poll. `tail`: on a first read (or after a restart), start at
    most `tail` bytes before the end, at a line's start (a log's last part, not its whole history)."""

    def __init__(self, path: str, tail: int | None = None) -> None:
        self.path, self.tail = path, tail
        self._inode: int | None = None
        self._offset = 0
        self._partial = b""
        self._stamp: tuple[int, int, int] | None = None

    def poll(self) -> Appended:
        stamp = file_stamp(self.path)
        if stamp == self._stamp:
            return Appended(False, "")
        first = self._inode is None
        replaced = not first and (stamp is None or stamp[0] != self._inode or stamp[1] < self._offset)
        if first or replaced:
            self._inode, self._offset, self._partial = (None if stamp is None else stamp[0]), 0, b""
        self._stamp = stamp
        if stamp is None:
            return Appended(replaced, "")
        try:
            with open(self.path, "rb") as handle:
                skip_line = False
                if (first or replaced) and self.tail is not None and stamp[1] > self.tail:
                    self._offset, skip_line = stamp[1] - self.tail, True
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            self._stamp = None     # try again at the next poll
            return Appended(replaced, "")
        if skip_line:               # started in the middle of a line: from the next one
            cut = data.find(b"\n")
            self._offset += cut + 1 if cut >= 0 else len(data)
            data = data[cut + 1:] if cut >= 0 else b""
        self._offset += len(data)
        data, self._partial = self._partial + data, b""
        end = data.rfind(b"\n") + 1
        data, self._partial = data[:end], data[end:]
        return Appended(replaced, data.decode("utf-8", errors="replace"))


def loads(text: str) -> Any:
    """JSON text with NaN and infinities read as None: the browser's JSON.parse knows neither."""
    return json.loads(text, parse_constant=lambda _constant: None)


class FollowedRecords:
    """A JSON-lines file (metrics.jsonl, attempts.jsonl) as a list of its records, kept in step with the file.
    `generation` counts restarts: a client that read records under another generation must read them anew.
    A line that is not a JSON object is skipped."""

    def __init__(self, path: str) -> None:
        self.file = FollowedFile(path)
        self.records: list[dict] = []
        self.generation = 0

    def poll(self) -> bool:
        """Whether anything changed since the last poll."""
        appended = self.file.poll()
        if appended.restarted:
            self.records = []
            self.generation += 1
        for line in appended.text.splitlines():
            try:
                record = loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                self.records.append(record)
        return appended.restarted or bool(appended.text)


class FollowedLog:
    """The last `keep` lines of a growing text file (train.log), each with its sequence number, so a page
    that has seen lines up to n asks for the ones after n."""

    def __init__(self, path: str, keep: int = 2000, tail: int = 256 * 1024) -> None:
        self.file = FollowedFile(path, tail=tail)
        self.lines: deque[str] = deque(maxlen=keep)
        self.count = 0        # lines seen since the last restart; the newest has number count

    def poll(self) -> None:
        appended = self.file.poll()
        if appended.restarted:
            self.lines.clear()
            self.count = 0
        for line in appended.text.splitlines():
            self.lines.append(line)
            self.count += 1

    def since(self, seen: int) -> tuple[int, list[str]]:
        """(number of the newest line, the kept lines after line `seen`)."""
        first = self.count - len(self.lines) + 1
        start = max(seen + 1, first) - first
        return self.count, list(self.lines)[start:] if start < len(self.lines) else []


class JsonFile:
    """A JSON file read again only when its stamp changed (opts.json, trial.json, sweep.json); None when absent
    or not (yet) valid JSON."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stamp: tuple[int, int, int] | None = None
        self.value: Any = None

    def poll(self) -> bool:
        """Whether the value changed since the last poll."""
        stamp = file_stamp(self.path)
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        if stamp is None:
            changed, self.value = self.value is not None, None
            return changed
        try:
            with open(self.path, encoding="utf-8") as handle:
                value = loads(handle.read())
        except (OSError, ValueError):
            self._stamp = None    # half written by a writer without an atomic rename: read it again next time
            return False
        changed, self.value = value != self.value, value
        return changed
