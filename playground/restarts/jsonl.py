"""Append-only JSON-lines files that several processes add to without a lock (a run's attempts.jsonl, a sweep's
control/slurm.jsonl). Readers skip a line that is not JSON (one cut by a kill); appends keep it to that one line.
"""
from __future__ import annotations

import json
import os
from typing import Any


def append_json_line(path: str, record: Any) -> None:
    """Append `record` as one JSON line, in one write. A last line left without its newline (a writer killed
    mid-append) is ended first, so readers lose that cut line only, never the record glued to it."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, (b"\n" if torn else b"") + (json.dumps(record) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
