"""Read-only access to the records of one image LMDB, in the playground format or Caffe's Datum format.

The format is detected once, when the object is made: a playground database has a metadata record
(record_format.META_KEY); a database without one is read as Caffe Datum records if its first record parses
as a Datum. Caffe keys are arbitrary ("00000042_cat/1.jpg"), so their list is read once, in key order.

The LMDB environment is opened lazily, once per process (read-only, no lock file, OS readahead on), and
never pickled: the object can be sent to forked or spawned DataLoader
workers, and a forked child reopens the database instead of using its parent's handle, which LMDB forbids.
"""
from __future__ import annotations

import os
from typing import Any

import lmdb
import numpy as np

from playground.data.worker_errors import DataError
from playground.data.records.caffe_datum import datum_to_record, parse_datum
from playground.data.records.record_format import (META_KEY, ImageRecord, RecordError, is_playground_record, record_key,
                                           unpack_meta, unpack_record)

PLAYGROUND, CAFFE = "playground", "caffe"
_ENVIRONMENTS: dict[tuple[str, int], tuple[int, lmdb.Environment]] = {}   # (path, inode) -> (pid, handle)


class DatabaseError(ValueError):
    """A path is not a readable image LMDB; the message names the path and says what to do."""


class RecordReadError(DataError):
    """One record could not be read or decoded; the message names the database and the key."""


def open_readonly(path: str) -> lmdb.Environment:
    """Open the LMDB folder `path` for reading only, without a lock file (safe on read-only media).

    Readahead stays on although training reads in random order: an image record spans many 4 KiB pages, and
    without readahead each page is a separate disk read (random reads of 87 KiB records from a cold cache:
    650 records/s without, 7,700 with).
    """
    return lmdb.open(path, readonly=True, lock=False, readahead=True, meminit=False, subdir=True)


def process_environment(path: str) -> lmdb.Environment:
    """This process's one read-only handle on the LMDB folder `path`, opened on first use.

    LMDB allows one handle per database per process (py-lmdb refuses a second), so every reader in a process
    shares it. A handle inherited through fork is closed first: read-only and lock-free, closing this process's
    copy touches nothing its parent uses. Keyed by the data file's inode, so a rebuilt database is reopened.
    """
    key = (os.path.realpath(path), os.stat(os.path.join(path, "data.mdb")).st_ino)
    entry = _ENVIRONMENTS.get(key)
    if entry is not None and entry[0] == os.getpid():
        return entry[1]
    if entry is not None:
        entry[1].close()
    env = open_readonly(path)
    _ENVIRONMENTS[key] = (os.getpid(), env)
    return env


def check_database_path(path: str) -> None:
    """Raise DatabaseError unless `path` is a folder holding an LMDB (data.mdb)."""
    if not path:
        raise DatabaseError("no path given")
    if not os.path.exists(path):
        raise DatabaseError(f"{path} does not exist")
    if os.path.isfile(path):
        hint = " (give the folder that holds it)" if os.path.basename(path) == "data.mdb" else ""
        raise DatabaseError(f"{path} is a file, not an LMDB folder{hint}")
    if not os.path.isfile(os.path.join(path, "data.mdb")):
        splits = [s for s in ("train", "test") if os.path.isfile(os.path.join(path, s, "data.mdb"))]
        hint = f"; it holds the split databases {', '.join(os.path.join(path, s) for s in splits)}" if splits else ""
        raise DatabaseError(f"{path} is not an LMDB: it has no data.mdb{hint}")


