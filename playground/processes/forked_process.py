"""A command forked by a command server (command_server.py), seen from the process that asked for it: the part of
subprocess.Popen's surface the supervisor uses (`pid`, `returncode`, `poll`, `wait`, `signal`).

The command is the child of a small waiter process the server forked for it; the waiter reports the command's exit
status over `channel` (a SOCK_SEQPACKET socket: one JSON message) and keeps the ended command unreaped until this
side has read it, so `pid` names the command, and no other process, for as long as `returncode` is None. Signals
go through a pidfd, which names the command even after its end. Should the waiter die first (killed from outside),
the command gets SIGTERM from its parent's death (it checkpoints and exits 75) and is waited for through the pidfd;
its exit status is then unknown and reported as LOST_STATUS, a death by SIGKILL; so it is when the command has
ended and its waiter has not reported it within REPORT_SECONDS (a stopped waiter never hangs its client).
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import threading
import time

LOST_STATUS = -signal.SIGKILL
REPORT_SECONDS = 10.0     # from the command's end to its waiter's report: milliseconds, unless the waiter is stopped


class ForkedProcess:
    """A running command forked by a command server; `pid` is the command's own."""

    def __init__(self, args: list[str], pid: int, channel: socket.socket, pidfd: int, server_pid: int) -> None:
        self.args, self.pid, self.server_pid = args, pid, server_pid
        self.returncode: int | None = None
        self.status_lost = False          # the waiter ended, or stalled, without reporting: LOST_STATUS
        self._ended_at: float | None = None   # when the command was seen to end, its report not yet read
        self._channel: socket.socket | None = channel
        self._pidfd: int | None = pidfd
        self._waiting = threading.Lock()  # one thread at a time reads the channel
        self._state = threading.Lock()    # the end, and a signal, never at once: no signal after the end

    def poll(self) -> int | None:
        """The exit code if the command has ended (-N: killed by signal N), else None; never blocks (while another
        thread waits for it, None)."""
        if self.returncode is None and self._waiting.acquire(blocking=False):
            try:
                self._read(0.0)
            finally:
                self._waiting.release()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The exit code once the command has ended; subprocess.TimeoutExpired after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.returncode is None:
            if not self._waiting.acquire(timeout=-1 if timeout is None else timeout):
                raise subprocess.TimeoutExpired(self.args, timeout)
            try:
                self._read(None if deadline is None else max(0.0, deadline - time.monotonic()))
            finally:
                self._waiting.release()
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def signal(self, sig: int) -> bool:
        """Send `sig` to the command if it has not ended; whether it was sent."""
        with self._state:
            if self.returncode is not None or self._pidfd is None:
                return False
            try:
                signal.pidfd_send_signal(self._pidfd, sig)
            except ProcessLookupError:
                return False
            return True

    def _read(self, timeout: float | None) -> None:
        """Wait up to `timeout` seconds (None: no limit) for the waiter's report of the command's end; for the end
        itself where the waiter is gone, or has not reported REPORT_SECONDS after the end (stopped, say)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            watched = [self._pidfd] if self.status_lost else [self._channel]
            if not self.status_lost and self._ended_at is None:
                watched.append(self._pidfd)
            left = None if deadline is None else deadline - time.monotonic()
            if self._ended_at is not None:
                report_left = self._ended_at + REPORT_SECONDS - time.monotonic()
                left = report_left if left is None else min(left, report_left)
            ready = select.select(watched, [], [], left) if left is None or left > 0 else ([], [], [])
            if self._channel in ready[0]:
                try:
                    message = self._channel.recv(4096)
                except OSError:
                    message = b""
                if message:
                    self._ended(int(json.loads(message)["returncode"]))
                    return
                self.status_lost = True
            elif self._pidfd in ready[0]:
                if self.status_lost:
                    self._ended(LOST_STATUS)
                    return
                self._ended_at = time.monotonic()
            elif self._ended_at is not None and time.monotonic() >= self._ended_at + REPORT_SECONDS:
                self.status_lost = True
                self._ended(LOST_STATUS)
                return
            elif deadline is not None and time.monotonic() >= deadline:
                return

    def _ended(self, code: int) -> None:
        with self._state:
            self.returncode = code
            if self._channel is not None:
                self._channel.close()      # the waiter reaps the command now
                self._channel = None
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
