"""The few collectives the framework needs, each a no-op in a single-process run.

Every collective runs under the process group's timeout (distributed.collective_timeout), so a rank that died
or hangs makes the others fail with an error instead of waiting forever.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


def active() -> bool:
    return dist.is_available() and dist.is_initialized()


def _device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")


def all_reduce_sum(tensor: torch.Tensor) -> torch.Tensor:
    """Sum `tensor` over all ranks; returns a CPU tensor."""
    return _all_reduce(tensor, dist.ReduceOp.SUM)


def all_reduce_max(tensor: torch.Tensor) -> torch.Tensor:
    return _all_reduce(tensor, dist.ReduceOp.MAX)


def _all_reduce(tensor: torch.Tensor, op: "dist.ReduceOp") -> torch.Tensor:
    if not active():
        return tensor
    work = tensor.to(_device())
    dist.all_reduce(work, op=op)
    return work.cpu()


def gather_to_writer(obj: Any) -> list[Any] | None:
    """Every rank's `obj`, in rank order, on rank 0; None on the other ranks."""
    if not active():
        return [obj]
    out = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(obj, out, dst=0)
    return out


def scatter_from_writer(objs: list[Any] | None) -> Any:
    """Rank 0 gives rank r the element objs[r]; returns this rank's element."""
    if not active():
        return objs[0]
    out = [None]
    dist.scatter_object_list(out, objs if dist.get_rank() == 0 else None, src=0)
    return out[0]


def broadcast_from_writer(obj: Any) -> Any:
    if not active():
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier() -> None:
    if active():
        if dist.get_backend() == "nccl":
            dist.barrier(device_ids=[torch.cuda.current_device()])
        else:
            dist.barrier()


def broadcast_tensors_from_writer(tensors: list[torch.Tensor]) -> None:
    """Overwrite `tensors`, in place on every rank, with rank 0's (same shapes and dtypes on every rank)."""
    if not active() or not tensors:
        return
    for tensor in tensors:
        work = tensor if tensor.device.type == _device().type else tensor.to(_device())
        dist.broadcast(work, src=0)
        if work is not tensor:
            tensor.copy_(work)
