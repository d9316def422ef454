"""The playground image LMDB format: one record per image, one metadata record; plain bytes, no pickle.

Record i has the key `record_key(i)` (ten ASCII digits, zero-padded: b"0000000042") and this value, all
integers little-endian:

    offset  size  field
    0       4     magic b"PGIM"
    4       1     format version (FORMAT_VERSION)
    5       1     pixel encoding: 0 = an encoded image file (JPEG, PNG, ... as given), 1 = raw uint8 pixels
    6       1     channels (1 or 3; 0 = not recorded)
    7       1     reserved, 0
    8       8     label, signed int64
    16      4     height in pixels (0 = not recorded)
    20      4     width in pixels (0 = not recorded)
    24      4     E, the length of the extra fields
    28      E     extra fields: a UTF-8 JSON object (e.g. {"source": "cat/001.jpg"}), empty when E = 0
    28+E    ...   the payload: the image file's bytes, or raw pixels in row-major HxWxC order, RGB

The metadata record has the key META_KEY (it sorts after every record key) and a UTF-8 JSON object value:
{"format": "playground-image-lmdb", "format_version": 1, "count": N, "class_names": [...], ...}. A database
without it is not a complete playground database (builds write it last).
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

MAGIC = b"PGIM"
FORMAT_VERSION = 1
FORMAT_NAME = "playground-image-lmdb"
META_KEY = b"__playground_meta__"
KEY_DIGITS = 10

ENCODED = 0     # the payload is an image file (anything cv2.imdecode reads)
RAW_HWC = 1     # the payload is raw uint8 pixels, HxWxC, RGB
RAW_CHW_BGR = 2  # raw Caffe Datum pixels (CxHxW, BGR); produced when reading Caffe records, never written

_HEADER = struct.Struct("<4sBBBBqIII")
HEADER_SIZE = _HEADER.size


class RecordError(ValueError):
    """A record's bytes do not follow the format; the message says what is wrong (the caller adds db and key)."""


@dataclass(frozen=True)
class ImageRecord:
    """One decoded record: the label and the image payload with what is known of its pixels."""

    label: int
    payload: bytes
    encoding: int = ENCODED
    height: int = 0
    width: int = 0
    channels: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def record_key(index: int) -> bytes:
    """The LMDB key of record `index` (0-based)."""
    return f"{index:0{KEY_DIGITS}d}".encode("ascii")


def pack_record(record: ImageRecord) -> bytes:
    """The value bytes of `record` (extra fields as compact JSON)."""
    if record.encoding not in (ENCODED, RAW_HWC):
        raise ValueError(f"only encoded images (0) and raw HWC pixels (1) are written, got encoding {record.encoding}")
    extra = json.dumps(record.extra, separators=(",", ":"), ensure_ascii=False).encode("utf-8") if record.extra else b""
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, record.encoding, record.channels, 0, record.label,
                          record.height, record.width, len(extra))
    return b"".join((header, extra, record.payload))


def is_playground_record(value: bytes) -> bool:
    return value[:4] == MAGIC


def unpack_record(value: bytes | memoryview, extra: bool = True) -> ImageRecord:
    """Parse a record's value; raises RecordError when it is truncated or of an unknown version.

    From a memoryview the payload is a view of the same memory (no copy); `extra=False` leaves the extra fields
    unparsed (an empty dict), for readers that only want the image.
    """
    if len(value) < HEADER_SIZE:
        raise RecordError(f"the record is {len(value)} bytes, shorter than the {HEADER_SIZE}-byte header")
    magic, version, encoding, channels, _, label, height, width, extra_size = _HEADER.unpack_from(value)
    if magic != MAGIC:
        raise RecordError(f"the record does not start with {MAGIC!r} (found {magic!r})")
    if version != FORMAT_VERSION:
        raise RecordError(f"record format version {version} is not supported (this playground reads version "
                          f"{FORMAT_VERSION}); rebuild the database with this playground's make-lmdb")
    if encoding not in (ENCODED, RAW_HWC):
        raise RecordError(f"unknown pixel encoding {encoding}")
    start = HEADER_SIZE + extra_size
    if start > len(value):
        raise RecordError(f"the extra fields ({extra_size} bytes) run past the end of the record")
    fields = _parse_extra(bytes(value[HEADER_SIZE:start])) if extra_size and extra else {}
    payload = value[start:]
    if encoding == RAW_HWC and len(payload) != height * width * channels:
        raise RecordError(f"raw pixels: {len(payload)} bytes, expected {height}x{width}x{channels}")
    return ImageRecord(label=label, payload=payload, encoding=encoding, height=height, width=width,
                       channels=channels, extra=fields)


def pack_meta(count: int, class_names: list[str], **fields: Any) -> bytes:
    """The metadata record's value; `fields` adds free-form JSON entries (source, split, seed, ...)."""
    meta = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "count": count,
            "class_names": list(class_names), **fields}
    return json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8")


def unpack_meta(value: bytes) -> dict[str, Any]:
    """Parse the metadata record; raises RecordError when it is not ours or of an unknown version."""
    try:
        meta = json.loads(value.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RecordError(f"the metadata record is not JSON ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
        raise RecordError(f"the metadata record does not describe a {FORMAT_NAME} database")
    if meta.get("format_version") != FORMAT_VERSION:
        raise RecordError(f"database format version {meta.get('format_version')} is not supported (this playground "
                          f"reads version {FORMAT_VERSION}); rebuild it with this playground's make-lmdb")
    if not isinstance(meta.get("count"), int) or not isinstance(meta.get("class_names"), list):
        raise RecordError("the metadata record lacks an integer 'count' or a 'class_names' list")
    return meta


def _parse_extra(raw: bytes) -> dict[str, Any]:
    try:
        extra = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RecordError(f"the extra fields are not a JSON object ({err})") from None
    if not isinstance(extra, dict):
        raise RecordError("the extra fields are not a JSON object")
    return extra
