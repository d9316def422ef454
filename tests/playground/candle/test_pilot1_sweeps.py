"""The Pilot1-shaped benchmarks (pilot1/) swept as Supervisor sweeps them: P1B1's from a upf file, P1B2's by a
search whose space is an mlrMBO R parameter set; each trial in its own folder, with the objective at full
precision."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from playground.cli import main
from tests.playground.candle.test_pilot1_shapes import N_TEST, P1B1, P1B2, write_pilot1_csv


@pytest.fixture
def candle_data(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "candle_data"
    (root / "Pilot1").mkdir(parents=True)
    rng = np.random.RandomState(1)
    for name, rows in (("P1B1.dev.train", 30), ("P1B1.dev.test", 8), ("P1B2.train", 30), ("P1B2.test", N_TEST)):
        write_pilot1_csv(root / "Pilot1" / f"{name}.csv", rows, 8, rng)
    monkeypatch.setenv("CANDLE_DATA_DIR", str(root))
    monkeypatch.chdir(tmp_path)
    return root


def trial_records(sweep: Path) -> dict[str, list[dict]]:
    return {t.name: [json.loads(x) for x in (t / "metrics.jsonl").read_text().splitlines()]
            for t in sorted((sweep / "trials").iterdir())}


@pytest.mark.slow   # a sweep of two trials, each a process
def test_a_upf_sweep_of_p1b1s_shape_keeps_each_trials_files_apart(tmp_path, candle_data):
    upf = tmp_path / "upf-1.txt"
    upf.write_text('{"id": "test0", "epochs": 2, "dense": "12 6"}\n{"id": "test1", "epochs": 1, "dense": "8"}\n')
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", "--upf", str(upf), "--script", P1B1, "--objective", "val_loss:min",
                 "--workers", "2", "--sweep-dir", str(sweep), "--quiet"]) == 0
    found = trial_records(sweep)
    assert {t: len(r) for t, r in found.items()} == {"test0": 2, "test1": 1}
    for trial, lines in found.items():
        folder = sweep / "trials" / trial
        assert float((folder / "result.txt").read_text()) == lines[-1]["val_loss"]
        assert len(list((folder / "save").glob(".pytorch.ae.*.log"))) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["candle_data", "sweep", "upf-1.txt"]


@pytest.mark.slow   # a sweep of two trials, each a process
def test_a_search_over_an_mlrmbo_r_file_sweeps_p1b2s_shape_by_its_test_accuracy(tmp_path, candle_data):
    (tmp_path / "p1b2.R").write_text('''
# Supervisor's form: one makeParamSet, assigned
param.set <- makeParamSet(
  makeDiscreteParam("dense", values = c("16 8", "8")),
  makeIntegerParam("epochs", lower = 1, upper = 2),
  makeNumericParam("learning_rate", lower = -3, upper = -2, trafo = function(x) 10^x)
)
''')
    (tmp_path / "spec.json").write_text(json.dumps({
        "name": "p1b2-mbo", "script": P1B2, "space": "p1b2.R",
        "objective": {"metric": "test_accuracy", "mode": "max"}, "searcher": {"name": "random", "max_trials": 2,
                                                                              "seed": 5}}))
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--sweep-dir", str(sweep), "--quiet"]) == 0
    for trial, lines in trial_records(sweep).items():
        folder = sweep / "trials" / trial
        opts = json.loads((folder / "opts.json").read_text())["opts"]
        assert opts["dense"] in ([16, 8], [8]) and len(lines) == opts["epochs"]
        assert 1e-3 <= opts["learning_rate"] <= 1e-2 and opts["save_path"] == str(folder / "save")
        accuracy = lines[-1]["test_accuracy"]
        assert float((folder / "result.txt").read_text()) == accuracy
        assert abs(accuracy * N_TEST - round(accuracy * N_TEST)) < 1e-12
