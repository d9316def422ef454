"""Writing LMDBs: growing the map, and output that appears only when complete (playground/data/records/lmdb_writer.py)."""
from __future__ import annotations

import os

import pytest

from playground.data.records.db_records import DbRecords
from playground.data.records.lmdb_writer import LmdbWriter, staged_output
from playground.data.records.record_format import ImageRecord


def test_the_map_grows_until_every_record_fits(tmp_path):
    writer = LmdbWriter(str(tmp_path / "db"), map_size=64 * 1024)
    payloads = [os.urandom(3000 + i) for i in range(200)]      # about 600 kB into a 64 kB map
    for label, payload in enumerate(payloads):
        writer.append(ImageRecord(label=label, payload=payload))
    writer.finish(["only"])
    assert writer.map_size > 64 * 1024
    records = DbRecords(str(tmp_path / "db"))
    assert records.count == 200 and records.read(199).payload == payloads[199] and records.read(5).label == 5


def test_a_failed_build_leaves_nothing_and_a_finished_one_appears_whole(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with staged_output(str(target)) as staging:
            (tmp_path / "marker").write_text(staging)
            open(os.path.join(staging, "data.mdb"), "wb").close()
            raise RuntimeError("image 3 is unreadable")
    assert os.listdir(tmp_path) == ["marker"]                  # neither the target nor the staging folder
    with staged_output(str(target)) as staging:
        open(os.path.join(staging, "data.mdb"), "wb").close()
        assert not target.exists()
    assert os.listdir(target) == ["data.mdb"]


def test_an_existing_output_is_replaced_only_when_asked_and_only_on_success(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old").write_text("old build")
    with pytest.raises(FileExistsError, match="already exists; choose another path or pass --overwrite"):
        with staged_output(str(target)):
            pass
    with pytest.raises(KeyboardInterrupt):
        with staged_output(str(target), overwrite=True):
            raise KeyboardInterrupt
    assert os.listdir(target) == ["old"]
    with staged_output(str(target), overwrite=True) as staging:
        open(os.path.join(staging, "new"), "w").close()
    assert os.listdir(target) == ["new"] and sorted(os.listdir(tmp_path)) == ["out"]
