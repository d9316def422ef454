"""TensorBoard tags (playground/trainer/hooks/tensorboard.py): a full test pass and the interval point at the
same iteration are two series, never two values under one tag and step."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from playground.api import run
from playground.trainer.hooks.tensorboard import scalars
from tests.conftest import tiny_opts

TESTS = {"test_loss", "test_accuracy_top1"}


def train_records(run_dir) -> list[dict]:
    """2 epochs of 4 iterations, a record point every 2: each epoch's end has an interval point and a full pass
    at the same iteration."""
    run(tiny_opts(output={"tensorboard": True}), run_dir=str(run_dir))
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def written(records: list[dict]) -> list[tuple[str, int, float]]:
    return [(tag, r["iteration"], value) for i, r in enumerate(records)
            for tag, value in scalars(r, records[i - 1] if i else None, TESTS)]


def test_the_full_test_pass_and_the_interval_point_at_an_epoch_end_have_distinct_tags(tmp_path):
    records = train_records(tmp_path / "run")
    interval, full = next((a, b) for a, b in zip(records, records[1:])
                          if a["kind"] == "interval" and b["kind"] == "epoch" and a["iteration"] == b["iteration"])
    pairs = written(records)
    repeated = [key for key, n in Counter((tag, step) for tag, step, _ in pairs).items() if n > 1]
    assert repeated == []
    at_step = {tag: value for tag, step, value in pairs if step == full["iteration"]}
    assert at_step["test/test_loss"] == interval["test_loss"]          # num_test_iter batches
    assert at_step["test_full/test_loss"] == full["test_loss"]         # the whole test set
    assert at_step["test/test_loss"] != at_step["test_full/test_loss"]
    assert at_step["lr"] == interval["lr"] and at_step["train_loss"] == interval["train_loss"]


def test_the_event_file_holds_both_test_series(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="the tensorboard package is not installed: the tags are tested through scalars() above")
    records = train_records(tmp_path / "run")
    events = event_accumulator.EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    read = sorted((tag, e.step, round(e.value, 5)) for tag in events.Tags()["scalars"] for e in events.Scalars(tag))
    assert read == sorted((tag, step, round(value, 5)) for tag, step, value in written(records))
    assert {"test/test_loss", "test_full/test_loss"} <= set(events.Tags()["scalars"])
