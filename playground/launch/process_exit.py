"""Ending a command's process (or a spawned rank's) without a second of garbage collection at shutdown.

A process that imported torch tracks about 300,000 objects (torch, the compiler stack that torch.optim and DDP
import, sympy, our components). Python's shutdown runs the cyclic collector over all of them: 0.7-1.3 s per
process, paid by every command and by every spawned rank before its launcher may end. Call this only where the
process ends next, never from a function a library user calls in a long-lived process (`playground.api.run`):
frozen objects are never collected.
"""
from __future__ import annotations

import gc
import io

_BUFFERED = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair)


def freeze_for_exit() -> None:
    """Flush every open file, free the reference cycles that are garbage now, then exempt every live object
    from the collector.

    Shutdown then runs as before (atexit handlers such as logging's flush and close, finalizers of objects freed
    by reference counting, closing of the standard streams), except that reference cycles among the objects
    alive now are never collected: their finalizers do not run, and the operating system reclaims their memory
    and descriptors. What such a finalizer could still have written, an open file's buffer, is flushed first
    (a collector finalizing a file in a cycle may close its descriptor before its buffer: CPython bpo-17852).

    When a full collection has just run (the run command's launch() frees the trainer with one) and the
    collector has not run since (gc.get_count() is (n, 0, 0): fewer objects made since than its first
    threshold), only those young objects are collected, not the whole heap again (about 0.2 s for the 365,000
    objects of a run). A cycle among older objects that became garbage in those last few steps is then treated
    as one still alive.
    """
    gc.disable()   # from here the collector runs only when told: an automatic pass could free a file before its flush
    for thing in gc.get_objects():
        # the type itself: isinstance would also ask proxies for their __class__ (torch warns on some)
        if issubclass(type(thing), _BUFFERED):
            try:
                if not thing.closed and thing.writable():
                    thing.flush()
            except (OSError, ValueError):    # a closed pipe, a detached buffer: nothing to keep
                pass
    gc.collect(0 if gc.get_count()[1:] == (0, 0) else 2)
    gc.freeze()
