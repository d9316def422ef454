"""When one rank fails, the others say which one and why, instead of each printing a broken-pipe traceback.

A rank whose own code fails leaves its "last words" (its rank and error) in the rendezvous store before it
tears down the process group. A rank whose collective then breaks (the peer's connection closed, or the
collective timed out) is a bystander: it looks in the store for last words, waits a moment for them, and
reports the failed rank. A rank that was killed (SIGKILL, out of memory) leaves no words; bystanders then
say so, and the launcher on the dead rank's host names it from its exit status.
"""
from __future__ import annotations

import re
import time
from typing import Any

import torch.distributed as dist

_KEY = "playground/failed/{}"
_PEER_LOST_SIGNS = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "Timed out",
                    "timed out", "Socket Timeout", "NCCL communicator was aborted", "ProcessGroupGloo",
                    "Application timeout caused pair closure", "pair closure")


class PeerLost(RuntimeError):
    """This rank stopped because another rank died or hung; the message names it when it could be learned."""


def is_peer_lost(error: BaseException) -> bool:
    """Whether `error` is a broken or timed-out collective rather than a failure of this rank's own work."""
    text = str(error)
    return isinstance(error, dist.DistError) or (isinstance(error, RuntimeError) and any(
        sign in text for sign in _PEER_LOST_SIGNS))


def leave_last_words(rank: int, error: BaseException) -> None:
    """Record this rank's failure in the store so the other ranks can name it (best effort, never raises)."""
    store = _store()
    if store is None:
        return
    lines = str(error).strip().splitlines()
    try:
        store.set(_KEY.format(rank), f"{type(error).__name__}: {lines[-1] if lines else ''}"[:500])
    except Exception:  # the store may be gone with the failed peer; the launcher still reports this rank
        pass


def explain_peer_lost(rank: int, world_size: int, error: BaseException, wait_s: float = 3.0) -> PeerLost:
    """A PeerLost naming the rank that failed, read from its last words (waiting up to `wait_s` for them)."""
    store = _store()
    words = _read_words(store, rank, world_size, wait_s) if store is not None else {}
    first = _gist(error)
    if words:
        failed = "; ".join(f"rank {r} failed: {text}" for r, text in sorted(words.items()))
        return PeerLost(f"stopped because {failed}")
    return PeerLost(f"lost contact with another rank ({first}). It died without reporting an error (killed, "
                    "out of memory, or its host went down) or hangs; the output on its host names it")


def _gist(error: BaseException) -> str:
    """The first line of a backend error without the source location and the boilerplate advice."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    first = re.sub(r"^\[[^\]]*\]\s*", "", first).split(". This is typically")[0]
    return first[:300]


def _read_words(store: Any, rank: int, world_size: int, wait_s: float) -> dict[int, str]:
    deadline = time.monotonic() + wait_s
    while True:
        words = {}
        for other in range(world_size):
            if other == rank:
                continue
            key = _KEY.format(other)
            try:
                if store.check([key]):
                    words[other] = store.get(key).decode(errors="replace")
            except Exception:  # a store served by a dead rank 0 cannot answer
                return words
        if words or time.monotonic() >= deadline:
            return words
        time.sleep(0.2)


def _store() -> Any:
    if not (dist.is_available() and dist.is_initialized()):
        return None
    try:
        # The default group's store: the rendezvous every rank shares (no public accessor exists).
        return dist.distributed_c10d._get_default_store()
    except Exception:
        return None
