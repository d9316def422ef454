"""Where this process sits in the run: devices per host, hosts, this host's shard, and who starts the ranks.

The one place that decides the device. Sources, in order: torchrun's environment (ranks are given, nothing is
spawned), a Slurm step with one task per device (likewise: the global rank is SLURM_PROCID and the local rank,
which picks the device, SLURM_LOCALID, so block and cyclic task placement and several shards on one node all
work), a Slurm step with one task per host (the task is the shard and spawns its devices), else the opts
(`--shard-id` or `distributed.shard_id`, and this command spawns `num_gpus` or `num_cpus` processes). A
spawned rank's global rank = shard_id * devices_per_host + local_rank. A step of several tasks that fits neither
Slurm layout is an OptsError (each task would train the whole run into one folder); slurm_env.py reads the step.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from playground.distribution import slurm_env
from playground.distribution.launcher_vars import torchrun_ranks
from playground.options.layers import OptsError


@dataclass(frozen=True)
class Topology:
    device_type: str          # "cuda" or "cpu"
    devices_per_host: int
    num_shards: int
    shard_id: int
    first_device: int         # first CUDA index on each host (0 for CPU)
    backend: str | None       # "nccl" or "gloo"; None for a single process
    launcher: str             # "single", "spawn", "torchrun" or "slurm"
    given_rank: int | None = None       # set when the environment already says which rank this process is
    given_local_rank: int | None = None

    @property
    def world_size(self) -> int:
        return self.devices_per_host * self.num_shards

    def global_rank(self, local_rank: int) -> int:
        if self.given_rank is not None and local_rank == self.given_local_rank:
            return self.given_rank  # the launcher's numbering; task placement need not be block-wise
        return self.shard_id * self.devices_per_host + local_rank

    def device_name(self, local_rank: int) -> str:
        return f"cuda:{self.first_device + local_rank}" if self.device_type == "cuda" else "cpu"

    @property
    def spawns(self) -> bool:
        """Whether this command starts the local ranks itself (one process each)."""
        return self.given_rank is None and self.world_size > 1

    def describe(self) -> str:
        if self.device_type == "cuda":
            last = self.first_device + self.devices_per_host - 1
            devices = f"cuda:{self.first_device}" + (f"..{last}" if last > self.first_device else "")
        else:
            devices = "cpu"
        backend = f", {self.backend}" if self.backend else ""
        return (f"{self.devices_per_host} x {devices} per host, {self.num_shards} host(s), world size "
                f"{self.world_size}{backend}; this is shard {self.shard_id}; ranks started by {self.launcher}")


def topology_from(opts: dict, env: Mapping[str, str] | None = None) -> Topology:
    env = os.environ if env is None else env
    dist = opts["distributed"]
    cuda = dist["num_gpus"] > 0
    device_type = "cuda" if cuda else "cpu"
    per_host = dist["num_gpus"] if cuda else dist["num_cpus"]
    backend = "nccl" if cuda and opts["model_param"]["cuda_nccl"] else "gloo"
    first = dist["first_gpu_id"] if cuda else 0

    def make(per_host: int, shards: int, shard: int, launcher: str, rank=None, local=None) -> Topology:
        multi = per_host * shards > 1
        return Topology(device_type, per_host, shards, shard, first, backend if multi else None, launcher, rank, local)

    if "TORCHELASTIC_RUN_ID" in env or ("LOCAL_RANK" in env and "WORLD_SIZE" in env and "RANK" in env):
        ranks = torchrun_ranks(env)
        world, rank, local_world = ranks.world_size, ranks.rank, ranks.local_world_size
        if rank >= world:
            raise OptsError(f"environment variables RANK={rank} and WORLD_SIZE={world}: a rank must be below the "
                            "world size; left in this shell by another job? Unset them or start the run through "
                            "torchrun")
        return make(local_world, max(1, world // local_world), rank // local_world, "torchrun", rank,
                    ranks.local_rank)
    slurm = slurm_env.step(env)
    if slurm is not None:
        problem = slurm_env.layout_problem(slurm, per_host, dist["num_shards"], "num_gpus" if cuda else "num_cpus")
        if problem:
            raise OptsError(problem)
        tasks, proc_id, local_id = slurm.tasks, slurm.proc_id, slurm.local_id
        if tasks == per_host * dist["num_shards"] and tasks > 1:
            return make(per_host, dist["num_shards"], proc_id // per_host, "slurm", proc_id, local_id)
        if tasks == dist["num_shards"] and tasks > 1:
            return make(per_host, dist["num_shards"], proc_id, "spawn" if per_host > 1 else "single")
    shard = dist.get("shard_id", 0)
    return make(per_host, dist["num_shards"], shard, "spawn" if per_host > 1 else "single")

