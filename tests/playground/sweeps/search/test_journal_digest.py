"""`sweep status` from the journal's digest (search/journal_digest.py), without Optuna: the same bytes as through
Optuna's replay on real sweeps in every state a trial can be in, Optuna never imported, and a journal whose
records the digest does not vouch for read by Optuna as before."""
from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import time

import pytest

from playground.cli import main
from playground.sweeps.operations.reports import status
from playground.sweeps.search.journal_digest import read_digest
from playground.sweeps.search.journal_file import SweepJournal
from tests.conftest import HANG

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}, "epoch_iter.num_epochs": 2}
GRID = {"model_param.base_learning_rate": {"type": "log", "minval": -2, "maxval": -1, "count": 3},
        "epoch_iter.num_epochs": 3}
ASHA = {"name": "adaptive_asha", "max_trials": 4, "max_time": 4, "divisor": 2, "max_rungs": 3,
        "mode": "aggressive", "max_concurrent_trials": 4, "seed": 0}
SAMPLED = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
           "model_param.weight_decay": {"type": "double", "minval": 0.0, "maxval": 0.003}, "epoch_iter.num_epochs": 4}


def _printed(sweep, digest: bool) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert status(str(sweep), digest=digest) == 0
    return out.getvalue()


def assert_same_status(sweep, monkeypatch, *shown: str) -> str:
    """Both ways print the same bytes (at one clock: status says how old heartbeats and outputs are)."""
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    fast, replayed = _printed(sweep, digest=True), _printed(sweep, digest=False)
    monkeypatch.undo()
    assert fast == replayed
    for text in shown:
        assert text in fast, fast
    return fast


def _set_base(base_file, **knobs) -> None:
    opts = json.loads(base_file.read_text())
    opts["opts"]["model_param"].update(knobs)
    base_file.write_text(json.dumps(opts))


def _run(spec, sweep, *extra) -> int:
    return main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet", *extra])


def test_complete_pruned_and_imported_trials_read_the_same(write_spec, base_file, tmp_path, monkeypatch):
    _set_base(base_file, contract_epoch_seconds=0.25)      # time for ASHA to stop trials at their rung
    prior = tmp_path / "prior.csv"
    prior.write_text("y,model_param.base_learning_rate,model_param.weight_decay\n0.7,0.1,0.0\n3.0,0.001,0.001\n")
    sweep = tmp_path / "sweep"
    assert _run(write_spec(ASHA, SAMPLED), sweep, "--restart-file", str(prior), "--workers", "4") == 0
    assert_same_status(sweep, monkeypatch, "complete", "pruned", "2 imported", "best: ")


def test_failed_trials_read_the_same(write_spec, base_file, tmp_path, monkeypatch):
    _set_base(base_file, contract_fail_attempts=9)
    sweep = tmp_path / "sweep"
    _run(write_spec({"name": "random", "max_trials": 2, "seed": 0}, SPACE, max_restarts=1), sweep)
    assert_same_status(sweep, monkeypatch, "2 fail", "  t0001        fail")


@pytest.mark.parametrize("modes", [("min", "min"), ("min", "max")])
def test_a_multi_objective_sweep_reads_the_same(write_spec, tmp_path, monkeypatch, modes):
    objectives = [{"metric": m, "mode": mode} for m, mode in zip(("test_loss", "test_accuracy_top1"), modes)]
    sweep = tmp_path / "sweep"
    assert _run(write_spec({"name": "random", "max_trials": 4, "seed": 3}, SPACE, objective=objectives), sweep) == 0
    assert_same_status(sweep, monkeypatch, "pareto front: ", " pareto")


@pytest.mark.parametrize("searcher", [{"name": "single"}, {"name": "grid"}, {"name": "tpe"}, {"name": "gp"},
                                      {"name": "cmaes"}, {"name": "hyperband", "sampler": "tpe"}],
                         ids=["single", "grid", "tpe", "gp", "cmaes", "hyperband"])
def test_the_digest_vouches_for_every_searchers_journal(write_spec, tmp_path, monkeypatch, searcher):
    """Each searcher writes its own records (a sampler's system attrs, a pruner's reports, planned trials): the
    digest reads them all itself, so no sweep falls back to Optuna's replay."""
    space = GRID if searcher["name"] in ("grid", "single") else SPACE
    if searcher["name"] == "single":
        space = {"model_param.base_learning_rate": 0.1, "epoch_iter.num_epochs": 2}
    sweep = tmp_path / "sweep"
    extra = {} if searcher["name"] in ("grid", "single") else {"max_trials": 3, "seed": 0}
    assert _run(write_spec({**searcher, **extra}, space), sweep, "--workers", "2") == 0
    assert read_digest(str(sweep / "study.journal"), "sweep") is not None
    assert_same_status(sweep, monkeypatch, "complete")


