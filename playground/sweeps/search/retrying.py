"""A study storage that outlives brief outages (PostgreSQL restarted, the `sweep serve` proxy restarted): each
call that fails because the storage cannot be reached is retried with exponential backoff, one line per wait on
stderr, until a bound (PLAYGROUND_STORAGE_RETRY_S, default 120 s), then a `StorageUnavailable` naming the storage.

A retry may follow a call that did take effect whose reply was lost. Most calls are idempotent (reads; setting a
param, attribute or intermediate value to the same value). The others are made so:
- creating a trial carries a unique token in its system attrs; before a retry the study is searched for it, so a
  lost reply never yields a second trial;
- creating a study that, on a retry, already exists returns that study;
- finishing a trial that, on a retry, is already finished with the same state and values counts as done;
- claiming a waiting (planned) trial that, on a retry, is already RUNNING counts as done: only asks claim one,
  under the coordinator's ask lock, so no other agent can have.
"""
from __future__ import annotations

import datetime
import functools
import sys
import time
import uuid
from typing import Any, Callable

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs import environment
from playground.sweeps.search._optuna_private import storage_trial_id

TOKEN_ATTR = "playground:create_token"
FIRST_WAIT_S = 0.5
MAX_WAIT_S = 8.0
SETTLE_S = 1.0


class StorageUnavailable(SweepError):
    """The storage stayed unreachable past the retry bound."""


def postgres_transient(err: BaseException) -> bool:
    """A lost connection or a server that does not answer (starting up, shutting down), not a bad statement."""
    import sqlalchemy.exc as sa
    from optuna.exceptions import StorageInternalError
    if isinstance(err, StorageInternalError):   # optuna wraps every SQLAlchemy error in a session in this
        err = err.__cause__ or err
    if isinstance(err, sa.DBAPIError) and err.connection_invalidated:
        return True
    if isinstance(err, (sa.DataError, sa.IntegrityError, sa.ProgrammingError)):
        return False
    return isinstance(err, (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError, sa.PendingRollbackError,
                            sa.InternalError, ConnectionError))


def grpc_transient(err: BaseException) -> bool:
    import grpc
    return isinstance(err, grpc.RpcError) and err.code() in (
        grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)


def retrying_storage(backend: Any, shown: str, transient: Callable[[BaseException], bool],
                     bound_s: float | None = None) -> Any:
    """`backend` (an Optuna storage) with retries; `shown`: its URL for messages (password masked)."""
    return _storage_class()(backend, shown, transient, bound_s)


