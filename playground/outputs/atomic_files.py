"""Writing files so that a crash or a full disk never leaves a half-written file under the final name.

Every writer goes to a temporary file in the same folder, flushes and fsyncs it, then renames it over the
target (atomic on POSIX) and fsyncs the folder. On failure the temporary file is removed and the error is
re-raised unchanged; whatever was at the target before is untouched.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import IO, Any, Callable, Iterator


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w", durable: bool = True,
                before_replace: Callable[[str], None] | None = None) -> Iterator[IO]:
    """Yield a file to write; it replaces `path` only if the block finishes without error.

    `before_replace(temporary_path)` runs once the content is complete (and fsynced when durable), just before
    the rename; if it raises, nothing replaces `path`.
    """
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the file the permissions open() would
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_folder(folder)


def write_json(path: str, data: Any, durable: bool = True) -> None:
    with atomic_open(path, "w", durable) as handle:
        json.dump(data, handle, indent=2, default=_jsonable)
        handle.write("\n")


def write_with(path: str, writer: Callable[[IO], None], durable: bool = True,
               before_replace: Callable[[str], None] | None = None) -> None:
    """Atomically write a binary file with `writer(handle)` (see atomic_open for `before_replace`)."""
    with atomic_open(path, "wb", durable, before_replace) as handle:
        writer(handle)


def fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it; done once at import, before any writer thread exists
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
