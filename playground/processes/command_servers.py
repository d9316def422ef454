"""Playground commands forked from a command server (command_server.py) where they can be, started in a fresh
interpreter (supervisor.start_child) where they cannot: the sweep agent's trials (sweeps/agents/trial_process.py).

`CommandServers.start(command, env=..., stdin=..., stdout=..., stderr=...)` takes Popen's arguments and returns a
subprocess.Popen or a ForkedProcess, which the supervisor reads, signals and stops alike. A command is forked when
it is `[sys.executable, "-m", "playground", ...]` (anything else, a spec's `trial_program`, starts fresh), from the
server started with this process's working folder and the command's environment less its per-launch variables
(command_server.per_launch); that server is started by the first such command, which waits for it, and kept (the
SERVERS_KEPT most recently used). A server that cannot serve (its imports failed or would make a forked command
differ from a fresh one, it did not answer within READY_SECONDS or REPLY_SECONDS, it died) is stopped, with one
note, and that command starts fresh; the next command starts a new server, and after MAX_FAILURES every command
starts fresh. A command never waits on a server for longer than those bounds.
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from typing import IO, Any, Callable, Iterator, Mapping, Sequence, Union

from playground.processes import supervisor
from playground.processes.command_server import GO, per_launch
from playground.processes.forked_process import ForkedProcess

SERVER_MODULE = "playground.processes.command_server"
READY_SECONDS = 120.0   # a server's start: its imports, which a fresh interpreter would spend anyway
REPLY_SECONDS = 20.0    # a fork takes milliseconds, also on a loaded machine
MAX_FAILURES = 3
SERVERS_KEPT = 2
Started = Union[subprocess.Popen, ForkedProcess]
Stream = Union[None, int, IO[Any]]
# What a server imports before it serves: {"modules": [...], "packages": [...]} (every module of each package). The
# client names them (command_server.py names no module above processes/): for sweep trials, trial_process.py.
Preload = Mapping[str, Sequence[str]]


class ServerUnavailable(Exception):
    """This server cannot start the command; the message says why."""


def forkable(command: list[str]) -> bool:
    """Whether `command` is a playground command a server can fork here: `python -m playground ...`, on a system
    with process descriptors (Linux 5.3 and later), which follow a forked command."""
    return command[:3] == [sys.executable, "-m", "playground"] and hasattr(os, "pidfd_open")


class ForkServer:
    """One command server process, started now; `start` forks a command from it once it is ready."""

    def __init__(self, env: dict[str, str], cwd: str, preload: Preload, ready_seconds: float = READY_SECONDS,
                 reply_seconds: float = REPLY_SECONDS) -> None:
        self.ready_seconds, self.reply_seconds = ready_seconds, reply_seconds
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        output, output_end = os.pipe()
        try:
            self.process = supervisor.start_child(
                [sys.executable, "-m", SERVER_MODULE, str(theirs.fileno()), json.dumps(dict(preload))], env=env, cwd=cwd,
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=output_end, stderr=output_end)
        except BaseException:
            control.close()
            os.close(output)
            raise
        finally:
            theirs.close()
            os.close(output_end)
        os.set_blocking(output, False)
        self._control, self._output = control, output
        self._state: str | None = None     # None: starting; "ready"; else why it cannot serve
        self._starting = threading.Lock()
        self._sending = threading.Lock()

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self, argv: list[str], env: dict[str, str], cwd: str, stdio: list[int]) -> ForkedProcess:
        """Fork `argv` with `env`, in `cwd`, on descriptors `stdio` (stdin, stdout, stderr); ServerUnavailable if
        this server cannot (then nothing of the command runs)."""
        self._await_ready()
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {"argv": argv, "env": env, "cwd": cwd, "umask": _umask(), "pgid": os.getpgrp(),
                   "affinity": sorted(os.sched_getaffinity(0))}
        try:
            with self._sending:
                socket.send_fds(self._control, [json.dumps(request).encode()], [*stdio, theirs.fileno()])
            reply = _receive(channel, self.reply_seconds)
            if reply is None:
                raise ServerUnavailable(f"no answer within {self.reply_seconds:g} s")
            if not reply:
                raise ServerUnavailable(f"it ended ({self._ending()})")
            pid = int(json.loads(reply)["pid"])
            pidfd = os.pidfd_open(pid)      # before "go": the command cannot have ended yet
            channel.send(GO)
        except OSError as error:
            channel.close()
            raise ServerUnavailable(f"it is gone ({error.strerror or error}; {self._ending()})") from None
        except ServerUnavailable:
            channel.close()
            raise
        finally:
            theirs.close()
        return ForkedProcess(argv, pid, channel, pidfd, self.pid)

    def _await_ready(self) -> None:
        with self._starting:
            if self._state is None:
                self._state = self._first_answer()
        if self._state != "ready":
            raise ServerUnavailable(self._state)

    def _first_answer(self) -> str:
        """"ready", or why the server cannot serve. What it prints meanwhile is read (a server that prints much
        must not block on a full pipe): its imports may print nothing."""
        deadline = time.monotonic() + self.ready_seconds
        printed = b""
        watched = [self._control, self._output]
        while True:
            left = deadline - time.monotonic()
            readable = select.select(watched, [], [], left)[0] if left > 0 else []
            if self._output in readable:
                more = self._read_output()
                if not more:
                    watched.remove(self._output)     # its end: the server has ended, its socket tells how
                printed = (printed + more)[-500:]
                continue
            if not readable:
                return f"not ready within {self.ready_seconds:g} s"
            reply = _receive(self._control, 0.0)
            printed = (printed + self._read_output())[-500:]
            said = f": {printed.decode(errors='replace').strip()!r}" if printed.strip() else ""
            if not reply:
                return f"it ended while starting ({self._ending()}){said}"
            message = json.loads(reply)
            if "error" in message:
                return message["error"]
            return f"its imports printed something{said}" if said else "ready"

    def _read_output(self) -> bytes:
        try:
            return os.read(self._output, 1 << 16)
        except (BlockingIOError, OSError):
            return b""

    def _ending(self) -> str:
        code = self.process.poll()
        return "still running" if code is None else supervisor.ending(code)

    def close(self, grace: float = supervisor.GRACE_SECONDS) -> None:
        """End the server: its socket closed, it exits (killed after `grace` seconds). Commands forked from it
        run on."""
        self._control.close()
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            supervisor.kill(self.process)
        os.close(self._output)


class CommandServers:
    """The command servers of one process (a sweep agent), each started on first use; `note(line)` hears why a
    command started fresh."""

    def __init__(self, note: Callable[[str], None], preload: Preload, ready_seconds: float = READY_SECONDS,
                 reply_seconds: float = REPLY_SECONDS) -> None:
        self.note, self.preload = note, preload
        self.ready_seconds, self.reply_seconds = ready_seconds, reply_seconds
        self.failures = 0
        self._servers: OrderedDict[tuple, ForkServer] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, command: list[str], *, env: dict[str, str], stdin: Stream = None, stdout: Stream = None,
              stderr: Stream = None) -> Started:
        """Start `command` as supervisor.start_child(command, env=env, stdin=..., stdout=..., stderr=...) would,
        forked from a server when it can be."""
        try:
            cwd = os.getcwd()
        except OSError:     # a removed folder: a fresh interpreter starts in it all the same
            cwd = None
        server = self._server(env, cwd) if forkable(command) and cwd is not None else None
        if server is not None:
            try:
                with _descriptors(stdin, stdout, stderr) as stdio:
                    return server.start(command, env, cwd, stdio)
            except ServerUnavailable as why:
                self._failed(server, str(why))
        return supervisor.start_child(command, env=env, stdin=stdin, stdout=stdout, stderr=stderr)

    def _server(self, env: dict[str, str], cwd: str) -> ForkServer | None:
        startup = {name: value for name, value in env.items() if not per_launch(name)}
        key = (cwd, tuple(sorted(startup.items())))
        with self._lock:
            if self.failures >= MAX_FAILURES:
                return None
            server = self._servers.pop(key, None)
            if server is None:
                try:
                    server = ForkServer(startup, key[0], self.preload, self.ready_seconds, self.reply_seconds)
                except OSError as error:     # no process to be had (a limit on processes, memory)
                    failure = f"trial server cannot start: {error}"
                else:
                    failure = None
            if server is not None:
                self._servers[key] = server      # the most recently used last
                while len(self._servers) > SERVERS_KEPT:
                    self._servers.popitem(last=False)[1].close()
                return server
            later = self._count_failure()
        self.note(f"{failure}; this trial starts in a fresh interpreter, {later}")
        return None

    def _failed(self, server: ForkServer, why: str) -> None:
        with self._lock:
            if server not in self._servers.values():
                return      # another command noticed first
            del self._servers[next(k for k, s in self._servers.items() if s is server)]
            later = self._count_failure()
        self.note(f"trial server (pid {server.pid}) cannot start trials: {why}; this one starts in a fresh "
                  f"interpreter, {later}")
        server.close(grace=0.0)

    def _count_failure(self) -> str:
        self.failures += 1
        return "every later one too" if self.failures >= MAX_FAILURES else "the next starts a new server"

    def close(self) -> None:
        """End every server (the commands forked from them run on)."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), OrderedDict()
        for server in servers:
            server.close()


@contextlib.contextmanager
def _descriptors(stdin: Stream, stdout: Stream, stderr: Stream) -> Iterator[list[int]]:
    """Popen's stdin/stdout/stderr arguments (None, DEVNULL, STDOUT for stderr, a descriptor, a file) as the three
    descriptors a command gets."""
    opened: list[int] = []

    def descriptor(given: Stream, default: int) -> int:
        if given is None:
            return default
        if given == subprocess.DEVNULL:
            opened.append(os.open(os.devnull, os.O_RDWR))
            return opened[-1]
        return given if isinstance(given, int) else given.fileno()

    try:
        out = descriptor(stdout, 1)
        yield [descriptor(stdin, 0), out, out if stderr == subprocess.STDOUT else descriptor(stderr, 2)]
    finally:
        for fd in opened:
            os.close(fd)


def _receive(channel: socket.socket, seconds: float) -> bytes | None:
    """The next message on `channel`; b"" when the other end has closed; None when nothing came in `seconds`."""
    if not select.select([channel], [], [], seconds)[0]:
        return None
    try:
        return channel.recv(1 << 16)
    except OSError:
        return b""


def _umask() -> int:
    """This process's umask, read without setting it (os.umask would change it for every thread meanwhile)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
