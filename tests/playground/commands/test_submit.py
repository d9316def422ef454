"""`playground submit` (playground/commands/submit.py, launch/slurm_script.py): one run's sbatch script, checked
as `run` checks the opts; the real submission is in tests/playground/launch/test_under_slurm.py."""
from __future__ import annotations

import shlex

from tests.conftest import REPO, run_cli

SMOKE = str(REPO / "experiments" / "smoke.json")


def test_the_script_asks_for_one_task_per_rank_started_by_srun_and_requeues_after_a_preemption(tmp_path):
    run_dir = tmp_path / "runs" / "exp"
    done = run_cli("submit", "--parameters-file", SMOKE, "--set", "distributed.num_shards=2", "--set",
                   "distributed.num_cpus=2", "--run-dir", str(run_dir), "--sbatch-arg=--time=30",
                   "--sbatch-arg=--signal=TERM@300", "--dry-run", script="playground", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    directives = [line.removeprefix("#SBATCH ") for line in lines if line.startswith("#SBATCH ")]
    assert directives == ["--job-name=exp", "--nodes=2", "--ntasks-per-node=2",
                          f"--output={run_dir}/slurm/job-%j.log", "--open-mode=append", f"--chdir={tmp_path}",
                          "--requeue", "--time=30", "--signal=TERM@300"]   # a given option replaces the default
    srun = next(line for line in lines if line.startswith("srun "))
    words = shlex.split(srun)
    assert words[2:5] == ["-m", "playground", "run"] and words[-2:] == ["--run-dir", str(run_dir)]
    assert "distributed.num_shards=2" in words and "--dry-run" not in words
    assert 'if [ "$code" -eq 75 ]; then scontrol requeue "$SLURM_JOB_ID"; fi' in lines
    assert not run_dir.exists()   # a dry run writes nothing


def test_what_srun_or_the_job_decides_is_refused_and_bad_opts_are_reported_before_anything_is_written(tmp_path):
    done = run_cli("submit", "--parameters-file", SMOKE, "--shard-id", "1", "--dry-run", script="playground",
                   cwd=tmp_path)
    assert done.returncode == 2 and "--shard-id cannot be submitted" in done.stderr
    done = run_cli("submit", "--parameters-file", SMOKE, "--set", "epoch_iter.num_epochs=-1", "--run-dir",
                   str(tmp_path / "r"), script="playground", cwd=tmp_path)
    assert done.returncode == 2 and "num_epochs" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()
