"""The PostgreSQL study storage: Optuna's RDBStorage through SQLAlchemy's postgresql+psycopg dialect (psycopg 3, the
`postgres` extra), opened and checked before any trial runs, wrapped in Optuna's in-process cache and our retries.

Two changes make a claim-and-tell about twice as fast over a network (each round trip counts): a trial is read in
one joined query instead of one per attribute table (an agent reads its running trial several times per claim;
the query needs Optuna's private ORM, so it lives in _optuna_private.py),
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
    from playground.sweeps.search._optuna_private import cached_storage, joined_rdb_storage
    from playground.sweeps.search.retrying import postgres_transient, retrying_storage
    parts = urlsplit(storage.url)
    url = urlunsplit(("postgresql+psycopg",) + tuple(parts)[1:])
    try:
        # no pool_pre_ping (a query more per call): after a server restart the first call on an old connection
        # fails, SQLAlchemy drops the whole pool, and the retry gets a fresh connection
        rdb = joined_rdb_storage()(url, engine_kwargs={"pool_reset_on_return": None,
                                                   "connect_args": {"connect_timeout": CONNECT_TIMEOUT_S}})
    except (sqlalchemy.exc.SQLAlchemyError, OSError) as err:
        cause = str(getattr(err, "orig", None) or err).strip()
        raise SweepError(f"storage {storage.shown}: cannot open the PostgreSQL database: "
                         f"{cause.splitlines()[0] if cause else type(err).__name__}") from None
    except Exception as err:  # optuna wraps some failures (schema version, ...) in its own errors
        raise SweepError(f"storage {storage.shown}: cannot open the PostgreSQL database: {err}") from None
    # optuna adds this in-process cache of finished trials itself around a bare RDBStorage; ours is wrapped
    return retrying_storage(cached_storage(rdb), storage.shown, postgres_transient)

