"""The cores this process may use, read without importing torch: the ranks of a run (launch/worker.py, through
distribution/slurm_env.py) and the slots of a sweep (sweeps/agents/trial_process.py) size their threads by it."""
from __future__ import annotations

import os
from typing import Mapping


def allocated_cpus(env: Mapping[str, str] | None = None) -> int:
    """The cores this process may use: its CPU affinity mask (which Slurm's task/affinity, taskset, cgroups and
    containers set), capped by SLURM_CPUS_PER_TASK where Slurm gives one; never os.cpu_count(), the machine's."""
    env = os.environ if env is None else env
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):   # not Linux
        cores = os.cpu_count() or 1
    given = env.get("SLURM_CPUS_PER_TASK", "").strip()
    if given.isdigit() and int(given) > 0:
        cores = min(cores, int(given))
    return max(cores, 1)
