"""How DistributedContext's allgather / gather / broadcast (and their _local forms) move Python objects between
ranks (distributed_context.py). Every rank of a group must call the same operations in the same order, as with
Determined.

- A Core API context: a torch TCPStore served by the chief, one key per rank and round (StoreExchange).
  Determined uses ZeroMQ sockets on ports 12360/12361; playground uses what torch already ships, on the port
  the runner chose (PLAYGROUND_DETERMINED_PORT), else pub_port + port_offset as Determined does. Independent of
  torch.distributed's process group: a script may create its DistributedContext before, after or without
  `dist.init_process_group`.
- A Trial's context: the process group playground's trainer starts (GroupExchange; a node's ranks through it,
  NodeExchange), up once training starts.
"""
from __future__ import annotations

import datetime
import os
import pickle
import time
from typing import Any

PORT_ENV = "PLAYGROUND_DETERMINED_PORT"
TIMEOUT = datetime.timedelta(hours=24)   # a collective waits for its peers as long as ZeroMQ's would
CLOSE_WAIT_SECONDS = 30.0


class StoreExchange:
    """Rounds of object exchange between `size` members (this one `index`) under the key prefix `scope`."""

    def __init__(self, store: Any, scope: str, index: int, size: int) -> None:
        self.store, self.scope, self.index, self.size = store, scope, index, size
        self.round = 0

    def _next(self) -> str:
        self.round += 1
        return f"{self.scope}/{self.round}"

    def allgather(self, stuff: Any) -> list:
        key = self._next()
        self.store.set(f"{key}/{self.index}", pickle.dumps(stuff))
        return [pickle.loads(self.store.get(f"{key}/{i}")) for i in range(self.size)]

    def gather(self, stuff: Any) -> list | None:
        key = self._next()
        if self.index != 0:
            self.store.set(f"{key}/{self.index}", pickle.dumps(stuff))
            self.store.get(f"{key}/done")      # in step with the chief, as Determined's gather
            return None
        out = [stuff, *(pickle.loads(self.store.get(f"{key}/{i}")) for i in range(1, self.size))]
        self.store.set(f"{key}/done", b"1")
        return out

    def broadcast(self, stuff: Any) -> Any:
        key = self._next()
        if self.index == 0:
            self.store.set(f"{key}/b", pickle.dumps(stuff))
            return stuff
        return pickle.loads(self.store.get(f"{key}/b"))


def open_store(rank: int, size: int, host: str, port: int) -> Any:
    """The chief serves the store, the others connect (retrying until the chief is up)."""
    from torch.distributed import TCPStore
    return TCPStore(host, port, None, rank == 0, timeout=TIMEOUT, wait_for_workers=False)


def exchange_port(default: int) -> int:
    text = os.environ.get(PORT_ENV, "").strip()
    return int(text) if text.isdigit() else default


def close_store(store: Any, rank: int, size: int) -> None:
    """Workers say they are done; the chief, which serves the store, waits for them (a bounded time) so no
    worker loses the store while it reads the last round."""
    if rank != 0:
        store.set(f"closed/{rank}", b"1")
        return
    deadline = time.monotonic() + CLOSE_WAIT_SECONDS
    for other in range(1, size):
        while time.monotonic() < deadline and not store.check([f"closed/{other}"]):
            time.sleep(0.01)


class GroupExchange:
    """Object exchange over torch.distributed's default process group (a Trial's, which playground's trainer
    starts) between its `size` ranks, this one `rank`: every rank calls each operation, in the same order."""

    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size

    def allgather(self, stuff: Any) -> list:
        import torch.distributed as dist
        every: list = [None] * self.size
        dist.all_gather_object(every, stuff)
        return every

    def gather(self, stuff: Any) -> list | None:
        every = self.allgather(stuff)
        return every if self.rank == 0 else None

    def broadcast(self, stuff: Any) -> Any:
        import torch.distributed as dist
        box = [stuff]
        dist.broadcast_object_list(box, 0)
        return box[0]


class NodeExchange:
    """The ranks of one node (`node`; this one `index` among them) through a GroupExchange of the whole run:
    every rank of the run calls each operation, as every rank of a Trial runs the same code."""

    def __init__(self, group: GroupExchange, node: int, index: int) -> None:
        self.group, self.node, self.index = group, node, index

    def allgather(self, stuff: Any) -> list:
        return [mine for node, mine in self.group.allgather((self.node, stuff)) if node == self.node]

    def gather(self, stuff: Any) -> list | None:
        every = self.allgather(stuff)
        return every if self.index == 0 else None

    def broadcast(self, stuff: Any) -> Any:
        return next(mine for node, index, mine in self.group.allgather((self.node, self.index, stuff))
                    if node == self.node and index == 0)
