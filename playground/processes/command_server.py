"""A server that runs `python -m playground ARGS` commands in processes forked from an interpreter that has
imported torch and the run command's modules once: a sweep's trial starts in a fraction of a second instead of
importing torch (about 3 s of CPU). Started by command_servers.py as
`python -m playground.processes.command_server FD PRELOAD`, exactly as a fresh command would be
(supervisor.start_child) and with the environment and working folder of the commands it will run; FD is a
SOCK_SEQPACKET socket to its client, which it serves until the client closes it or dies. PRELOAD is a JSON
`Preload` (command_servers.py): the modules to import, and the packages whose every module to import; the client
names them (for sweep trials, sweeps/agents/trial_process.py), so this floor names no module above it.

Each request (a JSON message with the command, its environment, folder and umask, and four descriptors: stdin,
stdout, stderr and a channel socket) gets a waiter, forked from the server; the waiter forks the command, sends
{"pid"} on the channel, lets the command go on "go" (without it the command ends before running anything: a
client that gave up on a slow server never has two copies of a trial), then sends {"returncode"} and reaps the
command once the client has read it and closed the channel. A client that dies closes the channel: the waiter
ends, and the command gets SIGTERM (its parent's death), as a fresh command gets when its client dies.

The command's process is made what a fresh `python -m playground ARGS` started by the client would be
(`_become`): only its three standard descriptors and those the imports opened; signal dispositions and mask as
they were when the server's interpreter started; its own environment (os.environ emptied and refilled), folder,
umask and CPU affinity, in its client's process group; sys.argv, sys.orig_argv and sys.path of a fresh
interpreter, a new `__main__`, the standard streams built as the interpreter builds them, import caches and
linecache emptied; new random states where an interpreter draws them at start (random's, reseeded by Python on
fork, numpy's global RandomState, multiprocessing's authkey), logging's start time. torch's generator is left as
it is: nothing here draws from it, so it holds torch's fixed default seed, as in a fresh interpreter. The objects
of the server's imports stay frozen out of the cyclic collector (gc.freeze: they are never garbage). What cannot
be renewed is the hash seed of str (one per server: a command that depends on the order of a set of strings is
not reproducible anyway; PYTHONHASHSEED fixes it). The command then runs through runpy at this module's top
level, so the interpreter ends it as it ends a fresh one: SystemExit's code, a traceback and 1, KeyboardInterrupt's
SIGINT; atexit, the standard streams flushed, finalization.

The server refuses to serve (its first message is {"error"}) when its imports print anything, start a Python
thread, start CUDA's driver or import torch._dynamo (which a run that does not compile never imports): a command
forked from it would differ from a fresh one. Only the per-launch variables (`per_launch`) may differ between the
server's environment and a command's: nothing it imports reads them at import (tests/playground/processes).
"""
from __future__ import annotations

import builtins
import fcntl
import gc
import importlib
import io
import json
import linecache
import os
import pkgutil
import select
import signal
import socket
import sys
import threading
import types
from typing import Iterable

from playground.processes import supervisor
from playground.processes.die_with_parent import never_with_parent
from playground.processes.exit_codes import EXIT_DONE, EXIT_FAILED

PER_LAUNCH_PREFIXES = ("PLAYGROUND_",)             # the product's own: read when it runs, never on import
PER_LAUNCH = frozenset({"CUDA_VISIBLE_DEVICES"})   # read when CUDA initialises, which a server never does
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
MAX_REQUEST = 1 << 20
GO = b"go"

_START_PATH = list(sys.path)
_START_SIGNALS = {sig: signal.getsignal(sig) for sig in signal.valid_signals()}
_START_MASK = signal.pthread_sigmask(signal.SIG_BLOCK, [])


def per_launch(name: str) -> bool:
    """Whether environment variable `name` may differ between the server and a command it forks."""
    return name in PER_LAUNCH or name.startswith(PER_LAUNCH_PREFIXES)


