"""Chaos: four agent processes on one seeded TPE sweep while agents (whole process groups) and single trial runs
are SIGKILLed at random moments; the sweep still ends with exactly its budget of trials, every parameter point
distinct, and every trial's final checkpoint and results bitwise equal to its parameters run once, uninterrupted.
Real `sweep agent` processes and the contract trial program. The same with a torn journal and a full disk on the
way: test_chaos_full_disk.py."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from playground.restarts.attempts import read_attempts
from tests.conftest import HANG
from tests.playground.sweeps.agents.test_agent import _contract, _finish, _initialise, _start, _states
from tests.playground.sweeps.agents.test_distinct_proposals import CONTINUOUS, _points
from tests.playground.sweeps.conftest import CONTRACT_TRIAL

BUDGET, AGENTS, KILLS = 16, 4, 10
DISCRETE = {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.001, 0.01, 0.1, 0.3, 1.0]},
            "model_param.weight_decay": {"type": "categorical", "vals": [0.0, 0.001, 0.002, 0.003]}}  # 20 points


def _running_trial_pids(sweep: Path, inner: Path | None = None) -> list[int]:
    """The pids of this sweep's trial runs that are alive: each attempt's start line names its child's pid.
    `inner`: the sweep folder's path as its agents see it, where that differs from `sweep` (a mount namespace)."""
    pids = []
    for run_dir in (sweep / "trials").glob("*"):
        for entry in read_attempts(str(run_dir)):
            pid = entry.get("child_pid")
            named = str((inner or sweep) / "trials" / run_dir.name).encode()
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if named in handle.read():                  # ours, still running (pids are reused)
                        pids.append(pid)
            except (OSError, TypeError):
                pass
    return pids


def _assert_bitwise_equal_to_uninterrupted_runs(sweep: Path, base_file: Path, reference: Path) -> None:
    """Each trial's final checkpoint.json, metrics.jsonl and results.json equal bitwise to those of the contract
    trial program run once, uninterrupted, on the trial's parameters (as its trial.json records them) in a fresh
    folder under `reference`: no epoch lost, repeated or resumed from another trial's checkpoint."""
    runs = {}
    for run_dir in sorted((sweep / "trials").iterdir()):
        params = json.loads((run_dir / "trial.json").read_text())["params"]
        sets = [arg for key, value in params.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
        runs[run_dir] = subprocess.Popen(   # all at once, and no time spent per epoch: the outcome is the same
            [*CONTRACT_TRIAL, "--parameters-file", str(base_file), *sets,
             "--set", "model_param.contract_epoch_seconds=0", "--run-dir", str(reference / run_dir.name)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for run_dir, run in runs.items():
        assert run.wait(timeout=HANG) == 0, run.stderr.read()
        run.stderr.close()
        for name in ("checkpoint.json", "metrics.jsonl", "results.json"):
            ours, theirs = (run_dir / name).read_bytes(), (reference / run_dir.name / name).read_bytes()
            assert ours == theirs, f"{run_dir.name}/{name} differs from its uninterrupted run"


@pytest.mark.slow
@pytest.mark.parametrize("space", [CONTINUOUS, DISCRETE], ids=["continuous", "discrete-20-points"])
def test_four_agents_killed_at_random_run_exactly_the_budget_with_every_point_distinct(write_spec, base_file,
                                                                                       tmp_path, space, monkeypatch):
    # an agent killed mid-append leaves the journal's lock: the others wait this grace (30 s by default) for it
    monkeypatch.setenv("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "5")
    _contract(base_file, contract_epoch_seconds=0.1)
    spec = write_spec({"name": "tpe", "max_trials": BUDGET, "seed": 0}, {**space, "epoch_iter.num_epochs": 4},
                      agents={"heartbeat_seconds": 0.5, "grace_seconds": 30}, max_restarts=10 * KILLS)
    sweep = tmp_path / "sweep"
    _initialise(spec, sweep)
    log = tmp_path / "agents.log"
    rng = random.Random(25)
    agents = [_start(["sweep", "agent", str(sweep), "--quiet"], "host", log) for _ in range(AGENTS)]
    kills = {"agent": 0, "trial": 0}
    deadline = time.monotonic() + 120                           # a slow machine starts agents slowly: the first
    while not (trials := _running_trial_pids(sweep)):           # kill waits for a trial run, so one is always killed
        assert time.monotonic() < deadline and all(a.poll() is None for a in agents), log.read_text()[-3000:]
        time.sleep(0.05)
    os.kill(rng.choice(trials), signal.SIGKILL)
    kills["trial"] += 1
    for kill in range(1, KILLS):
        time.sleep(rng.uniform(0.3, 1.5))
        trials = _running_trial_pids(sweep)
        if trials and rng.random() < 0.5 and (kills["agent"] or kill < KILLS - 1):   # the last one kills an agent
            os.kill(rng.choice(trials), signal.SIGKILL)         # a trial's run dies: retried, one restart spent
            kills["trial"] += 1
            continue
        victim = rng.randrange(AGENTS)
        if agents[victim].poll() is None:
            os.killpg(agents[victim].pid, signal.SIGKILL)       # an agent and its trials: adopted at once
            agents[victim].wait()
            kills["agent"] += 1
        agents[victim] = _start(["sweep", "agent", str(sweep), "--quiet"], "host", log)
    codes = [_finish(agent, log) for agent in agents]
    assert codes == [0] * AGENTS, log.read_text()[-3000:]
    assert kills["agent"] and kills["trial"], kills
    states = _states(sweep)
    assert len(states) == BUDGET and set(states.values()) == {"COMPLETE"}, states
    points = _points(sweep)
    assert len(set(points)) == BUDGET, points
    assert len(list((sweep / "trials").iterdir())) == BUDGET
    for run_dir in (sweep / "trials").iterdir():
        epochs = [json.loads(line)["epoch"] for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
        assert epochs == [e for e in range(4) for _ in ("interval", "epoch")], run_dir.name
    _assert_bitwise_equal_to_uninterrupted_runs(sweep, base_file, tmp_path / "reference")