def test_paused_waiting_released_and_running_trials_read_the_same(write_spec, base_file, tmp_path, monkeypatch):
    hold = tmp_path / "hold"
    _set_base(base_file, contract_hold_file=str(hold))       # trials wait for this file, or for SIGTERM
    spec, sweep = write_spec({"name": "grid"}, GRID), tmp_path / "sweep"

    def started(*trials: str) -> subprocess.Popen:
        run = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "run", str(spec), "--workers", "2",
                                "--sweep-dir", str(sweep), "--quiet"], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + HANG
        while not all((sweep / "trials" / t / "contract_attempts").is_file() for t in trials):
            assert time.monotonic() < deadline and run.poll() is None, "the trials did not start"
            time.sleep(0.05)
        return run

    try:
        run = started("t0000", "t0001")
        assert main(["sweep", "pause", str(sweep)]) == 0
        assert run.wait(timeout=HANG) == 75, run.stderr.read()
        assert_same_status(sweep, monkeypatch, "2 paused", "1 waiting", "sweep resume")
        assert main(["sweep", "resume", str(sweep)]) == 0
        for trial in ("t0000", "t0001"):
            (sweep / "trials" / trial / "contract_attempts").unlink()
        run = started("t0000", "t0001")
        run.send_signal(signal.SIGTERM)        # Ctrl-C: the agent releases its trials for the next one
        assert run.wait(timeout=HANG) == 75, run.stderr.read()
        assert_same_status(sweep, monkeypatch, "2 released", "1 waiting")
        for trial in ("t0000", "t0001"):
            (sweep / "trials" / trial / "contract_attempts").unlink()
        run = started("t0000", "t0001")
        run.kill()                             # the agent dies: the study and trial.json say running
        run.wait(timeout=HANG)
        assert_same_status(sweep, monkeypatch, "2 running", "1 waiting", "last output", "its process is gone")
    finally:
        hold.write_text("")                    # a trial still holding ends


def test_status_on_the_journal_never_imports_optuna(write_spec, tmp_path):
    sweep = tmp_path / "sweep"
    assert _run(write_spec({"name": "random", "max_trials": 2, "seed": 0}, SPACE), sweep) == 0
    code = ("import sys; from playground.cli import main; code = main(['sweep', 'status', sys.argv[1]]); "
            "print('optuna imported' if 'optuna' in sys.modules else 'no optuna'); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, str(sweep)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert "2 complete" in done.stdout and done.stdout.endswith("no optuna\n"), done.stdout


def test_a_record_the_digest_does_not_know_is_read_by_optuna_as_before(write_spec, tmp_path, monkeypatch):
    """A parameter in Optuna's abbreviated distribution form is valid for Optuna, not one the digest knows."""
    sweep = tmp_path / "sweep"
    assert _run(write_spec({"name": "random", "max_trials": 2, "seed": 0}, SPACE), sweep) == 0
    journal = sweep / "study.journal"
    lines = journal.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if json.loads(line)["op_code"] == 5)
    record = json.loads(lines[at])
    record["distribution"] = json.dumps({"type": "float", "low": 0.001, "high": 1.0, "log": True})
    lines[at] = json.dumps(record) + "\n"
    journal.write_text("".join(lines))
    assert read_digest(str(journal), "sweep") is None
    assert_same_status(sweep, monkeypatch, "2 complete")


def _records(path, *logs: dict) -> None:
    SweepJournal(str(path)).append_logs([{"worker_id": "w", **log} for log in logs])