def main(argv: list[str]) -> dict | None:
    """Serve the client on socket FD (argv[0]) with the imports of PRELOAD (argv[1], JSON) until it closes it;
    returns only in a forked command's process, the request that command is."""
    control = socket.socket(fileno=int(argv[0]))
    preload = json.loads(argv[1]) if len(argv) > 1 else {}
    # This server ends when its client closes the socket, or dies (the kernel closes it then), not with the client's
    # thread that started it (a parent-death signal would). A stop for the whole process group (Ctrl-C,
    # `kill -- -PGID`) is for the client and its commands.
    never_with_parent()
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    # Waiters are reaped as they end, so that their commands' CPU time counts in this server's children, and the
    # server's in its client's (the kernel's own reaping, SIGCHLD ignored, would drop it).
    signal.signal(signal.SIGCHLD, _reap_waiters)
    problem = _preload(preload.get("modules", ()), preload.get("packages", ()))
    for stream in (sys.stdout, sys.stderr):
        stream.flush()     # what the imports printed reaches the client before the answer (it then refuses)
    _send(control, {"error": problem[:2000]} if problem else {"ready": os.getpid()})
    if problem:
        return None
    keep = _open_descriptors() - {0, 1, 2, control.fileno()}
    # Out of the cyclic collector: a command's collections then scan only its own objects, and leave the pages it
    # shares with this server unwritten (half the CPU a trial spends before its first step). Objects made by
    # imports are garbage never, as an ending command's objects are frozen too (launch/process_exit.py).
    gc.freeze()
    while True:
        message, fds, flags, _ = socket.recv_fds(control, MAX_REQUEST, 4)
        if not message:
            return None
        if flags & socket.MSG_TRUNC or len(fds) != 4:
            _close(fds)       # not a request of command_servers.py: its channel, if any, sees the end
            continue
        if supervisor.fork_here() == 0:
            control.close()
            return _waiter(json.loads(message), fds, keep)
        _close(fds)


def _reap_waiters(_signum: int, _frame: object) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _preload(modules: Iterable[str], packages: Iterable[str]) -> str | None:
    """Import `modules`, and every module of `packages`; what makes a command forked from here differ from a
    fresh one, if anything does."""
    try:
        for name in modules:
            importlib.import_module(name)
        for package in packages:
            for module in pkgutil.iter_modules(importlib.import_module(package).__path__, package + "."):
                importlib.import_module(module.name)
    except Exception as error:     # a broken installation: the client starts fresh interpreters
        return f"its imports failed: {type(error).__name__}: {error}"
    if threading.active_count() > 1:
        return f"its imports started {threading.active_count() - 1} Python thread(s)"
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized() or _cuda_driver_loaded():
        return "its imports started CUDA (a forked process cannot use it, and CUDA_VISIBLE_DEVICES was read)"
    if "torch._dynamo" in sys.modules:
        return "its imports imported torch._dynamo"
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError as error:
        return f"no process descriptors on this system (Linux 5.3 or later): {error}"
    return None


def _cuda_driver_loaded() -> bool:
    """Whether CUDA's driver has started here (a device count starts it, which reads CUDA_VISIBLE_DEVICES): it
    holds the GPU's device files open. Its library may be loaded on import; that alone starts nothing."""
    for fd in _open_descriptors():
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/dev/nvidia"):
                return True
        except OSError:
            pass
    return False


def _waiter(request: dict, fds: list[int], keep: set[int]) -> dict:
    """In the waiter: fork the command, report its pid, let it go, report its end; returns only in the command."""
    channel = socket.socket(fileno=fds[3])
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    go_read, go_write = os.pipe()
    # The command starts with the stop signals blocked, not only ignored as here: one its client sends before the
    # command has its own dispositions (`_become`) waits for them, as it reaches a fresh interpreter that starts.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = supervisor.fork_here(parent_death=signal.SIGTERM)
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if pid == 0:
        os.close(go_write)
        channel.close()
        if os.read(go_read, len(GO)) != GO:     # the client gave up on this request: nothing runs
            os._exit(EXIT_FAILED)
        os.close(go_read)
        _become(request, fds[:3], keep)
        return request
    os.close(go_read)
    _close(fds[:3])
    try:
        _send(channel, {"pid": pid})
        if channel.recv(16) != GO:
            os.close(go_write)
            os.waitpid(pid, 0)
            os._exit(EXIT_DONE)
        os.write(go_write, GO)
        os.close(go_write)
        _report_end(channel, pid)
    except OSError:
        pass
    os._exit(EXIT_DONE)


