"""Starts a run as a child process that dies with its parent (PR_SET_PDEATHSIG to SIGTERM: it checkpoints and
exits 75), so a killed sweep or supervisor leaves no run behind.

The death signal is set by a tiny interpreter that then execs the command in the same process (same pid), not
by a `preexec_fn`: that would make Popen fork instead of vfork, and fork runs the parent's pthread_atfork
handlers in the child. gRPC's (an agent talking to a `sweep serve` proxy) restart its poller thread there, which
then finds its epoll descriptor closed by close_fds and aborts the child before exec (SIGABRT, "epoll_wait error:
Bad file descriptor"). Without a preexec_fn, Popen uses vfork and no handler runs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Any

# argv: parent pid, then the command. If the parent died before prctl, no signal would ever come: check getppid.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os.kill(os.getpid(), signal.SIGTERM)\n"
    "try:\n"
    "    os.execvp(sys.argv[2], sys.argv[2:])\n"
    "except OSError as error:\n"
    "    sys.stderr.write(f'playground: cannot start {sys.argv[2]}: {error.strerror}\\n')\n"
    "    os._exit(127)\n"
)


def start_child(command: list[str], **popen: Any) -> subprocess.Popen:
    """Popen(command, **popen) whose process gets SIGTERM when this one dies; FileNotFoundError as Popen's when
    command[0] cannot be found."""
    env = popen.get("env")
    path = (os.environ if env is None else env).get("PATH", os.defpath)
    if shutil.which(command[0], path=path) is None:
        raise FileNotFoundError(2, "No such file or directory", command[0])
    # -I -S: no user site, no PYTHON* variables, no site-packages: only the standard library, in a few ms
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command],
                            **popen)
