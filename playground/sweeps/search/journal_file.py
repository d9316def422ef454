"""study.journal as an Optuna journal backend that survives damage: one JSON record per line, Optuna's own format
(optuna-dashboard and Optuna's JournalFileBackend read the same file).

- A line being written, or cut by a writer killed mid-append, has no newline yet: readers stop before it, and the
  next append (under the journal's lock, so no writer is mid-line) first cuts it off, with a note. Without that the
  next record would be glued to it and the journal broken from there on.
- A complete line that is not a journal record (binary garbage, a bad line, a record of the wrong shape) is a
  `JournalDamaged`: one message naming the journal, the line and the repair command, never a traceback.
- A journal shorter than what this process already read was cut under it: JournalDamaged too.
- The lock file holds its holder's token. Optuna breaks a lock left unchanged past its grace (a writer killed
  mid-append leaves one): a holder that was stopped that long (SIGSTOP, a suspended VM, a frozen host) finds its
  token gone when it wakes, writes nothing (`JournalLockLost`) and never removes the lock another writer holds.
Only public Optuna names are used (the BaseJournalBackend interface, JournalFileOpenLock, JournalStorage), each
imported when first needed: importing the sweep layer never imports optuna.
"""
from __future__ import annotations

import json
import os
import sys
import time
import uuid
from typing import Any, Generator

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs import environment

TAIL_BLOCK = 1 << 16
_scan = json.JSONDecoder().raw_decode      # one JSON value at the start of a str: (value, where it ends)


def repair_command(journal: str) -> str:
    return f"`playground sweep summary {os.path.dirname(journal)} --rebuild`"


class JournalDamaged(SweepError):
    """A journal that cannot be read: names it, the line, what is wrong and how to rebuild it from the folders."""

    def __init__(self, journal: str, line: int | None, what: str) -> None:
        where = f"{journal}, line {line}" if line is not None else journal
        super().__init__(f"{where}: {what}; the sweep's journal is damaged. Rebuild it from the trial folders with "
                         f"{repair_command(journal)} (the damaged file is kept, renamed study.journal.replaced-<time>)")
        self.journal, self.line = journal, line


class JournalLockLost(SweepError):
    """This process held the journal's lock past its grace (it was stopped or frozen) and another writer broke it
    as stale: what it was about to write was not written, and its view of the study may be out of date."""

    def __init__(self, journal: str, grace: int) -> None:
        super().__init__(f"{journal}: this process held the journal's lock for more than its {grace} s grace (it "
                         "was stopped or frozen) and another process broke it as stale; nothing more was written. "
                         "Its trials go to the other agents (heartbeat grace); start an agent again if needed")


class JournalLock:
    """Optuna's JournalFileOpenLock on `path` (an O_EXCL lock file; a waiting writer breaks one left unchanged
    past the grace), with this holder's token written into the file: `held()` tells whether it is still ours."""

    def __init__(self, path: str) -> None:
        from optuna.storages.journal import JournalFileOpenLock
        self.grace = int(environment.seconds("PLAYGROUND_JOURNAL_LOCK_GRACE_S"))   # Optuna's default: 30
        self._lock = JournalFileOpenLock(path, grace_period=self.grace)
        self.path = path + ".lock"        # optuna's name for it
        self._token = b""
        self._taken = 0.0

    def acquire(self) -> None:
        self._lock.acquire()
        self._taken = time.monotonic()
        self._token = f"{os.getpid()} {uuid.uuid4().hex}\n".encode("ascii")
        try:
            with open(self.path, "r+b") as handle:     # the file just made; never created here
                handle.write(self._token)
                handle.truncate()       # a longer token written by another at the same moment must not show
        except FileNotFoundError:       # broken already (stopped past the grace right here): not held()
            pass

    def outlived_grace(self) -> bool:
        """Whether the lock was taken at least a grace ago (the monotonic clock runs on while a process is
        stopped): only then can another writer have broken it as stale. Sooner, a writer that was breaking an
        older stale lock at that very moment removed ours instead (Optuna removes the lock file by its name)."""
        return time.monotonic() - self._taken >= self.grace

    def held(self) -> bool:
        try:
            with open(self.path, "rb") as handle:
                return handle.read() == self._token
        except FileNotFoundError:
            return False

    def release(self) -> None:
        """Remove the lock file when it is still ours; a lock another writer took since is left alone."""
        if self.held():
            self._lock.release()
        self._token = b""


