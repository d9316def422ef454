"""LmdbImageDataset: a map-style torch Dataset of augmented images from one LMDB (playground or Caffe format).

The framework (playground/data/batch_stream.py) asks for whole batches with `get_samples(keys)`, which writes each
augmented uint8 image straight into its slot of the batch buffer, and batches with `collate_fn`, whose
`batch_to_device` normalises the batch on the training device (image_batch.py); `get_sample(index,
data_pass)` gives one ImageSample (uint8, augmented). `dataset[index]` gives the finished (CxHxW float tensor, label) pair as
in the first data pass, for inspection and for code that expects a plain dataset.

Reading is lazy: each process (the trainer, each forked or spawned worker) opens its own read-only LMDB
handle on first use. OpenCV runs one thread per process, set when the dataset is made: N decode workers use
N cores, not N x cores, and a forked worker never has to reconfigure a thread pool its parent started
(OpenCV would wait forever for the parent's threads, which do not exist in the child).
A record that cannot be read or decoded raises RecordReadError naming the database and key, unless
bad_record is "skip": then it becomes a SkippedRecord, which collation counts.
"""
from __future__ import annotations

import os
from typing import Callable, Sequence, TypeVar

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset

from playground.data.images.augment import AugmentSpec, Plan, apply_plan, augment_into, plan_augment
from playground.data.records.db_records import CAFFE, DbRecords, RecordReadError
from playground.data.images.image_batch import (IMAGENET_MEAN, IMAGENET_STD, FilledBatch, ImageBatcher, ImageSample,
                                         SkippedRecord)
from playground.data.images.image_decode import decode_pixels
from playground.data.records.record_format import ENCODED, ImageRecord, RecordError
from playground.data.images.sample_seeds import ReseededGenerator

T = TypeVar("T")

BAD_RECORD_CHOICES = ("error", "skip")


class LabelError(RecordReadError):
    """A record's label does not fit input.num_classes: the opts or the database are wrong, whatever bad_record."""


