"""Runs under a real Slurm (tests/slurm_cluster.py: munged, slurmctld and two slurmd, nodes n1 and n2 on this host).

Marked slow; skipped with the reason only where the daemons cannot start (no slurm-wlm/munge, not root).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts)

pytestmark = pytest.mark.slow


def srun(cluster, *args: str, timeout: float = 300, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["srun", *args], env={**cluster.env, **(env or {})}, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_the_cluster_runs_a_step_of_two_tasks_on_two_nodes(slurm_cluster):
    done = srun(slurm_cluster, "-N2", "-n2", "--label", "printenv", "SLURMD_NODENAME")
    assert done.returncode == 0, done.stderr
    assert sorted(line.split(": ")[1] for line in done.stdout.splitlines()) == ["n1", "n2"]


def run_env(run: RunFolder, cluster) -> dict:
    """The run's environment for srun/sbatch: no MASTER_ADDR/MASTER_PORT (an earlier test's in-process spawn may
    have set them here), so a job finds its own."""
    env = {**run.env, "SLURM_CONF": cluster.conf}
    return {k: v for k, v in env.items() if k not in ("MASTER_ADDR", "MASTER_PORT")}


def srun_command(run: RunFolder, *extra: str) -> list[str]:
    return [sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file", str(run.opts_path), "--run-dir",
            str(run.dir), *extra]


def test_two_ranks_started_by_srun_end_bitwise_equal_to_the_built_in_launcher(slurm_cluster, tmp_path, uninterrupted):
    if not slurm_cluster.names_resolve:
        pytest.skip("the node names n1, n2 do not resolve inside jobs (no unshare -m): env rendezvous cannot meet")
    run = RunFolder(tmp_path, "srun2", checkpoint_opts(ranks=2), env=UNHINDERED)   # rendezvous_env, no MASTER_ADDR
    done = subprocess.run(["srun", "-N2", "-n2", "-c1", *srun_command(run)], env=run_env(run, slurm_cluster),
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert_same_training_state(run.checkpoint(), uninterrupted(2).run.checkpoint())
    assert_same_records(run, uninterrupted(2).run)


def test_srun_with_more_tasks_than_the_opts_have_ranks_refuses_before_training(slurm_cluster, tmp_path):
    run = RunFolder(tmp_path, "twice", checkpoint_opts(ranks=1), env=UNHINDERED)
    for extra in ((), ("--dry-run",)):
        done = subprocess.run(["srun", "-N1", "-n2", "-c1", *srun_command(run, *extra)], env=run_env(run, slurm_cluster),
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("playground: error: Slurm started 2 tasks (SLURM_NTASKS=2") == 2, done.stderr
        assert "num_shards 1 x distributed.num_cpus 1 = 1 rank(s)" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (run.dir / "metrics.jsonl").exists() and not (run.dir / "checkpoints").exists()
