"""Test helpers for image data: tiny image folders, playground LMDBs built by make-lmdb, Caffe Datum LMDBs.

The Caffe records are encoded here, field by field in the protobuf wire format, independently of the reader.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import cv2
import lmdb
import numpy as np

from playground.cli import main as playground_main


def class_color_image(label: int, index: int, size: tuple[int, int] = (24, 32), gray: bool = False) -> np.ndarray:
    """A BGR (or gray) uint8 image whose dominant channel is the class and whose texture depends on `index`."""
    height, width = size
    rng = np.random.default_rng(1000 * label + index)
    image = rng.integers(0, 60, (height, width, 3), dtype=np.uint8)
    image[:, :, label % 3] += np.uint8(150)
    image[: height // 2, : width // 2] += np.uint8(index % 40)
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if gray else image


def write_image_tree(root: Path, classes: int = 3, per_class: int = 6, size: tuple[int, int] = (24, 32)) -> Path:
    """root/class{k}/img{i}.{png|jpg}: alternating PNG and JPEG files, one folder per class."""
    for label in range(classes):
        folder = root / f"class{label}"
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(per_class):
            extension = "png" if index % 2 == 0 else "jpg"
            cv2.imwrite(str(folder / f"img{index}.{extension}"), class_color_image(label, index, size))
    return root


def make_image_lmdb(tmp_path: Path, classes: int = 3, per_class: int = 6, size: tuple[int, int] = (24, 32),
                    test_fraction: float = 0.0, name: str = "db") -> Path:
    """An image folder built by `playground make-lmdb` (OUTPUT/train and OUTPUT/test when split)."""
    tree = write_image_tree(tmp_path / f"{name}-images", classes, per_class, size)
    output = tmp_path / name
    code = playground_main(["make-lmdb", str(tree), str(output), "--test-fraction", str(test_fraction), "--no-progress"])
    assert code == 0, f"make-lmdb exited with {code}"
    return output


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1          # negative int32 values are sent as 10-byte two's complement varints
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_datum(label: int, data: bytes = b"", channels: int = 0, height: int = 0, width: int = 0,
                 encoded: bool = False, float_data: tuple[float, ...] = (), extra_field: bool = False) -> bytes:
    """A Caffe Datum message: channels=1, height=2, width=3, data=4, label=5, float_data=6, encoded=7."""
    out = bytearray()
    for number, value in ((1, channels), (2, height), (3, width)):
        if value:
            out += varint(number << 3) + varint(value)
    if data:
        out += varint(4 << 3 | 2) + varint(len(data)) + data
    out += varint(5 << 3) + varint(label)
    for item in float_data:                                # unpacked repeated float: one fixed32 each
        out += varint(6 << 3 | 5) + struct.pack("<f", item)
    if encoded:
        out += varint(7 << 3) + varint(1)
    if extra_field:                                        # a field Datum does not define: must be skipped
        out += varint(99 << 3 | 2) + varint(3) + b"abc"
    return bytes(out)


def write_caffe_lmdb(path: Path, datums: list[bytes]) -> Path:
    """An LMDB of Datum values under convert_imageset-style keys ("%08d_name")."""
    env = lmdb.open(str(path), map_size=64 << 20)
    with env.begin(write=True) as txn:
        for index, value in enumerate(datums):
            txn.put(f"{index:08d}_img{index}.jpg".encode(), value)
    env.close()
    return path


def caffe_datums(classes: int = 3, per_class: int = 4, size: tuple[int, int] = (20, 28)) -> list[bytes]:
    """Datums as convert_imageset writes them: even records encoded JPEG/PNG bytes, odd ones raw CxHxW BGR."""
    datums = []
    for label in range(classes):
        for index in range(per_class):
            image = class_color_image(label, index, size)
            if index % 2 == 0:
                ok, encoded = cv2.imencode(".png", image)
                datums.append(encode_datum(label, encoded.tobytes(), encoded=True))
            else:
                chw = np.ascontiguousarray(image.transpose(2, 0, 1))
                datums.append(encode_datum(label, chw.tobytes(), 3, size[0], size[1]))
    return datums


def corrupt_record(db: Path, key: bytes, value: bytes = b"PGIM\x01garbage") -> None:
    """Overwrite one record of an existing LMDB (simulating damage on disk)."""
    env = lmdb.open(os.fspath(db), map_size=64 << 20)
    with env.begin(write=True) as txn:
        txn.put(key, value)
    env.close()
