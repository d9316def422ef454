"""A sweep's trials are forked from the agent's trial server (processes/command_servers.py) and train bitwise as
fresh interpreters do (PLAYGROUND_TRIAL_SERVER=0); a trial_program, and a server that was killed, mean fresh
interpreters, and the sweep goes on. Each trial writes its parent's pid (trial_parent.py): the agent for a fresh
interpreter, a waiter of the server for a forked one."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from playground.processes.command_servers import CommandServers
from playground.processes.forked_process import ForkedProcess
from playground.sweeps.agents.trial_process import TRIAL_PRELOAD, slot_env, start_trial, trial_command, trial_servers
from playground.sweeps.inputs.spec import load_spec
from tests.conftest import HANG, REPO, run_cli

HOOK = "tests.playground.sweeps.agents.trial_parent"
TIMING = ("samples_per_sec", "secs_per_train", "wall_time")


def _real_trials(base_file: Path, write_spec, trials: int, **spec) -> Path:
    opts = json.loads(base_file.read_text())
    opts["opts"]["model"]["hooks_py"] = [HOOK]
    base_file.write_text(json.dumps(opts))
    return write_spec({"name": "random", "max_trials": trials, "seed": 0},
                      {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}},
                      contract=False, **spec)


def _sweep(spec: Path, sweep: Path, **env: str) -> subprocess.CompletedProcess:
    done = run_cli("sweep", "run", str(spec), "--sweep-dir", str(sweep), "--workers", "1", script="playground",
                   cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    return done


def _agent_and_parent(trial: Path) -> tuple[int, int]:
    """(the pid of the agent that ran the trial's first attempt, the trial process's parent)."""
    agent = json.loads((trial / "attempts.jsonl").read_text().splitlines()[0])["agent"]
    return int(agent.rsplit("-", 1)[1]), json.loads((trial / "parent.json").read_text())["ppid"]


def _final_checkpoint(trial: Path) -> dict:
    state = torch.load(trial / "checkpoints" / "model_checkpoint_epoch2.pt", weights_only=True)
    return {key: state[key] for key in ("models", "optimizers", "ranks", "epoch", "global_iter", "lr")}


def _metrics(trial: Path) -> list[dict]:
    records = [json.loads(line) for line in (trial / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in record.items() if k not in TIMING} for record in records]


def _log(trial: Path, sweep: Path) -> str:
    """The trial's output with what differs between any two runs (times, speeds, its folder) blanked."""
    text = (trial / "sweep-trial.log").read_text().replace(str(sweep), "SWEEP")
    return re.sub(r"\d\d:\d\d:\d\d|\d+ samples/s|[\d.]+ s\b", "#", text)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.slow
def test_forked_trials_train_bitwise_as_fresh_interpreters(base_file, write_spec, tmp_path):
    spec = _real_trials(base_file, write_spec, trials=2)
    fresh, forked = tmp_path / "fresh", tmp_path / "forked"
    _sweep(spec, fresh, PLAYGROUND_TRIAL_SERVER="0")
    _sweep(spec, forked)
    for name in ("t0000", "t0001"):
        one, other = fresh / "trials" / name, forked / "trials" / name
        agent, parent = _agent_and_parent(one)
        assert parent == agent                        # fresh: started by the agent itself
        agent, parent = _agent_and_parent(other)
        assert parent != agent                        # forked: a waiter of the agent's trial server
        assert _same(_final_checkpoint(one), _final_checkpoint(other)), name
        assert _metrics(one) == _metrics(other)
        assert _log(one, fresh) == _log(other, forked)
        facts = [json.loads((trial / "parent.json").read_text()) for trial in (one, other)]
        assert [(f["threads"], f["interop_threads"]) for f in facts] == [(facts[0]["threads"],
                                                                           facts[0]["interop_threads"])] * 2


