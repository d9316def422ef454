"""Choosing and opening a sweep's storage: URLs checked before anything runs, passwords never written, clear exit-2
errors for a missing extra or an unreachable server, a real sweep on PostgreSQL found again from sweep.json, and a
study that stays with its sweep."""
from __future__ import annotations

import json
import os
import sys

import pytest

from playground.sweeps.errors import SweepError
from playground.sweeps.files.sweep_folder import SweepFolder
from playground.sweeps.inputs.storage_url import parse_storage, redact
from tests.playground.sweeps.pg_cluster import free_port

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}, "epoch_iter.num_epochs": 1}


@pytest.fixture
def sweep(capsys):
    """sweep(*args) -> (exit code, stdout, stderr) of `playground sweep ARGS`, run in this process."""
    from playground.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["sweep", *args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


# -- URLs -----------------------------------------------------------------------------------------------------
def test_storage_urls_are_told_apart_and_sqlite_is_refused():
    assert parse_storage("auto").kind == parse_storage("journal").kind == "journal"
    assert parse_storage("postgresql://ann@db.site:5432/sweeps").kind == "postgresql"
    assert parse_storage("postgresql+psycopg://ann@db/sweeps").kind == "postgresql"
    assert parse_storage("grpc://node12:13000").kind == "grpc"
    for bad, said in (("sqlite:///study.db", "SQLite"), ("grpc://node12", "grpc://host:port"),
                      ("mysql://a@b/c", "postgresql://")):
        with pytest.raises(ValueError, match=said):
            parse_storage(bad)


def test_a_password_in_the_spec_is_used_but_never_resolved_into_sweep_json(write_spec):
    from playground.sweeps.inputs.spec import load_spec
    spec = load_spec(str(write_spec({"name": "random", "max_trials": 2}, SPACE,
                                    storage="postgresql://ann:s3cret@db/sweeps")))
    assert spec.storage == "postgresql://ann:s3cret@db/sweeps"
    assert spec.raw["storage"] == "postgresql://ann@db/sweeps"


def test_passwords_are_masked_in_messages_and_dropped_from_records():
    url = "postgresql://ann:s3cret@db:5432/sweeps?sslmode=require&password=other"
    assert "s3cret" not in redact(url) and "other" not in redact(url) and "ann:***@db" in redact(url)
    assert redact(url, mark="") == "postgresql://ann@db:5432/sweeps?sslmode=require"
    assert redact("postgresql://ann@db/sweeps") == "postgresql://ann@db/sweeps"


def test_bad_storage_in_the_spec_stops_before_anything_runs(tmp_path, write_spec, sweep):
    spec = write_spec({"name": "random", "max_trials": 2}, SPACE, storage="sqlite:///x.db")
    code, _, err = sweep("run", str(spec), "--sweep-dir", str(tmp_path / "sw"))
    assert code == 2 and "SQLite is not offered" in err
    assert not (tmp_path / "sw").exists()


def test_unreachable_postgres_is_exit_2_with_the_redacted_url_and_no_password_written(tmp_path, write_spec, sweep):
    pytest.importorskip("psycopg", reason="needs the postgres extra: pip install 'playground[postgres]'")
    port = free_port()   # nothing listens there
    spec = write_spec({"name": "random", "max_trials": 2}, SPACE)
    code, out, err = sweep("run", str(spec), "--sweep-dir", str(tmp_path / "sw"), "--storage",
                           f"postgresql://ann:s3cret@127.0.0.1:{port}/sweeps")
    assert code == 2, err
    assert f"postgresql://ann:***@127.0.0.1:{port}/sweeps" in err
    assert "cannot open the PostgreSQL database" in err and "refused" in err.lower()
    assert "s3cret" not in err + out
    assert "s3cret" not in (tmp_path / "sw" / "sweep.json").read_text()
    assert os.listdir(tmp_path / "sw" / "trials") == []


def test_missing_psycopg_names_the_extra_to_install(tmp_path, write_spec, sweep, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)   # cannot be imported: `pip install playground`, no extra
    spec = write_spec({"name": "random", "max_trials": 2}, SPACE)
    code, _, err = sweep("run", str(spec), "--sweep-dir", str(tmp_path / "sw"), "--storage",
                         "postgresql://ann@127.0.0.1:1/sweeps")
    assert code == 2 and "pip install 'playground[postgres]'" in err


def test_no_proxy_answering_is_exit_2_naming_sweep_serve(tmp_path, write_spec, sweep, monkeypatch):
    pytest.importorskip("grpc", reason="needs the grpc extra: pip install 'playground[grpc]'")
    monkeypatch.setenv("PLAYGROUND_STORAGE_CONNECT_S", "1")
    spec = write_spec({"name": "random", "max_trials": 2}, SPACE)
    code, _, err = sweep("run", str(spec), "--sweep-dir", str(tmp_path / "sw"), "--storage",
                         f"grpc://127.0.0.1:{free_port()}")
    assert code == 2 and "no storage proxy answers" in err and "playground sweep serve" in err


# -- a real sweep on PostgreSQL ---------------------------------------------------------------------------------
def test_sweep_on_postgres_records_its_study_and_status_finds_it_again(tmp_path, write_spec, postgres, sweep):
    spec = write_spec({"name": "random", "max_trials": 2}, SPACE)
    folder = tmp_path / "sw"
    code, _, err = sweep("run", str(spec), "--sweep-dir", str(folder), "--workers", "2", "--storage", postgres.url)
    assert code == 0, err
    record = json.loads((folder / "sweep.json").read_text())["storage"]
    assert record["url"] == postgres.url and record["study"].startswith("t-")
    assert not (folder / "study.journal").exists()
    code, out, err = sweep("status", str(folder))     # no --storage: sweep.json says where the study is
    assert code == 0 and "2 complete" in out, err
    code, _, err = sweep("run", str(spec), "--sweep-dir", str(folder))
    assert code == 0 and "nothing to do" in err


def test_sweeps_sharing_a_database_get_studies_of_their_own_and_keep_them(tmp_path):
    from playground.sweeps.search.storages import locate, record
    url = "postgresql://ann@db.site/sweeps"
    names = []
    for sub in ("a", "b"):
        folder = SweepFolder(str(tmp_path / sub))
        folder.write_spec({"name": "lr"}, "0123456789abcdef")
        location = locate(folder, url, "lr", "0123456789abcdef")
        record(folder, location)
        assert locate(folder, None).study_name == location.study_name    # resumed: the recorded study
        names.append(location.study_name)
    assert names[0] != names[1] and all(n.startswith("lr-01234567-") for n in names)


def test_a_journal_sweep_cannot_move_to_postgres_but_may_go_through_its_proxy(tmp_path):
    from playground.sweeps.search.storages import locate, record
    folder = SweepFolder(str(tmp_path / "sw"))
    folder.write_spec({"name": "lr"}, "0123456789abcdef")
    record(folder, locate(folder, None))
    with pytest.raises(SweepError, match="cannot move"):
        locate(folder, "postgresql://ann@db/sweeps")
    assert locate(folder, "grpc://node1:13000").study_name == "sweep"   # the proxy fronts this journal


def test_a_folder_never_works_on_another_sweeps_study(tmp_path, write_spec):
    from playground.sweeps.inputs.spec import load_spec
    from playground.sweeps.search.study import load_study
    one = load_spec(str(write_spec({"name": "random", "max_trials": 2}, SPACE, name="one.json")))
    two = load_spec(str(write_spec({"name": "random", "max_trials": 2, "seed": 7}, SPACE, name="two.json")))
    first = SweepFolder(str(tmp_path / "first"))
    first.write_spec(one.raw, one.identity())
    load_study(first, one.searcher, one.objectives, create=True)
    second = SweepFolder(str(tmp_path / "second"))   # pointed at the first one's study, as through its proxy
    second.write_spec(two.raw, two.identity())
    os.symlink(first.journal, second.journal)
    with pytest.raises(SweepError, match="belongs to another sweep"):
        load_study(second, two.searcher, two.objectives, create=True)
