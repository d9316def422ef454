"""A sweep slot's threads come from the job's allocation (affinity mask, SLURM_CPUS_PER_TASK), not the machine."""
import os

import pytest

from playground.sweeps.agents.trial_process import slot_env


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs at least 2 cores in the affinity mask")
def test_a_slot_uses_slurms_cpus_per_task_not_every_core_it_could_see(monkeypatch):
    cores = len(os.sched_getaffinity(0))
    assert slot_env(0, 1, gpus=[])["OMP_NUM_THREADS"] == str(cores)
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    env = slot_env(0, 1, gpus=[])
    assert env["OMP_NUM_THREADS"] == env["NUM_INTRA_THREADS"] == "1"


def test_the_slots_share_the_allocation(monkeypatch):
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "4")
    cores = min(len(os.sched_getaffinity(0)), 4)
    assert [slot_env(s, 2, gpus=[])["OMP_NUM_THREADS"] for s in range(2)] == [str(max(cores // 2, 1))] * 2
