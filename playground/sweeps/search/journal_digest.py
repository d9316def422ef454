"""The journal's study as `sweep status` reads it, without Optuna: study.journal read once through journal_file.py
(its damage checks and messages) and folded into each trial's number, state, values and user attrs, and the
study's user attrs; no FrozenTrial is built and Optuna is not imported.

The fold follows Optuna's journal replay (JournalStorage of Optuna 5.0) as a reader that wrote none of the records:
trials are numbered per study in the order they were created; an update to an unknown or finished trial is
ignored, and so is a second RUNNING for a running trial; a study created twice by name is the first one. It
vouches only for records it knows to the letter: any other (another op, a field of another type, a distribution
in another form) makes `read_digest` give up with None, and the caller opens the study with Optuna, whose replay
reads it, or says what is wrong with it, as it always did. Parameters, intermediate values and system attrs are
checked at least as strictly as Optuna's replay checks them, and not kept.
"""
from __future__ import annotations

import enum
import hashlib
import json
from datetime import datetime
from typing import Any

from playground.sweeps.search import journal_snapshot
from playground.sweeps.search.journal_file import SweepJournal


class TrialState(enum.IntEnum):
    """Optuna's trial states, by the numbers the journal stores and with Optuna's names."""
    RUNNING = 0
    COMPLETE = 1
    PRUNED = 2
    FAIL = 3
    WAITING = 4

    def is_finished(self) -> bool:
        return self not in _OPEN


_OPEN = (TrialState.RUNNING, TrialState.WAITING)
_STATES = tuple(TrialState)     # by number


class TrialDigest:
    """One trial, by the names of Optuna's FrozenTrial that the status code reads."""
    __slots__ = ("number", "state", "values", "user_attrs")

    def __init__(self, number: int, state: TrialState, values: list | None, user_attrs: dict[str, Any]) -> None:
        self.number, self.state, self.values, self.user_attrs = number, state, values, user_attrs


