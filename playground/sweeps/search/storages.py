"""Where a sweep's study lives, chosen by the spec's `storage` key or `--storage URL`: the journal file in the
sweep folder (one host), PostgreSQL by URL (several hosts, psycopg 3), or a `sweep serve` gRPC proxy fronting the
folder's journal (several hosts, no database). Opening one checks it answers before any trial runs.

The URL as typed may hold a password; only `redact(url)` ever reaches sweep.json or a log line. sweep.json
records the redacted URL and the study's name, so `sweep status`, `sweep agent` and a resumed `sweep run` find the
same study (a password comes from PGPASSWORD or ~/.pgpass). Never SQLite: its locking breaks under parallel writers.
"""
from __future__ import annotations

import json
import os
import re
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import urlsplit

from playground.outputs.atomic_files import write_json
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs import environment
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.storage_url import GRPC, JOURNAL, POSTGRES, Storage, parse_storage, redact, require_extra

JOURNAL_STUDY = "sweep"   # the journal's study name since the first version: existing folders must resume
OWNER_ATTR = "sweep_identity"


@dataclass(frozen=True)
class Location:
    storage: Storage
    study_name: str


def recorded(folder: SweepFolder) -> dict:
    """sweep.json's `storage` entry ({url (redacted), study}), {} for folders made before storages existed."""
    try:
        with open(folder.spec_file, encoding="utf-8") as handle:
            return json.load(handle).get("storage") or {}
    except (OSError, json.JSONDecodeError):
        return {}


def locate(folder: SweepFolder, requested: str | None, name: str = "sweep", identity: str = "") -> Location:
    """Which storage and study this folder's sweep uses: `requested` (--storage or the spec), else the one
    sweep.json recorded, else the journal. The study keeps the name recorded when the sweep began; a new one in a
    shared database gets a name of its own (the sweep's name, identity and a random part)."""
    stored = recorded(folder)
    try:
        if requested in (None, "auto") and stored.get("url"):
            storage = parse_storage(stored["url"])
        else:
            storage = parse_storage(requested)
    except ValueError as err:
        raise SweepError(f"{folder.root}: {err}") from None
    if stored.get("url"):
        before = parse_storage(stored["url"]).kind
        # the proxy fronts the folder's own journal: journal <-> grpc is the same study
        if {before, storage.kind} != {JOURNAL, GRPC} and before != storage.kind:
            raise SweepError(f"{folder.root}: this sweep's study is in {stored['url']}; it cannot move to "
                             f"{storage.shown} (the trials already run are numbered in that study)")
    study = stored.get("study")
    if study is None:
        if storage.kind == POSTGRES:
            study = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-{identity[:8]}-{uuid.uuid4().hex[:8]}"
        else:
            study = JOURNAL_STUDY
    return Location(storage, study)


def record(folder: SweepFolder, location: Location) -> None:
    """Write the storage (redacted) and study name into sweep.json, unless already there."""
    with open(folder.spec_file, encoding="utf-8") as handle:
        data = json.load(handle)
    entry = {"url": redact(location.storage.url, mark=""), "study": location.study_name}
    if data.get("storage") != entry:
        data["storage"] = entry
        write_json(folder.spec_file, data)


def check_owner(study: Any, folder: SweepFolder, identity: str | None, location: Location, mark: bool) -> None:
    """A study names the sweep it belongs to (its identity, in the study's user attrs): a folder never works on
    another sweep's study, say a new folder pointed at another sweep's `sweep serve`. Studies made before this
    have no owner and are taken as they are; `mark` writes the owner when missing."""
    if not identity:
        return
    owner = study.user_attrs.get(OWNER_ATTR)
    if owner is None and mark:
        study.set_user_attr(OWNER_ATTR, identity)
    elif owner is not None and owner != identity:
        raise SweepError(f"{folder.root}: the study {location.study_name!r} in {location.storage.shown} belongs to "
                         f"another sweep (identity {owner}; this folder's is {identity}): is this the proxy or "
                         "database of another sweep folder?")


def open_storage(folder: SweepFolder, storage: Storage | None = None) -> Any:
    """An Optuna storage for `storage` (default: the folder's journal), checked to answer; PostgreSQL and the
    proxy come wrapped in retries with backoff for brief outages."""
    storage = storage or Storage(JOURNAL, JOURNAL)
    if storage.kind == POSTGRES:
        from playground.sweeps.search._postgres import open_postgres
        return open_postgres(storage)
    if storage.kind == GRPC:
        return _open_grpc(storage)
    return open_journal(folder.journal)


def open_journal(path: str, single_writer: bool = False) -> Any:
    """The journal file as a storage (journal_file.py: damage is one message naming the line, a torn last line
    is cut before the next append); on a network filesystem, a loud warning unless this process is its only
    writer (`sweep serve`)."""
    from playground.sweeps.search.journal_file import open_checked
    from playground.sweeps.search.netfs import warn_if_network_filesystem
    if not single_writer:
        warn_if_network_filesystem(os.path.dirname(path))
    return open_checked(path)


@contextmanager
def buffered_journal(path: str) -> Iterator[Any]:
    """A journal storage whose log lines stay in memory and are appended to the journal file `path` in one write
    when the block ends without error (nothing is written otherwise). For one writer doing thousands of
    operations (`sweep summary --rebuild`), each of which would take the file lock, append and fsync; the file
    gets the same lines in the same order."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import BaseJournalBackend
    from playground.sweeps.search.journal_file import SweepJournal

    class _Memory(BaseJournalBackend):
        def __init__(self) -> None:
            self.logs: list[dict[str, Any]] = []

        def read_logs(self, log_number_from: int) -> list[dict[str, Any]]:
            return self.logs[log_number_from:]

        def append_logs(self, logs: list[dict[str, Any]]) -> None:
            self.logs.extend(logs)

    memory = _Memory()
    yield JournalStorage(memory)
    if memory.logs:
        SweepJournal(path).append_logs(memory.logs)


def _open_grpc(storage: Storage) -> Any:
    require_extra("grpc", f"storage {storage.shown}: the gRPC proxy")
    from playground.sweeps.search.retrying import grpc_transient, retrying_storage
    from playground.sweeps.search._grpc_client import DeadlineProxy
    parts = urlsplit(storage.url)
    proxy = DeadlineProxy(host=parts.hostname, port=parts.port)
    try:
        proxy.wait_server_ready(timeout=environment.seconds("PLAYGROUND_STORAGE_CONNECT_S"))
    except ConnectionError:
        proxy.close()
        raise SweepError(f"storage {storage.shown}: no storage proxy answers there; start one beside the sweep "
                         "folder with `playground sweep serve DIR` and use the URL it prints") from None
    return retrying_storage(proxy, storage.shown, grpc_transient)

