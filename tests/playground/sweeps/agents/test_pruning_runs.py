"""Adaptive ASHA pruning real `playground run` trials (not the contract program): a data-parallel trial of 2 CPU
ranks (gloo) is stopped through SIGTERM at its rung, writes a checkpoint on every rank's behalf and ends pruned
with its value; the trial-class case is in inputs/test_trial_class_sweeps.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.cli import main
from playground.sweeps.files.metrics_tail import epoch_records

# seed 0 samples the first value, then the second: the learning trial first (it sets the rung's bar), then the
# one that cannot learn, which the rung stops (2 trials, divisor 2: the top 1 of 2 goes on)
ASHA = {"name": "adaptive_asha", "max_trials": 2, "max_time": 4, "divisor": 2, "max_rungs": 2,
        "mode": "aggressive", "seed": 0}
LEARNING_RATES = [1e-06, 0.1]
SLOW_AFTER_THE_RUNG = '''
"""The epoch after ASHA's rung (2 epochs) starts 3 s late, so the agent's SIGTERM at the rung finds the run still
going however loaded the machine is (else a fast trial may end its 4 epochs before the agent has read the rung)."""
import time


def fun_per_epoch_b4RunNet(self, epoch):
    if epoch == 2:
        time.sleep(3)
'''


def slow_after_the_rung(folder: Path, opts: dict, module_map: dict | None = None) -> None:
    """opts (the "opts" section) with an override module beside the base that delays the epoch after the rung;
    found through a module_map.py beside the base, as a sweep's trials find it."""
    (folder / "slow_after_the_rung.py").write_text(SLOW_AFTER_THE_RUNG)
    entries = {**(module_map or {}), "slow_after_the_rung": "slow_after_the_rung"}
    (folder / "module_map.py").write_text(f"MODULE_MAP = {entries!r}\n")
    opts["model"]["additional_override_py"] = "slow_after_the_rung"


def assert_one_trial_pruned_at_its_rung(sweep: Path, rung: int, max_time: int) -> Path:
    """The second trial was pruned after its rung's full test pass (exit 75 after our SIGTERM, a checkpoint kept,
    fewer epochs than max_time, its value reported); the first completed max_time epochs. Returns the pruned one."""
    first, second = (json.loads((sweep / "trials" / t / "trial.json").read_text()) for t in ("t0000", "t0001"))
    assert first["params"]["model_param.base_learning_rate"] == LEARNING_RATES[1], first
    assert (first["state"], second["state"]) == ("complete", "pruned"), (first, second)
    pruned = sweep / "trials" / "t0001"
    attempts = [json.loads(line) for line in (pruned / "attempts.jsonl").read_text().splitlines()]
    assert attempts[-1]["exit_code"] == 75 and not attempts[-1]["restart_consumed"], attempts
    epochs = len(epoch_records(str(pruned / "metrics.jsonl")))
    assert rung <= epochs < max_time
    assert any(p.name.startswith("model_checkpoint_epoch") for p in (pruned / "checkpoints").iterdir())
    assert second["values"] and (pruned / "result.txt").is_file()
    assert len(epoch_records(str(sweep / "trials" / "t0000" / "metrics.jsonl"))) == max_time
    return pruned


@pytest.mark.slow
def test_asha_prunes_a_two_rank_trial_through_sigterm_and_keeps_its_checkpoint(base_file, tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # unset, and restored after whatever the sweep sets
    opts = json.loads(base_file.read_text())
    opts["opts"]["distributed"].update(num_cpus=2, num_gpus=0)     # 2 ranks on the CPU, gloo
    slow_after_the_rung(tmp_path, opts["opts"])
    base_file.write_text(json.dumps(opts))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({
        "name": "ranks", "base": base_file.name, "objective": {"metric": "test_loss", "mode": "min"},
        "searcher": ASHA, "space": {"model_param.base_learning_rate": {"type": "categorical",
                                                                       "vals": LEARNING_RATES}}}))
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    pruned = assert_one_trial_pruned_at_its_rung(sweep, rung=2, max_time=4)
    assert json.loads((pruned / "opts.json").read_text())["opts"]["distributed"]["num_cpus"] == 2
