"""Sweeps over a trial class (model.trial_py): its undeclared hyperparameters in model_param are accepted as a
run accepts them, and its trials run as ordinary runs."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from playground.cli import main
from tests.conftest import load_experiment
from tests.playground.sweeps.agents.test_pruning_runs import (ASHA, LEARNING_RATES, assert_one_trial_pruned_at_its_rung,
                                                              slow_after_the_rung)

WIDE_TRIAL = '''
"""The digits trial with one hidden layer as wide as `width`, a hyperparameter no one declares."""
from torch import nn

from experiments.digits_trial.digits_trial import DigitsTrial


class WideTrial(DigitsTrial):
    def build_model(self):
        width = int(self.context.get_hparam("width"))
        return nn.Sequential(nn.Flatten(), nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))
'''


@pytest.fixture
def trial_base(tmp_path, monkeypatch) -> Path:
    """base.json naming the trial class `wide_trial` through a module_map.py beside it; 1 epoch of 128 digits."""
    monkeypatch.setenv("PLAYGROUND_MODULE_MAP", "")     # unset, and restored after whatever the sweep sets
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "wide_trial.py").write_text(WIDE_TRIAL)
    (tmp_path / "module_map.py").write_text("MODULE_MAP = {'wide_trial': 'wide_trial'}\n")
    opts = load_experiment("digits_trial.json")
    slow_after_the_rung(tmp_path, opts, {"wide_trial": "wide_trial"})
    opts["model"]["trial_py"] = "wide_trial"
    opts["model_param"]["width"] = 8
    opts["epoch_iter"].update(num_epochs=1, num_train_sample_per_epoch=128)
    opts["output"]["plots"] = []
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"opts": opts}))
    return path


def _spec(tmp_path: Path, space: dict, searcher: dict | None = None) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"name": "wide", "base": "base.json",
                                "objective": {"metric": "test_accuracy", "mode": "max"},
                                "searcher": searcher or {"name": "grid"}, "space": space}))
    return path


def test_a_trial_class_hyperparameter_that_no_one_declares_is_swept_as_a_run_takes_it(trial_base, tmp_path,
                                                                                       capsys):
    spec = _spec(tmp_path, {"model_param.width": {"type": "categorical", "vals": [12]}})
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    assert "model_param.width is declared by no component; the trial class wide_trial" in capsys.readouterr().err
    run = sweep / "trials" / "t0000"
    assert json.loads((run / "trial.json").read_text())["state"] == "complete"
    assert json.loads((run / "opts.json").read_text())["opts"]["model_param"]["width"] == 12


def test_a_misspelt_key_outside_model_param_is_still_refused_for_a_trial_class(trial_base, tmp_path, capsys):
    spec = _spec(tmp_path, {"epoch_iter.num_epoch": {"type": "categorical", "vals": [1, 2]}})
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(tmp_path / "sweep")]) == 2
    assert "Did you mean 'epoch_iter.num_epochs'?" in capsys.readouterr().err


@pytest.mark.slow
def test_asha_prunes_a_trial_class_run_through_sigterm_and_keeps_its_checkpoint(trial_base, tmp_path):
    spec = _spec(tmp_path, {"model_param.base_learning_rate": {"type": "categorical", "vals": LEARNING_RATES}},
                 searcher=ASHA)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    pruned = assert_one_trial_pruned_at_its_rung(sweep, rung=2, max_time=4)
    assert json.loads((pruned / "opts.json").read_text())["opts"]["model"]["trial_py"] == "wide_trial"