class JournalDigest:
    """One study of the journal, read as Optuna's Study is read: `user_attrs`, `get_trials()`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.user_attrs: dict[str, Any] = {}
        self.trials: list[TrialDigest] = []

    def get_trials(self, deepcopy: bool = False) -> list[TrialDigest]:
        return list(self.trials)


def read_digest(path: str, study_name: str) -> JournalDigest | None:
    """The study `study_name` of the journal `path`, or None where a record is not one the fold vouches for
    (open the study with Optuna then). A missing journal is created empty, as opening it for Optuna does.
    KeyError: the journal holds no such study; JournalDamaged: a line that is no record (journal_file.py).
    Folds from the snapshot beside the journal where the journal still begins with what it folded
    (journal_snapshot.py), then the records after it, and leaves a new snapshot when that was many."""
    journal, version = SweepJournal(path), journal_snapshot.fold_version(__file__)
    with open(path, "rb") as handle:
        snapshot = journal_snapshot.load(path, version)
        hasher = journal_snapshot.verified(handle, snapshot) if snapshot is not None else None
        fold = _Fold.restored(snapshot.state) if hasher is not None else None
        if fold is None:
            fold, start, hasher = _Fold(), (0, 0), hashlib.sha256()
        else:
            start = (snapshot.records, snapshot.offset)
        for log in journal.records_from(handle, *start, hasher):
            try:
                fold.apply(log)
            except Exception:   # whatever Optuna's replay might refuse, or read otherwise: it reads this journal
                return None
    records, offset = journal.position
    if records - start[0] >= journal_snapshot.SNAPSHOT_RECORDS:
        journal_snapshot.save(path, version, journal_snapshot.Snapshot(records, offset, hasher.hexdigest(),
                                                                       fold.state()))
    return fold.study(study_name)


class _Fold:
    def __init__(self) -> None:
        self.studies: dict[int, JournalDigest] = {}   # by Optuna's study id: creation order, a deleted one gone
        self.created = 0                              # studies created, deleted ones too (the next id)
        self.trials: list[TrialDigest] = []           # by Optuna's trial id, over all studies
        self.distributions: dict[str, tuple] = {}     # a distribution's JSON text -> _distribution() of it
        self.apply_op = [self._create_study, self._delete_study, self._set_study_user_attr,   # by op_code
                         self._set_study_system_attr, self._create_trial, self._set_param, self._set_state,
                         self._set_intermediate, self._set_trial_user_attr, self._set_trial_system_attr,
                         self._discard_trials]

    def state(self) -> dict[str, Any]:
        """What the fold holds, as JSON values (journal_snapshot.py keeps it); `restored` makes the same fold."""
        position = {id(trial): index for index, trial in enumerate(self.trials)}
        return {"created": self.created,
                "studies": [[study_id, study.name, study.user_attrs, [position[id(t)] for t in study.trials]]
                            for study_id, study in self.studies.items()],
                "trials": [[t.number, int(t.state), t.values, t.user_attrs] for t in self.trials]}

    @classmethod
    def restored(cls, state: Any) -> "_Fold | None":
        """The fold `state()` gave, or None when `state` is not one (the caller folds from the start)."""
        fold = cls()
        try:
            fold.created = _int(state["created"])
            fold.trials = [TrialDigest(number, _STATES[code], values, attrs)     # as state() wrote them
                           for number, code, values, attrs in state["trials"]]
            for study_id, name, user_attrs, positions in state["studies"]:
                study = fold.studies[_int(study_id)] = JournalDigest(name)
                study.user_attrs = _dict(user_attrs)
                study.trials = [fold.trials[_int(p)] for p in positions]
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        return fold

    def apply(self, log: dict[str, Any]) -> None:
        op = log["op_code"]
        if not 0 <= op < len(self.apply_op):
            raise ValueError(f"op_code {op}")
        self.apply_op[op](log)

    def study(self, name: str) -> JournalDigest:
        for study in self.studies.values():
            if study.name == name:
                return study
        raise KeyError(name)

    def _study_of(self, log: dict[str, Any]) -> JournalDigest | None:
        return self.studies.get(_int(log["study_id"]))

    def _create_study(self, log: dict[str, Any]) -> None:
        name = log["study_name"]
        if type(name) is not str or type(log["directions"]) is not list:
            raise TypeError("study_name or directions")
        if any(type(d) is not int or not 0 <= d <= 2 for d in log["directions"]):   # StudyDirection's values
            raise ValueError("directions")
        if all(study.name != name for study in self.studies.values()):
            self.studies[self.created] = JournalDigest(name)
            self.created += 1

    def _delete_study(self, log: dict[str, Any]) -> None:
        self.studies.pop(_int(log["study_id"]), None)

    def _set_study_user_attr(self, log: dict[str, Any]) -> None:
        study = self._study_of(log)
        if study is not None:
            study.user_attrs.update(_one_attr(log["user_attr"]))

    def _set_study_system_attr(self, log: dict[str, Any]) -> None:
        if self._study_of(log) is not None:
            _one_attr(log["system_attr"])

    def _create_trial(self, log: dict[str, Any]) -> None:
        study = self._study_of(log)
        if study is None:
            return
        distributions = {k: self._distribution(v) for k, v in _dict(log.get("distributions", {})).items()}
        for key, internal in _dict(log.get("params", {})).items():
            _external(distributions[key], internal)
        if log["datetime_start"] is not None:
            _time(log["datetime_start"])
        if "datetime_complete" in log:
            _time(log["datetime_complete"])
        state = _state(log.get("state", 0))
        _dict(log.get("system_attrs", {}))
        for step in _dict(log.get("intermediate_values", {})):
            int(step)
        value, values = log.get("value"), log.get("values")
        if value is not None and values is not None:
            raise ValueError("both value and values")
        trial = TrialDigest(len(study.trials), state, _values([value] if value is not None else values),
                            dict(_dict(log.get("user_attrs", {}))))
        study.trials.append(trial)
        self.trials.append(trial)

    def _open_trial(self, log: dict[str, Any]) -> TrialDigest | None:
        """The trial a record updates; None when Optuna ignores the record (no such trial, or finished)."""
        trial_id = _int(log["trial_id"])
        if 0 <= trial_id < len(self.trials):
            trial = self.trials[trial_id]
            if trial.state in _OPEN:
                return trial
        return None

    def _set_param(self, log: dict[str, Any]) -> None:
        if self._open_trial(log) is not None:
            if type(log["param_name"]) is not str:
                raise TypeError("param_name")
            _external(self._distribution(log["distribution"]), log["param_value_internal"])

    def _set_state(self, log: dict[str, Any]) -> None:
        trial = self._open_trial(log)
        if trial is None:
            return
        state = _state(log["state"])
        if state is TrialState.RUNNING and trial.state is TrialState.RUNNING:
            return          # a waiting trial popped by two agents: the first one's
        if state is TrialState.RUNNING:
            _time(log["datetime_start"])
        elif state is not TrialState.WAITING:
            _time(log["datetime_complete"])
        trial.state = state
        if log["values"] is not None:
            trial.values = _values(log["values"])

    def _set_intermediate(self, log: dict[str, Any]) -> None:
        if self._open_trial(log) is not None:
            _int(log["step"])
            if not _number(log["intermediate_value"]):
                raise TypeError("intermediate_value")

    def _set_trial_user_attr(self, log: dict[str, Any]) -> None:
        trial = self._open_trial(log)
        if trial is not None:
            trial.user_attrs.update(_one_attr(log["user_attr"]))

    def _set_trial_system_attr(self, log: dict[str, Any]) -> None:
        if self._open_trial(log) is not None:
            _one_attr(log["system_attr"])

    def _discard_trials(self, log: dict[str, Any]) -> None:
        """Written by Rustuna only; Optuna skips it."""

    def _distribution(self, text: str) -> tuple:
        known = self.distributions.get(text)
        if known is None:
            known = self.distributions[text] = _distribution(text)
        return known


def _distribution(text: str) -> tuple:
    """("float",), ("int",) or ("categorical", choices) for a distribution in the form Optuna writes and its
    constructor accepts; ValueError for any other (deprecated classes, the abbreviated form: Optuna reads those)."""
    spec = json.loads(text)
    if type(spec) is not dict or set(spec) != {"name", "attributes"} or type(spec["attributes"]) is not dict:
        raise ValueError("distribution")
    name, attrs = spec["name"], spec["attributes"]
    keys = set(attrs)
    if name == "FloatDistribution" and {"low", "high"} <= keys <= {"low", "high", "log", "step"}:
        low, high, log = attrs["low"], attrs["high"], attrs.get("log", False)
        if (_number(low) and _number(high) and type(log) is bool and attrs.get("step") is None and low <= high
                and (not log or low > 0)):
            return ("float",)
    if name == "IntDistribution" and {"low", "high"} <= keys <= {"low", "high", "log", "step"}:
        low, high, log, step = attrs["low"], attrs["high"], attrs.get("log", False), attrs.get("step", 1)
        if (type(low) is int and type(high) is int and type(log) is bool and type(step) is int and step > 0
                and low <= high and (not log or (low >= 1 and step == 1))):
            return ("int",)
    if name == "CategoricalDistribution" and keys == {"choices"}:
        choices = attrs["choices"]
        if type(choices) is list and choices and all(c is None or type(c) in (bool, int, float, str) for c in choices):
            return ("categorical", tuple(choices))
    raise ValueError(f"distribution {text[:80]}")


def _external(distribution: tuple, internal: Any) -> Any:
    """The value as Optuna's to_external_repr gives it, failing where that fails (an int's value that is no int,
    a choice's index out of range)."""
    if distribution[0] == "int":
        return int(internal)
    if distribution[0] == "categorical":
        return distribution[1][int(internal)]
    return internal


def _time(text: Any) -> None:
    datetime.fromisoformat(text).astimezone()


def _state(value: Any) -> TrialState:
    if type(value) is not int or not 0 <= value < len(_STATES):
        raise ValueError(f"not a trial state: {value!r}")
    return _STATES[value]


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"not an int: {value!r}")
    return value


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _values(values: list | None) -> list | None:
    if values is not None and (type(values) is not list or not all(_number(v) for v in values)):
        raise TypeError(f"values {values!r}")
    return values


def _dict(value: Any) -> dict:
    if type(value) is not dict:
        raise TypeError(f"not an object: {value!r}")
    return value


def _one_attr(value: Any) -> dict:
    if type(value) is not dict or len(value) != 1:
        raise ValueError("an attr record sets one key")
    return value
