"""Helpers of the Determined tests: the runner (playground.determined.command_run.run_command) started as a
real process, in its own session so a test can SIGKILL the whole run (runner and ranks) at once."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import HANG, REPO

SCRIPTS = Path(__file__).resolve().parent / "core_api_mnist"
EXAMPLE = REPO / "experiments" / "determined_digits"
RUNNER = ("import json, sys\n"
          "from playground.determined.command_run import run_command\n"
          "sys.exit(run_command(**json.loads(sys.argv[1])))\n")
HPARAMS = {"global_batch_size": 16, "learning_rate": 0.5, "n_filters1": 4, "n_filters2": 4, "dropout1": 0.25,
           "dropout2": 0.5}


def context_dir(tmp_path: Path, *names: str) -> Path:
    """A context directory holding the named scripts of core_api_mnist/ and their data module."""
    folder = tmp_path / "context"
    folder.mkdir(exist_ok=True)
    for name in (*names, "local_mnist.py"):
        shutil.copy(SCRIPTS / name, folder / name)
    return folder


def example_dir(tmp_path: Path) -> Path:
    """A copy of experiments/determined_digits/core_api (the Core-API example) with its data module beside it."""
    shutil.copytree(EXAMPLE / "core_api", tmp_path / "digits" / "core_api")
    shutil.copy(EXAMPLE / "digits_data.py", tmp_path / "digits")
    return tmp_path / "digits" / "core_api"


def cluster_info(hparams: dict | None = None, **more) -> dict:
    hparams = dict(HPARAMS if hparams is None else hparams)
    config = {"searcher": {"name": "single", "metric": "test_loss", "smaller_is_better": True},
              "hyperparameters": hparams}
    return {"experiment_config": config, "hparams": hparams, "trial_id": 1, "experiment_id": 1, "max_length": None,
            "rungs": [], "records_per_epoch": 64, "global_batch_size": 16, **more}


def start(command: list[str], context: Path, run_dir: Path, info: dict, slots: int = 1, max_restarts: int = 0,
          env: dict | None = None) -> subprocess.Popen:
    arguments = {"command": command, "context_dir": str(context), "run_dir": str(run_dir), "cluster_info": info,
                 "slots": slots, "max_restarts": max_restarts, "test_mode": False}
    return subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(arguments)], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(os.environ, **(env or {})))


def run(*args, **kwargs) -> tuple[int, str]:
    process = start(*args, **kwargs)
    try:
        output, _ = process.communicate(timeout=HANG)
    finally:
        kill_group(process)
    return process.returncode, output


def kill_group(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def wait_for(predicate, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + HANG
    while not predicate():
        if process.poll() is not None:
            raise AssertionError(f"the run ended ({process.returncode}) before {what}:\n{process.stdout.read()}")
        assert time.monotonic() < deadline, f"no {what} in {HANG} s"
        time.sleep(0.02)


def stopped_after_a_checkpoint(process: subprocess.Popen, run_dir: Path) -> str:
    """SIGTERM to the runner once the trial stored its first checkpoint; the run's output once it ended."""
    try:
        wait_for(lambda: checkpoint_entries(run_dir), process, "a first checkpoint")
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=HANG)
    finally:
        kill_group(process)
    return output


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def checkpoint_entries(run_dir: Path) -> list[dict]:
    return lines(run_dir / "det_checkpoints.jsonl")


def records(run_dir: Path, kind: str | None = None) -> list[dict]:
    return [r for r in lines(run_dir / "metrics.jsonl") if kind is None or r["kind"] == kind]


def without_times(found: list[dict]) -> list[dict]:
    return [{k: v for k, v in record.items() if k != "wall_time"} for record in found]
