"""Ranks find each other through the environment that torchrun (or a launcher) sets: MASTER_ADDR, MASTER_PORT.

Inside a Slurm job what is unset comes from the job: the step's first node and a port from the job id
(playground/distribution/slurm_env.py), so `srun` needs neither.
"""
from __future__ import annotations

import os

from playground.api import rendezvous_defaults


def validate_opts(opts: dict) -> list[str]:
    """Several hosts meet at rank 0's host, which only the environment names (one host uses loopback)."""
    shards = opts["distributed"]["num_shards"]
    found = {**os.environ, **rendezvous_defaults()}
    missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not found.get(name)]
    if shards > 1 and missing:
        return [f"opts.model.rendezvous_py: rendezvous_env with distributed.num_shards {shards} needs "
                f"{' and '.join(missing)} in the environment (the address and a free port of shard 0's host, the "
                "same on every host), e.g. MASTER_ADDR=node01 MASTER_PORT=29500; or use rendezvous_tcp / "
                "rendezvous_filestore"]
    return []


def gen_rendezvous_ctx(self, model, dataset, is_train):
    os.environ.update(rendezvous_defaults())
    return "env://"
