"""`playground sweep submit DIR --slurm` (playground/sweeps/operations/slurm.py): the sbatch script of the agents' job array
and its submission. CI has no Slurm: a stand-in `sbatch` first on PATH plays the scheduler (it records its
arguments and the script it was given, and answers a job id as `sbatch --parsable` does); a submitted script is
run by bash, as Slurm's batch shell runs it, where its exit code is what a task's is."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from playground.cli import main
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.spec import load_spec
from tests.conftest import HANG
from tests.playground.sweeps.agents.test_agent import _contract

STAND_IN = '''#!{python}
import json, os, shutil, sys
record = os.environ["SBATCH_RECORD"]
if os.environ.get("SBATCH_FAIL"):
    print("sbatch: error: " + os.environ["SBATCH_FAIL"], file=sys.stderr)
    sys.exit(1)
shutil.copyfile(sys.argv[-1], record + ".script")
with open(record, "w") as handle:
    json.dump(sys.argv[1:], handle)
with open(record + ".env", "w") as handle:     # what Slurm would hand the job (its default --export=ALL)
    json.dump({{"PGPASSWORD": os.environ.get("PGPASSWORD")}}, handle)
print("4242;cluster0")
'''


@pytest.fixture
def sweep_dir(tmp_path, write_spec) -> callable:
    """A sweep folder as `sweep run` creates it (sweep.json: the resolved spec and its identity)."""
    def make(**top) -> Path:
        spec = load_spec(str(write_spec({"name": "grid"}, {"model_param.base_learning_rate": 0.1}, **top)))
        folder = tmp_path / "sweep"
        SweepFolder(str(folder)).write_spec(spec.raw, spec.identity())
        return folder
    return make


@pytest.fixture
def stand_in_sbatch(tmp_path, monkeypatch) -> Path:
    """Put the stand-in `sbatch` first on PATH; returns the file where it records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sbatch = bin_dir / "sbatch"
    sbatch.write_text(STAND_IN.format(python=sys.executable))
    sbatch.chmod(sbatch.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SBATCH_RECORD", str(tmp_path / "sbatch-call.json"))
    return tmp_path / "sbatch-call.json"


def directives(script: str) -> dict[str, str]:
    return dict((line.removeprefix("#SBATCH ").split("=", 1) + [""])[:2]
                for line in script.splitlines() if line.startswith("#SBATCH "))


def test_dry_run_prints_a_cpu_array_of_agents_and_writes_nothing(sweep_dir, capsys, tmp_path):
    folder = sweep_dir()
    before = sorted(p.name for p in folder.rglob("*"))
    assert main(["sweep", "submit", str(folder), "--slurm", "--agents", "4", "--workers-per-agent", "2",
                 "--dry-run"]) == 0
    script = capsys.readouterr().out
    assert script.startswith("#!/bin/bash\n")
    found = directives(script)
    assert found["--array"] == "0-3" and found["--cpus-per-task"] == "2" and "--gres" not in found
    assert found["--output"] == f"{folder}/slurm/agent-%A_%a.log" and found["--chdir"] == os.getcwd()
    assert found["--signal"] == "B:TERM@120" and found["--nodes"] == "1" and found["--ntasks"] == "1"
    assert f"exec {sys.executable} -m playground sweep agent {folder} --workers 2\n" in script
    (tmp_path / "check.sh").write_text(script)
    assert subprocess.run(["bash", "-n", str(tmp_path / "check.sh")]).returncode == 0
    assert sorted(p.name for p in folder.rglob("*")) == before


def test_gpu_trials_of_several_slots_ask_each_task_for_workers_times_slots_gpus(sweep_dir, capsys):
    folder = sweep_dir(resources={"slots_per_trial": 4})
    assert main(["sweep", "submit", str(folder), "--slurm", "--agents", "2", "--workers-per-agent", "2", "--gpus",
                 "--sbatch-arg=--partition=gpu", "--sbatch-arg=--time=04:00:00", "--sbatch-arg=--nodes=1",
                 "--dry-run"]) == 0
    script = capsys.readouterr().out
    found = directives(script)
    assert found["--gres"] == "gpu:8" and "--cpus-per-task" not in found
    assert found["--partition"] == "gpu" and found["--time"] == "04:00:00"
    assert script.count("#SBATCH --nodes=") == 1, "a given option replaces the default"
    assert "2 worker(s) each, 4 slot(s) per trial." in script


def test_submit_writes_the_script_submits_it_and_records_the_job(sweep_dir, stand_in_sbatch, capsys):
    folder = sweep_dir()
    assert main(["sweep", "submit", str(folder), "--slurm", "--agents", "3"]) == 0
    out, err = capsys.readouterr()
    assert out == "4242\n" and "submitted job array 4242" in err
    scripts = list((folder / "slurm").glob("agents-*.sbatch"))
    assert len(scripts) == 1
    assert json.loads(stand_in_sbatch.read_text()) == ["--parsable", str(scripts[0])]
    assert Path(str(stand_in_sbatch) + ".script").read_text() == scripts[0].read_text()
    assert "--array=0-2" in scripts[0].read_text()
    [entry] = [json.loads(line) for line in (folder / "control" / "slurm.jsonl").read_text().splitlines()]
    assert entry["job_id"] == "4242" and entry["script"] == str(scripts[0]) and entry["agents"] == 3
    assert entry["time"] and entry["timestamp"] > 0


def test_a_failing_sbatch_is_exit_2_with_its_message_and_records_nothing(sweep_dir, stand_in_sbatch, capsys,
                                                                          monkeypatch):
    folder = sweep_dir()
    monkeypatch.setenv("SBATCH_FAIL", "Batch job submission failed: Invalid account or account/partition")
    assert main(["sweep", "submit", str(folder), "--slurm"]) == 2
    err = capsys.readouterr().err
    assert "sbatch failed (exit code 1)" in err and "Invalid account or account/partition" in err
    assert not (folder / "control" / "slurm.jsonl").exists()


def test_missing_sbatch_is_exit_2_pointing_to_dry_run(sweep_dir, capsys, monkeypatch, tmp_path):
    folder = sweep_dir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["sweep", "submit", str(folder), "--slurm"]) == 2
    err = capsys.readouterr().err
    assert "sbatch is not on PATH" in err and "--dry-run" in err and "Traceback" not in err
    assert not (folder / "slurm").exists()