def _report_end(channel: socket.socket, pid: int) -> None:
    """Send the command's exit code once it has ended, then reap it after the client has read it (closed the
    channel): until then its pid is not free for another process. The client's end first: return (the command
    gets SIGTERM as this waiter ends)."""
    pidfd = os.pidfd_open(pid)
    while True:
        ready = select.select([channel, pidfd], [], [])[0]
        if pidfd in ready:
            ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            code = ended.si_status if ended.si_code == os.CLD_EXITED else -ended.si_status
            _send(channel, {"returncode": code})
            channel.recv(16)
            os.waitpid(pid, 0)
            return
        if not channel.recv(16):
            return


def _become(request: dict, stdio: list[int], keep: set[int]) -> None:
    """Make this forked process what a fresh `python -m MODULE ARGS` of the request would be (module docstring)."""
    for sig, handler in _START_SIGNALS.items():
        if handler is not None and sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError):   # the C library's own real-time signals
                pass
    signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_SETMASK, _START_MASK)
    if os.getpgrp() != request["pgid"]:
        os.setpgid(0, request["pgid"])
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    _close(_open_descriptors() - keep - {0, 1, 2})
    os.umask(request["umask"])
    os.sched_setaffinity(0, request["affinity"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _standard_streams(buffered=not os.environ.get("PYTHONUNBUFFERED"))
    argv = request["argv"]
    sys.orig_argv = list(argv)
    sys.argv = ["-m", *argv[3:]]
    sys.path[:] = _START_PATH
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    linecache.clearcache()
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(__builtins__=builtins, __annotations__={})
    sys.modules["__main__"] = main_module
    _renew_random_states()


def _standard_streams(buffered: bool) -> None:
    """sys.stdin, stdout and stderr on descriptors 0-2 as the interpreter makes them at start (CPython's
    create_stdio), with the encodings and error handlers it chose for this server, which started as the command."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        template = getattr(sys, f"__{name}__")
        write = fd > 0
        buffering = 0 if write and not buffered else -1
        binary = io.open(fd, "wb" if write else "rb", buffering=buffering, closefd=False)
        raw = binary.raw if buffering else binary
        raw.name = f"<{name}>"
        stream = io.TextIOWrapper(binary, encoding=template.encoding, errors=template.errors, newline="\n",
                                  line_buffering=buffered and (raw.isatty() or fd == 2), write_through=not buffered)
        stream.mode = "w" if write else "r"
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _renew_random_states() -> None:
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    if "multiprocessing.process" in sys.modules:
        sys.modules["multiprocessing.process"].current_process().authkey = os.urandom(32)
    if "logging" in sys.modules:
        import logging
        import time
        logging._startTime = time.time()


def run(request: dict) -> None:
    """Run the command's module as `__main__` (this module's top level calls it, so an exception or SystemExit
    ends the process as it ends a fresh interpreter); a traceback printed for it starts where a fresh one's does."""
    import runpy
    try:
        runpy._run_module_as_main(request["argv"][2], alter_argv=True)
    except BaseException:
        if sys.excepthook is sys.__excepthook__:
            sys.excepthook = _from_the_command
        raise


def _from_the_command(kind: type, error: BaseException, trace: types.TracebackType | None) -> None:
    """sys.__excepthook__ without the frames of this server above the command's (those down to run())."""
    start = trace
    while start is not None and start.tb_frame.f_code is not run.__code__:
        start = start.tb_next
    if start is not None:
        trace = start.tb_next
        error.__traceback__ = trace       # what the printing reads, rather than its argument
    sys.__excepthook__(kind, error, trace)


def _open_descriptors() -> set[int]:
    """The descriptors open now (the listing's own, closed once listed, left out)."""
    return {fd for fd in map(int, os.listdir("/proc/self/fd")) if _is_open(fd)}


def _is_open(fd: int) -> bool:
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


def _send(channel: socket.socket, message: dict) -> None:
    channel.send(json.dumps(message).encode())


def _close(fds: Iterable[int]) -> None:
    for fd in fds:
        os.close(fd)


if __name__ == "__main__":
    _command = main(sys.argv[1:])
    if _command is None:
        os._exit(EXIT_DONE)     # the server: nothing to flush, and no second of collection at its end
    run(_command)
