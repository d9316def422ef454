"""Every use of Optuna's private API in playground, in one place, each with the reason no public call does.

Optuna (5.0) keeps these names private, so an upgrade may move them; a failure then shows up here, and
tests/playground/sweeps/search (storages, serve, retrying, agents) exercise each one. Nothing here is imported
until called (optuna is heavy).

- `storage_of(study)`, `study_id_of(study)`, `storage_trial_id(trial)`: the coordinator adopts a RUNNING trial of
  another agent and the rebuild fills trials by number. Optuna's public Study only asks for *new* trials
  (`ask`) and tells a trial it created itself; a trial created elsewhere is reached only through the study's
  storage and the trial's storage id (`Study._storage`, `Study._study_id`, `FrozenTrial._trial_id`).
- `cached_storage(rdb)`: Optuna wraps a bare RDBStorage in `_CachedStorage` (its in-process cache of finished
  trials) inside `Study`; ours passes through our retrying wrapper first, so we must wrap it ourselves, the same way.
- `joined_rdb_storage()`: an RDBStorage whose `get_trial` reads a trial in one joined query instead of one per
  attribute table (half the round trips of a claim-and-tell over a network); it needs the ORM models, the scoped
  session helper and the frozen-trial builder, all private (`storages._rdb`).
- `grpc_server(storage, host, port)`: `run_grpc_proxy_server` serves for ever and gives no `stop()`; `sweep serve`
  stops gracefully on SIGTERM (calls in flight get their replies), which needs the server it builds internally.
- `deadline_proxy(wrap)`: `GrpcStorageProxy` has no per-call deadline; a stopped proxy would hang an agent for ever.
  The subclass wraps the proxy's stub (`_stub`, set in `_setup`) and rebuilds its trial cache on the wrapped stub.
- `suggest_params(study, trial id, dists)`: an agent killed between asking for a trial and storing its params
  leaves a RUNNING trial without them; the adopter has the sampler (or the enqueued point) fill them in. The
  public `suggest_float/int/categorical` would re-derive each distribution's arguments; `Trial._suggest` takes the
  distribution itself, as ask() does.
- `tell_without_copy(study, number, values, state)`: `Study.tell` returns a deep copy of the trial, which
  `sweep summary --rebuild` never reads and which took a third of its time at thousands of trials; the function
  behind it (`study._tell._tell_with_warning`) does the same telling without the copy.
- `distribution_contains(dist, value)`: whether a value lies in a distribution (a warm-started trial may leave the
  space); Optuna answers this only privately (`BaseDistribution._contains`).
"""
from __future__ import annotations

from typing import Any, Callable


def storage_of(study: Any) -> Any:
    return study._storage


def study_id_of(study: Any) -> int:
    return study._study_id


def storage_trial_id(trial: Any) -> int:
    """The storage's id of a FrozenTrial (not its number within the study)."""
    return trial._trial_id


def cached_storage(rdb: Any) -> Any:
    from optuna.storages import _CachedStorage
    return _CachedStorage(rdb)


def joined_rdb_storage() -> type:
    """RDBStorage whose get_trial is one joined query."""
    from optuna.storages import RDBStorage
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session
    from sqlalchemy import orm

    class PostgresStorage(RDBStorage):
        def get_trial(self, trial_id: int) -> Any:
            """One query, the trial joined with its params, values, attributes and reports (Optuna issues one per
            table); the rows are few: a trial's reports times its handful of attributes."""
            model = models.TrialModel
            with _create_scoped_session(self.scoped_session) as session:
                trial = (session.query(model)
                         .options(*(orm.joinedload(getattr(model, name)) for name in
                                    ("params", "values", "user_attributes", "system_attributes",
                                     "intermediate_values")))
                         .filter(model.trial_id == trial_id).one_or_none())
                if trial is None:
                    raise KeyError(models.NOT_FOUND_MSG)
                return self._build_frozen_trial_from_trial_model(trial)
    return PostgresStorage


def grpc_server(storage: Any, host: str, port: int) -> Any:
    """An unstarted gRPC storage proxy server (`.start()`, `.stop(grace)`)."""
    from optuna.storages._grpc.server import make_server  # run_grpc_proxy_server's own; it gives no stop()
    return make_server(storage, host, port)


def deadline_proxy(wrap: Callable[[Any], Any]) -> type:
    """GrpcStorageProxy whose stub is `wrap(stub)` (calls with a deadline), its trial cache built on that stub."""
    from optuna.storages import GrpcStorageProxy
    from optuna.storages._grpc.client import GrpcClientCache

    class DeadlineProxy(GrpcStorageProxy):
        """Optuna's client, each call bounded by PLAYGROUND_STORAGE_CALL_S (default 30 s)."""

        def _setup(self) -> None:
            super()._setup()
            self._stub = wrap(self._stub)
            self._cache = GrpcClientCache(self._stub)
    return DeadlineProxy


def suggest_params(study: Any, storage_id: int, dists: dict[str, Any]) -> dict[str, Any]:
    """The sampler's values (or the enqueued point's) for `dists` in the running trial `storage_id`."""
    import optuna
    live = optuna.trial.Trial(study, storage_id)
    return {name: live._suggest(name, dist) for name, dist in dists.items()}


def distribution_contains(dist: Any, value: Any) -> bool:
    return bool(dist._contains(dist.to_internal_repr(value)))


def tell_without_copy(study: Any, number: int, values: list[float] | None, state: Any) -> None:
    """study.tell(number, values, state=state, skip_if_finished=True), without building its returned copy."""
    from optuna.study._tell import _tell_with_warning
    _tell_with_warning(study, number, values, state, skip_if_finished=True)
