"""Ending a command's process (or a spawned rank's) without a second of garbage collection at shutdown.

A process that imported torch tracks about 300,000 objects (torch, its compiler stack that torch.optim and DDP
import, sympy, our components). Python's shutdown runs the cyclic collector over all of them several times:
about a second per process, paid by every command and by every spawned rank before its launcher may end.
Call this only where the process ends next, never from a function a library user calls in a long-lived
process (`playground.api.run`): frozen objects are never collected.
"""
from __future__ import annotations

import gc


def freeze_for_exit() -> None:
    """Free the reference cycles that are garbage now, then exempt every live object from the collector.

    Everything else at shutdown runs as before: atexit handlers (logging's flush and close), finalizers of
    objects freed by reference counting, stream flushing. Only cycles among the objects alive now are left to
    the operating system, which reclaims the whole process anyway.
    """
    gc.collect()
    gc.freeze()
