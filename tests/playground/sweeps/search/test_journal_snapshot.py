"""`sweep status` from a snapshot of the journal's digest (search/journal_snapshot.py): it folds only the records
appended since the snapshot, and prints what Optuna's replay of the whole journal gives; a journal cut, rewritten in
place, torn or rebuilt, or a snapshot that is garbage, is folded from its first line, never read stale."""
from __future__ import annotations

import json
import os

import pytest

from playground.cli import main
from playground.sweeps.search import journal_digest, journal_snapshot
from tests.playground.sweeps.search.test_journal_digest import SPACE, _run, assert_same_status


@pytest.fixture
def sweep(write_spec, tmp_path, monkeypatch):
    """(spec writer for a budget, a finished random sweep of 4 trials); a snapshot is written after 10 records."""
    monkeypatch.setattr(journal_snapshot, "SNAPSHOT_RECORDS", 10)
    spec = lambda n: write_spec({"name": "random", "max_trials": n, "seed": 0}, SPACE)   # noqa: E731
    folder = tmp_path / "sweep"
    assert _run(spec(4), folder) == 0
    return spec, folder


@pytest.fixture
def folded(monkeypatch):
    """The records the digest's fold applies, counted."""
    applied = []
    apply = journal_digest._Fold.apply
    monkeypatch.setattr(journal_digest._Fold, "apply", lambda fold, log: (applied.append(log), apply(fold, log)))
    return applied


def _same(folder, *shown: str) -> None:
    """Status prints, from the digest, the bytes of Optuna's replay (test_journal_digest.py), under its own clock."""
    with pytest.MonkeyPatch.context() as clock:
        assert_same_status(folder, clock, *shown)


def _lines(journal) -> int:
    return journal.read_bytes().count(b"\n")


def test_status_folds_only_the_records_appended_since_its_snapshot(sweep, folded):
    spec, folder = sweep
    journal, snapshot = folder / "study.journal", folder / "study.journal.digest"
    _same(folder, "4 complete")
    assert json.loads(snapshot.read_text())["records"] == _lines(journal) == len(folded)
    before = _lines(journal)
    assert _run(spec(6), folder) == 0                   # two more trials: their records are appended
    folded.clear()
    _same(folder, "6 complete")
    assert len(folded) == _lines(journal) - before     # the tail only
    assert json.loads(snapshot.read_text())["records"] == _lines(journal)
    folded.clear()
    _same(folder, "6 complete")
    assert folded == []                                 # nothing appended since: nothing folded


def test_a_cut_journal_is_folded_from_its_start_not_from_a_later_snapshot(sweep, folded):
    spec, folder = sweep
    journal = folder / "study.journal"
    four = journal.stat().st_size
    assert _run(spec(6), folder) == 0
    _same(folder, "6 complete")      # the snapshot covers 6 trials
    os.truncate(journal, four)                                  # restored to an older state: 4 trials
    folded.clear()
    _same(folder, "4 complete", "the journal lags the trial folders")
    assert len(folded) == _lines(journal)


def test_a_journal_rewritten_in_place_is_read_as_it_now_is(sweep, folded):
    _, folder = sweep
    journal = folder / "study.journal"
    _same(folder, "4 complete")
    lines = journal.read_bytes().splitlines(keepends=True)
    told = max(i for i, line in enumerate(lines) if json.loads(line)["op_code"] == 6 and json.loads(line)["state"] == 1)
    lines[told] = lines[told].replace(b'"state":1', b'"state":3')     # that trial failed: same size, same offsets
    journal.write_bytes(b"".join(lines))
    folded.clear()
    _same(folder, "3 complete", "1 fail")
    assert len(folded) == len(lines)


def test_a_torn_tail_a_rebuilt_journal_and_a_garbage_snapshot_read_as_optuna_replays(sweep):
    _, folder = sweep
    journal, snapshot = folder / "study.journal", folder / "study.journal.digest"
    _same(folder, "4 complete")
    whole = journal.read_bytes()
    journal.write_bytes(whole + whole.splitlines(keepends=True)[-1][:40])   # a writer killed mid-append
    _same(folder, "4 complete")
    assert json.loads(snapshot.read_text())["offset"] <= len(whole)
    journal.write_bytes(whole)
    assert main(["sweep", "summary", str(folder), "--rebuild"]) == 0       # a new journal, other bytes
    _same(folder, "4 complete")
    snapshot.write_bytes(b"\x00not json")
    _same(folder, "4 complete")
