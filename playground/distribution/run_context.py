"""Who and where this process is within a run: rank, device, run folder; made by the worker, read everywhere."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from playground.distribution.topology import Topology


@dataclass
class RunContext:
    run_dir: str
    topology: Topology
    local_rank: int
    meter_classes: dict[str, type] = field(default_factory=dict)   # metric name -> meter class

    @property
    def rank(self) -> int:
        return self.topology.global_rank(self.local_rank)

    @property
    def world_size(self) -> int:
        return self.topology.world_size

    @property
    def shard_id(self) -> int:
        return self.topology.shard_id

    @property
    def device(self) -> torch.device:
        return torch.device(self.topology.device_name(self.local_rank))

    @property
    def is_writer(self) -> bool:
        """Rank 0 alone writes checkpoints, logs and outputs."""
        return self.rank == 0
