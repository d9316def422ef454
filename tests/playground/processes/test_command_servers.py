"""CommandServers: `python -m playground ...` forked from a server started with its environment, anything else and
whatever a server cannot serve (killed, hung, imports that print) in a fresh interpreter, never a wait without
bound; and nothing the server imports reads the per-launch variables, which may differ between it and a command."""
from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from playground.processes import supervisor
from playground.processes.command_server import per_launch
from playground.processes.command_servers import MAX_FAILURES, CommandServers
from playground.processes.forked_process import ForkedProcess
from playground.sweeps.agents.trial_process import TRIAL_PRELOAD
from tests.conftest import HANG, REPO

VERSION = [sys.executable, "-m", "playground", "--version"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1")


@pytest.fixture(scope="module")
def servers():
    notes: list[str] = []
    started = CommandServers(notes.append, TRIAL_PRELOAD)
    started.notes = notes
    yield started
    started.close()


def run(servers: CommandServers, command: list[str], env: dict | None = None):
    """(the process, its exit code, its output)."""
    read, write = os.pipe()
    try:
        process = servers.start(command, env=env or ENV, stdin=subprocess.DEVNULL, stdout=write,
                                stderr=subprocess.STDOUT)
    finally:
        os.close(write)
    with os.fdopen(read) as out:
        output = out.read()
    return process, supervisor._wait(process, HANG), output


def test_a_playground_command_is_forked_with_the_output_of_a_fresh_one(servers):
    process, code, output = run(servers, VERSION)
    fresh = subprocess.run(VERSION, env=ENV, capture_output=True, text=True, timeout=HANG)
    assert isinstance(process, ForkedProcess)
    assert (code, output) == (fresh.returncode, fresh.stdout + fresh.stderr) and output.startswith("playground ")


def test_any_other_command_starts_in_a_fresh_interpreter_without_a_server():
    notes: list[str] = []
    pool = CommandServers(notes.append, TRIAL_PRELOAD)
    process, code, output = run(pool, [sys.executable, "-c", "import os; print(os.getppid())"])
    assert isinstance(process, subprocess.Popen) and (code, output) == (0, f"{os.getpid()}\n")
    assert pool._servers == {} and notes == []


def test_only_a_startup_variable_asks_for_another_server(servers):
    first = run(servers, VERSION, dict(ENV, PLAYGROUND_ATTEMPT="1", CUDA_VISIBLE_DEVICES="0"))[0]
    again = run(servers, VERSION, dict(ENV, PLAYGROUND_ATTEMPT="2", CUDA_VISIBLE_DEVICES="1"))[0]
    other = run(servers, VERSION, dict(ENV, OMP_NUM_THREADS="3"))[0]
    assert first.server_pid == again.server_pid != other.server_pid


def test_the_server_outlives_the_thread_that_started_it(servers):
    """A sweep slot's thread starts the agent's server, and may end long before the agent: a parent-death signal
    would end the server with it."""
    first = []
    thread = threading.Thread(target=lambda: first.append(run(servers, VERSION)[0]))
    thread.start()
    thread.join()
    time.sleep(0.5)
    later = run(servers, VERSION)[0]
    assert isinstance(later, ForkedProcess) and later.server_pid == first[0].server_pid and servers.notes == []


def test_a_killed_server_means_a_fresh_interpreter_then_a_new_server():
    notes: list[str] = []
    pool = CommandServers(notes.append, TRIAL_PRELOAD)
    try:
        first = run(pool, VERSION)[0]
        killed = first.server_pid
        os.kill(killed, signal.SIGKILL)
        _wait_gone(killed)
        process, code, output = run(pool, VERSION)
        assert isinstance(process, subprocess.Popen) and code == 0 and output.startswith("playground ")
        assert len(notes) == 1 and f"pid {killed}" in notes[0] and "fresh interpreter" in notes[0], notes
        later = run(pool, VERSION)[0]
        assert isinstance(later, ForkedProcess) and later.server_pid != killed
    finally:
        pool.close()


def test_a_hung_server_is_given_up_after_its_answer_time_never_waited_for():
    notes: list[str] = []
    pool = CommandServers(notes.append, TRIAL_PRELOAD, reply_seconds=1.0)
    try:
        hung = run(pool, VERSION)[0].server_pid
        os.kill(hung, signal.SIGSTOP)
        started = time.monotonic()
        process, code, _ = run(pool, VERSION)
        assert isinstance(process, subprocess.Popen) and code == 0
        assert time.monotonic() - started < HANG / 10
        assert "no answer within 1 s" in notes[0], notes
        _wait_gone(hung)      # killed: a stopped server is not left behind
    finally:
        pool.close()


def test_a_server_whose_imports_print_is_refused():
    """PYTHONVERBOSE: every import prints a line, which a forked command would not print again."""
    notes: list[str] = []
    pool = CommandServers(notes.append, TRIAL_PRELOAD)
    try:
        process, code, _ = run(pool, VERSION, dict(ENV, PYTHONVERBOSE="1"))
        assert isinstance(process, subprocess.Popen) and code == 0
        assert "its imports printed something" in notes[0], notes
    finally:
        pool.close()


def test_after_repeated_failures_every_command_starts_fresh():
    notes: list[str] = []
    pool = CommandServers(notes.append, TRIAL_PRELOAD, ready_seconds=0.0)    # no server is ever ready in time
    try:
        processes = [run(pool, VERSION)[0] for _ in range(MAX_FAILURES + 2)]
        assert all(isinstance(p, subprocess.Popen) for p in processes)
        assert len(notes) == MAX_FAILURES and "every later one too" in notes[-1], notes
    finally:
        pool.close()


def test_nothing_the_server_imports_reads_the_environment_on_import():
    """The per-launch variables (command_server.per_launch) may differ between the server and a command only
    because no module it imports reads the environment at its top level (in functions it reads the command's)."""
    listed = subprocess.run([sys.executable, "-c", "import sys\nfrom playground.processes import command_server\n"
                             f"assert command_server._preload(*{(TRIAL_PRELOAD['modules'], TRIAL_PRELOAD['packages'])!r}) is None\n"
                             "print('\\n'.join(sorted(sys.modules)))"],
                            capture_output=True, text=True, check=True, timeout=HANG, cwd=str(REPO))
    ours = [name for name in listed.stdout.split() if name == "playground" or name.startswith("playground.")]
    assert "playground.launch.worker" in ours and "playground.commands.sweep" in ours
    readers = [name for name in ours if _reads_environment_on_import(name)]
    assert readers == []
    assert per_launch("PLAYGROUND_ATTEMPT") and per_launch("CUDA_VISIBLE_DEVICES") and not per_launch("OMP_NUM_THREADS")


def _reads_environment_on_import(module: str) -> bool:
    path = REPO.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [node for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return any(isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb")
               or isinstance(node, ast.Name) and node.id in ("environ", "getenv")
               for statement in top for node in ast.walk(statement))


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + HANG
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.02)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
