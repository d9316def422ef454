"""study.journal damaged by real writes (journal_file.py, lag.py): a torn last line is cut before the next append;
garbage or a bad line is one message naming the journal, the line and `sweep summary --rebuild`; an emptied or
removed journal beside trial folders is refused, never silently replaced; a cut journal is reported as lagging, and
`sweep summary` does not rewrite the reports from it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from playground.cli import main

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}, "epoch_iter.num_epochs": 2}


def _run(spec, sweep, *extra) -> int:
    return main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet", "--workers", "2", *extra])


def _run_elsewhere(spec, sweep) -> subprocess.CompletedProcess:
    """`sweep run` as a process of its own: an agent that is not the (finished) one of this test's process, so
    it adopts the trials that process left running."""
    return subprocess.run([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--sweep-dir", str(sweep),
                           "--quiet", "--workers", "2"], capture_output=True, text=True, timeout=300)


def _attempts(sweep) -> dict[str, str]:
    return {p.parent.name: p.read_text() for p in sorted(sweep.glob("trials/*/contract_attempts"))}


@pytest.fixture
def sweep(write_spec, tmp_path):
    """A finished random sweep of 4 trials; returns (spec writer for a budget, sweep folder)."""
    def spec(trials: int):
        # a trial the damaged journal still shows running is adopted after the agents' grace: short here
        return write_spec({"name": "random", "max_trials": trials, "seed": 0}, SPACE,
                          agents={"heartbeat_seconds": 0.5, "grace_seconds": 3})
    folder = tmp_path / "sweep"
    assert _run(spec(4), folder) == 0
    return spec, folder


@pytest.mark.parametrize("damage", ["killed_mid_append", "garbage_appended"])
def test_a_torn_last_line_is_cut_before_the_next_append_and_the_sweep_goes_on(sweep, capsys, damage):
    spec, folder = sweep
    journal = folder / "study.journal"
    if damage == "killed_mid_append":
        os.truncate(journal, journal.stat().st_size - 7)     # the last record, cut inside
    else:
        with open(journal, "ab") as handle:
            handle.write(b"\x00\xff\x13garbage")
    ran = _run_elsewhere(spec(6), folder)     # two more trials: the sweep appends again
    assert ran.returncode == 0, ran.stderr
    err = ran.stderr
    assert f"note: {journal} ended in a record cut short" in err
    data = journal.read_bytes()
    assert data.endswith(b"\n") and all(json.loads(line) for line in data.splitlines())
    assert main(["sweep", "status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "6 complete" in out and "lags" not in out


DAMAGES = {
    "binary_garbage": lambda lines: lines.insert(10, b"\x00\xff\xfe\x01garbage\n"),
    "a_cut_line": lambda lines: lines.__setitem__(10, lines[10][:15] + b"\n"),
    "a_record_of_the_wrong_shape": lambda lines: lines.__setitem__(10, b'{"op_code": 4, "worker_id": "w"}\n'),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_bad_line_inside_is_one_message_naming_journal_line_and_rebuild_which_repairs_it(sweep, capsys, damage):
    spec, folder = sweep
    journal = folder / "study.journal"
    lines = journal.read_bytes().splitlines(keepends=True)
    DAMAGES[damage](lines)
    journal.write_bytes(b"".join(lines))
    before = _attempts(folder)
    for command in (["sweep", "status", str(folder)], ["sweep", "summary", str(folder)],
                    ["sweep", "run", str(spec(4)), "--sweep-dir", str(folder)]):
        capsys.readouterr()
        assert main(command) == 2, command
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert err.startswith(f"playground sweep: error: {journal}, line 11: "), err
        assert f"`playground sweep summary {folder} --rebuild`" in err
    assert _attempts(folder) == before                 # nothing ran
    assert main(["sweep", "summary", str(folder), "--rebuild"]) == 0
    assert main(["sweep", "status", str(folder)]) == 0
    assert "4 complete" in capsys.readouterr().out
    assert _run(spec(4), folder) == 0 and _attempts(folder) == before


LOST = {"emptied": "is empty", "removed": "is missing", "cut_inside_its_first_record": "holds no study"}


@pytest.mark.parametrize("damage", sorted(LOST))
def test_an_emptied_or_removed_journal_beside_trial_folders_is_refused_never_replaced(sweep, capsys, damage):
    spec, folder = sweep
    journal = folder / "study.journal"
    (folder / "trials" / "notes.txt").write_text("a stray file in trials/ is no trial folder")
    (folder / "trials" / "t0099").mkdir()         # nor is an empty folder (a mount point made ready, say)
    if damage == "emptied":
        journal.write_bytes(b"")
    elif damage == "removed":
        journal.unlink()
    else:
        os.truncate(journal, 20)
    before = _attempts(folder)
    for command in (["sweep", "run", str(spec(4)), "--sweep-dir", str(folder)], ["sweep", "status", str(folder)]):
        capsys.readouterr()
        assert main(command) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"{journal} {LOST[damage]}" in err, err
        assert "4 trial folder(s)" in err and f"`playground sweep summary {folder} --rebuild`" in err
    assert _attempts(folder) == before                 # no trial ran again
    assert main(["sweep", "summary", str(folder), "--rebuild"]) == 0
    capsys.readouterr()
    assert _run(spec(4), folder) == 0
    assert "nothing to do" in capsys.readouterr().err or _attempts(folder) == before
    assert _attempts(folder) == before


def test_a_cut_journal_is_reported_as_lagging_the_folders_and_agents_refuse_it(write_spec, tmp_path, capsys):
    folder = tmp_path / "sweep"
    spec = lambda n: write_spec({"name": "random", "max_trials": n, "seed": 0}, SPACE)   # noqa: E731
    assert _run(spec(2), folder) == 0
    journal = folder / "study.journal"
    older = journal.stat().st_size
    assert _run(spec(4), folder) == 0
    os.truncate(journal, older)              # the journal as it was after two trials: t0002, t0003 lost
    capsys.readouterr()
    assert main(["sweep", "status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "the journal lags the trial folders: it does not know t0002, t0003" in out
    assert f"`playground sweep summary {folder} --rebuild`" in out
    reports = {name: (folder / name).read_bytes() for name in ("summary.csv", "summary.md", "best.json", "output.csv")}
    assert reports["summary.csv"].count(b"\n") == 1 + 4
    assert main(["sweep", "summary", str(folder)]) == 2      # rewritten from the cut journal, it would list 2 trials
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not know 2 trial folder(s) (t0002, t0003)" in err, err
    assert "summary.csv, summary.md, best.json and output.csv are left as they are" in err
    assert f"`playground sweep summary {folder} --rebuild`" in err
    assert {name: (folder / name).read_bytes() for name in reports} == reports
    before = _attempts(folder)
    assert _run(spec(4), folder) == 2        # new trials would be numbered into t0002's and t0003's folders
    err = capsys.readouterr().err
    assert "does not know 2 trial folder(s)" in err and "--rebuild" in err
    assert _attempts(folder) == before
    assert main(["sweep", "summary", str(folder), "--rebuild"]) == 0
    assert main(["sweep", "status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "4 complete" in out and "lags" not in out


def test_status_names_a_trial_that_ended_in_its_folder_but_runs_in_the_journal(sweep, capsys):
    spec, folder = sweep
    journal = folder / "study.journal"
    lines = journal.read_bytes().splitlines(keepends=True)
    last_tell = max(i for i, line in enumerate(lines) if json.loads(line)["op_code"] == 6 and
                    json.loads(line).get("state") == 1)       # the study told that a trial completed
    told = json.loads(lines[last_tell])["trial_id"]
    journal.write_bytes(b"".join(lines[:last_tell] + lines[last_tell + 1:]))
    capsys.readouterr()
    assert main(["sweep", "status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"t{told:04d} is complete in its trial.json but running in the study" in out
    summary = (folder / "summary.csv").read_bytes()
    assert main(["sweep", "summary", str(folder)]) == 2       # no agent is ending it: the journal lost that record
    assert f"t{told:04d} is complete in its trial.json but running in the study" in capsys.readouterr().err
    assert (folder / "summary.csv").read_bytes() == summary
    ran = _run_elsewhere(spec(4), folder)    # the agent adopts it and ends it again from its own folder
    assert ran.returncode == 0, ran.stderr
    assert main(["sweep", "status", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "4 complete" in out and "lags" not in out
