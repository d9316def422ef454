"""`playground sweep` sweeps a trial class (experiments/digits_trial.json) and a CANDLE script
(experiments/candle_digits/) like any run: each grid point is a run folder whose objective is its metric."""
from __future__ import annotations

import json

import pytest

from playground.cli import main
from tests.conftest import REPO, load_experiment

SCRIPT = str(REPO / "experiments" / "candle_digits" / "digits_mlp_candle.py")
RATES = [0.05, 0.2]


def sweep_and_read(tmp_path, spec: dict, metric: str) -> dict[float, tuple[float, list[float]]]:
    """Run the grid; per learning rate: (the trial's objective in result.txt, its metric per epoch)."""
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--workers", "2", "--sweep-dir", str(sweep),
                 "--quiet"]) == 0
    found = {}
    for trial in (sweep / "trials").iterdir():
        opts = json.loads((trial / "opts.json").read_text())["opts"]
        rate = opts["model_param"]["base_learning_rate"] if "model_param" in opts else opts["learning_rate"]
        values = [json.loads(line)[metric] for line in (trial / "metrics.jsonl").read_text().splitlines()]
        found[rate] = (float((trial / "result.txt").read_text()), values)
    return found


@pytest.mark.slow   # four runs as processes
def test_a_trial_class_and_a_candle_script_are_each_swept_over_the_learning_rate(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)   # the trial class is named by a dotted path from the repository root
    base = load_experiment("digits_trial.json")
    base["epoch_iter"].update(num_epochs=1, num_train_sample_per_epoch=256)
    base["output"].update(progress="none", plots=[])
    (tmp_path / "base.json").write_text(json.dumps({"opts": base}))
    (tmp_path / "trial").mkdir()
    trial = sweep_and_read(tmp_path / "trial", {
        "name": "trial", "base": str(tmp_path / "base.json"), "searcher": {"name": "grid"},
        "objective": {"metric": "test_accuracy", "mode": "max"},
        "space": {"model_param.base_learning_rate": {"type": "categorical", "vals": RATES}}}, "test_accuracy")
    assert sorted(trial) == RATES and all(objective == values[-1] for objective, values in trial.values())
    (tmp_path / "candle").mkdir()
    candle = sweep_and_read(tmp_path / "candle", {
        "name": "candle", "script": SCRIPT, "searcher": {"name": "grid"},
        "objective": {"metric": "val_accuracy", "mode": "max"},
        "space": {"learning_rate": {"type": "categorical", "vals": RATES}, "epochs": 1}}, "val_accuracy")
    assert sorted(candle) == RATES and all(objective == values[-1] for objective, values in candle.values())


def test_the_sweep_files_the_docs_use_are_valid_specs(capsys):
    """experiments/sweeps/ once went missing from the repository while README and docs/sweeps.md used it."""
    assert main(["sweep", "preview", str(REPO / "experiments" / "sweeps" / "digits_lr_tpe.yaml")]) == 0
    assert "base_learning_rate" in capsys.readouterr().out
    from playground.sweeps.inputs.spec import parse_spec, upf_spec
    raw = upf_spec(str(REPO / "experiments" / "sweeps" / "smoke_upf.txt"), str(REPO / "experiments" / "smoke.json"),
                   None)
    spec = parse_spec(raw, str(REPO), origin="--upf")
    assert spec.searcher_name == "upf"
