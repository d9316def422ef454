"""Caffe `Datum` records (what Caffe's convert_imageset writes), read without the protobuf package.

A Datum is a protocol-buffer message (caffe.proto):

    channels = 1, height = 2, width = 3 (int32)   data = 4 (bytes)   label = 5 (int32)
    float_data = 6 (repeated float)               encoded = 7 (bool)

With `encoded` true, `data` holds the image file's bytes (JPEG, PNG, ...); otherwise it holds raw uint8 pixels
in CxHxW order, with OpenCV's BGR channel order as convert_imageset wrote them. Only the protobuf wire format
is needed: each field is a varint tag (field number << 3 | wire type) followed by a varint (type 0), 8 bytes
(type 1), a varint length and that many bytes (type 2) or 4 bytes (type 5). Unknown fields are skipped.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from playground.data.records.record_format import ENCODED, RAW_CHW_BGR, ImageRecord, RecordError

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Datum:
    """The fields of one Caffe Datum (defaults as in caffe.proto)."""

    channels: int = 0
    height: int = 0
    width: int = 0
    data: bytes = b""
    label: int = 0
    float_data: list[float] = field(default_factory=list)
    encoded: bool = False


def read_varint(buffer: bytes, position: int) -> tuple[int, int]:
    """The unsigned varint at `position` and the position after it."""
    result, shift = 0, 0
    while True:
        if position >= len(buffer):
            raise RecordError("a varint runs past the end of the record")
        byte = buffer[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift >= 70:
            raise RecordError("a varint is longer than 10 bytes")


def parse_datum(value: bytes) -> Datum:
    """Decode a Datum message; raises RecordError when the bytes are not a well-formed message."""
    fields: dict[str, object] = {}
    floats: list[float] = []
    position, end = 0, len(value)
    while position < end:
        tag, position = read_varint(value, position)
        number, wire_type = tag >> 3, tag & 7
        if number == 0:
            raise RecordError("field number 0 does not exist in protocol buffers")
        if wire_type == VARINT:
            raw, position = read_varint(value, position)
            if number in (1, 2, 3, 5):
                fields[_INT_FIELDS[number]] = _as_int32(raw)
            elif number == 7:
                fields["encoded"] = bool(raw)
        elif wire_type == LENGTH_DELIMITED:
            size, position = read_varint(value, position)
            if position + size > end:
                raise RecordError(f"field {number} claims {size} bytes, past the end of the record")
            chunk = value[position:position + size]
            position += size
            if number == 4:
                fields["data"] = chunk
            elif number == 6:   # packed repeated float
                if size % 4:
                    raise RecordError(f"packed float_data of {size} bytes is not a multiple of 4")
                floats.extend(struct.unpack(f"<{size // 4}f", chunk))
        elif wire_type == FIXED32:
            if position + 4 > end:
                raise RecordError(f"field {number} runs past the end of the record")
            if number == 6:
                floats.append(struct.unpack_from("<f", value, position)[0])
            position += 4
        elif wire_type == FIXED64:
            position += 8
        else:
            raise RecordError(f"wire type {wire_type} (field {number}) is not used by Datum records")
    if position != end:
        raise RecordError("the last field runs past the end of the record")
    return Datum(float_data=floats, **fields)


def datum_to_record(datum: Datum) -> ImageRecord:
    """The image of a Datum as an ImageRecord (encoded bytes, or raw CxHxW BGR pixels)."""
    if datum.encoded:
        return ImageRecord(label=datum.label, payload=datum.data, encoding=ENCODED)
    if not datum.data:
        what = "float_data only (features, not an image)" if datum.float_data else "no pixel data"
        raise RecordError(f"the Datum holds {what}; this reader needs uint8 images")
    expected = datum.channels * datum.height * datum.width
    if len(datum.data) != expected:
        raise RecordError(f"the Datum's data is {len(datum.data)} bytes, expected channels x height x width = "
                          f"{datum.channels}x{datum.height}x{datum.width} = {expected}")
    return ImageRecord(label=datum.label, payload=datum.data, encoding=RAW_CHW_BGR, height=datum.height,
                       width=datum.width, channels=datum.channels)


_INT_FIELDS = {1: "channels", 2: "height", 3: "width", 5: "label"}


def _as_int32(raw: int) -> int:
    """int32 fields are varints of the 64-bit two's complement; keep the low 32 bits, signed."""
    raw &= 0xFFFFFFFF
    return raw - (1 << 32) if raw & 0x80000000 else raw
