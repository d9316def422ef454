"""Runs under a real Slurm (tests/slurm_cluster.py: munged, slurmctld and two slurmd, nodes n1 and n2 on this host).

Marked slow; skipped with the reason only where the daemons cannot start (no slurm-wlm/munge, not root).
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts)

# serial: run after the parallel tests, alone (make test): Slurm's signal and requeue timing, and its agents'
# leases, are the things tested, and a second worker's load shifted them enough to fail a run that was right
pytestmark = [pytest.mark.slow, pytest.mark.serial]
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL",
         "DEADLINE"}   # Slurm's final job states (others: PENDING, RUNNING, SIGNALING, COMPLETING, REQUEUED, ...)


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


def test_two_ranks_started_by_srun_end_bitwise_equal_to_the_built_in_launcher(slurm_cluster, tmp_path):
    if not slurm_cluster.names_resolve:
        pytest.skip("the node names n1, n2 do not resolve inside jobs (no unshare -m): env rendezvous cannot meet")
    # both in allocations of 2 cores, so each rank has 1 thread: the thread count changes a sum's last bits
    srun = RunFolder(tmp_path, "srun2", checkpoint_opts(ranks=2), env=UNHINDERED)   # rendezvous_env, no MASTER_ADDR
    spawned = RunFolder(tmp_path, "spawned2", checkpoint_opts(ranks=2), env=UNHINDERED)
    started = [subprocess.Popen(["srun", *layout, *srun_command(run)], env=run_env(run, slurm_cluster), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
               for layout, run in ((["-N2", "-n2", "-c1"], srun), (["-N1", "-n1", "-c2"], spawned))]
    for process in started:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, stderr
    assert sorted(srun.rank_pids()) == [0, 1]   # each srun task trained as one rank
    assert_same_training_state(srun.checkpoint(), spawned.checkpoint())
    assert_same_records(srun, spawned)


def test_srun_with_more_tasks_than_the_opts_have_ranks_refuses_before_training(slurm_cluster, tmp_path):
    run = RunFolder(tmp_path, "twice", checkpoint_opts(ranks=1), env=UNHINDERED)
    started = [subprocess.Popen(["srun", "-N1", "-n2", "-c1", *srun_command(run, *extra)], text=True,
                                env=run_env(run, slurm_cluster), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL) for extra in ((), ("--dry-run",))]
    for process in started:
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 2, stderr
        assert stderr.count("playground: error: Slurm started 2 tasks (SLURM_NTASKS=2") == 2, stderr
        assert "num_shards 1 x distributed.num_cpus 1 = 1 rank(s)" in stderr
        assert "Traceback" not in stderr
    assert not (run.dir / "metrics.jsonl").exists() and not (run.dir / "checkpoints").exists()


# The two ways users write a batch script that survives its time limit (docs/checkpoints.md, Slurm), as run here:
# python under srun gets the job step's --signal; python started by the batch shell only through the shell's trap.
# The first attempt sleeps in every iteration so the signal lands inside training; the requeued one runs at speed.
SCRIPT_HEAD = """#!/bin/bash
#SBATCH --time=2 --ntasks=1 --cpus-per-task=1 --open-mode=append --output={log}
#SBATCH {signal}
[ "${{SLURM_RESTART_COUNT:-0}}" -gt 0 ] && export PLAYGROUND_TEST_ITER_SLEEP=0   # the test's, not the recipe's
"""
RECIPES = {
    "srun": ("--signal=TERM@{warn}", """
srun {command}
if [ $? -eq 75 ]; then scontrol requeue "$SLURM_JOB_ID"; fi
"""),
    "batch_shell": ("--signal=B:TERM@{warn}", """
