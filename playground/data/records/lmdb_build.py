"""make-lmdb's work: labelled images -> (optional stratified train/test split) -> checked records -> LMDBs.

Output layout: without a split, OUTPUT is one LMDB folder. With `test_fraction` > 0, OUTPUT holds two LMDB
folders, OUTPUT/train and OUTPUT/test (the paths to give input.train_input_path and input.test_input_path).
Either way OUTPUT appears only when the whole build succeeded (lmdb_writer.staged_output).

Each image is decoded once while building, to refuse unreadable files before they reach a database and to
record its size. Its bytes are stored as given (JPEG stays the same JPEG) unless `resize` (shrink the shorter
side to this many pixels) or `image_format` (jpg, png, raw) asks for new bytes.
"""
from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass
from typing import Iterator

import cv2
import numpy as np

from playground.data.records.image_sources import ImageSet, SourceError, SourceImage
from playground.data.records.lmdb_writer import DEFAULT_MAP_SIZE, LmdbWriter, staged_output
from playground.data.records.record_format import ENCODED, RAW_HWC, ImageRecord

IMAGE_FORMATS = ("keep", "jpg", "png", "raw")


@dataclass(frozen=True)
class BuildOptions:
    test_fraction: float = 0.0   # share of each class that goes to OUTPUT/test; 0: no split
    seed: int = 0                # which images the split picks
    resize: int = 0              # shrink the shorter side to this many pixels (0: keep the size)
    image_format: str = "keep"   # keep the given bytes, or store jpg / png / raw pixels
    quality: int = 95            # JPEG quality when writing jpg
    workers: int = 0             # processes that read and check images (0: this process)
    overwrite: bool = False
    progress: bool = True
    map_size: int = DEFAULT_MAP_SIZE


def split_images(images: list[SourceImage], test_fraction: float, seed: int) -> dict[str, list[SourceImage]]:
    """{"": all} without a split, else {"train": ..., "test": ...}: round(fraction x n) of each class's n images
    go to test, chosen by a generator seeded with `seed`; each split keeps the source order."""
    if test_fraction <= 0:
        return {"": list(images)}
    rng = np.random.default_rng(seed)
    by_label: dict[int, list[int]] = {}
    for position, image in enumerate(images):
        by_label.setdefault(image.label, []).append(position)
    test: set[int] = set()
    for label in sorted(by_label):
        positions = by_label[label]
        count = round(test_fraction * len(positions))
        test.update(positions[i] for i in rng.permutation(len(positions))[:count])
    if not test or len(test) == len(images):
        raise SourceError(f"a test fraction of {test_fraction} of {len(images)} images leaves the "
                          f"{'test' if not test else 'training'} set empty; choose another --test-fraction")
    return {"train": [im for p, im in enumerate(images) if p not in test],
            "test": [im for p, im in enumerate(images) if p in test]}


def build(source: ImageSet, output: str, options: BuildOptions) -> dict[str, int]:
    """Build the database(s) at `output`; returns {path: record count}. Raises SourceError, FileExistsError."""
    splits = split_images(source.images, options.test_fraction, options.seed)
    written: dict[str, int] = {}
    with staged_output(output, options.overwrite) as staging:
        for name, images in splits.items():
            folder = os.path.join(staging, name) if name else staging
            os.makedirs(folder, exist_ok=True)
            _write_split(folder, images, source, name, options)
            written[os.path.join(os.path.abspath(output), name) if name else os.path.abspath(output)] = len(images)
    return written


def prepare_record(image: SourceImage, resize: int = 0, image_format: str = "keep", quality: int = 95) -> ImageRecord:
    """Read and check one image; re-encode it only when `resize` or `image_format` asks. Raises SourceError."""
    data = image.read_bytes()
    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED) if data else None
    if pixels is None:
        raise SourceError(f"{image.path or image.name}: not a readable image (OpenCV cannot decode it); fix or "
                          "remove the file and build again")
    height, width = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    extra = {"source": image.name}
    shrink = 0 < resize < min(height, width)
    if not shrink and image_format == "keep":
        return ImageRecord(image.label, data, ENCODED, height, width, channels, extra)
    pixels = _as_uint8(pixels)
    if shrink:
        scale = resize / min(height, width)
        size = (max(resize, round(width * scale)), max(resize, round(height * scale)))
        pixels = cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)
    height, width = pixels.shape[:2]
    if image_format == "raw":
        rgb = _bgr_to_rgb(pixels)
        return ImageRecord(image.label, rgb.tobytes(), RAW_HWC, height, width, 1 if rgb.ndim == 2 else 3, extra)
    extension = _extension(data) if image_format == "keep" else f".{image_format}"
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if extension == ".jpg" else []
    ok, encoded = cv2.imencode(extension, pixels, params)
    if not ok:
        raise SourceError(f"{image.path or image.name}: OpenCV could not encode it as {extension}")
    return ImageRecord(image.label, encoded.tobytes(), ENCODED, height, width, channels, extra)


def _write_split(folder: str, images: list[SourceImage], source: ImageSet, name: str, options: BuildOptions) -> None:
    from tqdm import tqdm

    writer = LmdbWriter(folder, options.map_size)
    try:
        records = _prepared(images, options)
        for record in tqdm(records, total=len(images), desc=f"make-lmdb {name or 'records'}", unit="img",
                           disable=not options.progress, dynamic_ncols=True):
            writer.append(record)
        writer.finish(source.class_names, source=source.description, split=name or None,
                      seed=options.seed if name else None, test_fraction=options.test_fraction or None)
    except BaseException:
        writer.abort()
        raise


def _prepared(images: list[SourceImage], options: BuildOptions) -> Iterator[ImageRecord]:
    arguments = ((image, options.resize, options.image_format, options.quality) for image in images)
    if options.workers <= 0:
        yield from (prepare_record(*a) for a in arguments)
        return
    with multiprocessing.get_context("spawn").Pool(options.workers, initializer=_init_worker) as pool:
        yield from pool.imap(_prepare_star, arguments, chunksize=16)


def _prepare_star(arguments: tuple) -> ImageRecord:
    return prepare_record(*arguments)


def _init_worker() -> None:
    cv2.setNumThreads(1)


def _as_uint8(pixels: np.ndarray) -> np.ndarray:
    if pixels.dtype == np.uint8:
        return pixels
    top = 65535.0 if pixels.dtype == np.uint16 else float(pixels.max() or 1)
    return np.clip(np.rint(pixels.astype(np.float64) * (255.0 / top)), 0, 255).astype(np.uint8)


def _bgr_to_rgb(pixels: np.ndarray) -> np.ndarray:
    if pixels.ndim == 2:
        return pixels
    code = {1: None, 3: cv2.COLOR_BGR2RGB, 4: cv2.COLOR_BGRA2RGB}[pixels.shape[2]]
    return pixels[:, :, 0] if code is None else cv2.cvtColor(pixels, code)


def _extension(data: bytes) -> str:
    return ".jpg" if data[:3] == b"\xff\xd8\xff" else ".png"

