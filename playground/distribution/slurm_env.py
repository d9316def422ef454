"""What a Slurm job tells a process through its environment: the step it is a task of, the hosts, the cores.

Pure functions of an environment mapping (default: os.environ), so each is tested with a made-up one:

- `step(env)`: the srun step this process is a task of (task count, its numbers, tasks on its node), or None in a
  batch shell, outside Slurm, or in a sweep trial (PLAYGROUND_ATTEMPT: the step is its agent's, not the trial's);
- `layout_problem(...)`: why a step's tasks do not fit the opts (run before anything starts);
- `hostnames(nodelist)`: a Slurm host list expanded as `scontrol show hostnames` does;
- `rendezvous_defaults(env)`: MASTER_ADDR (the step's first node, where task 0 runs) and MASTER_PORT (from the job
  id) for what the environment leaves unset, inside a Slurm job;
- `allocated_cpus(env)`: the cores this process may use: its CPU affinity mask, capped by SLURM_CPUS_PER_TASK.
"""
from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass
from typing import Mapping

from playground.distribution.launcher_vars import whole_number
from playground.processes.cpu_allocation import allocated_cpus  # noqa: F401  (part of this module's surface)

PORT_BASE = 15000     # MASTER_PORT = PORT_BASE + job id mod PORT_SPAN: below Linux's ephemeral ports (32768-)
PORT_SPAN = 10000
BATCH_STEP = ("4294967294", "batch")


@dataclass(frozen=True)
class Step:
    tasks: int           # SLURM_NTASKS
    proc_id: int         # SLURM_PROCID: this task's number in the step
    local_id: int        # SLURM_LOCALID: its number on its node
    node_id: int         # SLURM_NODEID
    tasks_here: int      # tasks of the step on this task's node (1 where Slurm does not say)
    layout: str          # as Slurm wrote it, for messages: "SLURM_NTASKS=2, SLURM_STEP_TASKS_PER_NODE=2"


def step(env: Mapping[str, str] | None = None) -> Step | None:
    env = os.environ if env is None else env
    step_id = env.get("SLURM_STEP_ID", env.get("SLURM_STEPID"))
    if step_id is None or step_id in BATCH_STEP or "SLURM_PROCID" not in env or "SLURM_NTASKS" not in env:
        return None
    if env.get("PLAYGROUND_ATTEMPT"):   # a sweep trial: its agent was the step's task
        return None
    per_node = env.get("SLURM_STEP_TASKS_PER_NODE", env.get("SLURM_TASKS_PER_NODE", ""))
    node_id = whole_number(env, "SLURM_NODEID", 0)
    counts = _tasks_per_node(per_node)
    tasks = whole_number(env, "SLURM_NTASKS", least=1)
    layout = f"SLURM_NTASKS={tasks}" + (f", SLURM_STEP_TASKS_PER_NODE={per_node}" if per_node else "")
    return Step(tasks, whole_number(env, "SLURM_PROCID"), whole_number(env, "SLURM_LOCALID", 0), node_id,
                counts[node_id] if node_id < len(counts) else 1, layout)


def layout_problem(found: Step, devices_per_host: int, num_shards: int, device_word: str) -> str | None:
    """Why the step's tasks cannot run these opts (None when they can): one task per device (tasks = num_shards x
    devices) or one task per host (tasks = num_shards, one per node, each spawning its devices). Any other count
    would run several copies of the whole training into one run folder."""
    ranks = devices_per_host * num_shards
    if found.tasks == ranks or found.tasks == 1:
        return None
    wanted = (f"distributed.num_shards {num_shards} x distributed.{device_word} {devices_per_host} = {ranks} "
              f"rank(s)")
    fix = f"srun -n {ranks} (one task per rank)"
    if found.tasks == num_shards:
        if found.tasks_here == 1:
            return None
        return (f"Slurm started {found.tasks_here} tasks on one node ({found.layout}), but with one task per host "
                f"each task spawns its {devices_per_host} {device_word} ranks, and the opts ask for {wanted}: use "
                f"{fix} or srun -n {num_shards} --ntasks-per-node=1 (one task per host)")
    if num_shards > 1 and devices_per_host > 1:
        fix += f", or srun -n {num_shards} --ntasks-per-node=1 (one task per host)"
    return (f"Slurm started {found.tasks} tasks ({found.layout}), but the opts ask for {wanted}; each task would "
            f"train on its own into the same run folder. Use {fix}, or change the opts to match")


def hostnames(nodelist: str) -> list[str]:
    """`n[1-3,5],m7` -> n1 n2 n3 n5 m7, as `scontrol show hostnames` lists them: comma-separated names, each with
    bracketed ranges (zero-padded to the width of a range's first number), several brackets multiplying out."""
    names: list[str] = []
    for part in _split_top(nodelist.strip()):
        pieces = re.split(r"\[([^\]]*)\]", part)   # text, range, text, range, ..., text
        choices = [[piece] if i % 2 == 0 else _expand_ranges(piece, nodelist) for i, piece in enumerate(pieces)]
        names.extend("".join(combo) for combo in itertools.product(*choices))
    return [name for name in names if name]


def rendezvous_defaults(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """MASTER_ADDR and MASTER_PORT for the env rendezvous inside a Slurm job, only those the environment leaves
    unset: the first node of the step (else of the job), where task 0 runs with block or cyclic placement, and
    PORT_BASE + job id mod PORT_SPAN, which every task computes alike (a requeued job meets on the same port).
    Empty outside Slurm. Two steps of one job running at once need MASTER_PORT set apart by hand."""
    env = os.environ if env is None else env
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    job_id = env.get("SLURM_JOB_ID", "")
    found: dict[str, str] = {}
    if not env.get("MASTER_ADDR") and nodelist:
        found["MASTER_ADDR"] = hostnames(nodelist)[0]
    if not env.get("MASTER_PORT") and job_id.isdigit():
        found["MASTER_PORT"] = str(PORT_BASE + int(job_id) % PORT_SPAN)
    return found


def _tasks_per_node(text: str) -> list[int]:
    """`2(x3),1` -> [2, 2, 2, 1] (SLURM_TASKS_PER_NODE's form)."""
    counts: list[int] = []
    for item in filter(None, text.split(",")):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item.strip())
        if match:
            counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


def _split_top(text: str) -> list[str]:
    """Split at the commas outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "[") - (char == "]")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def _expand_ranges(ranges: str, nodelist: str) -> list[str]:
    values: list[str] = []
    for item in ranges.split(","):
        low, _, high = item.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise ValueError(f"Slurm host list {nodelist!r}: cannot read the range [{ranges}]")
        values += [str(n).zfill(len(low)) for n in range(int(low), int(high or low) + 1)]
    return values
