"""A command forked from a command server is the process a fresh interpreter would be: same view of itself
(tests/playground/processes/forked_probe.py reports it), same output, exit codes and tracebacks, new random states,
nothing of an earlier command, its own end (a crash, a signal, its client's death) touching nothing else."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from playground.processes import forked_process, supervisor
from playground.processes.command_servers import ForkServer
from playground.processes.forked_process import ForkedProcess
from playground.sweeps.agents.trial_process import TRIAL_PRELOAD
from tests.conftest import HANG, REPO
from tests.playground.processes.children import gone

PROBE = [sys.executable, "-m", "tests.playground.processes.forked_probe"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1")
RANDOM = ("random", "numpy_random", "authkey", "logging_started_ago")


@pytest.fixture(scope="module")
def server():
    """One server for the module, started as the sweep agent starts its own (the environment less the per-launch
    variables, the repository as working folder)."""
    started = ForkServer({k: v for k, v in ENV.items() if not k.startswith("PLAYGROUND_")}, str(REPO), TRIAL_PRELOAD)
    yield started
    started.close()


def forked(server: ForkServer, action: list[str], env: dict | None = None) -> ForkedProcess:
    return server.start([*PROBE, *action], env or ENV, str(REPO), [0, 1, 2])


def outcome(start) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the process start(stdin, stdout, stderr) gives."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    with open(os.devnull, "rb") as nothing:
        process = start(nothing.fileno(), out_write, err_write)
    os.close(out_write)
    os.close(err_write)
    with os.fdopen(out_read) as out, os.fdopen(err_read) as err:
        stdout, stderr = out.read(), err.read()
    return supervisor._wait(process, HANG), stdout, stderr


def fresh_outcome(action: list[str], env: dict | None = None) -> tuple[int, str, str]:
    return outcome(lambda i, o, e: supervisor.start_child([*PROBE, *action], env=env or ENV, cwd=str(REPO),
                                                          stdin=i, stdout=o, stderr=e))


def forked_outcome(server: ForkServer, action: list[str], env: dict | None = None) -> tuple[int, str, str]:
    return outcome(lambda i, o, e: server.start([*PROBE, *action], env or ENV, str(REPO), [i, o, e]))


def waiting(server: ForkServer, stopped: Path) -> tuple[ForkedProcess, int]:
    """A forked probe waiting for SIGTERM (which it notes in `stopped`), and its waiter's pid."""
    read, write = os.pipe()
    command = server.start([*PROBE, "wait", str(stopped)], ENV, str(REPO), [0, write, 2])
    os.close(write)
    with os.fdopen(read) as out:
        assert out.readline().strip() == "waiting"
    return command, _parent(command.pid)


def report(result: tuple[int, str, str]) -> dict:
    code, stdout, stderr = result
    assert code == 0, stderr
    return json.loads(stdout.splitlines()[0])


def test_a_forked_command_sees_itself_as_a_fresh_interpreter_would(server):
    env = dict(ENV, PLAYGROUND_ATTEMPT="3")      # a per-launch variable the server was started without
    fresh, fork = report(fresh_outcome(["report"], env)), report(forked_outcome(server, ["report"], env))
    assert fork["env"]["PLAYGROUND_ATTEMPT"] == "3"
    assert fork["fds"] == [0, 1, 2] and fork["threads"] == 1
    assert fork["parent_death_signal"] == signal.SIGTERM
    assert 0 <= fork["logging_started_ago"] < 60
    assert {k: v for k, v in fork.items() if k not in RANDOM} == {k: v for k, v in fresh.items() if k not in RANDOM}


def test_forked_commands_draw_their_own_random_states(server):
    first, second = (report(forked_outcome(server, ["report"])) for _ in range(2))
    for key in ("random", "numpy_random", "authkey"):
        assert first[key] != second[key], key


def test_nothing_a_forked_command_changes_in_itself_reaches_the_next(server):
    clean = report(forked_outcome(server, ["report"]))
    report(forked_outcome(server, ["pollute"]))
    after = report(forked_outcome(server, ["report"]))
    assert after["leaked_global"] is None and "LEAKED" not in after["env"]
    assert {k: v for k, v in after.items() if k not in RANDOM} == {k: v for k, v in clean.items() if k not in RANDOM}


@pytest.mark.parametrize("action", [["exit", "3"], ["raise"], ["interrupt"], ["kill"], ["print"]],
                         ids=lambda a: a[0])
def test_exit_code_output_and_traceback_are_a_fresh_interpreters(server, action):
    fresh, fork = fresh_outcome(action), forked_outcome(server, action)
    assert fork == fresh
    expected = {"exit": 3, "raise": 1, "interrupt": -signal.SIGINT, "kill": -signal.SIGKILL, "print": 0}
    assert fresh[0] == expected[action[0]]


def test_a_crash_ends_only_its_command_and_the_server_serves_on(server):
    crashed = forked(server, ["kill"])
    assert crashed.wait() == -signal.SIGKILL          # no time limit: as supervisor.kill waits
    assert server.process.poll() is None
    assert report(forked_outcome(server, ["report"]))["threads"] == 1


def test_a_signal_to_a_forked_command_reaches_it_alone(server, tmp_path):
    command, waiter = waiting(server, tmp_path / "stopped")
    supervisor.stop([command])
    assert command.returncode == 75
    assert (tmp_path / "stopped").read_text() == "stopped by SIGTERM"
    assert server.process.poll() is None and gone(waiter, HANG)
    assert supervisor.signal_child(command) is False      # ended: nothing is sent to whoever has its pid now


def test_a_sigterm_at_once_after_the_start_is_never_lost(server, tmp_path):
    """Sent before the command has become itself (its dispositions are the server's, which ignores stops), the
    signal waits, blocked, and ends it as it ends a fresh interpreter that is still starting."""
    for attempt in range(5):
        command = server.start([*PROBE, "wait", str(tmp_path / f"stopped{attempt}")], ENV, str(REPO), [0, 1, 2])
        started = time.monotonic()
        supervisor.signal_child(command)
        assert command.wait(HANG) in (-signal.SIGTERM, 75) and time.monotonic() - started < 50


def test_a_stopped_waiter_never_hangs_its_client(server, tmp_path, monkeypatch):
    """The command ends, its waiter (SIGSTOPped) never reports it: the client sees the end through the command's
    pidfd and, REPORT_SECONDS later, takes it as a death of unknown cause (SIGKILL), instead of waiting for ever."""
    monkeypatch.setattr(forked_process, "REPORT_SECONDS", 1.0)
    command, waiter = waiting(server, tmp_path / "stopped")
    os.kill(waiter, signal.SIGSTOP)
    try:
        supervisor.stop([command])
        assert command.returncode == forked_process.LOST_STATUS and command.status_lost
        assert (tmp_path / "stopped").read_text() == "stopped by SIGTERM"
    finally:
        os.kill(waiter, signal.SIGKILL)


def test_a_forked_command_gets_sigterm_when_its_client_dies(tmp_path):
    client = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys, time
        from playground.processes.command_servers import ForkServer
        server = ForkServer(dict(os.environ), {str(REPO)!r}, {TRIAL_PRELOAD!r})
        command = server.start({[*PROBE, "wait", str(tmp_path / "stopped")]!r}, dict(os.environ), {str(REPO)!r},
                               [0, 1, 2])
        time.sleep(120)
    """)], cwd=str(REPO), env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().strip() == "waiting"
        client.kill()
        client.wait()
        deadline = time.monotonic() + HANG
        while not (tmp_path / "stopped").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "stopped").read_text() == "stopped by SIGTERM"
    finally:
        client.kill()


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])
