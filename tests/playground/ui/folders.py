"""Real run folders and sweep folders for the `playground ui` tests, each made by the real command: a tiny
`playground run`, the demo's run (`python -m playground.commands.demo`, shortened as tests/playground/commands/
test_demo.py shortens it), a 20-trial adaptive ASHA sweep of the contract trial (a real `sweep run` whose trials
speak the run-folder contract in ~50 ms: tests/playground/sweeps/contract_trial.py), and a several-objective
sweep of real tiny runs. `make_all` starts the commands together and waits for all.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import zygote
from tests.conftest import HANG, REPO, tiny_opts
from tests.playground.commands.test_demo import SHORT
from tests.playground.sweeps.conftest import CONTRACT_TRIAL, tiny_mlp_opts

ASHA = {"name": "adaptive_asha", "max_trials": 20, "max_time": 8, "divisor": 2, "max_rungs": 3, "mode": "standard",
        "seed": 0, "max_concurrent_trials": 4}
SPACE = {"model_param.base_learning_rate": {"type": "log", "base": 10, "minval": -3, "maxval": 0},
         "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.001}}


def write_json(path: Path, value: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def tiny_run(run_dir: Path, lr: float) -> list[str]:
    opts = write_json(run_dir.parent / f"{run_dir.name}.opts.json",
                      {"opts": tiny_opts(model_param={"base_learning_rate": lr})})
    return [str(REPO / "AnyExpOnTerm.py"), "--parameters-file", str(opts), "--run-dir", str(run_dir)]


def demo_run(run_dir: Path, data: Path) -> list[str]:
    return ["-m", "playground.commands.demo", "--data", str(data), "--run-dir", str(run_dir), *SHORT,
            "--set", "epoch_iter.num_epochs=2", "--set", "epoch_iter.num_train_sample_per_epoch=256"]


def asha_sweep(sweep_dir: Path, searcher: dict | None = None, epochs: int = 8, **contract) -> list[str]:
    """A 20-trial adaptive ASHA sweep (brackets of 3 and 2 rungs at 2, 4 and 8 epochs) of the contract trial, or
    another `searcher`'s; `contract`: model_param keys of the contract trial (contract_epoch_seconds, ...)."""
    opts = tiny_mlp_opts()
    opts["model_param"].update(contract)
    base = write_json(sweep_dir.parent / f"{sweep_dir.name}.base.json", {"opts": opts})
    spec = write_json(sweep_dir.parent / f"{sweep_dir.name}.spec.json", {
        "name": sweep_dir.name, "base": str(base), "objective": {"metric": "test_loss", "mode": "min"},
        "searcher": searcher or ASHA, "space": {**SPACE, "epoch_iter.num_epochs": epochs}, "trial_program": CONTRACT_TRIAL})
    return ["-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep_dir), "--workers", "4", "--quiet"]


def pareto_sweep(sweep_dir: Path) -> list[str]:
    """Four real tiny runs over the learning rate, ranked by two objectives (test loss down, accuracy up)."""
    base = write_json(sweep_dir.parent / f"{sweep_dir.name}.base.json", {"opts": tiny_mlp_opts()})
    spec = write_json(sweep_dir.parent / f"{sweep_dir.name}.spec.json", {
        "name": sweep_dir.name, "base": str(base),
        "objective": [{"metric": "test_loss", "mode": "min"}, {"metric": "test_accuracy_top1", "mode": "max"}],
        "searcher": {"name": "random", "max_trials": 4, "seed": 3},
        "space": {"model_param.base_learning_rate": SPACE["model_param.base_learning_rate"]}})
    return ["-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep_dir), "--workers", "2", "--quiet"]


def make_all(*commands: list[str]) -> None:
    """Run every command (python arguments) at once, each as its own process; each must exit 0."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    started = [(c, zygote.start([sys.executable, *c], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)) for c in commands]
    for command, process in started:
        output, _ = process.communicate(timeout=HANG)
        assert process.returncode == 0, f"{command} exited {process.returncode}:\n{output[-3000:]}"


def trials(sweep_dir: Path) -> dict[str, dict]:
    """Each trial's trial.json, by id."""
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(sweep_dir.glob("trials/*/trial.json"))}


def full_passes(run_dir: Path) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("kind") == "epoch"]
