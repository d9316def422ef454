"""Runs under a real Slurm (tests/slurm_cluster.py: munged, slurmctld and two slurmd, nodes n1 and n2 on this host).

Marked slow; skipped with the reason only where the daemons cannot start (no slurm-wlm/munge, not root).
"""
from __future__ import annotations

import subprocess

import pytest

pytestmark = pytest.mark.slow


def srun(cluster, *args: str, timeout: float = 300, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["srun", *args], env={**cluster.env, **(env or {})}, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_the_cluster_runs_a_step_of_two_tasks_on_two_nodes(slurm_cluster):
    done = srun(slurm_cluster, "-N2", "-n2", "--label", "printenv", "SLURMD_NODENAME")
    assert done.returncode == 0, done.stderr
    assert sorted(line.split(": ")[1] for line in done.stdout.splitlines()) == ["n1", "n2"]
