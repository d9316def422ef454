"""Joins this process to the run's process group through the rendezvous component.

`gen_rendezvous_ctx(self, model, dataset, is_train)` returns how ranks find each other: a
`torch.distributed.Store`, an init-method URL ("env://", "tcp://host:port", "file:///path"), or a dict with
one of the keys "store" or "init_method". The collective timeout comes from distributed.collective_timeout.
"""
from __future__ import annotations

import datetime
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed import rendezvous

from playground.distribution.rendezvous import claim_rank


def init_process_group(trainer: Any) -> None:
    ctx = trainer.ctx
    if ctx.world_size == 1:
        return
    if ctx.device.type == "cuda":
        torch.cuda.set_device(ctx.device)
    spec = trainer.gen_rendezvous_ctx(None, None, True)
    join_group(spec, ctx.topology.backend, ctx.rank, ctx.world_size,
               trainer.opts["distributed"]["collective_timeout"], ctx.device if ctx.device.type == "cuda" else None)


def join_group(spec: Any, backend: str, rank: int, world_size: int, timeout_s: float,
               device: torch.device | None = None) -> None:
    """Meet the other ranks through `spec` (a store, an init-method URL or a dict holding one), check that no two
    processes claim one rank, and initialise the default process group."""
    if isinstance(spec, dict):
        spec = spec.get("store", spec.get("init_method"))
    timeout = datetime.timedelta(seconds=timeout_s)
    if isinstance(spec, str):
        # Meet through the URL here rather than inside init_process_group, so the store can be checked first.
        spec, _, _ = next(rendezvous(spec, rank, world_size, timeout=timeout))
        spec.set_timeout(timeout)
    if not isinstance(spec, dist.Store):
        raise TypeError("gen_rendezvous_ctx must return a torch.distributed.Store, an init-method URL or a dict "
                        f"with 'store' or 'init_method'; got {type(spec).__name__}")
    claim_rank(spec, rank, world_size, timeout_s)
    kwargs: dict = {"backend": backend, "rank": rank, "world_size": world_size, "timeout": timeout, "store": spec}
    if device is not None:
        kwargs["device_id"] = device
    dist.init_process_group(**kwargs)


def destroy_process_group() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
