"""Writing image LMDBs: records in order, a map that grows when full, and output that appears only when whole.

`staged_output(OUTPUT)` yields a fresh folder beside OUTPUT (`.NAME.incomplete-PID-XXXXXX`); when the block
finishes it is renamed to OUTPUT in one step, and when the block fails or is interrupted it is deleted. So
OUTPUT either does not exist or is a complete build; a build killed outright (SIGKILL, power loss) leaves only
the hidden `.incomplete` folder, which nothing reads and which may be deleted.

`LmdbWriter(folder)` appends records under keys 0, 1, 2... in transactions of a few hundred records. The LMDB
map starts at `map_size` and doubles whenever a transaction does not fit (the file on disk only holds what
is written). The metadata record goes in last, by `finish`.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from typing import Any, Iterator

import lmdb

from playground.outputs.atomic_files import fsync_folder
from playground.data.records.record_format import META_KEY, ImageRecord, pack_meta, pack_record, record_key

DEFAULT_MAP_SIZE = 1 << 30
_COMMIT_RECORDS = 512
_COMMIT_BYTES = 64 << 20


@contextlib.contextmanager
def staged_output(output: str, overwrite: bool = False) -> Iterator[str]:
    """Yield an empty folder to build in; it becomes `output` (replacing it only if `overwrite`) on success."""
    output = os.path.abspath(output)
    if os.path.lexists(output) and not overwrite:
        raise FileExistsError(f"{output} already exists; choose another path or pass --overwrite")
    parent, name = os.path.split(output)
    os.makedirs(parent, exist_ok=True)
    staging = os.path.join(parent, f".{name}.incomplete-{os.getpid()}-{secrets.token_hex(3)}")
    os.mkdir(staging)
    try:
        yield staging
        fsync_folder(staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    old = None
    if os.path.lexists(output):
        old = os.path.join(parent, f".{name}.replaced-{os.getpid()}-{secrets.token_hex(3)}")
        os.rename(output, old)
    os.rename(staging, output)
    fsync_folder(parent)
    if old is not None:
        shutil.rmtree(old) if os.path.isdir(old) and not os.path.islink(old) else os.unlink(old)


class LmdbWriter:
    """Appends ImageRecords to a new LMDB in `folder` (which may exist, empty); `finish` writes the metadata."""

    def __init__(self, folder: str, map_size: int = DEFAULT_MAP_SIZE) -> None:
        self.folder = folder
        self.map_size = map_size
        self.count = 0
        # No fsync per commit: an unfinished build is thrown away anyway; finish() syncs once.
        self._env = lmdb.open(folder, map_size=map_size, subdir=True, meminit=False, sync=False, metasync=False)
        self._pending: list[tuple[bytes, bytes]] = []
        self._pending_bytes = 0

    def append(self, record: ImageRecord) -> None:
        value = pack_record(record)
        self._pending.append((record_key(self.count), value))
        self._pending_bytes += len(value)
        self.count += 1
        if len(self._pending) >= _COMMIT_RECORDS or self._pending_bytes >= _COMMIT_BYTES:
            self._commit()

    def finish(self, class_names: list[str], **meta: Any) -> None:
        """Write the metadata record (count, class names, `meta`), flush to disk and close."""
        self._pending.append((META_KEY, pack_meta(self.count, class_names, **meta)))
        self._commit()
        self._env.sync(True)
        self._env.close()

    def abort(self) -> None:
        self._env.close()

    def _commit(self) -> None:
        while True:
            try:
                with self._env.begin(write=True) as txn:
                    for key, value in self._pending:
                        txn.put(key, value)
                break
            except lmdb.MapFullError:   # the transaction was aborted; make room and write it again
                self.map_size *= 2
                self._env.set_mapsize(self.map_size)
        self._pending, self._pending_bytes = [], 0
