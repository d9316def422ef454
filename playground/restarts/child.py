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

# argv: parent pid, the command's LC_CTYPE ("" unset, "=value" set), then the command. If the parent died
# before prctl, no signal would ever come: check getppid. What this interpreter changed for itself is undone
# before exec: the signals it ignores (exec keeps ignored signals) and LC_CTYPE, which it sets under the C locale.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os.kill(os.getpid(), signal.SIGTERM)\n"
    "for name in ('SIGPIPE', 'SIGXFZ', 'SIGXFSZ'):\n"
    "    if hasattr(signal, name):\n"
    "        signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
    "if sys.argv[2]:\n"
    "    os.environ['LC_CTYPE'] = sys.argv[2][1:]\n"
    "else:\n"
    "    os.environ.pop('LC_CTYPE', None)\n"
    "try:\n"
    "    os.execvp(sys.argv[3], sys.argv[3:])\n"
    "except OSError as error:\n"
    "    sys.stderr.write(f'playground: cannot start {sys.argv[3]}: {error.strerror}\\n')\n"
    "    os._exit(127)\n"
)


def start_child(command: list[str], **popen: Any) -> subprocess.Popen:
    """Popen(command, **popen) whose process gets SIGTERM when this one dies; FileNotFoundError as Popen's when
    command[0] cannot be found."""
    env = popen.get("env")
    environ = os.environ if env is None else env
    if shutil.which(command[0], path=environ.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such file or directory", command[0])
    lc_ctype = "=" + environ["LC_CTYPE"] if "LC_CTYPE" in environ else ""
    # -I -S: no user site, no PYTHON* variables, no site-packages: only the standard library, in a few ms
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), lc_ctype,
                             *command], **popen)
