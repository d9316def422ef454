"""One rank's set-up (playground/launch/worker.py): threads per process from the opts or CANDLE's variables."""
from __future__ import annotations

from playground.options.loader import resolve_opts
from playground.distribution.topology import topology_from
from playground.launch.worker import thread_counts
from tests.conftest import tiny_opts


def resolved(**distributed) -> dict:
    return resolve_opts([("test", tiny_opts(distributed=distributed))], check_devices=False).opts


def test_thread_counts_come_from_the_opts_then_candles_variables_then_the_allocated_cores(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 64)              # the machine's: never the answer
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)))   # what this process may use
    four_ranks = resolved(num_cpus=4)
    assert thread_counts(four_ranks, topology_from(four_ranks, env={}), env={}) == (2, None)
    env = {"NUM_INTRA_THREADS": "3", "NUM_INTER_THREADS": "2"}
    assert thread_counts(four_ranks, topology_from(four_ranks, env={}), env=env) == (3, 2)
    given = resolved(num_cpus=4, num_intra_threads=5, num_inter_threads=1)
    assert thread_counts(given, topology_from(given, env={}), env=env) == (5, 1)
    one = resolved()   # alone in its allocation: torch's own default already follows the affinity mask
    assert thread_counts(one, topology_from(one, env={}), env={}) == (None, None)


def test_every_cpu_rank_sizes_its_threads_from_its_slurm_allocation(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)))
    one = resolved()
    assert thread_counts(one, topology_from(one, env={}), env={"SLURM_CPUS_PER_TASK": "3"}) == (3, None)
    # a task that spawns its 4 ranks shares its 6 cores; a rank that srun started as a task has its own 2
    four = resolved(num_cpus=4)
    assert thread_counts(four, topology_from(four, env={}), env={"SLURM_CPUS_PER_TASK": "6"}) == (1, None)
    step = {"SLURM_STEP_ID": "0", "SLURM_NTASKS": "4", "SLURM_PROCID": "2", "SLURM_LOCALID": "2",
            "SLURM_STEP_TASKS_PER_NODE": "4", "SLURM_CPUS_PER_TASK": "2"}
    topology = topology_from(four, env=step)
    assert (topology.launcher, thread_counts(four, topology, env=step)) == ("slurm", (2, None))


def test_allocated_cores_follow_the_affinity_mask_not_the_machine():
    import subprocess
    import sys
    probe = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
             "from playground.distribution.slurm_env import allocated_cpus; print(allocated_cpus({}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "1"


def test_a_process_applies_its_intra_op_thread_count():
    import torch

    from playground.launch.worker import _configure_torch
    opts = resolved(num_intra_threads=3)
    before = torch.get_num_threads()
    try:
        _configure_torch(opts, topology_from(opts, env={}))
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
