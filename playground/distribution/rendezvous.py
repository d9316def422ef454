"""What rendezvous components share: the run id every host agrees on, and a fresh meeting place per attempt.

A run id names one run on every host without them talking: `distributed.run_id` when set, else the
scheduler's job id (torchrun's TORCHELASTIC_RUN_ID, Slurm's SLURM_JOB_ID), else a hash of the opts, which
are the same on every host apart from the shard id.

A persistent store (a file on a shared folder) outlives a crashed attempt, and its old keys would make a new
attempt's ranks meet ghosts. `fresh_attempt_store` therefore counts joins in the store: the n-th join belongs
to attempt (n - 1) // world_size, and each attempt works under its own key prefix, so a file left behind by
a killed run is never reused. If a previous attempt died half-way through joining, the counts no longer line
up; the ranks then wait for each other and fail with a message that names the file instead of hanging.
"""
from __future__ import annotations

import datetime
import os
import socket
import time
from typing import Mapping

import torch.distributed as dist

from playground.options.digest import opts_digest
from playground.processes.exit_codes import UserError

JOINS_KEY = "playground/joins"
CLAIMS_KEY = "playground/claims"
COLLISION_KEY = "playground/collision"


class RendezvousError(UserError, RuntimeError):
    """The ranks of a run could not meet; the message says where and what to do."""


def run_id(opts: dict, env: Mapping[str, str] | None = None) -> str:
    """The identifier all hosts of this run compute alike (safe for a file name)."""
    env = os.environ if env is None else env
    given = opts["distributed"]["run_id"]
    if given:
        return _safe(given)
    for variable in ("TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"):
        if env.get(variable):
            return _safe(f"{variable.split('_')[0].lower()}-{env[variable]}")
    return f"opts-{opts_digest(opts)}"


def fresh_attempt_store(store: dist.Store, world_size: int, timeout_s: float, where: str) -> dist.Store:
    """A view of `store` private to this attempt of the run, once every rank of the attempt has joined."""
    store.set_timeout(datetime.timedelta(seconds=timeout_s))
    attempt = (store.add(JOINS_KEY, 1) - 1) // world_size
    prefix = f"playground/attempt{attempt}/"
    if store.add(prefix + "joined", 1) == world_size:
        store.set(prefix + "complete", "1")
    try:
        store.wait([prefix + "complete"])
    except RuntimeError as err:  # the store's timeout
        joined = int(store.add(prefix + "joined", 0))
        raise RendezvousError(
            f"rendezvous at {where}: only {joined} of {world_size} ranks joined attempt {attempt} within "
            f"{timeout_s:g} s. Check that every host was started (same opts, its own --shard-id). If an earlier "
            f"attempt was killed while its ranks were still joining, delete {where} (or set a new "
            f"distributed.run_id) and start all hosts again.") from err
    return dist.PrefixStore(prefix, store)


def claim_rank(store: dist.Store, rank: int, world_size: int, timeout_s: float) -> None:
    """Register this process as `rank` in the store, then wait until every rank has; two processes claiming one
    rank (a launcher that numbers ranks wrongly) make every process fail at once, naming both claimants, instead
    of the survivors waiting out the collective timeout."""
    me = f"{socket.gethostname()} pid {os.getpid()}"
    # torchrun's workers of a restarted attempt may share a store with the previous attempt's
    store = dist.PrefixStore(f"playground/restart{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/", store)
    claimants = store.add(f"playground/rank{rank}/claims", 1)
    if claimants == 1:
        store.set(f"playground/rank{rank}/who", me)
    else:
        first = _wait_get(store, f"playground/rank{rank}/who", timeout_s) or "another process"
        store.set(COLLISION_KEY, f"rank {rank} is claimed twice: by {first} and by {me}")
    store.add(CLAIMS_KEY, 1)
    deadline = time.monotonic() + timeout_s
    while True:
        if store.check([COLLISION_KEY]):
            raise RendezvousError(
                f"rendezvous: {store.get(COLLISION_KEY).decode()}. Every process of a run needs its own rank: check "
                "the launcher's numbering (under Slurm, one task per device gives SLURM_PROCID as the rank; "
                "--shard-id must differ on each host).")
        if int(store.add(CLAIMS_KEY, 0)) >= world_size:
            return
        if time.monotonic() > deadline:
            raise RendezvousError(f"rendezvous: only {int(store.add(CLAIMS_KEY, 0))} of {world_size} ranks arrived "
                                  f"within {timeout_s:g} s; check that every host was started.")
        time.sleep(0.05)


def _wait_get(store: dist.Store, key: str, timeout_s: float) -> str | None:
    deadline = time.monotonic() + min(timeout_s, 10.0)
    while time.monotonic() < deadline:
        if store.check([key]):
            return store.get(key).decode()
        time.sleep(0.02)
    return None


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
