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


def init_process_group(trainer: Any) -> None:
    ctx = trainer.ctx
    if ctx.world_size == 1:
        return
    if ctx.device.type == "cuda":
        torch.cuda.set_device(ctx.device)
    spec = trainer.gen_rendezvous_ctx(None, None, True)
    if isinstance(spec, dict):
        spec = spec.get("store", spec.get("init_method"))
    timeout = datetime.timedelta(seconds=trainer.opts["distributed"]["collective_timeout"])
    kwargs: dict = {"backend": ctx.topology.backend, "rank": ctx.rank, "world_size": ctx.world_size, "timeout": timeout}
    if isinstance(spec, dist.Store):
        kwargs["store"] = spec
    elif isinstance(spec, str):
        kwargs["init_method"] = spec
    else:
        raise TypeError("gen_rendezvous_ctx must return a torch.distributed.Store, an init-method URL or a dict "
                        f"with 'store' or 'init_method'; got {type(spec).__name__}")
    if ctx.device.type == "cuda":
        kwargs["device_id"] = ctx.device
    dist.init_process_group(**kwargs)


def destroy_process_group() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