def test_the_fold_keeps_optunas_replay_rules(tmp_path):
    """Trials numbered per study, ids over all; an update to a finished or unknown trial ignored, a second
    RUNNING ignored; a study of an existing name not made again; a deleted study's trials not listed."""
    import optuna
    from playground.sweeps.search.journal_file import open_checked
    path = tmp_path / "study.journal"
    start = {"datetime_start": "2026-11-26T10:00:00+00:00"}
    done = {"datetime_complete": "2026-11-26T10:01:00+00:00"}
    _records(path, {"op_code": 0, "study_name": "other", "directions": [1]},
             {"op_code": 0, "study_name": "sweep", "directions": [2, 1]},
             {"op_code": 0, "study_name": "sweep", "directions": [1]},          # the name exists: ignored
             {"op_code": 2, "study_id": 1, "user_attr": {"sweep_identity": "abc"}},
             {"op_code": 4, "study_id": 0, **start},                            # trial id 0, other's number 0
             {"op_code": 4, "study_id": 1, **start, "user_attrs": {"trial_id": "first"}},
             {"op_code": 4, "study_id": 1, "datetime_start": None, "state": 4},      # WAITING
             {"op_code": 8, "trial_id": 1, "user_attr": {"sets": {"a": 1}}},
             {"op_code": 7, "trial_id": 1, "step": 1, "intermediate_value": 0.5},
             {"op_code": 6, "trial_id": 2, "state": 0, "values": None, **start},  # the waiting trial claimed
             {"op_code": 6, "trial_id": 2, "state": 0, "values": None, **start},  # and claimed again: ignored
             {"op_code": 6, "trial_id": 1, "state": 1, "values": [0.25, 3.0], **done},
             {"op_code": 8, "trial_id": 1, "user_attr": {"late": True}},         # finished: ignored
             {"op_code": 6, "trial_id": 1, "state": 3, "values": None, **done},   # finished: ignored
             {"op_code": 8, "trial_id": 99, "user_attr": {"x": 1}},             # no such trial: ignored
             {"op_code": 4, "study_id": 7, **start},                            # no such study: ignored
             {"op_code": 10, "trial_ids": [2]},                                 # Rustuna's: skipped
             {"op_code": 6, "trial_id": 2, "state": 2, "values": [1.0, 2.0], **done},
             {"op_code": 1, "study_id": 0})
    digest = read_digest(str(path), "sweep")
    study = optuna.load_study(study_name="sweep", storage=open_checked(str(path)))
    assert study.user_attrs == digest.user_attrs == {"sweep_identity": "abc"}
    replayed = [(t.number, t.state.name, t.values, t.user_attrs) for t in study.get_trials(deepcopy=False)]
    assert [(t.number, t.state.name, t.values, t.user_attrs) for t in digest.get_trials()] == replayed == [
        (0, "COMPLETE", [0.25, 3.0], {"trial_id": "first", "sets": {"a": 1}}), (1, "PRUNED", [1.0, 2.0], {})]
    with pytest.raises(KeyError):
        read_digest(str(path), "other")       # deleted


def test_a_journal_written_by_optunas_own_backend_reads_the_same(tmp_path):
    """Optuna's JournalFileBackend writes its records with the same separators; a line with spaces around or a BOM
    (which json.loads of the bytes reads) is read too."""
    import optuna
    from optuna.storages.journal import JournalFileBackend
    from playground.sweeps.search.journal_file import open_checked
    path = tmp_path / "study.journal"
    study = optuna.create_study(study_name="sweep", storage=optuna.storages.JournalStorage(
        JournalFileBackend(str(path))), directions=["minimize"])
    for x in (0.5, 2.0, 3.0):
        trial = study.ask({"x": optuna.distributions.FloatDistribution(0.0, 4.0)})
        trial.set_user_attr("sets", {"x": x})
        if x < 3:
            study.tell(trial, x * x)
        else:
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    study.enqueue_trial({"x": 1.0}, user_attrs={"trial_id": "planned"})
    with open(path, "ab") as handle:
        handle.write(b'  {"op_code": 2, "worker_id": "w", "study_id": 0, "user_attr": {"a": 1}}  \n')
        handle.write(b'\xef\xbb\xbf{"op_code": 2, "worker_id": "w", "study_id": 0, "user_attr": {"b": 2}}\n')
    digest = read_digest(str(path), "sweep")
    replayed = optuna.load_study(study_name="sweep", storage=open_checked(str(path)))
    assert digest.user_attrs == replayed.user_attrs == {"a": 1, "b": 2}
    trials = [(t.number, t.state.name, t.values, t.user_attrs) for t in replayed.get_trials(deepcopy=False)]
    assert [(t.number, t.state.name, t.values, t.user_attrs) for t in digest.get_trials()] == trials
    assert [t[1] for t in trials] == ["COMPLETE", "COMPLETE", "PRUNED", "WAITING"]
