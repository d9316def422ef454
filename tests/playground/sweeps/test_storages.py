"""Choosing and opening a sweep's storage: URLs checked before anything runs, passwords never written, clear exit-2
errors for a missing extra or an unreachable server, a real sweep on PostgreSQL, retries that never duplicate a
trial, and the network-filesystem warning read from real mountinfo text."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from playground.sweeps.errors import SweepError
from playground.sweeps.folder import SweepFolder
from playground.sweeps.netfs import mount_of, network_filesystem, warn_if_network_filesystem
from playground.sweeps.storage_url import parse_storage, redact
from tests.playground.sweeps.pg_cluster import free_port

REPO = Path(__file__).resolve().parents[3]
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
    from playground.sweeps.storages import locate, record
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
    from playground.sweeps.storages import locate, record
    folder = SweepFolder(str(tmp_path / "sw"))
    folder.write_spec({"name": "lr"}, "0123456789abcdef")
    record(folder, locate(folder, None))
    with pytest.raises(SweepError, match="cannot move"):
        locate(folder, "postgresql://ann@db/sweeps")
    assert locate(folder, "grpc://node1:13000").study_name == "sweep"   # the proxy fronts this journal


# -- retries ------------------------------------------------------------------------------------------------------
class _LosesOneReply:
    """A real journal storage whose create_new_trial (once) or every call (`down`) fails after or instead of
    taking effect: a reply lost on the way back, or a storage away."""

    def __init__(self, path: str) -> None:
        from playground.sweeps.storages import open_journal
        self.journal, self.lost, self.down = open_journal(path), 0, False

    def __getattr__(self, name: str):
        method = getattr(self.journal, name)

        def call(*args, **kwargs):
            if self.down:
                raise ConnectionError("storage away")
            result = method(*args, **kwargs)
            if name == "create_new_trial" and self.lost == 0:
                self.lost += 1
                raise ConnectionError("reply lost")
            return result
        return call


def test_a_lost_create_reply_is_recovered_by_its_token_not_created_twice(tmp_path, capsys):
    import optuna
    from playground.sweeps.retrying import retrying_storage
    backend = _LosesOneReply(str(tmp_path / "study.journal"))
    storage = retrying_storage(backend, "test://storage", lambda e: isinstance(e, ConnectionError), bound_s=30)
    study = optuna.create_study(storage=storage, study_name="s")
    trial = study.ask()
    study.tell(trial, 1.0)
    trials = backend.journal.get_all_trials(0)
    assert backend.lost == 1 and len(trials) == 1 and trials[0].state.name == "COMPLETE"
    assert "created before the reply was lost" in capsys.readouterr().err


def test_a_storage_away_past_the_bound_stops_with_one_line_per_wait(tmp_path, capsys):
    import optuna
    from playground.sweeps.retrying import StorageUnavailable, retrying_storage
    backend = _LosesOneReply(str(tmp_path / "study.journal"))
    storage = retrying_storage(backend, "test://storage", lambda e: isinstance(e, ConnectionError), bound_s=1.2)
    study = optuna.create_study(storage=storage, study_name="s")
    backend.down = True
    with pytest.raises(StorageUnavailable, match="test://storage unreachable"):
        study.get_trials()
    assert isinstance(StorageUnavailable("x"), SweepError)   # exit 2 at the command line, not a traceback
    waits = re.findall(r"get_all_trials: retry \d+ in ([\d.]+) s", capsys.readouterr().err)
    assert waits == ["0.5", "0.7"]   # 0.5, then what is left of the 1.2 s bound


# -- network filesystems ------------------------------------------------------------------------------------
MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 0:26 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/l1,upperdir=/u,workdir=/w
31 27 8:1 / /scratch rw,relatime shared:1 - ext4 /dev/sda1 rw
45 27 0:40 / /home rw,relatime shared:20 - nfs4 fs01:/export/home rw,vers=4.2,rsize=1048576,hard,proto=tcp
46 45 0:41 / /home/ann/remote\\040box rw,nosuid,nodev,relatime shared:21 - fuse.sshfs ann@box:/data rw,user_id=1000
47 27 0:42 / /projects rw,relatime shared:22 - cifs //nas/projects rw,vers=3.1.1,cache=strict
"""


def test_the_mount_holding_a_path_is_found_in_mountinfo():
    assert mount_of("/home/ann/sweeps/lr", MOUNTINFO) == ("/home", "nfs4")
    assert mount_of("/home/ann/remote box/sweeps", MOUNTINFO) == ("/home/ann/remote box", "fuse.sshfs")
    assert mount_of("/projects/x", MOUNTINFO) == ("/projects", "cifs")
    assert mount_of("/scratch/sweeps", MOUNTINFO) == ("/scratch", "ext4")
    assert mount_of("/homely", MOUNTINFO) == ("/", "overlay")


def test_a_journal_on_nfs_gets_one_loud_warning_pointing_to_postgres_and_serve(tmp_path, capsys):
    folder = tmp_path / "sweep"
    folder.mkdir()
    fake = tmp_path / "mountinfo"
    fake.write_text(MOUNTINFO + f"60 27 0:50 / {tmp_path} rw,relatime - nfs fs02:/export rw,vers=3\n")
    assert warn_if_network_filesystem(str(folder), str(fake)) == "nfs"
    warn_if_network_filesystem(str(folder), str(fake))
    err = capsys.readouterr().err
    assert err.count("WARNING") == 1 and "(nfs)" in err
    assert "postgresql://" in err and f"playground sweep serve {folder}" in err
    assert network_filesystem(str(folder)) is None   # this machine's own mounts: local


def test_a_folder_never_works_on_another_sweeps_study(tmp_path, write_spec):
    from playground.sweeps.spec import load_spec
    from playground.sweeps.study import load_study
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