class LmdbImageDataset(Dataset):
    """Images and labels of the LMDB at `path`, augmented per `spec`, with `channels` (1 or 3) channels."""

    def __init__(self, path: str, spec: AugmentSpec, channels: int = 3, mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD, seed: int = 0, bad_record: str = "error",
                 label_limit: int | None = None, gpu_decode: bool = False) -> None:
        if bad_record not in BAD_RECORD_CHOICES:
            raise ValueError(f"bad_record must be one of {BAD_RECORD_CHOICES}, got {bad_record!r}")
        self.records = DbRecords(path)
        self.path, self.spec, self.channels, self.seed, self.bad_record = path, spec, channels, seed, bad_record
        self.label_limit = label_limit   # input.num_classes: a label at or above it is an error (never skipped)
        self.gpu_decode = gpu_decode
        if gpu_decode:    # JPEGs travel encoded; the training process decodes them on its CUDA device
            from playground.data.images.gpu_decode import GpuJpegBatcher
            self.collate_fn: ImageBatcher = GpuJpegBatcher(spec, seed, self.describe, channels, mean, std)
        else:
            self.collate_fn = ImageBatcher(channels, mean, std)
        self._random = ReseededGenerator()   # augment.sample_rng's generators, reseeded in place
        self._process = -1
        single_threaded_opencv()

    @property
    def class_names(self) -> list[str] | None:
        return self.records.class_names

    @property
    def num_classes(self) -> int | None:
        """Classes listed in the metadata; None for a Caffe database (input.num_classes must say)."""
        return None if self.records.kind == CAFFE else len(self.records.class_names)

    @property
    def sample_shape(self) -> tuple[int, int, int]:
        """(channels, imsize, imsize) of every sample, known without decoding one (record 0 may be corrupt)."""
        return (self.channels, self.spec.imsize, self.spec.imsize)

    @property
    def format(self) -> str:
        """"playground" or "caffe"."""
        return self.records.kind

    def __len__(self) -> int:
        return self.records.count

    def get_sample(self, index: int, data_pass: int) -> ImageSample | SkippedRecord:
        """Record `index` augmented as in data pass `data_pass` (random choices from seed, pass and index)."""
        side = self.spec.imsize
        out = np.empty((side, side, 3) if self.channels == 3 else (side, side), np.uint8)
        label = self._write(index, data_pass, out)
        return label if isinstance(label, SkippedRecord) else ImageSample(out, label)

    def get_samples(self, keys: Sequence[tuple[int, int]]) -> FilledBatch | list:
        """The (data pass, index) `keys` augmented into one batch buffer, for `collate_fn` (the loader's fetch);
        with gpu_decode, the records as they travel to the GPU.

        Every record is read and, where its header gives the image's size, every crop and mirror drawn before the
        first image is decoded: after a decode the interpreter's own data is out of the CPU's caches, and the same
        Python work costs several times more between decodes than in one stretch (benchmarks/README.md).
        """
        if self.gpu_decode:
            return [self._encoded(index, data_pass) for data_pass, index in keys]
        if self.spec.is_train:
            self._random.prepare(self.seed, keys)
        planned = [self._planned(index, data_pass) for data_pass, index in keys]
        side = self.spec.imsize
        return self.collate_fn.fill(len(keys), side, side, lambda k, out: self._write_planned(*planned[k], out))

    def describe(self, index: int) -> str:
        """"<database>: record '<key>'", how errors name a record."""
        return f"{self.path}: record {self.records.key(index).decode(errors='replace')!r}"

    def _encoded(self, index: int, data_pass: int):
        """Record `index` for GPU decoding: a JPEG's bytes, or any other image decoded here (gpu_decode.py)."""
        from playground.data.images.gpu_decode import EncodedSample, encoded_payload

        def travel(record: ImageRecord) -> EncodedSample:
            payload = encoded_payload(record.payload) if record.encoding == ENCODED else None
            if payload is None:
                pixels = decode_pixels(record, self.channels)
                payload = torch.from_numpy(pixels.reshape(*pixels.shape[:2], self.channels))
            return EncodedSample(payload, record.label, data_pass, index)

        return self._read(index, travel)

    def _write(self, index: int, data_pass: int, out: np.ndarray) -> int | SkippedRecord:
        """Write record `index`, augmented as in pass `data_pass`, into `out`; its label, or the SkippedRecord."""
        def write(record: ImageRecord) -> int:
            augment_into(decode_pixels(record, self.channels), self.spec, self._generator(index, data_pass), out)
            return record.label

        return self._read(index, write, mapped=True)

    def _planned(self, index: int, data_pass: int) -> tuple[int, int, ImageRecord | SkippedRecord, Plan | None]:
        """Record `index` read (its payload a view of the database's memory) with its geometry drawn when the
        record's header says the image's size and no colour noise follows (its draws come after the geometry's,
        from the same generator); errors as _read."""
        record = self._read(index, lambda read: read, mapped=True)
        plan = None
        colour = self.spec.is_train and (self.spec.color_jitter or self.spec.color_lighting)
        if not colour and not isinstance(record, SkippedRecord) and record.height > 0 and record.width > 0:
            plan = plan_augment(record.height, record.width, self.spec, self._generator(index, data_pass))
        return index, data_pass, record, plan

    def _write_planned(self, index: int, data_pass: int, record: ImageRecord | SkippedRecord, plan: Plan | None,
                       out: np.ndarray) -> int | SkippedRecord:
        """Decode `record` into `out` by `plan`; without one, or when the decoded size is not the header's, augmented
        from the decoded pixels as augment_into does (a generator reseeded for the sample draws the same numbers);
        its label, or the SkippedRecord."""
        if isinstance(record, SkippedRecord):
            return record

        def write() -> int:
            pixels = decode_pixels(record, self.channels)
            if plan is None or pixels.shape[:2] != (record.height, record.width):
                augment_into(pixels, self.spec, self._generator(index, data_pass), out)
            else:
                apply_plan(pixels, plan, self.spec, out)
            return record.label

        return self._attempt(index, write)

    def _generator(self, index: int, data_pass: int) -> np.random.Generator | None:
        return self._random.for_sample(self.seed, data_pass, index) if self.spec.is_train else None

    def _read(self, index: int, use: Callable[[ImageRecord], T], mapped: bool = False) -> T | SkippedRecord:
        """`use(record)` of record `index`; a record that cannot be read or decoded raises RecordReadError naming
        the database and key, or with bad_record "skip" becomes a SkippedRecord. `mapped`: the record's payload
        is a view of the database's memory (no copy), valid while this process's read transaction is open."""
        if self._process != os.getpid():
            self._enter_process()

        def read() -> T:
            record = self.records.read_mapped(index) if mapped else self.records.read(index)
            self._check_label(index, record.label)
            return use(record)

        return self._attempt(index, read)

    def _attempt(self, index: int, work: Callable[[], T]) -> T | SkippedRecord:
        """work() for record `index`, its errors named as _read names them."""
        try:
            return work()
        except (RecordError, cv2.error) as err:
            failure = RecordReadError(f"{self.describe(index)}: {str(err).strip()}")
        except LabelError:
            raise
        except RecordReadError as err:
            failure = err
        if self.bad_record == "skip":
            return SkippedRecord(str(failure))
        raise failure

    def _check_label(self, index: int, label: int) -> None:
        if self.label_limit is not None and not 0 <= label < self.label_limit:
            key = self.records.key(index).decode(errors="replace")
            raise LabelError(f"{self.path}: record {index} (key {key!r}) has label {label}, outside input.num_classes "
                             f"({self.label_limit}; labels are 0 to {self.label_limit - 1}): set input.num_classes to "
                             "the database's class count")

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        """(CxHxW float32 normalised image, label) as in data pass 0; a bad record always raises here."""
        sample = self.get_sample(index, 0)
        if isinstance(sample, SkippedRecord):
            raise RecordReadError(sample.reason)
        return self.collate_fn.one(sample), sample.label

    def _enter_process(self) -> None:
        single_threaded_opencv()    # a spawned worker starts with OpenCV's default; a forked one inherits 1
        self._process = os.getpid()


def single_threaded_opencv() -> None:
    """Make OpenCV run on the calling thread only in this process (the loader's workers are the parallelism).

    Only changes the setting when it is not already 1: in a forked child, reconfiguring a pool the parent
    started hangs, so the parent sets it first (before the DataLoader forks) and children leave it alone.
    """
    if cv2.getNumThreads() != 1:
        cv2.setNumThreads(1)
