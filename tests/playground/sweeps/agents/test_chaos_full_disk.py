"""Chaos with damage on the way: four agents on one sweep whose folder is a small tmpfs (a user and mount namespace
of its own, `unshare -rm`), while trial runs, agents and a whole host (every process of one agent's tree) are
SIGKILLed, a writer is SIGKILLed mid-append to the journal (a torn last line, its lock left behind) and the disk
fills up and is freed again. The agents that hit the full disk exit 1 with one line naming it; started again, the
sweep ends with exactly its budget, every point distinct, every trial bitwise equal to an uninterrupted run."""
from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import HANG, REPO
from tests.playground.sweeps.agents.test_agent import _contract, _finish, _states, _wait_for
from tests.playground.sweeps.agents.test_chaos import _assert_bitwise_equal_to_uninterrupted_runs, _running_trial_pids
from tests.playground.sweeps.agents.test_distinct_proposals import CONTINUOUS, _points

BUDGET, AGENTS, EPOCHS = 16, 4, 4

# a writer killed mid-append: it holds the journal's lock, has written half a record and no newline, and dies
KILLED_WRITER = r"""
import os, signal, sys
from playground.sweeps.search.journal_file import SweepJournal
journal = SweepJournal(sys.argv[1], create=False)
journal.lock.acquire()
with open(sys.argv[1], "rb") as handle:
    record = handle.read().splitlines(keepends=True)[-1]
with open(sys.argv[1], "ab") as handle:
    handle.write(record[:len(record) // 2])
    handle.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


class SmallDisk:
    """A 4 MiB tmpfs at `inner`, mounted in a user and mount namespace held open by a waiting process; processes
    started by `command` run in that namespace (nsenter), and the test reaches the files at `seen`
    (/proc/HOLDER/root/...). Unmounted when the holder and every process started in it have ended."""

    def __init__(self, inner: Path) -> None:
        inner.mkdir(parents=True)
        self.inner = inner
        # the holder says when the tmpfs is mounted, then reads its stdin until that closes: it ends with this
        # test, even with a test killed
        self.holder = subprocess.Popen(["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o size=4m tmpfs "$1" && '
                                        'touch "$1/.mounted" && echo mounted && read -r _', "sh", str(inner)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True)
        self.seen = Path(f"/proc/{self.holder.pid}/root") / inner.relative_to("/")
        if self.holder.stdout.readline() != "mounted\n":      # it ended without: say why
            why = self.holder.stderr.read().strip()
            self.close()
            raise OSError(f"unshare -rm cannot mount a tmpfs here: {why}")
        if not (self.seen / ".mounted").is_file():
            self.close()
            raise OSError(f"the tmpfs is not reachable at {self.seen}")

    def command(self, args: list[str]) -> list[str]:
        return ["nsenter", "-t", str(self.holder.pid), "-U", "-m", "--preserve-credentials", *args]

    def fill(self) -> Path:
        """Write a filler file until the disk is full; its path."""
        filler = self.seen / "filler"
        with open(filler, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(b"\0" * 65536)
            except OSError as err:
                assert err.errno == errno.ENOSPC, err
        return filler

    def close(self) -> None:
        self.holder.stdin.close()
        self.holder.wait(timeout=HANG)
        self.holder.stdout.close()
        self.holder.stderr.close()


def _skip_reason(tmp_path: Path) -> str | None:
    for tool in ("unshare", "nsenter"):
        if not shutil.which(tool):
            return f"no {tool} binary"
    try:
        disk = SmallDisk(tmp_path / "probe")
    except OSError as err:
        return str(err)
    try:
        done = subprocess.run(disk.command(["sh", "-c", f'test -f "{disk.inner}/.mounted"']), capture_output=True,
                              text=True)
        return None if done.returncode == 0 else f"nsenter cannot enter the namespace: {done.stderr.strip()}"
    finally:
        disk.close()


@pytest.mark.slow
def test_four_agents_through_kills_a_torn_journal_and_a_full_disk_end_exactly_at_the_budget_bitwise_equal(
        write_spec, base_file, tmp_path):
    reason = _skip_reason(tmp_path)
    if reason:
        pytest.skip(reason)
    _contract(base_file, contract_epoch_seconds=0.2)
    spec = write_spec({"name": "tpe", "max_trials": BUDGET, "seed": 0},
                      {**CONTINUOUS, "epoch_iter.num_epochs": EPOCHS},
                      agents={"heartbeat_seconds": 0.5, "grace_seconds": 30}, max_restarts=50)
    disk = SmallDisk(tmp_path / "sweep")
    started: dict[subprocess.Popen, Path] = {}     # every process the test starts in the namespace, and its output
    try:
        _chaos(disk, spec, base_file, tmp_path, started)
    finally:
        for process in started:                     # after a failure: no agent outlives the test
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # the tmpfs goes with its namespace: a copy of the sweep folder stays for a post-mortem
        shutil.copytree(disk.seen, tmp_path / "sweep-copy", symlinks=True, ignore=shutil.ignore_patterns("filler"))
        disk.close()


def _chaos(disk: SmallDisk, spec: Path, base_file: Path, tmp_path: Path,
           started: dict[subprocess.Popen, Path]) -> None:
    sweep, logs = disk.seen, tmp_path / "logs"
    logs.mkdir()
    rng = random.Random(25)

    def start(command: list[str]) -> subprocess.Popen:
        log = logs / f"{len(started)}.log"
        with open(log, "ab") as out:
            process = subprocess.Popen(disk.command([sys.executable, "-m", "playground", *command]), cwd=REPO,
                                       env=dict(os.environ, PLAYGROUND_HOST_ID="host",
                                                PLAYGROUND_JOURNAL_LOCK_GRACE_S="5"), stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        started[process] = log
        return process

    def agent() -> subprocess.Popen:
        return start(["sweep", "agent", str(disk.inner), "--quiet"])

    def every_log() -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in started.values())

    def wait_for(condition, what: str, *processes: subprocess.Popen) -> None:
        _wait_for(condition, what, *processes, story=every_log)

    def kill_a_trial() -> None:
        """SIGKILL a running trial run: one is waited for, and one that ended just before is no kill."""
        while True:
            wait_for(lambda: _running_trial_pids(sweep, disk.inner), "a trial run", *agents)
            running = _running_trial_pids(sweep, disk.inner)
            try:
                if running:
                    os.kill(rng.choice(running), signal.SIGKILL)
                    return
            except ProcessLookupError:
                pass

    def kill_an_agent(host: bool = False) -> None:
        """SIGKILL an agent, its trial runs left to stop on their own (SIGTERM as their parent dies), or with
        `host` its whole process group, trial runs and all; a new agent takes its place."""
        victim = rng.choice([i for i, a in enumerate(agents) if a.poll() is None])
        if host:
            os.killpg(agents[victim].pid, signal.SIGKILL)
        else:
            os.kill(agents[victim].pid, signal.SIGKILL)
        agents[victim].wait()
        agents[victim] = agent()

    (sweep / "control").mkdir()
    (sweep / "control" / "PAUSE").write_text("")
    init = start(["sweep", "run", str(spec), "--sweep-dir", str(disk.inner), "--quiet"])
    assert init.wait(timeout=HANG) == 75, every_log()
    (sweep / "control" / "PAUSE").unlink()
    agents = [agent() for _ in range(AGENTS)]

    # kills at random moments: a trial run (once one runs), an agent, a whole host, a trial run
    for kill in (kill_a_trial, kill_an_agent, lambda: kill_an_agent(host=True), kill_a_trial):
        kill()
        time.sleep(rng.uniform(0.2, 1.0))

    # a writer killed mid-append: the agents wait out its lock's grace (5 s here), cut the torn line, go on
    journal = sweep / "study.journal"
    complete_before = len(journal.read_bytes().splitlines())
    writer = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(journal)], cwd=REPO, timeout=HANG)
    assert writer.returncode == -signal.SIGKILL and not journal.read_bytes().endswith(b"\n")
    wait_for(lambda: any("ended in a record cut short" in log.read_text() for log in started.values()),
             "the torn line cut", *agents)
    assert len(journal.read_bytes().splitlines()) > complete_before

    # the disk fills up while trials run: the agents that hit it exit 1, one line naming it
    kill_a_trial()
    assert list(_states(sweep).values()).count("COMPLETE") < BUDGET     # the sweep is still under way
    filler = disk.fill()
    wait_for(lambda: all(a.poll() is not None for a in agents), "every agent's end on the full disk")
    # an agent that found nothing left to claim (the last trials running elsewhere) may end with 0 before the
    # disk bites; every other one hits it
    codes = [a.returncode for a in agents]
    assert set(codes) <= {0, 1} and codes.count(1) >= 1, every_log()
    for ended in agents:
        text = started[ended].read_text()
        # one line: a slot's (runner.py) or, when the agent's own write hit the disk first, the command's
        failed = [line for line in text.splitlines() if line.startswith(("sweep failed:", "playground sweep: failed:"))]
        assert "Traceback" not in text and len(failed) == ended.returncode, text
        assert all("No space left on device" in line and line.endswith("Exit code 1.") for line in failed), text
    filler.unlink()

    # space again: four agents continue the sweep, one more trial run and host killed on the way
    agents = [agent() for _ in range(AGENTS)]
    kill_a_trial()
    kill_an_agent(host=True)
    assert [_finish(a, started[a]) for a in agents] == [0] * AGENTS, every_log()

    states = _states(sweep)
    assert len(states) == BUDGET and set(states.values()) == {"COMPLETE"}, states
    points = _points(sweep)
    assert len(set(points)) == BUDGET, points
    assert len(list((sweep / "trials").iterdir())) == BUDGET
    _assert_bitwise_equal_to_uninterrupted_runs(sweep, base_file, tmp_path / "reference")