class SweepJournal:
    """The journal file at `path` as Optuna's BaseJournalBackend (read_logs, append_logs); created empty when
    missing unless `create` is False. Reading needs no Optuna (`sweep status`'s digest reads through it)."""

    def __init__(self, path: str, create: bool = True) -> None:
        self.path = path
        self._lock: Any = None
        if create and not os.path.exists(path):
            open(path, "ab").close()
        self._read_to = (0, 0)          # (records read, byte offset after them): reads resume there
        self.position = (0, 0)          # (records, byte offset after them) that records_from has read
        self.last_line = 0              # the line of the last record handed out (what a failed replay names)

    def read_logs(self, log_number_from: int) -> Generator[dict[str, Any], None, None]:
        number, offset = self._read_to if self._read_to[0] <= log_number_from else (0, 0)
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            raise JournalDamaged(self.path, None, "the file is gone") from None
        with handle:
            if os.fstat(handle.fileno()).st_size < offset:
                raise JournalDamaged(self.path, number, f"it is shorter than the {number} records already read "
                                     "(cut or replaced while the sweep ran)")
            try:
                for log in self.records_from(handle, number, offset):
                    if self.position[0] > log_number_from:
                        self.last_line = self.position[0]
                        yield log
            finally:
                self._read_to = self.position

    def records_from(self, handle: Any, number: int, offset: int,
                     hasher: Any = None) -> Generator[dict[str, Any], None, None]:
        """The records of the journal open as `handle` after its first `number`, which end at byte `offset`, to
        the last complete line; each line read is fed to `hasher` too (a hashlib object) when given.
        `self.position` follows: (records, byte offset after them)."""
        handle.seek(offset)
        self.position = (number, offset)
        for line in handle:
            if line[-1:] != b"\n":
                return      # being written, or cut by a kill: the next append removes it
            log = _record(line, self.path, number + 1)
            if hasher is not None:
                hasher.update(line)
            number, offset = number + 1, offset + len(line)
            self.position = (number, offset)
            yield log

    @property
    def lock(self) -> JournalLock:
        """The journal's file lock, made at the first append (imports Optuna). O_EXCL: it works on every local
        filesystem; a stale one is broken after its grace."""
        if self._lock is None:
            self._lock = JournalLock(self.path)
        return self._lock

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        text = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs).encode("utf-8")
        while not self._append(text):
            pass

    def _append(self, text: bytes) -> bool:
        """Write `text` under the lock; False when the lock was taken from under us within its grace (try again)."""
        self.lock.acquire()
        try:
            with open(self.path, "a+b") as handle:
                if not self.lock.held():
                    if self.lock.outlived_grace():  # stopped past the grace after acquiring: another writer went on
                        raise JournalLockLost(self.path, self.lock.grace)
                    return False                    # lost to a writer breaking an older stale lock: wait our turn
                cut_torn_tail(handle, self.path)
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            return True
        finally:
            self.lock.release()


def _record(line: bytes, path: str, number: int) -> dict[str, Any]:
    try:
        log = _plain_record(line)
        if log is None:     # what json.loads of the line accepts besides (spaces around, a BOM, UTF-16) or refuses
            log = json.loads(line)
    except ValueError:      # not JSON, or not UTF-8 text
        raise JournalDamaged(path, number, f"not a journal record ({_shown(line)})") from None
    if type(log) is not dict or type(log.get("op_code")) is not int or "worker_id" not in log:
        raise JournalDamaged(path, number, f"not a journal record ({_shown(line)})")
    return log


def _plain_record(line: bytes) -> Any:
    """The JSON value of a line as the sweep writes them (UTF-8, the value up to its newline), else None: the
    value json.loads of the line gives, without its guess of the encoding and its match of spaces around the
    value (a third of the time of reading a journal of 10,000 trials)."""
    try:
        text = line.decode("utf-8")
        value, end = _scan(text)
    except ValueError:
        return None
    return value if end == len(text) - 1 else None


def _shown(line: bytes) -> str:
    text = line.rstrip(b"\n")
    if b"\0" in text or not _is_text(text):
        return f"{len(text)} bytes of binary data"
    return repr(text[:60].decode("utf-8")) + ("..." if len(text) > 60 else "")


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def torn_tail(path: str) -> tuple[int, int]:
    """(complete lines, bytes after the last newline) of the journal when it ends in a cut line; (-1, 0) when it
    does not, (0, 0) when it is missing."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            end = _last_newline_end(handle, size)
            if end == size:
                return -1, 0        # the usual case: not counted (the whole file would be read)
            handle.seek(0)
            lines = sum(block.count(b"\n") for block in iter(lambda: handle.read(TAIL_BLOCK), b""))
    except FileNotFoundError:
        return 0, 0
    return lines, size - end


def cut_torn_tail(handle: Any, path: str) -> int:
    """Cut the bytes after the journal's last newline (a record torn by a killed writer), with a note on stderr;
    how many were cut. The caller holds the journal's lock: nobody is writing a line now."""
    size = os.fstat(handle.fileno()).st_size
    end = _last_newline_end(handle, size)
    if end == size:
        return 0
    os.ftruncate(handle.fileno(), end)
    print(f"note: {path} ended in a record cut short ({size - end} bytes without a newline: a writer was killed "
          "mid-append); cut off before this append. That record was never complete, so nothing it said had "
          "happened was lost.", file=sys.stderr, flush=True)
    return size - end


def _last_newline_end(handle: Any, size: int) -> int:
    """The offset just after the last newline of the open file (0 when it has none)."""
    handle.seek(max(0, size - 1))
    if size == 0 or handle.read(1) == b"\n":
        return size             # every append asks: one byte read in the usual case
    position = size
    while position > 0:
        start = max(0, position - TAIL_BLOCK)
        handle.seek(start)
        block = handle.read(position - start)
        index = block.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
    return 0


def open_checked(path: str, create: bool = True) -> Any:
    """A JournalStorage on SweepJournal(path): a record that replays wrong (a JSON object of the wrong shape) is a
    JournalDamaged naming its line too."""
    from optuna.storages import JournalStorage
    backend = SweepJournal(path, create=create)
    try:
        return JournalStorage(backend)
    except SweepError:
        raise
    except (KeyError, TypeError, ValueError, AssertionError, IndexError) as err:
        raise JournalDamaged(path, backend.last_line or None,
                             f"a record Optuna cannot replay ({type(err).__name__}: {err})") from None