def test_a_folder_that_is_not_a_sweep_is_exit_2(tmp_path, capsys):
    assert main(["sweep", "submit", str(tmp_path), "--slurm", "--dry-run"]) == 2
    assert f"{tmp_path} is not a sweep folder" in capsys.readouterr().err


def test_submit_with_a_spec_creates_the_sweep_folder_and_refuses_another_sweep_there(tmp_path, write_spec,
                                                                                     stand_in_sbatch, capsys):
    spec_file = write_spec({"name": "grid"}, {"model_param.base_learning_rate": 0.1}, resources={"slots_per_trial": 2})
    folder = tmp_path / "new-sweep"
    assert main(["sweep", "submit", str(folder), "--spec", str(spec_file), "--slurm", "--workers-per-agent", "3"]) == 0
    spec = load_spec(str(spec_file))
    stored = json.loads((folder / "sweep.json").read_text())
    assert stored["identity"] == spec.identity() and stored["spec"]["resources"] == {"slots_per_trial": 2}
    assert "--cpus-per-task=6" in next((folder / "slurm").glob("agents-*.sbatch")).read_text()
    other = write_spec({"name": "grid"}, {"model_param.base_learning_rate": 0.2}, name="other.json")
    capsys.readouterr()
    assert main(["sweep", "submit", str(folder), "--spec", str(other), "--slurm"]) == 2
    assert "holds a different sweep" in capsys.readouterr().err
    assert len((folder / "control" / "slurm.jsonl").read_text().splitlines()) == 1


def test_agents_of_a_proxy_sweep_are_started_with_the_same_storage_url(sweep_dir, capsys):
    folder = sweep_dir()
    assert main(["sweep", "submit", str(folder), "--slurm", "--storage", "grpc://node07.site:13000", "--dry-run"]) == 0
    assert (f"exec {sys.executable} -m playground sweep agent {folder} --workers 1 --storage grpc://node07.site:13000\n"
            in capsys.readouterr().out)


