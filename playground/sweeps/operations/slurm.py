"""`sweep submit DIR --slurm`: one sbatch job array of sweep agents, written under DIR/slurm/, submitted, returned
from at once (the scheduler is never polled).

Array task i runs `python -m playground sweep agent DIR --workers K` on one node, its log in
DIR/slurm/agent-<job>_<i>.log; the agent is the batch shell (exec), so the task's exit code is the agent's: 0,
1 when the sweep is done with failed trials (0 with `allow_failed_trials`, passed on as --allow-failed-trials),
2, or 75 when stopped. The task asks for K x slots_per_trial CPU cores, or with `gpus` that many GPUs
(the agent gives each of its K workers a disjoint share of them, so a trial gets slots_per_trial GPUs; a trial
whose opts ask for that many spawns its ranks itself, and a torchrun `trial_program` starts them with
torchrun). `--sbatch-arg` lines come after the defaults and replace a default of the same option. Each
submission is a line of DIR/control/slurm.jsonl (job id, script, time). With a spec, DIR is created first
(sweep.json only: the first agent to start creates the study). Nothing here imports the trainer.

Storage: a sweep whose study is not the folder's journal (PostgreSQL, a `sweep serve` proxy; from --storage, the
spec, else what sweep.json recorded) has its agents started with `--storage URL`, the same URL without any
password: the script is an ordinary file others may read. A password given in the URL reaches the agents as
PGPASSWORD in sbatch's environment, which Slurm hands to the job (its default --export=ALL), as the docs advise
for `sweep run`.
"""
from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

from playground.restarts.jsonl import append_json_line
from playground.processes.exit_codes import EXIT_DONE
from playground.processes.supervisor import run_tool
from playground.sweeps.errors import SweepError
from playground.sweeps.files.module_maps import record_module_map, use_sweep_module_map
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.storage_url import JOURNAL, password, redact

SBATCH_TIMEOUT_S = 120
STOP_WARNING_S = 120   # SIGTERM to the agent this long before the time limit: its trials checkpoint and exit 75


@dataclass
class SlurmRequest:
    agents: int = 1
    workers_per_agent: int = 1
    gpus: bool = False
    sbatch_args: list[str] = field(default_factory=list)
    allow_failed_trials: bool = False   # each agent exits 0 when the sweep is done with failed trials


def sweep_folder(sweep_dir: str) -> tuple[SweepFolder, dict]:
    """The sweep folder and its resolved spec; SweepError when DIR holds no sweep."""
    folder = SweepFolder(sweep_dir)
    if not folder.exists():
        raise SweepError(f"{folder.root} is not a sweep folder (it has no sweep.json); give the spec to create "
                         f"it (`sweep submit {sweep_dir} --spec SPEC --slurm ...`), or start it with `sweep run SPEC "
                         f"--sweep-dir {sweep_dir}`")
    return folder, folder.read_spec().get("spec", {})


def checked_spec(spec_file: str, folder: SweepFolder) -> tuple[dict, str, str]:
    """The resolved spec of `spec_file`, its identity and its storage URL (as written, password and all),
    validated as `sweep run` does before anything runs (with the sweep's module map, use_sweep_module_map)."""
    from playground.sweeps.inputs.prepare import prepare_sweep
    from playground.sweeps.inputs.spec import load_spec
    loaded = load_spec(spec_file)
    use_sweep_module_map(folder, loaded.base)
    spec = prepare_sweep(loaded).spec
    return spec.raw, spec.identity(), spec.storage


def create_or_check(folder: SweepFolder, raw: dict, identity: str) -> None:
    """Write sweep.json of a new sweep folder (the agents create the study); an existing one must hold this
    sweep (only the budget may differ, as for `sweep run`, and sweep.json then takes the new one)."""
    if folder.exists():
        folder.check_same_sweep(raw, identity)
        folder.record_budget(raw)
    else:
        folder.write_spec(raw, identity)


def check_request(request: SlurmRequest) -> None:
    if request.agents < 1 or request.workers_per_agent < 1:
        raise SweepError("--agents and --workers-per-agent must be at least 1")
    bad = [arg for arg in request.sbatch_args if not arg.startswith("-")]
    if bad:
        raise SweepError(f"--sbatch-arg {bad[0]!r}: give sbatch options as they are written on its command line, "
                         "e.g. --sbatch-arg=--partition=gpu or --sbatch-arg=--time=04:00:00")


def agents_storage(folder: SweepFolder, requested: str | None) -> str | None:
    """The storage URL the agents must be given (--storage, else the spec's, else sweep.json's), None when they
    open the folder's journal by themselves. May hold a password: put only `redact(url, mark="")` in files."""
    from playground.sweeps.search.storages import locate
    storage = locate(folder, requested).storage   # refuses a move between kinds, as the agents would
    return None if storage.kind == JOURNAL and requested in (None, "auto") else storage.url


