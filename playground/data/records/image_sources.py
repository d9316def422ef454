"""What `playground make-lmdb` reads: labelled images from a class-per-folder tree, a list file, or the digits.

  from_folder(ROOT)            ROOT/<class>/.../<image>: classes are the sub-folders in sorted order (label 0 is
                               the first); image files are found recursively, in sorted order.
  from_list(ROOT, FILE)        FILE holds `path label` lines (path relative to ROOT, may contain spaces; label a
                               non-negative integer; blank lines and lines starting with # are skipped).
  from_digits()                scikit-learn's 1,797 handwritten digits (8x8 gray, PNG-encoded here), classes
                               "0".."9"; needs scikit-learn (the `demo` extra), imported only here.

Images are described, not read: SourceImage.read_bytes() reads a file when the build gets to it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from playground.options.user_input.user_files import read_text
from playground.processes.exit_codes import UserError

IMAGE_EXTENSIONS = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pbm", ".pnm", ".tif", ".tiff",
                              ".webp", ".jp2"})


class SourceError(UserError, ValueError):
    """The source of a build is unusable; the message names the file (and line) and says what to do."""


@dataclass(frozen=True)
class SourceImage:
    """One labelled image: a file (`path`) or bytes already in memory (`data`); `name` identifies it to users."""

    label: int
    name: str
    path: str | None = None
    data: bytes | None = None

    def read_bytes(self) -> bytes:
        if self.data is not None:
            return self.data
        try:
            with open(self.path, "rb") as handle:
                return handle.read()
        except OSError as err:
            raise SourceError(f"cannot read {self.path}: {err.strerror or err}") from None


@dataclass(frozen=True)
class ImageSet:
    images: list[SourceImage]
    class_names: list[str]
    description: str        # where the images came from, stored in the metadata


def from_folder(root: str) -> ImageSet:
    """One class per sub-folder of `root`."""
    _check_folder(root)
    classes = sorted(e.name for e in os.scandir(root) if e.is_dir() and not e.name.startswith("."))
    if not classes:
        raise SourceError(f"{root} has no sub-folders: make-lmdb expects one sub-folder per class "
                          "(ROOT/cat/1.jpg, ROOT/dog/2.jpg), or a list of `path label` lines given with --list")
    images = []
    for label, name in enumerate(classes):
        for path in _image_files(os.path.join(root, name)):
            images.append(SourceImage(label=label, name=os.path.relpath(path, root), path=path))
    if not images:
        raise SourceError(f"{root}: the class folders {', '.join(classes[:5])} hold no image files (extensions "
                          f"{', '.join(sorted(IMAGE_EXTENSIONS))})")
    return ImageSet(images, classes, f"folder {os.path.abspath(root)}")


def from_list(root: str, list_file: str) -> ImageSet:
    """Images and labels from `path label` lines; paths are relative to `root`. Class names are "0".."max"."""
    _check_folder(root)
    lines = read_text(list_file, "the list file", f"--list {list_file}", SourceError).splitlines()
    images, missing = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.rstrip().rsplit(None, 1)
        if len(parts) != 2 or not parts[1].isdigit():
            raise SourceError(f"{list_file}:{number}: expected `path label` with a non-negative integer label, "
                              f"got {line.strip()!r}")
        path = os.path.join(root, parts[0].strip())
        if not os.path.isfile(path):
            missing.append(f"{list_file}:{number}: {path}")
        images.append(SourceImage(label=int(parts[1]), name=parts[0].strip(), path=path))
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise SourceError("listed images do not exist:\n  " + "\n  ".join(missing[:5]) + more)
    if not images:
        raise SourceError(f"{list_file} lists no images")
    names = [str(label) for label in range(max(i.label for i in images) + 1)]
    return ImageSet(images, names, f"list {os.path.abspath(list_file)} under {os.path.abspath(root)}")


def from_digits() -> ImageSet:
    """scikit-learn's handwritten digits: 8x8 gray images scaled from 0-16 to 0-255, stored as PNG."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SourceError("--digits needs scikit-learn, which is not installed; install the demo extra "
                          "(pip install -e '.[demo]') or scikit-learn itself") from None
    import cv2
    import numpy as np

    digits = load_digits()
    images = []
    for index, (pixels, label) in enumerate(zip(digits.images, digits.target)):
        gray = np.clip(np.rint(pixels * (255.0 / 16.0)), 0, 255).astype(np.uint8)
        ok, png = cv2.imencode(".png", gray)
        if not ok:
            raise SourceError(f"OpenCV could not encode digit {index} as PNG")
        images.append(SourceImage(label=int(label), name=f"digits/{index}", data=png.tobytes()))
    return ImageSet(images, [str(d) for d in range(10)], "scikit-learn load_digits()")


def _check_folder(root: str) -> None:
    if not os.path.isdir(root):
        raise SourceError(f"{root} is not a folder" if os.path.exists(root) else f"{root} does not exist")


def _image_files(folder: str) -> list[str]:
    found = []
    for here, subfolders, files in os.walk(folder, followlinks=True):
        subfolders[:] = sorted(s for s in subfolders if not s.startswith("."))
        found.extend(os.path.join(here, f) for f in sorted(files)
                     if os.path.splitext(f)[1].lower() in IMAGE_EXTENSIONS and not f.startswith("."))
    return found