@functools.cache
def _storage_class() -> type:
    """Built on first use: the sweep package must import without optuna (`--help` stays light)."""
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial, TrialState

    class RetryingStorage(BaseStorage):
        def __init__(self, backend: BaseStorage, shown: str, transient: Callable[[BaseException], bool],
                     bound_s: float | None = None) -> None:
            self.backend, self.shown, self.transient = backend, shown, transient
            self.bound_s = environment.seconds("PLAYGROUND_STORAGE_RETRY_S") if bound_s is None else bound_s

        def call(self, name: str, *args: Any, recover: Callable[[BaseException], Any] | None = None,
                 **kwargs: Any) -> Any:
            """backend.name(*args) with retries; `recover(err)`, on a retry, may return the result a lost reply held
            (anything but None) instead of calling again."""
            started, wait, attempt = time.monotonic(), FIRST_WAIT_S, 0
            last: BaseException | None = None
            while True:
                try:
                    # after a failure, first ask whether it took effect; while the storage cannot even say, the call
                    # is not sent again (a second create queued at a stopped proxy would be a second trial)
                    if attempt and recover is not None:
                        found = recover(last)
                        if found is not None:
                            return found
                    return getattr(self.backend, name)(*args, **kwargs)
                except Exception as err:
                    if not self.transient(err):
                        settled = _settled(err, recover) if attempt and recover is not None else None
                        if settled is not None:
                            return settled
                        raise
                    last = err
                waited = time.monotonic() - started    # calls that timed out count too
                if waited >= self.bound_s:
                    raise StorageUnavailable(f"storage {self.shown} unreachable for {waited:.0f} s "
                                             f"({_brief(last)}); the sweep stops here: re-run it when the storage "
                                             "is back, nothing finished is lost") from None
                wait = min(wait, self.bound_s - waited)
                attempt += 1
                print(f"[storage] {self.shown} unreachable ({_brief(last)}); {name}: retry {attempt} in {wait:.1f} s "
                      f"(waited {waited:.1f} of {self.bound_s:.0f} s)", file=sys.stderr, flush=True)
                time.sleep(wait)
                wait = min(wait * 2, MAX_WAIT_S)

        # -- the calls that are not idempotent by themselves --------------------------------------------------
        def create_new_study(self, directions: Any, study_name: str | None = None) -> int:
            def existing(_err: BaseException) -> int | None:
                try:
                    return self.backend.get_study_id_from_name(study_name)
                except KeyError:
                    return None
            return self.call("create_new_study", directions, study_name, recover=existing if study_name else None)

        def create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> int:
            token = uuid.uuid4().hex
            template = _tagged(template_trial, token)

            def created(_err: BaseException) -> int | None:
                # twice, a moment apart: a create the server had queued while it could not answer lands meanwhile
                for pause in (0.0, SETTLE_S):
                    time.sleep(pause)
                    for trial in reversed(self.backend.get_all_trials(study_id, deepcopy=False)):
                        if trial.system_attrs.get(TOKEN_ATTR) == token:
                            print(f"[storage] {self.shown}: trial {trial.number} was created before the reply was "
                                  "lost; using it, not creating another", file=sys.stderr, flush=True)
                            return storage_trial_id(trial)
                return None
            return self.call("create_new_trial", study_id, template, recover=created)

        def set_trial_state_values(self, trial_id: int, state: TrialState, values: Any = None) -> bool:
            def taken_effect(_err: BaseException) -> bool | None:
                trial = self.backend.get_trial(trial_id)
                if state == TrialState.RUNNING:
                    # Optuna's ask claiming a waiting (planned) trial; asks hold control/ask.lock, so a RUNNING
                    # trial is this call's doing: answering False would make ask take the next one past the budget
                    return True if trial.state == TrialState.RUNNING else None
                if not state.is_finished():
                    return None
                same = trial.state == state and (values is None or list(trial.values or []) == list(values))
                return True if same else None
            return self.call("set_trial_state_values", trial_id, state, values, recover=taken_effect)

    # Every other storage call goes to the backend through `call`; BaseStorage's method list is the contract.
    for name in [n for n, v in vars(BaseStorage).items() if callable(v) and not n.startswith("_")]:
        if name not in vars(RetryingStorage):
            setattr(RetryingStorage, name, _delegate(name))
    RetryingStorage.__abstractmethods__ = frozenset()
    return RetryingStorage


def _tagged(template: Any, token: str) -> Any:
    """The trial to create, marked with `token`; without a template, what the storage would create itself."""
    from optuna.trial import FrozenTrial, TrialState
    if template is None:
        return FrozenTrial(number=-1, state=TrialState.RUNNING, value=None, values=None,
                           datetime_start=datetime.datetime.now(), datetime_complete=None, params={},
                           distributions={}, user_attrs={}, system_attrs={TOKEN_ATTR: token},
                           intermediate_values={}, trial_id=-1)
    import copy
    tagged = copy.deepcopy(template)
    tagged.system_attrs = {**tagged.system_attrs, TOKEN_ATTR: token}
    return tagged


def _settled(err: BaseException, recover: Callable[[BaseException], Any]) -> Any:
    """After a retry, an error that says the first call took effect (already finished, already exists)."""
    from optuna.exceptions import DuplicatedStudyError, UpdateFinishedTrialError
    if isinstance(err, (UpdateFinishedTrialError, DuplicatedStudyError, RuntimeError)):
        try:
            return recover(err)
        except Exception:
            return None
    return None


def _brief(err: BaseException | None) -> str:
    if err is None:
        return "no answer"
    code = getattr(err, "code", None)
    if callable(code):
        try:
            return f"{code().name}: {err.details()}"  # grpc
        except Exception:
            pass
    text = str(getattr(err, "orig", None) or err.__cause__ or err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}"


def _delegate(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.call(name, *args, **kwargs)
    method.__name__ = name
    return method