trap 'kill -TERM "$pid"' TERM
{command} &
pid=$!
wait "$pid"; code=$?
if [ $code -gt 128 ] && kill -0 "$pid" 2>/dev/null; then wait "$pid"; code=$?; fi   # the trap ran: wait again
if [ $code -eq 75 ]; then scontrol requeue "$SLURM_JOB_ID"; fi
"""),
}
# slurmctld sends the signal at its first time-limit check (every 30 s) that finds <= WARN_S + 30 s left: with a
# 2-minute limit 30-60 s into the job (measured: 45-57 s), well after python has installed its handler; with a
# 1-minute limit it came at the first check, which can fall inside python's start-up and kill it.
WARN_S = 60
ITER_SLEEP = "1.4"    # 48 iterations: the first attempt would train for about 70 s, through the signal


@pytest.fixture(scope="module")
def requeued_runs(slurm_cluster, tmp_path_factory):
    """Both recipes submitted at once (1 CPU each) and driven to the end (a requeued job waits out the cluster's
    short requeue delay, tests/slurm_cluster.py CRED_EXPIRE_S), beside an uninterrupted run by srun. (uninterrupted RunFolder,
    name -> (scontrol fields at the end, RunFolder, job log))."""
    jobs = {}
    for name, (signal_line, body) in RECIPES.items():
        folder = tmp_path_factory.mktemp(f"requeue-{name}")
        run = RunFolder(folder, "run", checkpoint_opts(), env={"PLAYGROUND_TEST_ITER_SLEEP": ITER_SLEEP})
        log = folder / "job.log"
        script = folder / "job.sbatch"
        script.write_text(SCRIPT_HEAD.format(log=log, signal=signal_line.format(warn=WARN_S))
                          + body.format(command=" ".join(srun_command(run))))
        done = subprocess.run(["sbatch", "--parsable", f"--chdir={folder}", str(script)],
                              env=run_env(run, slurm_cluster), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        jobs[name] = (done.stdout.strip().split(";")[0], run, log)
    # the uninterrupted run, in an allocation of the same size (the thread count changes a sum's last bits)
    whole = RunFolder(tmp_path_factory.mktemp("requeue-whole"), "run", checkpoint_opts(), env=UNHINDERED)
    reference = subprocess.Popen(["srun", "-n1", "-c1", *srun_command(whole)], env=run_env(whole, slurm_cluster),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 400
    ended: dict[str, dict] = {}
    while len(ended) < len(jobs) and time.monotonic() < deadline:
        for name, (job_id, run, log) in jobs.items():
            fields = slurm_cluster.job(job_id)
            if fields["JobState"] in ENDED:
                ended[name] = fields
        time.sleep(1)
    _, stderr = reference.communicate(timeout=300)
    assert reference.returncode == 0, stderr
    return whole, {name: (ended.get(name) or slurm_cluster.job(job_id), run, log.read_text() if log.exists() else "")
                   for name, (job_id, run, log) in jobs.items()}


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_the_time_limit_requeue_recipe_ends_bitwise_equal_to_an_uninterrupted_run(recipe, requeued_runs):
    whole, runs = requeued_runs
    fields, run, log = runs[recipe]
    said = " ".join(f"{k}={fields.get(k)}" for k in ("JobState", "Reason", "ExitCode", "Restarts", "RunTime"))
    assert (fields["JobState"], fields["ExitCode"], fields["Restarts"]) == ("COMPLETED", "0:0", "1"), f"{said}\n{log}"
    assert "stopped by SIGTERM; a checkpoint was written" in log and "run finished:" in log, log
    assert_same_training_state(run.checkpoint(), whole.checkpoint())
    assert_same_records(run, whole)


def wait_for_job(cluster, job_id: str, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = cluster.job(job_id)
        if fields["JobState"] in ENDED:
            return fields
        time.sleep(0.5)
    raise TimeoutError(f"job {job_id} still {fields['JobState']} after {timeout} s")


def test_a_submitted_run_trains_its_ranks_as_srun_tasks_on_both_nodes(slurm_cluster, tmp_path):
    if not slurm_cluster.names_resolve:
        pytest.skip("the node names n1, n2 do not resolve inside jobs (no unshare -m): env rendezvous cannot meet")
    opts = checkpoint_opts(ranks=2)
    opts["distributed"].update(num_shards=2, num_cpus=1)   # one rank per node
    run = RunFolder(tmp_path, "submitted", opts, env=UNHINDERED)
    done = subprocess.run([sys.executable, "-m", "playground", "submit", "--parameters-file", str(run.opts_path),
                           "--run-dir", str(run.dir), "--sbatch-arg=--time=5"], cwd=tmp_path,
                          env=run_env(run, slurm_cluster), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    fields = wait_for_job(slurm_cluster, job_id)
    log = (run.dir / "slurm" / f"job-{job_id}.log").read_text()
    assert (fields["JobState"], fields["ExitCode"], fields["NodeList"]) == ("COMPLETED", "0:0", "n[1-2]"), log
    assert sorted(run.rank_pids()) == [0, 1] and "run finished:" in log
    assert len(run.records()) == run.results()["records"]   # rank 0 alone wrote, once


def test_a_sweep_array_with_one_agent_cancelled_mid_trial_ends_complete_and_its_trial_bitwise(slurm_cluster,
                                                                                              tmp_path):
    """`sweep submit --slurm` of 2 agents; one array task scancel'ed while both train: its trial checkpoints,
    exits 75 and is released, the other agent finishes it and the rest of the budget, exactly."""
    base = RunFolder(tmp_path, "base", checkpoint_opts(), env={"PLAYGROUND_TEST_ITER_SLEEP": "0.1"})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "cancel", "base": base.opts_path.name,
                                "objective": {"metric": "test_loss", "mode": "min"}, "searcher": {"name": "grid"},
                                "space": {"model_param.base_learning_rate": {"type": "categorical",
                                                                             "vals": [0.1, 0.05, 0.02]}}}))
    sweep = tmp_path / "sweep"
    done = subprocess.run([sys.executable, "-m", "playground", "sweep", "submit", str(sweep), "--spec", str(spec),
                           "--slurm", "--agents", "2"], cwd=tmp_path, env=run_env(base, slurm_cluster),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    trials = sweep / "trials"
    deadline = time.monotonic() + 180
    while len(glob.glob(str(trials / "*" / "training.rank0.*"))) < 2:   # both agents are training a trial
        assert time.monotonic() < deadline, slurm_cluster.logs()
        time.sleep(0.05)
    subprocess.run(["scancel", f"{job_id}_1"], env=slurm_cluster.env, check=True, timeout=60)

    def stopped() -> list[Path]:   # the cancelled agent's trial: it wrote a preemption checkpoint
        return [p.parent.parent for p in trials.glob("*/checkpoints/ckpt.log") if "preemption" in p.read_text()]
    while not stopped():
        assert time.monotonic() < deadline, slurm_cluster.logs()
        time.sleep(0.1)
    trial = stopped()[0]
    # the same trial uninterrupted, meanwhile, in an allocation of the same size (threads change a sum's last bits)
    whole = subprocess.Popen(["srun", "-n1", "-c1", sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file",
                              str(trial / "opts.json"), "--run-dir", str(tmp_path / "whole")],
                             env={**run_env(base, slurm_cluster), **UNHINDERED}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    for task in (0, 1):
        wait_for_job(slurm_cluster, f"{job_id}_{task}", timeout=400)
    logs = "\n".join(p.read_text() for p in (sweep / "slurm").glob("agent-*.log"))
    states = {p.parent.name: json.loads(p.read_text())["state"] for p in trials.glob("*/trial.json")}
    assert states == {"t0000": "complete", "t0001": "complete", "t0002": "complete"}, logs   # the budget, exactly
    assert stopped() == [trial], logs   # one trial was stopped, and continued by the other agent
    _, stderr = whole.communicate(timeout=300)
    assert whole.returncode == 0, stderr
    assert_same_training_state(last_checkpoint(trial), last_checkpoint(tmp_path / "whole"))
    assert_same_records(RunFolder.existing(trial.parent, trial.name), RunFolder.existing(tmp_path, "whole"))


def last_checkpoint(run_dir: Path) -> dict:
    return torch.load(os.path.realpath(run_dir / "checkpoints" / "last"), weights_only=True)


def test_a_sweep_array_with_a_failed_trial_ends_failed_1_unless_submitted_with_allow_failed_trials(slurm_cluster,
                                                                                                   tmp_path):
    """What Slurm shows of a sweep's array tasks (docs/sweeps.md, What Slurm shows): the agent is the batch shell,
    so a sweep done with a failed trial ends its task FAILED with exit code 1; `sweep submit --allow-failed-trials`
    passes the flag to the agents, and the same sweep's task then ends COMPLETED, 0."""
    from tests.playground.sweeps.conftest import CONTRACT_TRIAL, tiny_mlp_opts
    opts = tiny_mlp_opts()
    opts["model_param"]["contract_fail_learning_rates"] = [0.01]   # the stand-in trial program fails at this rate
    (tmp_path / "base.json").write_text(json.dumps({"opts": opts}))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "failing", "base": "base.json", "trial_program": CONTRACT_TRIAL,
                                "max_restarts": 0, "objective": {"metric": "test_loss", "mode": "min"},
                                "searcher": {"name": "grid"},
                                "space": {"model_param.base_learning_rate": {"type": "categorical",
                                                                             "vals": [0.1, 0.01]}}}))
    sweep = tmp_path / "sweep"
    env = {**slurm_cluster.env, "PYTHONPATH": str(REPO)}
    ended = []
    for flag in ([], ["--allow-failed-trials"]):   # the second array finds the sweep done, with its failed trial
        done = subprocess.run([sys.executable, "-m", "playground", "sweep", "submit", str(sweep), "--spec", str(spec),
                               "--slurm", "--sbatch-arg=--cpus-per-task=1", *flag], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        job_id = done.stdout.strip()
        fields = wait_for_job(slurm_cluster, f"{job_id}_0")
        log = (sweep / "slurm" / f"agent-{job_id}_0.log").read_text()
        ended.append(((fields["JobState"], fields["ExitCode"]), log.strip().splitlines()[-1]))
    assert ended == [(("FAILED", "1:0"), "sweep done: 1 complete, 1 failed (t0001: see sweep status); exit code 1"),
                     (("COMPLETED", "0:0"), "sweep done: 1 complete, 1 failed (t0001: see sweep status); allowed by "
                                            "--allow-failed-trials; exit code 0")], slurm_cluster.logs()
