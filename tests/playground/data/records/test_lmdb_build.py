"""Building databases: split, stored bytes, refusal of unreadable images (playground/data/records/lmdb_build.py)."""
from __future__ import annotations

import os

import cv2
import numpy as np
import pytest

from playground.data.records.db_records import DbRecords
from playground.data.records.image_sources import SourceError, SourceImage, from_folder
from playground.data.records.lmdb_build import BuildOptions, build, prepare_record, split_images
from playground.data.records.record_format import ENCODED, RAW_HWC
from tests.image_lmdbs import class_color_image, write_image_tree


def test_the_split_is_stratified_seeded_and_disjoint():
    images = [SourceImage(label=i % 4, name=str(i)) for i in range(100)]
    split = split_images(images, 0.2, seed=5)
    assert sorted(split) == ["test", "train"]
    test_names = {i.name for i in split["test"]}
    assert len(test_names) == 20 and not test_names & {i.name for i in split["train"]}
    assert [sum(i.label == c for i in split["test"]) for c in range(4)] == [5, 5, 5, 5]
    assert split_images(images, 0.2, seed=5) == split
    assert {i.name for i in split_images(images, 0.2, seed=6)["test"]} != test_names
    assert split_images(images, 0.0, seed=5) == {"": images}
    with pytest.raises(SourceError, match="leaves the test set empty"):
        split_images(images[:3], 0.1, seed=0)


def test_image_bytes_are_stored_as_given_unless_a_resize_or_format_is_asked(tmp_path):
    path = tmp_path / "photo.jpg"
    cv2.imwrite(str(path), class_color_image(0, 0, (30, 40)))
    image = SourceImage(label=1, name="photo.jpg", path=str(path))
    kept = prepare_record(image)
    assert (kept.payload, kept.encoding, kept.height, kept.width, kept.channels) == (path.read_bytes(), ENCODED, 30, 40, 3)
    assert kept.extra == {"source": "photo.jpg"}
    small = prepare_record(image, resize=15)
    assert (small.height, small.width) == (15, 20) and small.payload[:3] == b"\xff\xd8\xff"
    raw = prepare_record(image, image_format="raw")
    assert raw.encoding == RAW_HWC and len(raw.payload) == 30 * 40 * 3
    rgb = np.frombuffer(raw.payload, np.uint8).reshape(30, 40, 3)
    assert np.array_equal(rgb, cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2RGB))
    assert prepare_record(image, image_format="png").payload[:4] == b"\x89PNG"


def test_an_unreadable_image_aborts_the_build_and_leaves_nothing(tmp_path):
    tree = write_image_tree(tmp_path / "images", classes=2, per_class=3)
    (tree / "class1" / "img1.jpg").write_bytes(b"\xff\xd8\xff truncated")
    with pytest.raises(SourceError, match=r"class1/img1.jpg: not a readable image"):
        build(from_folder(str(tree)), str(tmp_path / "out"), BuildOptions(test_fraction=0.5, progress=False))
    assert sorted(os.listdir(tmp_path)) == ["images"]


def test_worker_processes_build_the_same_database(tmp_path):
    tree = write_image_tree(tmp_path / "images", classes=2, per_class=4)
    build(from_folder(str(tree)), str(tmp_path / "one"), BuildOptions(progress=False))
    build(from_folder(str(tree)), str(tmp_path / "two"), BuildOptions(progress=False, workers=2))
    one, two = DbRecords(str(tmp_path / "one")), DbRecords(str(tmp_path / "two"))
    assert one.count == two.count == 8
    assert all(one.read(i) == two.read(i) for i in range(8))