class DbRecords:
    """The records of one LMDB by position 0..count-1: `read(index)` gives an ImageRecord."""

    def __init__(self, path: str) -> None:
        check_database_path(path)
        self.path = path
        self.kind = PLAYGROUND
        self.meta: dict[str, Any] = {}
        self._caffe_keys: Any = None
        self._txn: lmdb.Transaction | None = None
        self._pid = -1
        try:
            self._inspect()
        except lmdb.Error as err:
            raise DatabaseError(f"{path}: LMDB could not open it: {err}") from None

    @property
    def count(self) -> int:
        return len(self._caffe_keys) if self.kind == CAFFE else int(self.meta["count"])

    @property
    def class_names(self) -> list[str] | None:
        """Class names from the metadata; None for Caffe databases, which record none."""
        return list(self.meta["class_names"]) if self.kind == PLAYGROUND else None

    def key(self, index: int) -> bytes:
        return bytes(self._caffe_keys[index]) if self.kind == CAFFE else record_key(index)

    def read(self, index: int) -> ImageRecord:
        """Record `index`; raises RecordReadError naming the database and key when it is missing or malformed."""
        return self._record(index, mapped=False)

    def read_mapped(self, index: int) -> ImageRecord:
        """Record `index` without copying its image: the payload is a memoryview of the mapped database, valid
        until close() (use it before then); the extra fields are not parsed. Errors as read()."""
        return self._record(index, mapped=True)

    def read_value(self, index: int) -> bytes | None:
        """The raw value bytes of record `index` (for benchmarks and tools)."""
        value = self._transaction().get(self.key(index))
        return None if value is None else bytes(value)

    def _record(self, index: int, mapped: bool) -> ImageRecord:
        key = self.key(index)
        value = self._transaction().get(key)
        if value is None:
            raise RecordReadError(f"{self.path}: record {key.decode(errors='replace')!r} is missing")
        try:
            if self.kind == PLAYGROUND:
                return unpack_record(value if mapped else bytes(value), extra=not mapped)
            return datum_to_record(parse_datum(bytes(value)))
        except RecordError as err:
            raise RecordReadError(f"{self.path}: record {key.decode(errors='replace')!r}: {err}") from None

    def close(self) -> None:
        """End this object's read transaction (the process's handle stays open for other readers)."""
        if self._txn is not None and self._pid == os.getpid():
            self._txn.abort()
        self._txn, self._pid = None, -1

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update(_txn=None, _pid=-1)   # transactions stay in the process that began them
        return state

    def _transaction(self) -> lmdb.Transaction:
        if self._pid != os.getpid():   # first read in this process, or in a forked child
            # Values come as memoryviews of the mapped file: read_mapped hands the image to the decoder uncopied.
            self._txn = process_environment(self.path).begin(buffers=True)
            self._pid = os.getpid()
        return self._txn

    def _inspect(self) -> None:
        env = process_environment(self.path)
        with env.begin() as txn:
            meta = txn.get(META_KEY)
            if meta is not None:
                self._read_meta(meta, env.stat()["entries"])
            else:
                self._detect_caffe(txn)

    def _read_meta(self, value: bytes, entries: int) -> None:
        try:
            self.meta = unpack_meta(value)
        except RecordError as err:
            raise DatabaseError(f"{self.path}: {err}") from None
        if entries != self.meta["count"] + 1:
            raise DatabaseError(f"{self.path}: the metadata says {self.meta['count']} records but the database holds "
                                f"{entries - 1}; it was modified after it was built, rebuild it with make-lmdb")

    def _detect_caffe(self, txn: lmdb.Transaction) -> None:
        cursor = txn.cursor()
        if not cursor.first():
            raise DatabaseError(f"{self.path}: the database is empty")
        first_key, value = cursor.key(), cursor.value()
        if is_playground_record(value):
            raise DatabaseError(f"{self.path}: it holds playground records but no metadata record, so its build did "
                                "not finish; build it again with `playground make-lmdb`")
        try:
            datum_to_record(parse_datum(value))
        except RecordError as err:
            raise DatabaseError(f"{self.path}: neither a playground image database nor Caffe Datum records (the "
                                f"first record, key {first_key.decode(errors='replace')!r}: {err})") from None
        self.kind = CAFFE
        self._caffe_keys = _compact_keys(list(cursor.iternext(keys=True, values=False)))


def _compact_keys(keys: list[bytes]) -> Any:
    """Keys as a fixed-width numpy bytes array (far smaller to send to workers than a list of bytes), unless a
    key ends in a NUL byte, which that array would strip."""
    if any(k.endswith(b"\0") for k in keys):
        return keys
    return np.array(keys, dtype=f"S{max(len(k) for k in keys)}")
