"""study.journal.digest: the journal's digest (journal_digest.py) as of a prefix of the journal, so `sweep status`
folds only the records appended since instead of the whole journal (at 10,000 trials, hundreds of thousands).

It is a cache, verified against the journal each time, never a second source of truth. It says how many records
and bytes of the journal it folded and the SHA-256 of exactly those bytes; it is used only when the journal still
begins with those bytes (read and hashed from the same open file whose tail is then read), and only by the fold it
was made with (the SHA-256 of journal_digest.py's source). A journal cut before its end, rewritten, replaced by a
rebuild, or restored from another copy no longer begins with them, and the digest is folded from its first line;
so is one whose snapshot is unreadable, torn or of another version. Records appended after it (the agents only
append; a torn last line is cut, never a complete one) are what is folded on top. Written (atomically, without
fsync: a lost one is only slower) when a status has folded at least SNAPSHOT_RECORDS records past the one it
found; a folder status may not write to (another user's) simply gets none.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any

SUFFIX = ".digest"
FORMAT = "playground-journal-digest"
SNAPSHOT_RECORDS = 2000     # records folded past the last snapshot before a new one is worth its writing
BLOCK = 1 << 20


@dataclass
class Snapshot:
    records: int        # the journal's first `records` records ...
    offset: int         # ... end at this byte
    sha256: str         # of bytes 0 .. offset
    state: Any          # the fold's state after them (journal_digest._Fold.state())


def fold_version(source: str) -> str | None:
    """The version of the fold a snapshot was made by: the SHA-256 of its module's source file (None when that is
    not to be read: no snapshot is then used or written)."""
    try:
        with open(source, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def load(journal: str, version: str | None) -> Snapshot | None:
    """The snapshot beside `journal` made by the fold of `version`, or None (none, unreadable, another version)."""
    if version is None:
        return None
    try:
        with open(journal + SUFFIX, "rb") as handle:
            saved = json.load(handle)
        if saved.get("format") != FORMAT or saved.get("fold") != version:
            return None
        snapshot = Snapshot(saved["records"], saved["offset"], saved["sha256"], saved["state"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if type(snapshot.records) is not int or type(snapshot.offset) is not int or type(snapshot.sha256) is not str:
        return None
    return snapshot


def verified(handle: Any, snapshot: Snapshot) -> Any:
    """A sha256 object fed the journal's (open `handle`) first snapshot.offset bytes when they are the bytes the
    snapshot folded, else None; the handle is left anywhere (the caller seeks)."""
    if os.fstat(handle.fileno()).st_size < snapshot.offset:
        return None             # cut below it
    hasher = hashlib.sha256()
    handle.seek(0)
    left = snapshot.offset
    while left:
        block = handle.read(min(BLOCK, left))
        if not block:
            return None
        hasher.update(block)
        left -= len(block)
    return hasher if hasher.hexdigest() == snapshot.sha256 else None


def save(journal: str, version: str | None, snapshot: Snapshot) -> None:
    """Write the snapshot beside `journal`, atomically; a folder that refuses the write is left without one."""
    if version is None:
        return
    path = journal + SUFFIX
    temporary = f"{path}.{os.getpid()}.tmp"
    text = json.dumps({"format": FORMAT, "fold": version, "records": snapshot.records, "offset": snapshot.offset,
                       "sha256": snapshot.sha256, "state": snapshot.state}, separators=(",", ":"))
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
