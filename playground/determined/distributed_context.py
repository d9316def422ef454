"""Determined's core.DistributedContext (0.38.1): this process's place among the ranks, and allgather / gather /
broadcast of Python objects between them. The one context class: `det.core.DistributedContext` of the Core API
(compat/determined/core/) and `context.distributed` of a PyTorchTrial (trials/context.py) are this class.

Ranks are read where the launcher put them, through playground/distribution/launcher_vars.py (torchrun's
variables; playground's runner sets the same ones). The objects travel through object_exchange.py: a Core API
context opens a store of its own (a script may make its context before, after or without a process group); a
Trial's context goes over the process group playground's trainer starts (up once training starts, not in the
trial's `__init__`), as its other collectives do.
"""
from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Tuple

from playground.determined import object_exchange
from playground.distribution.launcher_vars import LauncherRanks, torchrun_ranks, whole_number

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
        alone = (0, 1, 0, 1, 0, 1)       # none given: one worker
        self._place(LauncherRanks(*(given if given is not None else x for given, x in zip(rank_args, alone))))
        self._pub_port, self._pull_port = pub_port, pull_port
        if self.local_size != self.size:
            if chief_ip is None:
                raise AssertionError(f"This is a distributed job (local_size {self.local_size} != size {self.size}) "
                                     "but chief_ip was none provided.  When cross_size > 1, the chief_ip parameter "
                                     "is required.")
            self._chief_ip = chief_ip
        else:
            self._chief_ip = "127.0.0.1"     # one machine: the chief is local
        if self.size > 1:
            port = object_exchange.exchange_port(pub_port + port_offset)
            self._store = object_exchange.open_store(self.rank, self.size, self._chief_ip, port)
            self._global = object_exchange.StoreExchange(self._store, "g", self.rank, self.size)
            self._local = object_exchange.StoreExchange(self._store, f"l{self.cross_rank}", self.local_rank,
                                                        self.local_size)

    def _place(self, ranks: LauncherRanks) -> None:
        self.rank, self.size = ranks.rank, ranks.world_size
        self.local_rank, self.local_size = ranks.local_rank, ranks.local_world_size
        self.cross_rank, self.cross_size = ranks.group_rank, ranks.group_world_size
        self._is_chief, self._is_local_chief = self.rank == 0, self.local_rank == 0
        self._closed, self._store = False, None

    @classmethod
    def for_trial(cls, env: Optional[Mapping[str, str]] = None) -> "DistributedContext":
        """A Trial's context: the ranks torchrun's variables give (rank 0 of 1 where they are unset), its
        collectives over the process group playground's trainer starts."""
        context = cls.__new__(cls)
        context._place(torchrun_ranks(os.environ if env is None else env, alone=True))
        context._chief_ip = None
        context._global = object_exchange.GroupExchange(context.rank, context.size)
        context._local = object_exchange.NodeExchange(context._global, context.cross_rank, context.local_rank)
        return context

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
        rank, size, local_rank, local_size, cross_rank, cross_size = (
            whole_number(env, name) for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_SIZE", "CROSS_RANK",
                                                 "CROSS_SIZE"))
        return cls(rank=rank, size=size, local_rank=local_rank, local_size=local_size, cross_rank=cross_rank,
                   cross_size=cross_size, chief_ip=chief_ip or env.get("DET_CHIEF_IP"))

    @classmethod
    def from_torch_distributed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """From torchrun's variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
        GROUP_WORLD_SIZE (playground's runner sets them for every rank)."""
        ranks = torchrun_ranks(os.environ)
        return cls(rank=ranks.rank, size=ranks.world_size, local_rank=ranks.local_rank,
                   local_size=ranks.local_world_size, cross_rank=ranks.group_rank, cross_size=ranks.group_world_size,
                   chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP"))

    @classmethod
    def from_tf_config(cls) -> Tuple["DistributedContext", Any]:
        raise NotImplementedError("DistributedContext.from_tf_config: TensorFlow is not supported by playground's "
                                  "determined (a PyTorch playground); use from_torch_distributed()")

    def close(self) -> None:
        if self._closed or self._store is None:
            return
        self._closed = True
        object_exchange.close_store(self._store, self.rank, self.size)
        self._store = None

    def get_rank(self) -> int:
        return self.rank

    def get_local_rank(self) -> int:
        return self.local_rank

    def get_size(self) -> int:
        return self.size

    def get_local_size(self) -> int:
        return self.local_size

    def get_cross_rank(self) -> int:
        return self.cross_rank

    def get_cross_size(self) -> int:
        return self.cross_size

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
