"""DistributedContext as Determined 0.38.1 has it: rank information, and allgather / gather / broadcast of
Python objects between the ranks (core/_exchange.py: a TCPStore instead of ZeroMQ; same semantics)."""
from __future__ import annotations

import logging
import os
from typing import Any, Callable, List, Optional, Tuple, TypeVar

import playground.compat.determined.core._exchange as _exchange

logger = logging.getLogger("determined.core")

INTER_TRAIN_PROCESS_COMM_PORT_1 = 12360   # Determined's defaults (determined.common.constants)
INTER_TRAIN_PROCESS_COMM_PORT_2 = 12361


class DistributedContext:
    """Rank, size, local_rank, local_size, cross_rank, cross_size of this worker, and simple object
    collectives between workers (not a replacement for your training framework's)."""

    def __init__(self, *, rank: int, size: int, local_rank: int, local_size: int, cross_rank: int,
                 cross_size: int, chief_ip: Optional[str] = None,
                 pub_port: int = INTER_TRAIN_PROCESS_COMM_PORT_1, pull_port: int = INTER_TRAIN_PROCESS_COMM_PORT_2,
                 port_offset: int = 0, force_tcp: bool = False) -> None:
        rank_args = (rank, size, local_rank, local_size, cross_rank, cross_size)
        if sum(x is not None for x in rank_args) not in (0, 6):
            raise ValueError("rank, size, local_rank, local_size, cross_rank, and cross_size must all be "
                             "provided if any are provided")
        self.rank = rank if rank is not None else 0
        self.size = size if size is not None else 1
        self.local_rank = local_rank if local_rank is not None else 0
        self.local_size = local_size if local_size is not None else 1
        self.cross_rank = cross_rank if cross_rank is not None else 0
        self.cross_size = cross_size if cross_size is not None else 1
        self._pub_port, self._pull_port = pub_port, pull_port
        self._is_chief = self.rank == 0
        self._is_local_chief = self.local_rank == 0
        if self.local_size != self.size:
            if chief_ip is None:
                raise AssertionError(f"This is a distributed job (local_size {self.local_size} != size {self.size}) "
                                     "but chief_ip was none provided.  When cross_size > 1, the chief_ip parameter "
                                     "is required.")
            self._chief_ip = chief_ip
        else:
            self._chief_ip = "127.0.0.1"     # one machine: the chief is local
        self._closed = False
        self._store = None
        if self.size > 1:
            port = _exchange.exchange_port(pub_port + port_offset)
            self._store = _exchange.open_store(self.rank, self.size, self._chief_ip, port)
            self._global = _exchange.Exchange(self._store, "g", self.rank, self.size)
            self._local = _exchange.Exchange(self._store, f"l{self.cross_rank}", self.local_rank, self.local_size)

    @classmethod
    def from_horovod(cls, hvd: Any, chief_ip: Optional[str] = None) -> "DistributedContext":
        """From horovod's rank functions (hvd.init() called already)."""
        return cls(rank=hvd.rank(), size=hvd.size(), local_rank=hvd.local_rank(), local_size=hvd.local_size(),
                   cross_rank=hvd.cross_rank(), cross_size=hvd.cross_size(),
                   chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP"))

    @classmethod
    def from_deepspeed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """From deepspeed's variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_SIZE, CROSS_RANK, CROSS_SIZE."""
        env = os.environ
        return cls(rank=int(env["RANK"]), size=int(env["WORLD_SIZE"]), local_rank=int(env["LOCAL_RANK"]),
                   local_size=int(env["LOCAL_SIZE"]), cross_rank=int(env["CROSS_RANK"]),
                   cross_size=int(env["CROSS_SIZE"]), chief_ip=chief_ip or env.get("DET_CHIEF_IP"))

    @classmethod
    def from_torch_distributed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """From torchrun's variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
        GROUP_WORLD_SIZE (playground's runner sets them for every rank)."""
        env = os.environ
        return cls(rank=int(env["RANK"]), size=int(env["WORLD_SIZE"]), local_rank=int(env["LOCAL_RANK"]),
                   local_size=int(env["LOCAL_WORLD_SIZE"]), cross_rank=int(env["GROUP_RANK"]),
                   cross_size=int(env["GROUP_WORLD_SIZE"]), chief_ip=chief_ip or env.get("DET_CHIEF_IP"))

    @classmethod
    def from_tf_config(cls) -> Tuple["DistributedContext", Any]:
        raise NotImplementedError("DistributedContext.from_tf_config: TensorFlow is not supported by playground's "
                                  "determined (a PyTorch playground); use from_torch_distributed()")

    def close(self) -> None:
        if self._closed or self._store is None:
            return
        self._closed = True
        _exchange.close_store(self._store, self.rank, self.size)
        self._store = None

    def get_rank(self) -> int:
        return self.rank

    def get_local_rank(self) -> int:
        return self.local_rank

    def get_size(self) -> int:
        return self.size

    def get_num_agents(self) -> int:
        return self.cross_size

    def gather(self, stuff: Any) -> Optional[List]:
        """The chief gets every worker's stuff, in rank order; workers get None."""
        return [stuff] if self.size < 2 else self._global.gather(stuff)

    def gather_local(self, stuff: Any) -> Optional[List]:
        return [stuff] if self.local_size < 2 else self._local.gather(stuff)

    def allgather(self, stuff: Any) -> List:
        """Every worker gets every worker's stuff, in rank order."""
        return [stuff] if self.size < 2 else self._global.allgather(stuff)

    def allgather_local(self, stuff: Any) -> List:
        return [stuff] if self.local_size < 2 else self._local.allgather(stuff)

    def broadcast(self, stuff: Any) -> Any:
        """Every worker gets the chief's stuff."""
        return stuff if self.size < 2 else self._global.broadcast(stuff)

    def broadcast_local(self, stuff: Any = None) -> Any:
        return stuff if self.local_size < 2 else self._local.broadcast(stuff)


class DummyDistributedContext(DistributedContext):
    def __init__(self) -> None:
        super().__init__(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)


T = TypeVar("T")


def _run_on_rank_0_and_broadcast(func: Callable[[], T], distributed: Optional[DistributedContext] = None) -> T:
    result = None
    if distributed is None or distributed.rank == 0:
        result = func()
    if distributed is not None:
        result = distributed.broadcast(result)
    assert result
    return result
