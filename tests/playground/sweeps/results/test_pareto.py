"""The Pareto front of multi-objective sweeps: the definition on crafted points, and the front in summary.csv,
summary.md, best.json and `sweep status` of a real sweep."""
from __future__ import annotations

import csv
import json

from playground.cli import main
from playground.sweeps.inputs.spec import Objective
from playground.sweeps.results.pareto import front

LOSS, ACC = Objective("loss", "min"), Objective("acc", "max")
SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}, "epoch_iter.num_epochs": 1}


def test_the_front_is_every_point_no_other_beats_on_all_objectives_in_their_directions():
    points = {"a": [1.0, 0.5], "b": [2.0, 0.9], "c": [2.0, 0.4], "d": [0.5, 0.2], "e": [1.0, 0.5], "f": [3.0, 0.9]}
    # c is beaten by a (lower loss, higher acc); f by b (same acc, higher loss); a and e are equal: both stay
    assert front(points, [LOSS, ACC]) == ["a", "b", "d", "e"]
    assert front(points, [Objective("loss", "max"), Objective("acc", "min")]) == ["c", "d", "f"]
    assert front({"x": [1.0, 1.0, 1.0], "y": [1.0, 1.0, 0.0], "z": [0.0, 2.0, 0.5]},
                 [LOSS, LOSS, LOSS]) == ["y", "z"]
    assert front({"only": [4.0]}, [LOSS]) == ["only"]


def _sweep(write_spec, tmp_path, objectives) -> tuple:
    spec = write_spec({"name": "random", "max_trials": 4, "seed": 3}, SPACE, objective=objectives)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    with open(sweep / "summary.csv") as handle:
        table = list(csv.DictReader(handle))
    return sweep, table


def test_a_multi_objective_sweep_reports_its_pareto_front_in_summaries_best_json_and_status(
        write_spec, tmp_path, capsys):
    # the contract trial's accuracy is 1 - loss / 4: minimising both, no trial beats another on both, so all four
    # are on the front; minimising loss and maximising accuracy, the lowest loss beats every other trial
    objectives = [{"metric": "test_loss", "mode": "min"}, {"metric": "test_accuracy_top1", "mode": "min"}]
    sweep, table = _sweep(write_spec, tmp_path, objectives)
    assert [r["pareto"] for r in table] == ["yes"] * 4
    assert all(float(r["test_accuracy_top1"]) == 1 - float(r["test_loss"]) / 4 for r in table)
    best = json.loads((sweep / "best.json").read_text())
    assert sorted(t["id"] for t in best["pareto_front"]) == [r["id"] for r in sorted(table, key=lambda r: r["id"])]
    assert "the Pareto front over test_loss (min), test_accuracy_top1 (min) first" in (sweep / "summary.md").read_text()
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    assert "pareto front: 4 trial(s)" in capsys.readouterr().out


def test_a_dominated_trial_is_off_the_front(write_spec, tmp_path, capsys):
    objectives = [{"metric": "test_loss", "mode": "min"}, {"metric": "test_accuracy_top1", "mode": "max"}]
    sweep, table = _sweep(write_spec, tmp_path, objectives)
    lowest = min(table, key=lambda r: float(r["test_loss"]))
    assert [r["id"] for r in table if r["pareto"] == "yes"] == [lowest["id"]] == [table[0]["id"]]
    best = json.loads((sweep / "best.json").read_text())
    assert [t["id"] for t in best["pareto_front"]] == [lowest["id"]]
    assert best["pareto_front"][0]["values"]["test_loss"] == float(lowest["test_loss"])
    assert (sweep / best["pareto_front"][0]["opts_file"]).is_file()
    capsys.readouterr()
    assert main(["sweep", "status", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert f"pareto front: 1 trial(s)" in out and f"  {lowest['id']} test_loss=" in out
