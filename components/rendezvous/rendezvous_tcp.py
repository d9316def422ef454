"""Ranks meet at a TCP store that rank 0 serves on `distributed.master_addr:master_port`.

Every host must reach rank 0's host at that address. The store lives in rank 0's process, so it never
outlives an attempt; a port still held by a previous attempt is reported by rank 0 when it starts.
"""
from __future__ import annotations

import datetime

import torch.distributed as dist

from playground.api import Int

additional_definitions = [
    {"name": "distributed.master_addr", "type": str, "default": "127.0.0.1",
     "help": "Address of the host running rank 0 (shard 0), reachable from every host (rendezvous_tcp)."},
    {"name": "distributed.master_port", "type": Int(1), "default": 29500,
     "help": "Free TCP port on rank 0's host for the rendezvous store (rendezvous_tcp)."},
]


def validate_opts(opts: dict) -> list[str]:
    port = opts["distributed"]["master_port"]
    return [] if port <= 65535 else [f"opts.distributed.master_port: {port} is not a TCP port (1-65535)"]


def gen_rendezvous_ctx(self, model, dataset, is_train):
    d = self.opts["distributed"]
    timeout = datetime.timedelta(seconds=d["collective_timeout"])
    try:
        store = dist.TCPStore(d["master_addr"], d["master_port"], self.world_size, is_master=self.rank == 0,
                              timeout=timeout, wait_for_workers=False)
    except (RuntimeError, OSError) as err:
        role = "serve" if self.rank == 0 else "reach"
        raise RuntimeError(f"rendezvous_tcp: rank {self.rank} could not {role} the store at "
                           f"{d['master_addr']}:{d['master_port']}: {err}. Check distributed.master_addr / "
                           "master_port (the port must be free on rank 0's host).") from err
    return {"store": store}
