"""Runs fenced by claim files (playground/restarts/fence.py, and every writer of a run: checkpoints, outputs, the
CANDLE helper): an attempt whose `claim-<n+1>` appears writes nothing more to its run folder and exits 75.

Each test starts the real command the way a sweep agent does: `claim-<n>` created first, PLAYGROUND_ATTEMPT=n in
the environment; then another "agent" creates claim-<n+1> while the run trains.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from playground.api import run
from playground.candle.runner import CandleCommand, run_candle
from playground.cli import main
from playground.restarts.fence import ATTEMPT_ENV, create_claim
from tests.conftest import HANG, tiny_opts
from tests.playground.checkpoints.interrupted_runs import RunFolder, checkpoint_opts

SLOW = {"PLAYGROUND_TEST_ITER_SLEEP": "0.05"}


def folder_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder` (temporary files of a write in flight aside): its SHA-256 and mtime in ns."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and not path.name.endswith(".tmp"):
            state[str(path.relative_to(folder))] = (hashlib.sha256(path.read_bytes()).hexdigest(),
                                                    path.stat().st_mtime_ns)
        elif path.is_symlink():
            state[str(path.relative_to(folder))] = (os.readlink(path), path.lstat().st_mtime_ns)
    return state


def wait_for(condition, process: subprocess.Popen, output, timeout: float = HANG) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"the run ended before the test could fence it:\n{output()}"
        assert time.monotonic() < deadline, f"timed out:\n{output()}"
        time.sleep(0.01)


def supersede(folder: Path, attempt: int) -> dict[str, tuple[str, int]]:
    """Another agent adopts the folder; once writes that passed their check before this moment have landed,
    the state of the folder that the superseded attempt must leave as it is."""
    assert create_claim(str(folder), attempt + 1, {"agent": "test"})
    time.sleep(0.3)
    return folder_state(folder)


def assert_fenced(code: int, output: str, folder: Path, before: dict, attempt: int = 1) -> None:
    assert code == 75, output
    lines = [line for line in output.splitlines() if f"superseded by claim-{attempt + 1}" in line]
    assert len(lines) >= 1 and "Exit code 75" in lines[0], output
    assert folder_state(folder) == before, "the superseded attempt wrote into the folder after the claim"
    assert not list(folder.rglob("*.tmp")), "a checkpoint in flight was left behind"


def in_flight(checkpoints: Path) -> list[Path]:
    """The final names of the checkpoint state files being written (their temporary files exist)."""
    return [checkpoints / tmp.name[1:].rsplit(".", 2)[0] for tmp in checkpoints.glob(".model_checkpoint_*.pt.*.tmp")]


def test_a_run_superseded_while_it_trains_writes_nothing_more_and_exits_75(tmp_path):
    """The claim comes while a checkpoint is being written (a slow disk keeps one in flight): that checkpoint
    must never take its name, and nothing else may change either."""
    opts = checkpoint_opts()
    opts["output"]["ckpt_every_n_iters"] = 4
    run = RunFolder(tmp_path, "trial", opts, env={**SLOW, ATTEMPT_ENV: "1", "PLAYGROUND_TEST_FSYNC_SLEEP": "0.1"})
    assert create_claim(str(run.dir), 1)
    process = run.start()
    checkpoints = run.dir / "checkpoints"
    wait_for(lambda: (checkpoints / "last").exists() and in_flight(checkpoints), process, run.output)
    straddling = in_flight(checkpoints)
    before = supersede(run.dir, 1)
    code = process.wait(timeout=HANG)
    assert_fenced(code, run.output(), run.dir, before)
    assert not [path for path in straddling if path.exists()], "a checkpoint written across the claim landed"
    assert not (run.dir / "results.json").exists() and run.progress() < 1


def test_a_run_started_after_its_successor_claimed_the_folder_writes_nothing(tmp_path, opts_file, monkeypatch,
                                                                            capsys):
    folder = tmp_path / "trial"
    assert create_claim(str(folder), 1) and create_claim(str(folder), 2)
    before = folder_state(folder)
    monkeypatch.setenv(ATTEMPT_ENV, "1")
    code = main(["run", "--parameters-file", opts_file(tiny_opts()), "--run-dir", str(folder)])
    assert_fenced(code, capsys.readouterr().err, folder, before)
    assert sorted(os.listdir(folder)) == ["claim-1", "claim-2"]


def test_a_run_without_an_attempt_number_is_not_fenced(tmp_path, monkeypatch):
    folder = tmp_path / "trial"
    assert create_claim(str(folder), 1) and create_claim(str(folder), 2)
    monkeypatch.delenv(ATTEMPT_ENV, raising=False)
    result = run(tiny_opts(), run_dir=str(folder))
    assert (folder / "checkpoints" / "last").exists() and (folder / "train.log").stat().st_size > 0
    records = (folder / "metrics.jsonl").read_text().splitlines()
    assert len(records) == json.loads((folder / "results.json").read_text())["records"] == len(result["metrics"]["epochs"])


CANDLE_SCRIPT = '''
import time
import torch
from playground.candle import CandleCheckpoint

def initialize_parameters():
    return {"epochs": 40, "ckpt_save_best_metric": "loss"}

def run(params):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    ckpt = CandleCheckpoint(params, model, optimizer)
    for epoch in range(ckpt.restart(), params["epochs"]):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
        time.sleep(0.05)
        ckpt.save(epoch, {"loss": loss.item()})
    ckpt.report_final()
    return {"loss": [loss.item()]}
'''


def test_a_candle_script_run_superseded_while_it_trains_writes_nothing_more_and_exits_75(tmp_path, monkeypatch,
                                                                                          capfd):
    """In process (the command's own function), with another "agent" on a thread."""
    script = tmp_path / "bench.py"
    script.write_text(CANDLE_SCRIPT)
    folder = tmp_path / "trial"
    assert create_claim(str(folder), 3)
    monkeypatch.setenv(ATTEMPT_ENV, "3")
    seen: dict = {}

    def other_agent() -> None:
        deadline = time.monotonic() + HANG
        while not (folder / "checkpoints" / "last").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["before"] = supersede(folder, 3)

    agent = threading.Thread(target=other_agent)
    agent.start()
    code = run_candle(CandleCommand(str(script), run_dir=str(folder)))
    agent.join()
    assert_fenced(code, capfd.readouterr().err, folder, seen["before"], attempt=3)
    assert not (folder / "results.json").exists()


@pytest.mark.slow
def test_a_superseded_gloo_run_stops_every_rank_and_exits_75(tmp_path):
    opts = checkpoint_opts(ranks=2)
    opts["output"]["ckpt_every_n_iters"] = 4
    run = RunFolder(tmp_path, "trial2", opts, env={**SLOW, ATTEMPT_ENV: "1"})
    assert create_claim(str(run.dir), 1)
    process = run.start()
    wait_for(lambda: (run.dir / "checkpoints" / "last").exists(), process, run.output)
    pids = run.rank_pids()
    before = supersede(run.dir, 1)
    code = process.wait(timeout=HANG)   # rank 1 must not hang in its next collective
    assert_fenced(code, run.output(), run.dir, before)
    assert len(pids) == 2
