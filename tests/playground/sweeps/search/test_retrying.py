"""Retries of a study storage: a create whose reply was lost is found by its token, never made twice; a storage
away past the bound stops with one line per wait."""
from __future__ import annotations

import re

import pytest

from playground.sweeps.errors import SweepError


class _LosesOneReply:
    """A real journal storage whose `lose` call (once, create_new_trial unless told) or every call (`down`) fails
    after or instead of taking effect: a reply lost on the way back, or a storage away."""

    def __init__(self, path: str, lose: str = "create_new_trial") -> None:
        from playground.sweeps.search.storages import open_journal
        self.journal, self.lose, self.lost, self.down = open_journal(path), lose, 0, False

    def __getattr__(self, name: str):
        method = getattr(self.journal, name)

        def call(*args, **kwargs):
            if self.down:
                raise ConnectionError("storage away")
            result = method(*args, **kwargs)
            if name == self.lose and self.lost == 0:
                self.lost += 1
                raise ConnectionError("reply lost")
            return result
        return call


def test_a_lost_create_reply_is_recovered_by_its_token_not_created_twice(tmp_path, capsys):
    import optuna
    from playground.sweeps.search.retrying import retrying_storage
    backend = _LosesOneReply(str(tmp_path / "study.journal"))
    storage = retrying_storage(backend, "test://storage", lambda e: isinstance(e, ConnectionError), bound_s=30)
    study = optuna.create_study(storage=storage, study_name="s")
    trial = study.ask()
    study.tell(trial, 1.0)
    trials = backend.journal.get_all_trials(0)
    assert backend.lost == 1 and len(trials) == 1 and trials[0].state.name == "COMPLETE"
    assert "created before the reply was lost" in capsys.readouterr().err


def test_a_lost_reply_to_claiming_a_planned_trial_keeps_that_trial_and_takes_no_other(tmp_path):
    """Grid and upf trials are planned as WAITING; ask claims one by setting it RUNNING. Retried after a lost reply,
    that call found the trial RUNNING, answered False, and ask took the next planned trial (or made one past the
    budget), leaving the first RUNNING with nobody on it."""
    import optuna
    from playground.sweeps.search.retrying import retrying_storage
    backend = _LosesOneReply(str(tmp_path / "study.journal"), lose="set_trial_state_values")
    storage = retrying_storage(backend, "test://storage", lambda e: isinstance(e, ConnectionError), bound_s=30)
    study = optuna.create_study(storage=storage, study_name="s")
    study.enqueue_trial({"x": 1.0})
    study.enqueue_trial({"x": 2.0})
    trial = study.ask({"x": optuna.distributions.FloatDistribution(0.0, 3.0)})
    states = [t.state.name for t in backend.journal.get_all_trials(0)]
    assert backend.lost == 1 and trial.number == 0 and trial.params == {"x": 1.0}
    assert states == ["RUNNING", "WAITING"]


def test_a_storage_away_past_the_bound_stops_with_one_line_per_wait(tmp_path, capsys):
    import optuna
    from playground.sweeps.search.retrying import StorageUnavailable, retrying_storage
    backend = _LosesOneReply(str(tmp_path / "study.journal"))
    storage = retrying_storage(backend, "test://storage", lambda e: isinstance(e, ConnectionError), bound_s=1.2)
    study = optuna.create_study(storage=storage, study_name="s")
    backend.down = True
    with pytest.raises(StorageUnavailable, match="test://storage unreachable"):
        study.get_trials()
    assert isinstance(StorageUnavailable("x"), SweepError)   # exit 2 at the command line, not a traceback
    waits = re.findall(r"get_all_trials: retry \d+ in ([\d.]+) s", capsys.readouterr().err)
    assert waits == ["0.5", "0.7"]   # 0.5, then what is left of the 1.2 s bound
