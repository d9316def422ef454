"""DistributedContext as Determined 0.38.1 has it: playground's one context class
(playground/determined/distributed_context.py, the class a Trial's `context.distributed` is too), its
DummyDistributedContext, and what Determined's other core modules import from here."""
from __future__ import annotations

from typing import Callable, Optional, TypeVar

from playground.determined.distributed_context import (INTER_TRAIN_PROCESS_COMM_PORT_1, INTER_TRAIN_PROCESS_COMM_PORT_2,
                                                       DistributedContext)

__all__ = ["DistributedContext", "DummyDistributedContext", "INTER_TRAIN_PROCESS_COMM_PORT_1",
           "INTER_TRAIN_PROCESS_COMM_PORT_2"]


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
