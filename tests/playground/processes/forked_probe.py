"""A command that reports, as one JSON line on stdout, what a process started as `python -m
tests.playground.processes.forked_probe ACTION...` sees of itself, then does ACTION: run fresh and forked from a
command server, the two reports must agree (test_command_server.py). Only `report` and `pollute` print it.

Actions: `report` (the report, nothing else); `pollute` (the report, then change everything a process may change
in itself, for a later command forked from the same server to not see); `exit N`; `raise` (a ValueError,
uncaught); `interrupt` (a KeyboardInterrupt, uncaught); `kill` (SIGKILL to itself); `print` (lines to stdout and
stderr in turn); `wait FILE` (write `stopped by SIGTERM` to FILE on SIGTERM and exit 75; wait up to a minute).
"""
from __future__ import annotations

import ctypes
import json
import os
import random
import signal
import sys
import threading
import time

PR_GET_PDEATHSIG = 2


def report() -> dict:
    import logging
    import multiprocessing
    import numpy
    streams = {}
    for name in ("stdin", "stdout", "stderr"):
        stream = getattr(sys, name)
        raw = stream.buffer.raw if hasattr(stream.buffer, "raw") else stream.buffer
        streams[name] = {"encoding": stream.encoding, "errors": stream.errors, "line_buffering": stream.line_buffering,
                         "write_through": stream.write_through, "mode": stream.mode, "name": raw.name,
                         "buffer": type(stream.buffer).__name__, "fileno": stream.fileno(),
                         "same_as_dunder": stream is getattr(sys, f"__{name}__")}
    death = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(PR_GET_PDEATHSIG, ctypes.byref(death), 0, 0, 0)
    with open("/proc/self/status", encoding="ascii") as status:
        umask = next(line.split()[1] for line in status if line.startswith("Umask:"))
    fds = sorted(fd for fd in map(int, os.listdir("/proc/self/fd")) if _is_open(fd))   # not the listing's own
    return {
        "argv": sys.argv, "orig_argv": sys.orig_argv, "path": sys.path, "cwd": os.getcwd(), "env": dict(os.environ),
        "umask": umask, "pgid": os.getpgrp(), "affinity": sorted(os.sched_getaffinity(0)),
        "signals": {signal.Signals(s).name: repr(signal.getsignal(s)) for s in sorted(signal.valid_signals())
                    if s in signal.Signals._value2member_map_},
        "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "parent_death_signal": death.value, "fds": fds, "streams": streams,
        "main": sorted(k for k in vars(sys.modules["__main__"]) if k.startswith("__")),
        "main_is_this": sys.modules["__main__"].__dict__ is globals(), "threads": threading.active_count(),
        "excepthook_is_default": sys.excepthook is sys.__excepthook__,
        "leaked_global": getattr(sys.modules.get("playground.cli"), "LEAKED", None),
        "logging_handlers": len(logging.getLogger().handlers),
        "logging_started_ago": time.time() - logging._startTime,
        "random": random.random(), "numpy_random": float(numpy.random.random()),
        "authkey": multiprocessing.current_process().authkey.hex(),
    }


def _is_open(fd: int) -> bool:
    """The listing's own descriptor, closed once listed, is listed too."""
    return os.path.exists(f"/proc/self/fd/{fd}")


def pollute() -> None:
    import logging
    import playground.cli
    os.environ["LEAKED"] = "1"
    os.chdir("/")
    os.umask(0o077)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
    os.open(os.devnull, os.O_RDONLY)
    logging.getLogger().addHandler(logging.StreamHandler())
    playground.cli.LEAKED = "yes"
    sys.path.append("/leaked")
    random.seed(0)


def wait(path: str) -> None:
    from playground.processes.exit_codes import EXIT_STOPPED

    def stopped(_signum, _frame):
        with open(path, "w") as handle:
            handle.write("stopped by SIGTERM")
        sys.exit(EXIT_STOPPED)

    signal.signal(signal.SIGTERM, stopped)
    print("waiting", flush=True)
    time.sleep(60)


def main(action: list[str]) -> None:
    if action[0] in ("report", "pollute"):
        print(json.dumps(report()), flush=True)
    if action[0] == "pollute":
        pollute()
    elif action[0] == "exit":
        sys.exit(int(action[1]))
    elif action[0] == "raise":
        raise ValueError("the probe raised")
    elif action[0] == "interrupt":
        raise KeyboardInterrupt
    elif action[0] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action[0] == "print":
        for line in range(3):
            print(f"out {line}")
            print(f"err {line}", file=sys.stderr)
    elif action[0] == "wait":
        wait(action[1])


if __name__ == "__main__":
    main(sys.argv[1:] or ["report"])
