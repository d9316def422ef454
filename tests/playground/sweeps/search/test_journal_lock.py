"""A writer stopped while it holds the journal's lock for longer than the lock's grace (SIGSTOP, a suspended VM, a
frozen host): another writer breaks the lock as stale and goes on. The stopped one, when it wakes, writes nothing
it had not written before the lock was broken, and never removes the lock the other writer holds now.

Real writers: two processes appending through SweepJournal (the agents' backend) with a grace of 3 s. Each stops
itself at one moment of an append (right after taking the lock, or after writing and before letting go), as a
frozen host would, so the test knows where it is stopped."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import HANG, REPO
from tests.proc_state import state

GRACE_S = 3
WRITER = textwrap.dedent("""\
    import os, signal, sys
    from playground.sweeps.errors import SweepError
    from playground.sweeps.search.journal_file import SweepJournal

    path, name, count, stop_in, stop_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    journal = SweepJournal(path)
    lock, appends = journal.lock, [0]

    def stopping(call, moment):
        def wrapped(*args):
            if moment == "acquire":
                call(*args)
            if stop_in == moment and appends[0] == stop_at:
                os.kill(os.getpid(), signal.SIGSTOP)      # frozen here until the test sends SIGCONT
            if moment == "release":
                call(*args)
        return wrapped

    lock.acquire, lock.release = stopping(lock.acquire, "acquire"), stopping(lock.release, "release")
    try:
        for n in range(1, count + 1):
            appends[0] = n
            journal.append_logs([{"op_code": 0, "worker_id": name, "n": n}])
    except SweepError as err:
        print(err, file=sys.stderr)
        sys.exit(3)
    """)


def _start(tmp_path, name: str, count: int, stop_in: str, stop_at: int) -> subprocess.Popen:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, PLAYGROUND_JOURNAL_LOCK_GRACE_S=str(GRACE_S), PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "study.journal"), name, str(count), stop_in,
                             str(stop_at)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_stopped(process: subprocess.Popen) -> None:
    deadline = time.monotonic() + HANG
    while state(process.pid) != "T":
        assert process.poll() is None, f"the writer ended ({process.returncode}): {process.communicate()[1]}"
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _records(tmp_path) -> list[tuple[str, int]]:
    text = (tmp_path / "study.journal").read_text()
    assert text.endswith("\n")
    return [(r["worker_id"], r["n"]) for r in map(json.loads, text.splitlines())]


def _lock_holder(tmp_path) -> int | None:
    try:
        return int((tmp_path / "study.journal.lock").read_text().split()[0])
    except FileNotFoundError:
        return None


@pytest.mark.parametrize("stop_in", ["acquire", "release"])
def test_a_writer_stopped_past_the_grace_writes_nothing_more_and_leaves_the_next_holders_lock(tmp_path, stop_in):
    # A: its first append goes through; its second stops (after taking the lock, or after writing under it)
    a = _start(tmp_path, "a", 2, stop_in, 2)
    try:
        _wait_stopped(a)
        assert _lock_holder(tmp_path) == a.pid
        written_by_a = [("a", 1)] if stop_in == "acquire" else [("a", 1), ("a", 2)]
        assert _records(tmp_path) == written_by_a
        # B waits out the grace, breaks A's lock, writes, and stops holding its own lock
        b = _start(tmp_path, "b", 1, "release", 1)
        try:
            _wait_stopped(b)
            assert _lock_holder(tmp_path) == b.pid
            assert _records(tmp_path) == written_by_a + [("b", 1)]

            os.kill(a.pid, signal.SIGCONT)      # A wakes up
            _, err = a.communicate(timeout=HANG)
            if stop_in == "acquire":            # about to write: it finds the lock is no longer its own
                assert a.returncode == 3, err
                assert "held the journal's lock for more than its 3 s grace" in err and "study.journal" in err, err
            else:                               # it had written under the lock: it only lets go of nothing
                assert a.returncode == 0, err
            assert _records(tmp_path) == written_by_a + [("b", 1)]
            assert _lock_holder(tmp_path) == b.pid, "the woken writer removed another writer's lock"
        finally:
            os.kill(b.pid, signal.SIGCONT)
        _, err = b.communicate(timeout=HANG)
        assert b.returncode == 0, err
        assert _lock_holder(tmp_path) is None       # B let go of its own lock as usual
    finally:
        a.kill()
        a.wait()


def test_a_grace_that_is_no_whole_number_of_seconds_is_refused_naming_the_variable(tmp_path, monkeypatch):
    from playground.sweeps.errors import SweepError
    from playground.sweeps.search.journal_file import SweepJournal
    monkeypatch.setenv("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "0.5")
    with pytest.raises(SweepError, match="PLAYGROUND_JOURNAL_LOCK_GRACE_S='0.5'"):
        SweepJournal(str(tmp_path / "study.journal")).append_logs([{"op_code": 0, "worker_id": "a"}])
    assert (tmp_path / "study.journal").read_bytes() == b""


def test_a_lock_taken_away_within_its_grace_is_waited_for_and_the_record_written_once_not_lost(tmp_path,
                                                                                              monkeypatch):
    """Optuna breaks a stale lock by its file name: a writer that judged an older lock stale, then removed the
    file, removes the lock another writer has just taken in its place (a moment's race when two wait on a frozen
    writer's lock). The writer robbed within its grace was not frozen: it waits for the lock like any writer and
    writes its record once, instead of failing as if it had been stopped."""
    import threading

    from playground.sweeps.search.journal_file import SweepJournal
    monkeypatch.setenv("PLAYGROUND_JOURNAL_LOCK_GRACE_S", str(GRACE_S))
    journal = SweepJournal(str(tmp_path / "study.journal"))
    lock, acquire = journal.lock, journal.lock.acquire
    lock_file = tmp_path / "study.journal.lock"
    foreign = b"4242 a-writer-that-broke-a-stale-lock-a-moment-too-late\n"
    released = threading.Event()

    def robbed_once():
        acquire()
        if not released.is_set() and not getattr(robbed_once, "done", False):
            robbed_once.done = True
            lock_file.rename(tmp_path / "gone")          # what Optuna's release() in the other writer does
            (tmp_path / "gone").unlink()
            fd = os.open(lock_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY)    # and its own acquire after it
            os.write(fd, foreign)
            os.close(fd)

            def let_go():
                assert lock_file.read_bytes() == foreign
                lock_file.unlink()
                released.set()
            threading.Timer(0.5, let_go).start()

    monkeypatch.setattr(lock, "acquire", robbed_once)
    started = time.monotonic()
    journal.append_logs([{"op_code": 0, "worker_id": "a", "n": 1}])
    assert released.is_set() and time.monotonic() - started < GRACE_S   # it waited for the other's lock, no more
    assert _records(tmp_path) == [("a", 1)]
    assert not lock_file.exists()
