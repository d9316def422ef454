"""CANDLE's upf workflow with real runs: a 3-line file runs in parallel and leaves result.txt per trial and an
output.csv; a bad file (duplicate id, unknown or ambiguous key) exits 2 before anything runs."""
from __future__ import annotations

import csv
import json

import pytest

from playground.cli import main
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.upf import read_upf, resolve_name

UPF = ('{"id": "RUN000", "epochs": 1}\n'
       '{"id": "RUN001", "epochs": 2}\n'
       '{"id": "RUN002", "epochs": 1, "learning_rate": 0.01}\n')


def test_three_line_upf_runs_in_parallel_and_leaves_candle_outputs(base_file, tmp_path):
    upf = tmp_path / "runs.txt"
    upf.write_text(UPF)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", "--upf", str(upf), "--base", str(base_file), "--workers", "3",
                 "--sweep-dir", str(sweep), "--quiet"]) == 0
    for trial in ("RUN000", "RUN001", "RUN002"):
        value = float((sweep / "trials" / trial / "result.txt").read_text())
        losses = [json.loads(line)["test_loss"] for line in open(sweep / "trials" / trial / "metrics.jsonl")
                  if json.loads(line)["kind"] == "epoch"]
        assert value == losses[-1]
    opts = json.loads((sweep / "trials" / "RUN001" / "opts.json").read_text())["opts"]
    assert opts["epoch_iter"]["num_epochs"] == 2
    rows = list(csv.reader(open(sweep / "output.csv")))
    assert rows[0][0] == "run_id" and len(rows) == 4
    assert sorted(r[0] for r in rows[1:]) == ["RUN000", "RUN001", "RUN002"]
    starts_ends = [[json.loads(line) for line in open(sweep / "trials" / t / "attempts.jsonl")]
                   for t in ("RUN000", "RUN001", "RUN002")]
    assert max(a[0]["start"] for a in starts_ends) < min(a[-1]["end"] for a in starts_ends)  # they overlapped


@pytest.mark.parametrize("text, message", [
    ('{"id": "RUN000", "epochs": 1}\n{"id": "RUN000", "epochs": 2}\n', "line 2: duplicate id 'RUN000' (first on line 1)"),
    ('{"id": "RUN000", "epoch_iter.num_epoch": 1}\n', "line 1 (id RUN000): "),
    ('{"id": "RUN000", "epoch_iter.num_epoch": 1}\n', "Did you mean 'epoch_iter.num_epochs'?"),
    ('{"id": "RUN000", "seed": 1}\n{"epochs": 2}\n', "line 2: `id` is required"),
])
def test_bad_upf_exits_2_before_anything_runs(base_file, tmp_path, capsys, text, message):
    upf = tmp_path / "runs.txt"
    upf.write_text(text)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", "--upf", str(upf), "--base", str(base_file), "--sweep-dir", str(sweep)]) == 2
    assert message in capsys.readouterr().err
    assert not sweep.exists()


def test_bare_names_map_to_one_key_or_list_the_candidates():
    known = ["epoch_iter.num_epochs", "model_param.warmup_epochs", "model_param.seed", "input.seed"]
    assert resolve_name("epochs", known) == ("epoch_iter.num_epochs", [])
    assert resolve_name("warmup_epochs", known) == ("model_param.warmup_epochs", [])
    assert resolve_name("seed", known) == (None, ["model_param.seed", "input.seed"])


def test_upf_problems_are_all_reported_at_once(tmp_path):
    upf = tmp_path / "runs.txt"
    upf.write_text('{"id": "a"}\nnot json\n{"id": "a"}\n')
    with pytest.raises(SweepError) as caught:
        read_upf(str(upf))
    assert len(caught.value.problems) == 2