def agent_script(folder: SweepFolder, spec: dict, request: SlurmRequest, python: str | None = None,
                 workdir: str | None = None, storage: str | None = None) -> str:
    """The sbatch script of the agents' job array; `storage`: the URL its agents open (its password left out)."""
    slots = int((spec.get("resources") or {}).get("slots_per_trial", 1))
    per_task = request.workers_per_agent * slots
    logs = os.path.join(folder.root, "slurm")
    defaults = [f"--job-name=sweep-{spec.get('name') or os.path.basename(folder.root)}",
                f"--array=0-{request.agents - 1}", "--nodes=1", "--ntasks=1",
                f"--output={logs}/agent-%A_%a.log", f"--chdir={workdir or os.getcwd()}",
                f"--signal=B:TERM@{STOP_WARNING_S}"]
    defaults += [f"--gres=gpu:{per_task}"] if request.gpus else [f"--cpus-per-task={per_task}"]
    given = {_option(arg) for arg in request.sbatch_args}
    directives = [arg for arg in defaults if _option(arg) not in given] + request.sbatch_args
    command = [python or sys.executable, "-m", "playground", "sweep", "agent", folder.root,
               "--workers", str(request.workers_per_agent)]
    if storage is not None:
        command += ["--storage", redact(storage, mark="")]
    if request.allow_failed_trials:
        command.append("--allow-failed-trials")
    return "\n".join([
        "#!/bin/bash",
        f"# {request.agents} sweep agent(s) of {folder.root}, {request.workers_per_agent} worker(s) each, "
        f"{slots} slot(s) per trial.",
        "# Written by `playground sweep submit`; each array task is one agent (docs/sweeps.md, Many hosts).",
        *(f"#SBATCH {shlex.quote(arg)}" for arg in directives),
        "",
        "export PYTHONUNBUFFERED=1",
        # exec: the agent is the batch shell itself, so Slurm's SIGTERM (time limit, preemption) reaches it.
        f"exec {shlex.join(command)}",
        ""])


def submit(sweep_dir: str, request: SlurmRequest, dry_run: bool = False, spec_file: str | None = None,
           storage: str | None = None) -> int:
    """Write and submit the array (or, with `dry_run`, print its script and write nothing); the exit code.
    With `spec_file` the sweep folder is created from it first (or checked to hold the same sweep). `storage`:
    --storage URL (default: the spec's storage, else the one sweep.json recorded)."""
    check_request(request)
    if spec_file is not None:
        folder = SweepFolder(sweep_dir)
        raw, identity, spec_storage = checked_spec(spec_file, folder)
        spec = raw
    else:
        folder, spec = sweep_folder(sweep_dir)
        spec_storage = spec.get("storage")
        use_sweep_module_map(folder, spec.get("base"))
    url = agents_storage(folder, storage or spec_storage)
    script = agent_script(folder, spec, request, storage=url)
    if dry_run:
        print(script, end="")
        return EXIT_DONE
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise SweepError("sbatch is not on PATH: submit from a Slurm login node, or see the script with --dry-run "
                         "and submit it yourself")
    if spec_file is not None:
        create_or_check(folder, raw, identity)
    record_module_map(folder)   # the agents use it
    path = _write_script(folder, script)
    secret = password(url) if url else None
    job_id = _sbatch(sbatch, path, {**os.environ, "PGPASSWORD": secret} if secret else None)
    _record(folder, {"job_id": job_id, "script": path, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                     "timestamp": time.time(), "agents": request.agents,
                     "workers_per_agent": request.workers_per_agent, "gpus": request.gpus,
                     "sbatch_args": request.sbatch_args, "allow_failed_trials": request.allow_failed_trials,
                     "host": socket.gethostname(),
                     "storage": redact(url, mark="") if url else None})
    print(job_id)
    print(f"playground sweep: submitted job array {job_id}: {request.agents} agent(s) x {request.workers_per_agent} "
          f"worker(s) on {folder.root}; script {path}; logs {folder.root}/slurm/agent-{job_id}_<task>.log "
          f"(`squeue -j {job_id}`, `playground sweep status {sweep_dir}`)", file=sys.stderr)
    return EXIT_DONE


def _option(arg: str) -> str:
    return arg.split("=", 1)[0]


def _write_script(folder: SweepFolder, script: str) -> str:
    logs = os.path.join(folder.root, "slurm")
    os.makedirs(logs, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for suffix in ("", *(f"-{n}" for n in range(2, 1000))):
        path = os.path.join(logs, f"agents-{stamp}{suffix}.sbatch")
        try:
            with open(path, "x", encoding="utf-8") as handle:
                handle.write(script)
            return path
        except FileExistsError:
            continue
    raise SweepError(f"{logs}: too many scripts named agents-{stamp}*.sbatch")


def _sbatch(sbatch: str, path: str, env: dict[str, str] | None = None) -> str:
    """Submit `path`; `env`: sbatch's environment (None: ours), which Slurm passes on to the job."""
    try:
        done = run_tool([sbatch, "--parsable", path], SBATCH_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise SweepError(f"sbatch did not answer within {SBATCH_TIMEOUT_S} s; the job may or may not have been "
                         f"submitted (check `squeue --me`); the script is {path}") from None
    reason = "\n  ".join((done.stderr.strip() or done.stdout.strip() or "no message").splitlines())
    if done.returncode != 0:
        raise SweepError(f"sbatch failed (exit code {done.returncode}) on {path}:\n  {reason}")
    job_id = done.stdout.strip().split(";")[0]
    if not job_id:
        raise SweepError(f"sbatch --parsable printed no job id for {path}:\n  {reason}")
    return job_id


def _record(folder: SweepFolder, entry: dict) -> None:
    os.makedirs(folder.control, exist_ok=True)
    append_json_line(os.path.join(folder.control, "slurm.jsonl"), entry)