def test_agents_of_a_postgresql_sweep_get_its_url_from_sweep_json_and_no_password_is_written(
        sweep_dir, stand_in_sbatch, capsys, monkeypatch):
    folder = sweep_dir(storage="postgresql://ann:s3cret@db.site:5432/sweeps")
    stored = json.loads((folder / "sweep.json").read_text())
    assert stored["spec"]["storage"] == "postgresql://ann@db.site:5432/sweeps"
    monkeypatch.delenv("PGPASSWORD", raising=False)
    assert main(["sweep", "submit", str(folder), "--slurm"]) == 0     # no --storage: the one sweep.json holds
    [script] = (folder / "slurm").glob("agents-*.sbatch")
    assert script.read_text().endswith("--workers 1 --storage postgresql://ann@db.site:5432/sweeps\n")
    # a password given on the command line reaches the agents through sbatch's environment, never a file
    capsys.readouterr()
    url = "postgresql://ann:s3cret@db.site:5432/sweeps"
    assert main(["sweep", "submit", str(folder), "--slurm", "--storage", url]) == 0
    assert json.loads(Path(str(stand_in_sbatch) + ".env").read_text()) == {"PGPASSWORD": "s3cret"}
    out, err = capsys.readouterr()
    written = [p.read_text() for p in folder.rglob("*") if p.is_file()]
    assert not any("s3cret" in text for text in [out, err, *written])
    assert all(text.endswith("--storage postgresql://ann@db.site:5432/sweeps\n")
               for text in (p.read_text() for p in (folder / "slurm").glob("agents-*.sbatch")))


def test_submit_refuses_moving_a_postgresql_sweep_to_the_journal_with_exit_2(sweep_dir, capsys, tmp_path):
    folder = sweep_dir()
    data = json.loads((folder / "sweep.json").read_text())
    data["storage"] = {"url": "postgresql://ann@db.site:5432/sweeps", "study": "grid-1234"}
    (folder / "sweep.json").write_text(json.dumps(data))
    assert main(["sweep", "submit", str(folder), "--slurm", "--storage", "journal", "--dry-run"]) == 2
    assert "cannot move to journal" in capsys.readouterr().err


def test_allow_failed_trials_reaches_every_agent_so_their_tasks_end_0_after_failed_trials(
        write_spec, base_file, tmp_path, stand_in_sbatch, capsys):
    """Each array task runs its script's agent as the batch shell (exec): the task's exit code is the agent's.
    Here the submitted scripts are run by bash, as the batch shell runs them, on a sweep with a failed trial."""
    _contract(base_file, contract_fail_learning_rates=[0.01])
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.01]}},
                      max_restarts=0)
    folder = tmp_path / "sweep"
    scripts = []
    for flag in ([], ["--allow-failed-trials"]):
        assert main(["sweep", "submit", str(folder), "--spec", str(spec), "--slurm", *flag]) == 0
        scripts.append(Path(json.loads(stand_in_sbatch.read_text())[-1]))
    plain, allowing = (script.read_text() for script in scripts)
    assert plain.endswith(f"sweep agent {folder} --workers 1\n")
    assert allowing.endswith(f"sweep agent {folder} --workers 1 --allow-failed-trials\n")
    entries = [json.loads(line) for line in (folder / "control" / "slurm.jsonl").read_text().splitlines()]
    assert [entry["allow_failed_trials"] for entry in entries] == [False, True]
    ended = [subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=HANG) for script in scripts]
    assert [done.returncode for done in ended] == [1, 0], [done.stderr for done in ended]
    assert ended[0].stderr.strip().splitlines()[-1] == ("sweep done: 1 complete, 1 failed (t0001: see sweep status); "
                                                        "exit code 1")
    assert ended[1].stderr.strip().splitlines()[-1] == ("sweep done: 1 complete, 1 failed (t0001: see sweep status); "
                                                        "allowed by --allow-failed-trials; exit code 0")
