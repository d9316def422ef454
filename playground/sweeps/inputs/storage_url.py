"""A storage URL as a sweep spec or --storage gives it: which kind (journal, PostgreSQL, gRPC proxy), checked,
and shown without its password (`redact`): only redacted URLs reach sweep.json or a log line."""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from playground.sweeps.errors import SweepError

JOURNAL, POSTGRES, GRPC = "journal", "postgresql", "grpc"
POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")
FORMS = "journal (the default), postgresql://user@host:port/db, or grpc://host:port (a `playground sweep serve`)"


@dataclass(frozen=True)
class Storage:
    kind: str          # journal | postgresql | grpc
    url: str           # as given; may hold a password: never print or store it, use `shown`

    @property
    def shown(self) -> str:
        return redact(self.url)


def parse_storage(value: Any) -> Storage:
    """The storage a spec value or --storage names; a ValueError says what is accepted."""
    if value in (None, "auto", JOURNAL):
        return Storage(JOURNAL, JOURNAL)
    if not isinstance(value, str):
        raise ValueError(f"storage {value!r}: use {FORMS}")
    parts = urlsplit(value)
    if parts.scheme in POSTGRES_SCHEMES:
        return Storage(POSTGRES, value)
    if parts.scheme == GRPC:
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None or parts.path not in ("", "/"):
            raise ValueError(f"storage {value}: a proxy URL is grpc://host:port, as `playground sweep serve` prints it")
        return Storage(GRPC, value)
    if parts.scheme.startswith("sqlite") or value.endswith((".db", ".sqlite", ".sqlite3")):
        raise ValueError(f"storage {redact(value)}: SQLite is not offered: its file locking breaks under parallel "
                         f"writers; use {FORMS}")
    raise ValueError(f"storage {redact(value)}: use {FORMS}")


def redact(url: str, mark: str = "***") -> str:
    """The URL with its password (also a `password=` query parameter) shown as `mark`, or dropped when mark is
    empty (what sweep.json records: PGPASSWORD or ~/.pgpass supply it again)."""
    parts = urlsplit(url)
    if "://" not in url or (parts.password is None and "password=" not in parts.query):
        return url
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}{':' + mark if mark else ''}@{host}"
    query = re.sub(r"(^|&)password=[^&]*", (r"\1password=" + mark) if mark else "", parts.query).lstrip("&")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def password(url: str) -> str | None:
    """The password a URL holds (in its user part, or a `password=` query parameter); None when it holds none."""
    parts = urlsplit(url)
    if "://" not in url:
        return None
    if parts.password is not None:
        return unquote(parts.password)
    found = re.search(r"(?:^|&)password=([^&]*)", parts.query)
    return unquote(found.group(1)) if found else None


EXTRAS = {"postgres": ("psycopg 3", ("psycopg",)), "grpc": ("grpcio and protobuf", ("grpc", "google.protobuf"))}


def require_extra(extra: str, who: str) -> None:
    """A SweepError naming what to install when an optional extra of playground is missing."""
    packages, modules = EXTRAS[extra]
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:
        raise SweepError(f"{who} needs {packages}, which is an extra: pip install 'playground[{extra}]'") from None
