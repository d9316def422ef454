"""What a run will do, computed from resolved opts before anything starts; printed by --dry-run."""
from __future__ import annotations

import os
from dataclasses import dataclass

from playground.options.loader import ResolvedOpts
from playground.distribution.topology import Topology, topology_from
from playground.outputs.run_folder import RunFolder


@dataclass
class Plan:
    topology: Topology
    batch_per_device: int
    num_epochs: int
    iterations_per_epoch: int | None     # None: one full pass over the training set, known once data is read
    run_dir: str
    checkpoint_folder: str
    resolved: ResolvedOpts

    @property
    def global_batch(self) -> int:
        return self.batch_per_device * self.topology.world_size

    def describe(self) -> str:
        t = self.topology
        iters = (f"{self.iterations_per_epoch}" if self.iterations_per_epoch is not None
                 else "one full pass over the training set (drop-last), counted when the data is read")
        lines = [
            "plan:",
            f"  devices:              {t.describe()}",
            f"  world size:           {t.world_size}",
            f"  global batch:         {self.global_batch} ({self.batch_per_device} per device x {t.world_size})",
            f"  iterations per epoch: {iters}",
            f"  epochs:               {self.num_epochs}",
            f"  run folder:           {self.run_dir}",
            f"  checkpoint folder:    {self.checkpoint_folder}",
            "  components:",
        ]
        for path, component in self.resolved.components.items():
            lines.append(f"    {path:34s} {component.name}  ({component.file})")
        for name, component in self.resolved.meters.items():
            lines.append(f"    {'meter ' + name:34s} {component.name}  ({component.file})")
        names = {c.name for c in (*self.resolved.components.values(), *self.resolved.meters.values())}
        declared = [d for d in self.resolved.declarations.values() if names & set(d.readers)]
        if declared:
            lines.append("  component-declared opts:")
            for decl in sorted(declared, key=lambda d: d.path):
                value = _get(self.resolved.opts, decl.path)
                readers = ", ".join(r for r in decl.readers if r in names)
                lines.append(f"    {decl.path:34s} = {value!r}  (read by {readers})")
        return "\n".join(lines)


def make_plan(resolved: ResolvedOpts, run_dir: str) -> Plan:
    opts = resolved.opts
    topology = topology_from(opts)
    samples = opts["epoch_iter"]["num_train_sample_per_epoch"]
    batch = opts["epoch_iter"]["batch_per_device"]
    iterations = samples // (batch * topology.world_size) if samples > 0 else None
    folder = opts["output"]["checkpoint_folder"] or RunFolder(run_dir).checkpoints
    return Plan(topology=topology, batch_per_device=batch, num_epochs=opts["epoch_iter"]["num_epochs"],
                iterations_per_epoch=iterations, run_dir=run_dir, checkpoint_folder=os.path.abspath(folder),
                resolved=resolved)


def _get(tree: dict, path: str):
    node = tree
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
