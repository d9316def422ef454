"""What make-lmdb reads: class folders, `path label` lists, the digits (playground/data/records/image_sources.py)."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from playground.data.records.image_sources import SourceError, from_digits, from_folder, from_list
from tests.image_lmdbs import write_image_tree


def test_class_folders_give_sorted_classes_and_recursive_sorted_images(tmp_path):
    write_image_tree(tmp_path, classes=2, per_class=2)
    nested = tmp_path / "class1" / "more"
    nested.mkdir()
    cv2.imwrite(str(nested / "deep.PNG"), np.zeros((4, 4), np.uint8))
    (tmp_path / "class0" / "notes.txt").write_text("not an image")
    (tmp_path / ".hidden").mkdir()
    source = from_folder(str(tmp_path))
    assert source.class_names == ["class0", "class1"]
    assert [(i.label, i.name) for i in source.images] == [
        (0, "class0/img0.png"), (0, "class0/img1.jpg"),
        (1, "class1/img0.png"), (1, "class1/img1.jpg"), (1, "class1/more/deep.PNG")]


def test_a_folder_without_class_folders_or_images_is_explained(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        from_folder(str(tmp_path / "missing"))
    with pytest.raises(SourceError, match="has no sub-folders: make-lmdb expects one sub-folder per class"):
        from_folder(str(tmp_path))
    (tmp_path / "cats").mkdir()
    with pytest.raises(SourceError, match="the class folders cats hold no image files"):
        from_folder(str(tmp_path))


def test_a_list_file_gives_paths_with_spaces_and_integer_labels(tmp_path):
    write_image_tree(tmp_path / "img", classes=1, per_class=2)
    (tmp_path / "img" / "class0" / "img0.png").rename(tmp_path / "img" / "class0" / "my photo.png")
    listing = tmp_path / "train.txt"
    listing.write_text("# path label\nclass0/my photo.png 4\n\nclass0/img1.jpg 0\n")
    source = from_list(str(tmp_path / "img"), str(listing))
    assert [(i.name, i.label) for i in source.images] == [("class0/my photo.png", 4), ("class0/img1.jpg", 0)]
    assert source.class_names == ["0", "1", "2", "3", "4"]
    assert source.images[0].read_bytes()[:4] == b"\x89PNG"


def test_list_mistakes_name_the_file_and_line(tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text("a.jpg cat\n")
    with pytest.raises(SourceError, match=r"list.txt:1: expected `path label` with a non-negative integer label"):
        from_list(str(tmp_path), str(listing))
    listing.write_text("\na.jpg 0\nb.jpg 1\n")
    with pytest.raises(SourceError, match=r"listed images do not exist:\n  .*list.txt:2: .*a.jpg\n  .*list.txt:3"):
        from_list(str(tmp_path), str(listing))


def test_the_digits_are_ten_classes_of_8x8_png_images():
    source = from_digits()
    assert len(source.images) == 1797 and source.class_names == [str(d) for d in range(10)]
    assert sorted({i.label for i in source.images}) == list(range(10))
    pixels = cv2.imdecode(np.frombuffer(source.images[0].read_bytes(), np.uint8), cv2.IMREAD_UNCHANGED)
    assert pixels.shape == (8, 8) and pixels.dtype == np.uint8 and pixels.max() > 200
