"""Adaptive ASHA's trial length in iterations or samples: each trial trains max_time in that unit (a whole number
of the base opts' epochs), or the sweep is refused before anything runs."""
from __future__ import annotations

import json

import pytest

from playground.cli import main
from playground.sweeps.files.metrics_tail import epoch_records

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}}


@pytest.mark.parametrize("time_metric, max_time", [("iteration", 16), ("samples", 256)])
def test_asha_in_iterations_or_samples_trains_each_trial_for_max_time(write_spec, tmp_path, time_metric, max_time):
    # the tiny base opts: 64 samples per epoch, global batch 16: 4 iterations, 64 samples an epoch; 2 epochs
    searcher = {"name": "adaptive_asha", "max_trials": 2, "max_time": max_time, "time_metric": time_metric,
                "mode": "aggressive", "seed": 0}
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(write_spec(searcher, SPACE)), "--sweep-dir", str(sweep), "--quiet"]) == 0
    for trial in ("t0000", "t0001"):
        run = sweep / "trials" / trial
        assert json.loads((run / "opts.json").read_text())["opts"]["epoch_iter"]["num_epochs"] == 4
        assert epoch_records(str(run / "metrics.jsonl"))[-1]["iteration"] == 16
        assert json.loads((run / "trial.json").read_text())["state"] == "complete"


def test_asha_max_time_that_is_no_whole_number_of_epochs_is_refused_with_exit_2(write_spec, tmp_path, capsys):
    searcher = {"name": "adaptive_asha", "max_trials": 2, "max_time": 18, "time_metric": "iteration"}
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(write_spec(searcher, SPACE)), "--sweep-dir", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert "time_metric iteration (max_time 18)" in err and "an epoch of the base opts is 4 iteration" in err
    assert "e.g. 16" in err and not sweep.exists()


def test_asha_in_iterations_over_a_space_that_varies_the_batch_is_refused(write_spec, tmp_path, capsys):
    searcher = {"name": "adaptive_asha", "max_trials": 2, "max_time": 16, "time_metric": "iteration"}
    space = {**SPACE, "epoch_iter.batch_per_device": {"type": "categorical", "vals": [8, 16]}}
    assert main(["sweep", "run", str(write_spec(searcher, space)), "--sweep-dir", str(tmp_path / "s")]) == 2
    assert "the space varies epoch_iter.batch_per_device" in capsys.readouterr().err
