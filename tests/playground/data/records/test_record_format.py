"""The playground image record and metadata format (playground/data/records/record_format.py)."""
from __future__ import annotations

import struct

import pytest

from playground.data.records.record_format import (ENCODED, FORMAT_VERSION, HEADER_SIZE, META_KEY, RAW_HWC, ImageRecord,
                                           RecordError, pack_meta, pack_record, record_key, unpack_meta,
                                           unpack_record)


def test_a_record_round_trips_its_label_payload_and_extra_fields():
    record = ImageRecord(label=-3, payload=b"\xff\xd8\xffJPEG bytes", encoding=ENCODED, height=375, width=500,
                         channels=3, extra={"source": "chat/été.jpg"})
    value = pack_record(record)
    assert value[:4] == b"PGIM" and value[4] == FORMAT_VERSION
    assert value.endswith(record.payload)                      # the image bytes are stored as given
    assert unpack_record(value) == record


def test_the_header_layout_is_the_documented_one():
    value = pack_record(ImageRecord(label=2 ** 40, payload=b"\x01\x02\x03\x04\x05\x06", encoding=RAW_HWC,
                                    height=1, width=2, channels=3))
    assert HEADER_SIZE == 28
    assert struct.unpack_from("<4sBBBBqIII", value) == (b"PGIM", 1, 1, 3, 0, 2 ** 40, 1, 2, 0)
    assert value[28:] == b"\x01\x02\x03\x04\x05\x06"


def test_keys_are_zero_padded_indices_that_sort_in_order_before_the_metadata():
    keys = [record_key(i) for i in (0, 9, 10, 123456)]
    assert keys[0] == b"0000000000" and keys[-1] == b"0000123456"
    assert sorted(keys + [META_KEY]) == keys + [META_KEY]


@pytest.mark.parametrize("value, message", [
    (b"PGIM\x01", "shorter than the 28-byte header"),
    (b"XXXX" + bytes(24), "does not start with b'PGIM'"),
    (struct.pack("<4sBBBBqIII", b"PGIM", 9, 0, 0, 0, 0, 0, 0, 0), "format version 9 is not supported"),
    (struct.pack("<4sBBBBqIII", b"PGIM", 1, 7, 0, 0, 0, 0, 0, 0), "unknown pixel encoding 7"),
    (struct.pack("<4sBBBBqIII", b"PGIM", 1, 0, 0, 0, 0, 0, 0, 50) + b"{}", "run past the end"),
    (struct.pack("<4sBBBBqIII", b"PGIM", 1, 1, 3, 0, 0, 2, 2, 0) + b"\x00" * 5, "expected 2x2x3"),
])
def test_malformed_records_raise_record_error_saying_what_is_wrong(value, message):
    with pytest.raises(RecordError, match=message):
        unpack_record(value)


def test_metadata_round_trips_and_refuses_other_formats_and_versions():
    meta = unpack_meta(pack_meta(12, ["cat", "dog"], source="folder /x", split="train"))
    assert meta["count"] == 12 and meta["class_names"] == ["cat", "dog"] and meta["split"] == "train"
    with pytest.raises(RecordError, match="not JSON"):
        unpack_meta(b"\x80\x04pickle")
    with pytest.raises(RecordError, match="does not describe"):
        unpack_meta(b'{"count": 1}')
    with pytest.raises(RecordError, match="version 2 is not supported"):
        unpack_meta(pack_meta(1, ["a"]).replace(b'"format_version": 1', b'"format_version": 2'))
