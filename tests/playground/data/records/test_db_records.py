"""Reading image LMDBs of either format, lazily and once per process (playground/data/records/db_records.py)."""
from __future__ import annotations

import os
import pickle

import lmdb
import pytest

from playground.data.records.db_records import CAFFE, PLAYGROUND, DatabaseError, DbRecords, RecordReadError
from playground.data.records.record_format import ImageRecord, pack_record, record_key
from tests.image_lmdbs import caffe_datums, corrupt_record, make_image_lmdb, write_caffe_lmdb


def test_the_format_is_detected_from_the_metadata_record_or_the_first_datum(tmp_path):
    ours = DbRecords(str(make_image_lmdb(tmp_path, classes=2, per_class=3)))
    assert (ours.kind, ours.count, ours.class_names) == (PLAYGROUND, 6, ["class0", "class1"])
    assert [ours.read(i).label for i in range(6)] == [0, 0, 0, 1, 1, 1]
    caffe = DbRecords(str(write_caffe_lmdb(tmp_path / "caffe", caffe_datums(classes=2, per_class=2))))
    assert (caffe.kind, caffe.count, caffe.class_names) == (CAFFE, 4, None)
    assert caffe.key(3) == b"00000003_img3.jpg" and caffe.read(3).label == 1


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "does not exist"),
    (lambda p: (p / "data.mdb").write_bytes(b"x") and p / "data.mdb", r"is a file, not an LMDB folder \(give the folder"),
    (lambda p: p, "is not an LMDB: it has no data.mdb"),
])
def test_paths_that_are_not_lmdbs_are_refused_with_the_reason(tmp_path, make, message):
    with pytest.raises(DatabaseError, match=message):
        DbRecords(str(make(tmp_path)))


def test_a_split_build_folder_points_to_its_train_and_test_databases(tmp_path):
    output = make_image_lmdb(tmp_path, test_fraction=0.5)
    with pytest.raises(DatabaseError, match=f"holds the split databases {output}/train, {output}/test"):
        DbRecords(str(output))


def test_records_without_metadata_are_an_unfinished_build(tmp_path):
    env = lmdb.open(str(tmp_path / "half"))
    with env.begin(write=True) as txn:
        txn.put(record_key(0), pack_record(ImageRecord(label=0, payload=b"png")))
    env.close()
    with pytest.raises(DatabaseError, match="no metadata record, so its build did not finish"):
        DbRecords(str(tmp_path / "half"))


def test_an_lmdb_of_something_else_is_refused(tmp_path):
    env = lmdb.open(str(tmp_path / "other"))
    with env.begin(write=True) as txn:
        txn.put(b"k", b"\xff\xff\xff")
    env.close()
    with pytest.raises(DatabaseError, match="neither a playground image database nor Caffe Datum records"):
        DbRecords(str(tmp_path / "other"))


def test_a_damaged_record_error_names_the_database_and_key(tmp_path):
    db = make_image_lmdb(tmp_path, classes=1, per_class=3)
    corrupt_record(db, record_key(1), b"PGIM\x01")
    records = DbRecords(str(db))
    with pytest.raises(RecordReadError, match=f"{db}: record '0000000001': the record is 5 bytes"):
        records.read(1)


def test_pickling_leaves_the_handle_behind_and_several_readers_share_one_per_process(tmp_path):
    db = str(make_image_lmdb(tmp_path, classes=1, per_class=2))
    first, second = DbRecords(db), DbRecords(db)     # LMDB allows one handle per process: they must share it
    assert first.read(0) == second.read(0)
    copy = pickle.loads(pickle.dumps(first))
    assert copy._txn is None and copy.read(1) == first.read(1)
    pid = os.fork()
    if pid == 0:                                      # a forked child reopens instead of using the parent's handle
        os._exit(0 if first.read(1).label == 0 else 1)
    assert os.waitpid(pid, 0)[1] == 0
    assert first.read(0).label == 0


def test_a_mapped_read_gives_the_records_image_uncopied_and_the_same_errors(tmp_path):
    db = make_image_lmdb(tmp_path, classes=1, per_class=3)
    records = DbRecords(str(db))
    copied, mapped = records.read(2), records.read_mapped(2)
    assert isinstance(mapped.payload, memoryview) and bytes(mapped.payload) == copied.payload
    assert (mapped.label, mapped.encoding) == (copied.label, copied.encoding)
    assert copied.extra["source"].endswith(".png") and mapped.extra == {}   # the training path skips extras
    bad = make_image_lmdb(tmp_path, classes=1, per_class=3, name="bad")
    corrupt_record(bad, record_key(1), b"PGIM\x01")
    with pytest.raises(RecordReadError, match=f"{bad}: record '0000000001': the record is 5 bytes"):
        DbRecords(str(bad)).read_mapped(1)
