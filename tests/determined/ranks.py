"""Starting a Determined trial's processes as the runner will: a cluster file in the run folder, torchrun's
variables per rank (gloo on CPU), PYTHONPATH with playground's `determined` first, cwd the context directory.

The tests start the ranks here with subprocess, with the runner's on-path folder (command_run.ON_PATH) first on
PYTHONPATH so `import determined` is ours, because they SIGKILL and SIGTERM the ranks themselves; runs through
the runner itself (`playground run EXPERIMENT.yaml`) are test_mnist_examples.py's.
"""
from __future__ import annotations

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import torch

from playground.determined.cluster_file import CLUSTER_ENV, write_cluster_file
from playground.determined.command_run import ON_PATH
from tests import zygote
from tests.conftest import HANG, REPO

TRIALS = Path(__file__).resolve().parent / "trials"
TIMING_KEYS = ("samples_per_sec", "secs_per_train", "wall_time")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], run_dir: Path, info: dict, ranks: int, env: dict | None = None,
          cwd: Path = TRIALS) -> list[subprocess.Popen]:
    """Every rank of `command`, started in the trials folder (or `cwd`) with the cluster info written for
    `run_dir`."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = write_cluster_file(str(run_dir), dict(info, run_dir=str(run_dir), slots_per_trial=ranks))
    port = str(free_port())
    processes = []
    for rank in range(ranks):
        rank_env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=f"{ON_PATH}{os.pathsep}{REPO}",
                        **{CLUSTER_ENV: path}, RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank),
                        LOCAL_WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **(env or {}))
        with open(run_dir / f"rank{rank}.out", "a") as log:
            processes.append(zygote.start(command, cwd=cwd, env=rank_env, stdout=log, stderr=subprocess.STDOUT))
    return processes


def wait(processes: list[subprocess.Popen], run_dir: Path) -> list[int]:
    return [p.wait(timeout=HANG) for p in processes]


def output(run_dir: Path) -> str:
    return "".join(Path(p).read_text() for p in sorted(glob.glob(str(run_dir / "rank*.out"))))


def run(command: list[str], run_dir: Path, info: dict, ranks: int, cwd: Path = TRIALS) -> None:
    """A session to its end; it must succeed."""
    codes = wait(start(command, run_dir, info, ranks, cwd=cwd), run_dir)
    assert codes == [0] * ranks, output(run_dir)


def interrupt(command: list[str], run_dir: Path, info: dict, ranks: int, how: int, after: str,
              cwd: Path = TRIALS) -> list[int]:
    """A slowed session, sent `how` (SIGKILL, SIGTERM) on every rank once the file `after` exists in the run
    folder; its exit codes."""
    processes = start(command, run_dir, info, ranks, env={"DET_TEST_BATCH_SLEEP": "0.15"}, cwd=cwd)
    deadline = time.time() + HANG
    while not (run_dir / after).exists():
        assert time.time() < deadline and all(p.poll() is None for p in processes), output(run_dir)
        time.sleep(0.05)
    for p in processes:
        p.send_signal(how)
    return wait(processes, run_dir)


def kill_and_rerun(command: list[str], run_dir: Path, info: dict, ranks: int, whole: Path) -> None:
    """SIGKILL every rank of a session once its batch-4 checkpoint exists, re-run it in the same folder, and check
    that it ends as the uninterrupted run in `whole` did, bitwise."""
    codes = interrupt(command, run_dir, info, ranks, signal.SIGKILL, after="checkpoints/model_checkpoint_batch4.pt")
    assert codes == [-signal.SIGKILL] * ranks
    run(command, run_dir, info, ranks)
    assert "resumed from" in output(run_dir)
    assert_same_training(run_dir, whole)


def final_state(run_dir: Path) -> dict:
    """The final checkpoint's state: every model, optimizer and hook."""
    from playground.checkpoints.files import read_pointer
    return torch.load(read_pointer(str(run_dir / "checkpoints"), "last"), weights_only=True)


def records(run_dir: Path) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS} for line in lines]


def assert_same_training(a: Path, b: Path) -> None:
    """Bitwise the same models, optimizers and LR schedulers at the end, and the same metrics records."""
    sa, sb = final_state(a), final_state(b)
    for part in ("models", "optimizers"):
        assert sa[part].keys() == sb[part].keys()
        assert_equal(sa[part], sb[part], part)
    assert_equal(sa["hooks"]["determined"], sb["hooks"]["determined"], "hooks.determined")
    assert records(a) == records(b)


def assert_equal(x, y, where: str) -> None:
    if isinstance(x, torch.Tensor):
        assert torch.equal(x, y), where
    elif isinstance(x, dict):
        assert x.keys() == y.keys(), where
        for key in x:
            assert_equal(x[key], y[key], f"{where}.{key}")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), where
        for i, (u, v) in enumerate(zip(x, y)):
            assert_equal(u, v, f"{where}[{i}]")
    else:
        assert x == y, where


def trial_main(spec: str) -> list[str]:
    return [sys.executable, "-m", "playground.determined.trial_main", spec]
