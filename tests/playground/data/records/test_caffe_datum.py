"""Caffe Datum records decoded from the protobuf wire format (playground/data/records/caffe_datum.py)."""
from __future__ import annotations

import struct

import pytest

from playground.data.records.caffe_datum import Datum, datum_to_record, parse_datum, read_varint
from playground.data.records.record_format import ENCODED, RAW_CHW_BGR, RecordError
from tests.image_lmdbs import encode_datum, varint


def test_varints_decode_one_to_ten_bytes():
    for value in (0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 63):
        encoded = varint(value) + b"rest"
        assert read_varint(encoded, 0) == (value, len(encoded) - 4)


def test_an_encoded_datum_gives_its_image_bytes_and_label():
    datum = parse_datum(encode_datum(7, b"\x89PNG fake", encoded=True))
    assert datum == Datum(data=b"\x89PNG fake", label=7, encoded=True)
    record = datum_to_record(datum)
    assert (record.encoding, record.payload, record.label) == (ENCODED, b"\x89PNG fake", 7)


def test_a_raw_datum_keeps_its_shape_and_a_negative_label_survives():
    pixels = bytes(range(24))
    record = datum_to_record(parse_datum(encode_datum(-1, pixels, channels=3, height=2, width=4, extra_field=True)))
    assert (record.encoding, record.label, record.channels, record.height, record.width) == (RAW_CHW_BGR, -1, 3, 2, 4)
    assert record.payload == pixels


def test_float_data_is_read_packed_or_not_but_is_not_an_image():
    unpacked = parse_datum(encode_datum(1, float_data=(0.5, -2.0)))
    packed = parse_datum(varint(6 << 3 | 2) + varint(8) + struct.pack("<2f", 0.5, -2.0) + varint(5 << 3) + varint(1))
    assert unpacked.float_data == packed.float_data == [0.5, -2.0]
    with pytest.raises(RecordError, match="float_data only"):
        datum_to_record(unpacked)


@pytest.mark.parametrize("value, message", [
    (varint(4 << 3 | 2) + varint(100) + b"short", "claims 100 bytes"),
    (b"\x80\x80", "past the end"),
    (varint(3 << 3 | 3), "wire type 3"),
    (encode_datum(0, b"\x00" * 5, channels=3, height=2, width=2), "expected channels x height x width"),
])
def test_malformed_datums_raise_record_error(value, message):
    with pytest.raises(RecordError, match=message):
        datum_to_record(parse_datum(value))
