"""A candle_lib-style benchmark (tests/playground/candle/toy_benchmark) swept as Supervisor sweeps it: from a upf
file with `--objective`, and by a model-based search over an mlrMBO R parameter set; CANDLE's list strings
checked before the first trial."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from playground.cli import main

SCRIPT = str(Path(__file__).resolve().parents[2] / "candle" / "toy_benchmark" / "toy_baseline_pytorch.py")


@pytest.fixture
def candle_data(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "candle_data"
    (root / "Toy").mkdir(parents=True)
    x = np.random.RandomState(0).rand(24, 3)
    np.savetxt(root / "Toy" / "toy.csv", np.c_[x, x @ np.array([1.0, -2.0, 0.5])], delimiter=",", fmt="%.6f")
    monkeypatch.setenv("CANDLE_DATA_DIR", str(root))
    return root


def trial_opts(sweep: Path) -> dict[str, dict]:
    return {t.name: json.loads((t / "opts.json").read_text())["opts"] for t in sorted((sweep / "trials").iterdir())}


def test_a_upf_file_sweeps_the_script_with_the_objective_named_on_the_command_line(tmp_path, candle_data):
    upf = tmp_path / "upf-1.txt"
    upf.write_text('{"id": "test0", "epochs": 2, "hidden": "8 4"}\n{"id": "test1", "epochs": 1, "hidden": "6"}\n')
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", "--upf", str(upf), "--script", SCRIPT, "--objective", "val_loss:min",
                 "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 0
    opts = trial_opts(sweep)
    assert (opts["test0"]["hidden"], opts["test1"]["hidden"]) == ([8, 4], [6])
    for trial, epochs in (("test0", 2), ("test1", 1)):
        folder = sweep / "trials" / trial
        lines = [json.loads(x) for x in (folder / "metrics.jsonl").read_text().splitlines()]
        assert len(lines) == epochs and float((folder / "result.txt").read_text()) == lines[-1]["val_loss"]
        assert opts[trial]["ckpt_directory"] == str(folder / "checkpoints") and opts[trial]["run_id"] == trial


def test_an_mlrmbo_parameter_set_is_the_space_of_a_search(tmp_path, candle_data):
    (tmp_path / "toy.R").write_text('''
param.set <- makeParamSet(
  makeIntegerParam("epochs", lower = 1, upper = 2),
  makeDiscreteParam("hidden", values = c("4 4", "8")),
  makeNumericParam("learning_rate", lower = -3, upper = -2, trafo = function(x) 10^x)
)
''')
    (tmp_path / "spec.json").write_text(json.dumps({
        "name": "toy-mbo", "script": SCRIPT, "space": "toy.R", "objective": {"metric": "val_loss", "mode": "min"},
        "searcher": {"name": "random", "max_trials": 2, "seed": 3}}))
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--sweep-dir", str(sweep), "--quiet"]) == 0
    opts = trial_opts(sweep)
    assert len(opts) == 2
    for params in opts.values():
        assert params["epochs"] in (1, 2) and params["hidden"] in ([4, 4], [8])
        assert 1e-3 <= params["learning_rate"] <= 1e-2


def test_a_list_string_that_does_not_split_stops_the_sweep_before_any_trial(tmp_path, candle_data, capsys):
    upf = tmp_path / "upf.txt"
    upf.write_text('{"id": "a", "hidden": "8 4"}\n{"id": "b", "hidden": "8 x"}\n')
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", "--upf", str(upf), "--script", SCRIPT, "--objective", "val_loss",
                 "--sweep-dir", str(sweep), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{upf}, line 2 (id b): hidden: '8 x' is a CANDLE list" in err and not (sweep / "trials").exists()


@pytest.mark.parametrize("objective", ["val_loss:low", ":min"])
def test_a_malformed_objective_exits_2(tmp_path, candle_data, capsys, objective):
    upf = tmp_path / "upf.txt"
    upf.write_text('{"id": "a", "epochs": 1}\n')
    assert main(["sweep", "run", "--upf", str(upf), "--script", SCRIPT, "--objective", objective,
                 "--sweep-dir", str(tmp_path / "sweep")]) == 2
    assert "expected METRIC, METRIC:min or METRIC:max" in capsys.readouterr().err
