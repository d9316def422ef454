"""One line more at the end of a run's file (metrics.jsonl, train.log), all or nothing.

A write that fails (a full disk, a file-size limit) cuts the file back to its length before it, which needs no
space, so the file never ends in half a line; the caller turns the error into the one line the run stops with
(`append_failure`), the same for every such file.
"""
from __future__ import annotations

import contextlib
import os
from typing import BinaryIO


def append_whole(handle: BinaryIO, data: bytes) -> None:
    """Write all of `data` at the end of `handle` (opened "ab", unbuffered), or none of it: on OSError the file
    is cut back to its length before and the error re-raised."""
    before = os.fstat(handle.fileno()).st_size
    try:
        written = 0
        while written < len(data):
            written += handle.write(data[written:])
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(handle.fileno(), before)
        raise


def append_failure(what: str, path: str, err: OSError) -> str:
    """The line a run stops with when `what` ("a record", "a line") could not be appended to `path`."""
    return (f"could not append {what} to {path}: {err.strerror or err}. The records before it and the last "
            "checkpoint are intact; free space, then re-run the same command to resume from that checkpoint.")
