"""One live run per run folder: the run's owner holds an exclusive flock on `<run-dir>/run.lock`, which the kernel
releases when that process ends, however it ends; a second run on the folder meanwhile is refused (exit 2, the
live pid named) before it writes or moves anything there.

Who owns a run: the process that starts its ranks (`playground run`, `playground candle`, `playground run
EXPERIMENT.yaml`), or rank 0 when torchrun or Slurm started the ranks (the others share the folder and take
nothing); `run --max-restarts`'s supervisor, whose attempts are its children. The owner exports a token
(TOKEN_ENV) that its descendants inherit: an attempt or a rank that finds the folder held by that token is part
of the same run and goes on. Forked children (data loader workers) close their copy of the lock, so it dies
with its owner alone.

Fenced like a sweep's claims (restarts/fence.py): an attempt started with PLAYGROUND_ATTEMPT=n, when claim-n is
the highest claim, takes the folder over from a live holder of an earlier attempt (a process that only looked
dead to its agent: its writers already refuse to write past claim-n). The lock file is replaced by a new one
that the later attempt holds, so a third run meets the later attempt.
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass

from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import UserError
from playground.restarts.fence import Fence, highest_claim

TOKEN_ENV = "PLAYGROUND_RUN_LOCK"


class RunFolderBusy(UserError):
    """Another live run holds the run folder."""


@dataclass
class RunFolderLock:
    run_dir: str
    fd: int


_held: dict[str, RunFolderLock] = {}     # real path of the run folder -> the lock this process holds on it
_token: str | None = None                 # this process's token, once it holds a lock


def hold_run_folder(run_dir: str) -> RunFolderLock | None:
    """Hold `run_dir` for this process's run until it ends (or release_run_folders); None when an ancestor of
    this process holds it for the same run, or when a later attempt has claimed the folder (this attempt's
    writers then stop it: Fenced). Raises RunFolderBusy when another live run holds it. Creates the folder."""
    key = os.path.realpath(run_dir)
    if key in _held:
        return _held[key]
    fence = Fence.from_env(run_dir)
    if fence.superseded():
        return None
    os.makedirs(run_dir, exist_ok=True)
    path = RunFolder(run_dir).lock
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            if holder.get("token") and holder.get("token") == os.environ.get(TOKEN_ENV):
                return None      # an ancestor (the supervisor of attempts, the runner of ranks) holds it for us
            if not _supersedes(fence, holder, run_dir):
                raise RunFolderBusy(_busy_message(run_dir, holder)) from None
            fd = _take_over(path, holder)
            break
        if _same_file(fd, path):
            break
        os.close(fd)             # a later attempt replaced the file meanwhile: meet it on the new one
    _write_holder(fd, fence.attempt)
    _held[key] = RunFolderLock(run_dir, fd)
    return _held[key]


def release_run_folders() -> None:
    """Release every run folder this process holds (a command's end; the process's end does it anyway)."""
    for run_dir in list(_held):
        release_run_folder(run_dir)


def release_run_folder(run_dir: str) -> None:
    """Release one run folder (api.run's end); the token goes from the environment with the last one."""
    lock = _held.pop(os.path.realpath(run_dir), None)
    if lock is not None:
        os.close(lock.fd)
    if not _held and _token is not None and os.environ.get(TOKEN_ENV) == _token:
        del os.environ[TOKEN_ENV]


def _forked() -> None:
    """In a forked child (a data loader worker): its copy of the lock goes, so the lock ends with its owner."""
    for lock in _held.values():
        os.close(lock.fd)
    _held.clear()


os.register_at_fork(after_in_child=_forked)


def _supersedes(fence: Fence, holder: dict, run_dir: str) -> bool:
    """Whether this attempt may take the folder from `holder`: it holds the highest claim, the holder an earlier
    attempt (a holder outside any sweep, without an attempt, is never taken over)."""
    theirs = holder.get("attempt")
    return (fence.attempt is not None and isinstance(theirs, int) and theirs < fence.attempt
            and highest_claim(run_dir) == fence.attempt)


def _take_over(path: str, holder: dict) -> int:
    """A new lock file, held by this process, in place of the one an earlier attempt holds."""
    fresh = f"{path}.{os.getpid()}"
    fd = os.open(fresh, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)     # a file nobody else has opened
    os.replace(fresh, path)
    print(f"playground: note: this attempt takes {os.path.dirname(path)} over from attempt {holder.get('attempt')} "
          f"(pid {holder.get('pid')} on {holder.get('host')}), which its claim fences out", file=sys.stderr)
    return fd


def _same_file(fd: int, path: str) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _write_holder(fd: int, attempt: int | None) -> None:
    global _token
    _token = _token or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
    os.environ[TOKEN_ENV] = _token
    record = {"pid": os.getpid(), "host": socket.gethostname(), "attempt": attempt, "token": _token,
              "since": time.strftime("%Y-%m-%d %H:%M:%S"), "command": " ".join(sys.argv)[:300]}
    data = (json.dumps(record) + "\n").encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def _holder(fd: int) -> dict:
    """The live holder's record; {} while it is being written."""
    try:
        record = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _busy_message(run_dir: str, holder: dict) -> str:
    if not holder.get("pid"):
        who = "another run, starting now"
    else:
        who = f"pid {holder['pid']} on {holder.get('host', '?')}, since {holder.get('since', '?')}"
        if holder.get("command"):
            who += f": {holder['command']}"
    return (f"--run-dir {run_dir}: a live run holds this folder ({who}); nothing was changed there. Wait for it to "
            "end or stop it, or give another --run-dir")
