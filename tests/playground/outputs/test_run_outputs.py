"""What a run leaves in its folder (playground/outputs/run_outputs.py): results.json's best values."""
from __future__ import annotations

import json

from playground.api import run
from tests.conftest import tiny_opts

SEEN_METER = '''
"""test_seen_loss: how many test samples were added since the last record point (lower is "better")."""
from playground.trainer.meters import Meter


class CountSeen(Meter):
    def Add(self, blobs):
        self.total = self.total + blobs["label"].shape[0]
        self.count = 1.0
'''


def test_best_values_come_only_from_full_test_passes(tmp_path, monkeypatch):
    (tmp_path / "seen_meter.py").write_text(SEEN_METER)
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = tiny_opts()
    opts["output"]["metrics"].append({"name": "test_seen_loss", "meter_py": "seen_meter.CountSeen",
                                      "meter_kargs": {}, "is_train": False})
    run(opts, run_dir=str(tmp_path / "run"))
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # one test batch of 16 at each interval point, the whole test set of 40 at each end of epoch
    assert {r["test_seen_loss"] for r in records if r["kind"] == "interval"} == {16}
    best = results["best"]["test_seen_loss"]
    assert best["value"] == 40 and records[best["index"]]["kind"] == "epoch"
    full = [r for r in records if r["kind"] == "epoch"]
    assert results["best"]["test_accuracy_top1"]["value"] == max(r["test_accuracy_top1"] for r in full)
