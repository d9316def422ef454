"""A stop (SIGTERM, SIGINT) that arrives while a training command is still starting: kept, not fatal.

A scheduler's SIGTERM can come at any moment, also while a run imports torch, reads its opts or builds its network,
before the run's own handler exists (checkpoints/preemption.py in a rank, supervisor.stop_signals_call in a launcher).
Left to the default, it ends the process with 143 and no checkpoint, and a requeue recipe that looks for exit 75 does
not requeue. So an entry point `hold()`s from its first line: the first stop signal is kept; the handler installed
later `take()`s it and acts as if the signal had come just then (the run stops at its first boundary with a
checkpoint, exit 75; a launcher passes it on to its ranks). A second signal REPEAT_GRACE_SECONDS or more after the
first stops the process at once (KeyboardInterrupt), as the run's own handler does, for a person who means it.

A kept signal belongs to the process it came to: a process forked while its parent held one (the ranks, from the
fork server, which holds and never acts: rank_server.py) starts with none, and keeps the first that comes to it,
even before its own code runs.

A command that installs no handler of its own (`playground sweep status`, `eval`) is `release()`d before it starts:
the default handling is back, and a signal kept until then ends the process now, as it would have.
"""
from __future__ import annotations

import os
import signal
import threading
import time

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
REPEAT_GRACE_SECONDS = 2.0

_held = False
_interrupts = True
_pending: tuple[int, float, int] | None = None   # (signal number, time.monotonic() when it came, pid it came to)


def hold(interrupt_on_repeat: bool = True) -> None:
    """From now on this process keeps the first SIGTERM/SIGINT (main thread only: Python's handlers run there);
    `interrupt_on_repeat=False`: a later one is ignored too (the fork server, which must outlive them)."""
    global _held, _interrupts
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in STOP_SIGNALS:
        signal.signal(sig, _keep)
    _held, _interrupts = True, interrupt_on_repeat
    # a process started with them blocked (supervisor.start_child(holds_stop=True), the rank fork server) gets one
    # that came while it started now, kept
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _keep(signum: int, _frame: object) -> None:
    global _pending
    now = time.monotonic()
    if _pending is None or _pending[2] != os.getpid():
        _pending = (signum, now, os.getpid())
    elif _interrupts and now - _pending[1] >= REPEAT_GRACE_SECONDS:
        _default_handlers()
        raise KeyboardInterrupt(f"second signal ({signal.Signals(signum).name}) while starting")


def take() -> tuple[int, float] | None:
    """The kept (signal, monotonic time) if one came, else None; either way nothing is kept any more. Whoever
    takes it has just installed its own handler, which sees the signals from now on."""
    global _pending
    pending, _pending = _pending, None
    return pending[:2] if pending is not None and pending[2] == os.getpid() else None


def release() -> None:
    """Default handling of SIGTERM/SIGINT again; a signal kept until now ends the process as it would have."""
    if not _held:
        return
    pending = take()
    _default_handlers()
    if pending is not None:
        signal.raise_signal(pending[0])


def _default_handlers() -> None:
    global _held, _interrupts
    _held, _interrupts = False, True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
