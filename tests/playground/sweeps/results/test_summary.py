"""The reports at scale (results/summary.py): a trial's end rewrites no other trial's folder, the reports a sweep
keeps up incrementally are byte for byte those of `sweep summary --rebuild`, a refresh reads only what changed,
and the rebuild's work grows linearly with the number of trials."""
from __future__ import annotations

import builtins
import json
import os

from optuna.storages import JournalStorage
from playground.sweeps.search.journal_file import SweepJournal

from playground.cli import main
from playground.sweeps.operations.reports import open_sweep
from playground.sweeps.results.summary import ReportCache, write_summary
from tests.playground.sweeps.synthetic import add_finished_trials

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}, "epoch_iter.num_epochs": 2}
REPORTS = ("summary.csv", "summary.md", "output.csv", "best.json")


def _stamps(sweep) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of every trial's result.txt: an atomic rewrite changes the inode."""
    return {p.parent.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in sweep.glob("trials/*/result.txt")}


def test_later_trials_leave_earlier_result_txt_untouched_and_the_reports_equal_a_rebuild(write_spec, tmp_path):
    sweep = tmp_path / "sweep"
    spec = write_spec({"name": "random", "max_trials": 6, "seed": 0}, SPACE)
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--workers", "2", "--quiet"]) == 0
    first = _stamps(sweep)
    assert len(first) == 6
    # the budget raised: a new agent (a fresh process's view, no cache) runs 8 more trials with 4 slots
    spec = write_spec({"name": "random", "max_trials": 14, "seed": 0}, SPACE)
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--workers", "4", "--quiet"]) == 0
    after = _stamps(sweep)
    assert len(after) == 14
    assert {t: after[t] for t in first} == first      # no earlier trial's result.txt was written again
    for trial_id in after:
        record = json.loads((sweep / "trials" / trial_id / "trial.json").read_text())
        assert (sweep / "trials" / trial_id / "result.txt").read_text() == f"{record['values'][0]!r}\n"
    incremental = {name: (sweep / name).read_bytes() for name in REPORTS}
    assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    assert {name: (sweep / name).read_bytes() for name in REPORTS} == incremental
    assert _stamps(sweep) == after                    # the rebuild found every result.txt right: none rewritten


def _synthetic_sweep(write_spec, tmp_path, count: int, rebuild: bool = True):
    """A sweep folder of 2 real contract trials and `count` synthetic finished ones (in its study when `rebuild`)."""
    sweep = tmp_path / f"sweep{count}"
    spec = write_spec({"name": "random", "max_trials": 2, "seed": 0}, SPACE, name=f"spec{count}.json")
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    add_finished_trials(str(sweep), count)
    if rebuild:
        assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    return sweep


def test_a_refresh_with_nothing_changed_reads_no_trial_folder_and_writes_no_file(write_spec, tmp_path):
    sweep = _synthetic_sweep(write_spec, tmp_path, 60)
    folder, spec, study = open_sweep(str(sweep))
    cache = ReportCache()
    write_summary(study, folder, spec.objectives, cache)
    assert cache.folders_read == 62
    files = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in [*(sweep / n for n in REPORTS),
                                                                   *sweep.glob("trials/*/result.txt")]}
    write_summary(study, folder, spec.objectives, cache)
    assert cache.folders_read == 62
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files} == files
    # another writer replaced summary.csv (another agent's older view): this cache writes its own again
    (sweep / "other.csv").write_text("id\n")
    os.replace(sweep / "other.csv", sweep / "summary.csv")
    write_summary(study, folder, spec.objectives, cache)
    assert (sweep / "summary.csv").read_bytes() != b"id\n"
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in files if p.name != "summary.csv"} == \
        {p: s for p, s in files.items() if p.name != "summary.csv"}


def _rebuild_work(tmp_path, write_spec, count: int, monkeypatch) -> dict[str, int]:
    """Run `summary --rebuild` on a sweep of 2 real and `count` synthetic trials, counting its work: journal
    appends, trials handed out by the storage (all calls together) and files opened."""
    sweep = _synthetic_sweep(write_spec, tmp_path, count, rebuild=False)
    work = {"appends": 0, "trials_handed_out": 0, "opens": 0}
    real_append, real_all, real_open = SweepJournal.append_logs, JournalStorage.get_all_trials, builtins.open

    def append_logs(self, logs):
        work["appends"] += 1
        return real_append(self, logs)

    def get_all_trials(self, *args, **kwargs):
        trials = real_all(self, *args, **kwargs)
        work["trials_handed_out"] += len(trials)
        return trials

    def counted_open(*args, **kwargs):
        work["opens"] += 1
        return real_open(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(SweepJournal, "append_logs", append_logs)
        patch.setattr(JournalStorage, "get_all_trials", get_all_trials)
        patch.setattr(builtins, "open", counted_open)
        assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    return work


def test_a_rebuild_does_linear_work_in_the_number_of_trials(write_spec, tmp_path, monkeypatch):
    small = _rebuild_work(tmp_path, write_spec, 500, monkeypatch)
    large = _rebuild_work(tmp_path, write_spec, 2000, monkeypatch)
    assert small["appends"] == large["appends"] == 1          # the journal written in one append
    # 4x the trials: linear work is about 4x (a scan of every trial per trial would be 16x)
    assert large["trials_handed_out"] <= 4.5 * small["trials_handed_out"]
    assert large["trials_handed_out"] <= 5 * 2002
    assert large["opens"] <= 4.5 * small["opens"]
    assert large["opens"] <= 10 * 2002                        # a handful of files per trial folder


def test_an_agent_takes_finished_rows_from_summary_csv_only_where_they_match_the_study(write_spec, tmp_path):
    sweep = _synthetic_sweep(write_spec, tmp_path, 40)
    full = (sweep / "summary.csv").read_text()
    # one row's value no longer what the study says: that trial's folder is read, the other 41 rows are taken
    lines = full.splitlines(keepends=True)
    cells = lines[5].split(",")
    cells[3] = "0.5"
    (sweep / "summary.csv").write_text("".join(lines[:5] + [",".join(cells)] + lines[6:]))
    folder, spec, study = open_sweep(str(sweep))
    cache = ReportCache(seed_from_summary=True)
    write_summary(study, folder, spec.objectives, cache)
    assert cache.folders_read == 1
    assert (sweep / "summary.csv").read_text() == full
