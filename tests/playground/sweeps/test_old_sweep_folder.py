"""A sweep folder written by an older playground (tests/data/fixtures/finished_sweep) still reports, and
continues: `sweep status`, `sweep summary` (also `--rebuild`), `sweep continue`, and `sweep run` with a raised
budget all work on it as on a folder written today."""
from __future__ import annotations

import json
import re
import shutil

from playground.cli import main
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "fixtures" / "finished_sweep"
WRITTEN_IN = "/tmp/playground-sweep-fixture"   # where the fixture was written; sweep.json names its base there


def _copy(tmp_path):
    shutil.copytree(FIXTURE, tmp_path, symlinks=True, dirs_exist_ok=True)   # checkpoints/last is a link
    spec_file = tmp_path / "sweep" / "sweep.json"
    spec_file.write_text(spec_file.read_text().replace(WRITTEN_IN, str(tmp_path)))
    return tmp_path / "sweep"


def _epoch_records(trial) -> list[dict]:
    return [r for r in map(json.loads, (trial / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "epoch"]


def _states(sweep) -> dict[str, str]:
    return {t.name: json.loads((t / "trial.json").read_text())["state"] for t in (sweep / "trials").iterdir()}


def test_an_old_finished_sweep_reports_as_it_did(tmp_path, capsys):
    sweep = _copy(tmp_path)
    written = {name: (sweep / name).read_bytes() for name in ("summary.csv", "summary.md", "output.csv")}
    assert main(["sweep", "status", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "2 complete" in out and "t0001" in out
    assert main(["sweep", "summary", str(sweep)]) == 0
    assert {name: (sweep / name).read_bytes() for name in written} == written
    assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    assert (sweep / "summary.csv").read_bytes() == written["summary.csv"]


def test_an_old_finished_sweep_continues_a_trial_and_runs_to_a_raised_budget(tmp_path, capsys):
    sweep = _copy(tmp_path)
    spec = json.loads((tmp_path / "spec.json").read_text())
    spec["searcher"]["max_trials"] = 3
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert main(["sweep", "continue", str(sweep), "t0001", "--set", "epoch_iter.num_epochs=2"]) == 0
    assert "added trial t0002: continues t0001" in capsys.readouterr().out
    assert main(["sweep", "run", str(tmp_path / "spec.json"), "--sweep-dir", str(sweep), "--quiet"]) == 0
    assert _states(sweep) == {"t0000": "complete", "t0001": "complete", "t0002": "complete", "t0003": "complete"}
    # t0002 resumed t0001's checkpoint after its one epoch, carried its record over, and trained one more
    new, source = sweep / "trials" / "t0002", sweep / "trials" / "t0001"
    assert re.findall(r"resumed from \S+ \(epoch (\d+),", (new / "sweep-trial.log").read_text()) == ["1"]
    assert [r["epoch"] for r in _epoch_records(new)] == [0, 1]
    assert _epoch_records(new)[:1] == _epoch_records(source)
    assert json.loads((sweep / "sweep.json").read_text())["spec"]["searcher"]["max_trials"] == 3
    assert sum(1 for line in (sweep / "summary.csv").read_text().splitlines()[1:] if line) == 4
