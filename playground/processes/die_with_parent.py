"""A child process dies with its parent: Linux's parent-death signal (PR_SET_PDEATHSIG) set to SIGTERM, on
which a run checkpoints and exits 75. The one way the product sets it, used two ways by supervisor.py:

- imported: a rank calls die_with_parent(its fork server's pid) and watch_launcher(launcher pid) first
  (supervisor.start_ranks);
- run as a script: `python -I -S die_with_parent.py PARENT_PID LC_CTYPE COMMAND...` sets it, then execs
  COMMAND in the same process (same pid), so signals sent to Popen.pid reach the command (start_child).

A command server (command_server.py) clears it again (never_with_parent) and ends with its client's socket; the
commands it forks set it towards their waiter (supervisor.fork_here).

A script, not a `preexec_fn`: that would make Popen fork instead of vfork, and fork runs the parent's
pthread_atfork handlers in the child. gRPC's (an agent talking to a `sweep serve` proxy) restart its poller
thread there, which then finds its epoll descriptor closed by close_fds and aborts the child before exec
(SIGABRT, "epoll_wait error: Bad file descriptor"). Without a preexec_fn, Popen uses vfork and no handler runs.
It runs under -I -S (no user site, no PYTHON* variables, no site-packages: a few milliseconds), so it imports
the standard library only.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
_CANNOT_START = 127   # what a shell answers for a command it cannot run; Popen's callers read it so


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> None:
    """Get `sig` (SIGTERM) when this process's parent, `parent_pid`, dies; at once if it died already. No-op off
    Linux."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):   # no prctl here: no parent-death signal
        return
    if os.getppid() != parent_pid:      # the parent died before prctl: no signal would ever come
        os.kill(os.getpid(), sig)


def never_with_parent() -> None:
    """No parent-death signal for this process: it ends with its parent in another way. The signal comes when the
    parent's *thread* that started this process ends: wrong for a process a short-lived thread starts for the
    whole parent (a sweep slot's thread starting the agent's trial server). No-op off Linux."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_launcher_fd: int | None = None   # a pidfd of the launcher this rank watches (watch_launcher)
_launcher_pid: int | None = None


def launcher_pid() -> int | None:
    """The launcher this rank watches (watch_launcher), else None."""
    return _launcher_pid


def watch_launcher(launcher_pid: int) -> None:
    """A rank forked from a fork server (supervisor.start_ranks) has the server as its parent, not its launcher:
    it gets SIGTERM when the launcher ends through a thread waiting on the launcher's pidfd (Linux 5.3+), and
    `launcher_gone` tells that death from a SIGTERM somebody sent. At once if the launcher is already gone."""
    global _launcher_fd, _launcher_pid
    import select
    _launcher_pid = launcher_pid
    import threading
    try:
        _launcher_fd = os.pidfd_open(launcher_pid)
    except ProcessLookupError:
        os.kill(os.getpid(), signal.SIGTERM)
        return
    except (OSError, AttributeError):  # no pidfds here: the fork server's death still signals (die_with_parent)
        return

    def wait_for_death(fd: int) -> None:
        select.select([fd], [], [])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait_for_death, args=(_launcher_fd,), name="launcher-watch", daemon=True).start()


def launcher_gone() -> bool | None:
    """Whether the watched launcher has ended (a zombie counts as ended); None when none is watched."""
    if _launcher_fd is None:
        return None
    import select
    return bool(select.select([_launcher_fd], [], [], 0)[0])


def _exec(argv: list[str]) -> None:
    """argv: parent pid, the command's LC_CTYPE ("" unset, "=value" set), then the command. What this
    interpreter changed for itself is undone before exec: the signals it ignores (exec keeps ignored signals)
    and LC_CTYPE, which it sets under the C locale."""
    die_with_parent(int(argv[0]))
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    if argv[1]:
        os.environ["LC_CTYPE"] = argv[1][1:]
    else:
        os.environ.pop("LC_CTYPE", None)
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as error:
        sys.stderr.write(f"playground: cannot start {argv[2]}: {error.strerror}\n")
        os._exit(_CANNOT_START)


if __name__ == "__main__":
    _exec(sys.argv[1:])
