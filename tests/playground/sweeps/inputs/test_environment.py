"""The environment variables a sweep reads are checked when a command starts: a malformed one is one message naming
it and what it takes (exit 2), before any folder is made or any file is touched, not a traceback at the first
storage call or journal append minutes later."""
from __future__ import annotations

import pytest

from playground.cli import main
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs import environment


@pytest.mark.parametrize("name", sorted(environment.KNOBS))
@pytest.mark.parametrize("given", ["soon", "-1", "nan", "inf", "1e999", "2.5.1"])
def test_a_malformed_value_is_a_sweep_error_naming_the_variable(monkeypatch, name, given):
    monkeypatch.setenv(name, given)
    with pytest.raises(SweepError, match=f"{name}={given!r}: it sets .* at least "):
        environment.seconds(name)
    with pytest.raises(SweepError, match=name):
        environment.check()


@pytest.mark.parametrize("name, given, value", [
    ("PLAYGROUND_STORAGE_RETRY_S", "0", 0.0),           # no retry at all: the first outage stops the agent
    ("PLAYGROUND_STORAGE_RETRY_S", " 2.5 ", 2.5),
    ("PLAYGROUND_STORAGE_CALL_S", "0.5", 0.5),
    ("PLAYGROUND_STORAGE_CONNECT_S", "1", 1.0),
    ("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "3", 3.0),
])
def test_a_good_value_is_taken_and_an_unset_or_empty_one_is_the_default(monkeypatch, name, given, value):
    monkeypatch.setenv(name, given)
    assert environment.seconds(name) == value
    monkeypatch.setenv(name, "")
    assert environment.seconds(name) == environment.KNOBS[name].default
    monkeypatch.delenv(name)
    assert environment.seconds(name) == environment.KNOBS[name].default


@pytest.mark.parametrize("name, given", [("PLAYGROUND_STORAGE_CALL_S", "0"),             # every call would fail
                                         ("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "2"),       # below Optuna's floor
                                         ("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "3.5")])    # Optuna takes whole seconds
def test_a_value_below_the_floor_or_not_whole_where_whole_seconds_are_needed_is_refused(monkeypatch, name, given):
    monkeypatch.setenv(name, given)
    with pytest.raises(SweepError, match=name):
        environment.seconds(name)


def test_sweep_run_and_agent_refuse_a_malformed_variable_before_making_or_touching_anything(
        write_spec, tmp_path, monkeypatch, capsys):
    spec = write_spec({"name": "grid"}, {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1]},
                                         "epoch_iter.num_epochs": 1})
    monkeypatch.setenv("PLAYGROUND_STORAGE_RETRY_S", "two minutes")
    fresh = tmp_path / "fresh"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(fresh), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "PLAYGROUND_STORAGE_RETRY_S='two minutes'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not fresh.exists()

    monkeypatch.delenv("PLAYGROUND_STORAGE_RETRY_S")
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    before = {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()}
    monkeypatch.setenv("PLAYGROUND_JOURNAL_LOCK_GRACE_S", "1")
    assert main(["sweep", "agent", str(sweep), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "PLAYGROUND_JOURNAL_LOCK_GRACE_S='1'" in err and "at least 3" in err
    assert {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()} == before
    # a command that opens no study (pause only writes its control file) is not refused for it
    assert main(["sweep", "pause", str(sweep)]) == 0