def test_a_trial_program_and_the_switch_mean_fresh_interpreters(base_file, write_spec, tmp_path, monkeypatch):
    """Only `python -m playground ...` trials are forked: a spec's trial_program (here the contract trial) starts
    in a fresh interpreter; PLAYGROUND_TRIAL_SERVER=0 gives the agent no server at all."""
    notes: list[str] = []
    servers = CommandServers(notes.append, TRIAL_PRELOAD)
    try:
        for contract, kind in ((False, ForkedProcess), (True, subprocess.Popen)):
            spec = load_spec(str(write_spec({"name": "single"}, {"epoch_iter.num_epochs": 1}, contract=contract)))
            run_dir = tmp_path / f"contract-{contract}"
            run_dir.mkdir()
            process = start_trial(trial_command(spec, {}, str(run_dir)), slot_env(0, 1), str(run_dir / "log"),
                                  servers)
            assert isinstance(process, kind) and process.wait(HANG) == 0, (run_dir / "log").read_text()
            assert (run_dir / "metrics.jsonl").exists()
        assert notes == []
    finally:
        servers.close()
    monkeypatch.setenv("PLAYGROUND_TRIAL_SERVER", "0")
    assert trial_servers(notes.append) is None


@pytest.mark.slow
def test_a_killed_trial_server_does_not_stop_the_sweep(base_file, write_spec, tmp_path, started):
    """The server is SIGKILLed while the first trial runs (held before training): that trial ends as usual (its
    waiter is not the server), the next starts in a fresh interpreter with one note, the one after from a new
    server."""
    spec = _real_trials(base_file, write_spec, trials=3)
    sweep, log, hold = tmp_path / "sweep", tmp_path / "agent.log", tmp_path / "hold"
    hold.write_text("")
    with open(log, "ab") as out:
        agent = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir",
                                  str(sweep), "--workers", "1"], cwd=REPO, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=dict(os.environ, TRIAL_PARENT_HOLD=str(hold)))
    started.append(agent)
    first = sweep / "trials" / "t0000" / "parent.json"
    deadline = time.monotonic() + HANG
    while not first.exists():
        assert agent.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    server = _parent(json.loads(first.read_text())["ppid"])
    assert _parent(server) == agent.pid and "command_server" in Path(f"/proc/{server}/cmdline").read_text()
    os.kill(server, signal.SIGKILL)
    hold.unlink()
    assert agent.wait(HANG) == 0, log.read_text()
    output = log.read_text()
    assert f"trial server (pid {server}) cannot start trials" in output and "fresh interpreter" in output, output
    parents = [_agent_and_parent(sweep / "trials" / name) for name in ("t0000", "t0001", "t0002")]
    assert [parent == agent_pid for agent_pid, parent in parents] == [False, True, False]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_forked_trials_on_the_gpu_train_bitwise_as_fresh_ones_and_see_their_own_devices(base_file, write_spec,
                                                                                        tmp_path):
    """The server never starts CUDA, so a forked trial uses the device its slot's CUDA_VISIBLE_DEVICES names (a
    per-launch variable: the server was started without it); with none visible it is refused as a fresh one is."""
    opts = json.loads(base_file.read_text())
    opts["opts"]["distributed"].update(num_gpus=1, first_gpu_id=0)
    base_file.write_text(json.dumps(opts))
    spec = _real_trials(base_file, write_spec, trials=2)
    fresh, forked = tmp_path / "fresh", tmp_path / "forked"
    _sweep(spec, fresh, PLAYGROUND_TRIAL_SERVER="0")
    _sweep(spec, forked)
    for name in ("t0000", "t0001"):
        agent, parent = _agent_and_parent(forked / "trials" / name)
        assert parent != agent
        assert _same(_final_checkpoint(fresh / "trials" / name), _final_checkpoint(forked / "trials" / name)), name
        assert _metrics(fresh / "trials" / name) == _metrics(forked / "trials" / name)
    servers = CommandServers(print, TRIAL_PRELOAD)
    try:
        command = trial_command(load_spec(str(spec)), {}, str(tmp_path / "none"))
        (tmp_path / "none").mkdir()
        hidden = dict(slot_env(0, 1), CUDA_VISIBLE_DEVICES="")
        process = start_trial(command, hidden, str(tmp_path / "none" / "log"), servers)
        assert isinstance(process, ForkedProcess) and process.wait(HANG) == 2
        refused = (tmp_path / "none" / "log").read_text()
        (tmp_path / "none" / "log").unlink()
        assert start_trial(command, hidden, str(tmp_path / "none" / "log")).wait(HANG) == 2
        assert (tmp_path / "none" / "log").read_text() == refused
    finally:
        servers.close()


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])
