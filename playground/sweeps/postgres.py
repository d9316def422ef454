"""The PostgreSQL study storage: Optuna's RDBStorage through SQLAlchemy's postgresql+psycopg dialect (psycopg 3, the
`postgres` extra), opened and checked before any trial runs, wrapped in Optuna's in-process cache and our retries.

Two changes make a claim-and-tell about twice as fast over a network (each round trip counts): a trial is read in
one joined query instead of one per attribute table (an agent reads its running trial several times per claim),
and a connection goes back to the pool without an extra ROLLBACK (every Optuna call already ends its transaction).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.storage_url import Storage, require_extra

CONNECT_TIMEOUT_S = 10


def open_postgres(storage: Storage) -> Any:
    require_extra("postgres", f"storage {storage.shown}: PostgreSQL")   # the postgresql+psycopg dialect
    import sqlalchemy.exc
    from optuna.storages import _CachedStorage
    from playground.sweeps.retrying import postgres_transient, retrying_storage
    parts = urlsplit(storage.url)
    url = urlunsplit(("postgresql+psycopg",) + tuple(parts)[1:])
    try:
        # no pool_pre_ping (a query more per call): after a server restart the first call on an old connection
        # fails, SQLAlchemy drops the whole pool, and the retry gets a fresh connection
        rdb = _storage_class()(url, engine_kwargs={"pool_reset_on_return": None,
                                                   "connect_args": {"connect_timeout": CONNECT_TIMEOUT_S}})
    except (sqlalchemy.exc.SQLAlchemyError, OSError) as err:
        cause = str(getattr(err, "orig", None) or err).strip()
        raise SweepError(f"storage {storage.shown}: cannot open the PostgreSQL database: "
                         f"{cause.splitlines()[0] if cause else type(err).__name__}") from None
    except Exception as err:  # optuna wraps some failures (schema version, ...) in its own errors
        raise SweepError(f"storage {storage.shown}: cannot open the PostgreSQL database: {err}") from None
    # optuna adds this in-process cache of finished trials itself around a bare RDBStorage; ours is wrapped
    return retrying_storage(_CachedStorage(rdb), storage.shown, postgres_transient)


def _storage_class() -> type:
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
