"""input.gpu_decode's device-side path (playground/data/images/gpu_decode.py), run here on the CPU device: the same
records, labels, crops and mirrors as OpenCV decoding, pixels within resampling differences."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
import torch

from playground.data.images.augment import AugmentSpec
from playground.data.images.lmdb_dataset import LmdbImageDataset
from playground.data.records.lmdb_writer import LmdbWriter
from playground.data.records.record_format import ImageRecord

CPU = torch.device("cpu")


def _photo(index: int) -> np.ndarray:
    """A smooth colour gradient, different along x and y, so a wrong crop or mirror shows."""
    height, width = 60 + 6 * index, 90 - 3 * index
    ys, xs = np.mgrid[0:height, 0:width]
    return np.stack([xs * 255 // width, ys * 255 // height, (xs + ys) * 127 // (width + height)], -1).astype(np.uint8)


@pytest.mark.parametrize("jitter", [0, 1])
def test_device_decoding_gives_the_cpu_paths_crops_mirrors_and_labels(tmp_path, jitter):
    writer = LmdbWriter(str(tmp_path / "db"))
    for index in range(8):       # JPEGs, and one PNG, which the worker decodes and sends as pixels
        kind = ".png" if index == 5 else ".jpg"
        encoded = cv2.imencode(kind, cv2.cvtColor(_photo(index), cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 98])
        writer.append(ImageRecord(label=index, payload=encoded[1].tobytes()))
    writer.finish([str(i) for i in range(8)])
    spec = AugmentSpec(is_train=True, loadsize=40, imsize=32, scale_jitter_type=jitter)
    on_cpu = LmdbImageDataset(str(tmp_path / "db"), spec, seed=3)
    on_device = LmdbImageDataset(str(tmp_path / "db"), spec, seed=3, gpu_decode=True)
    keys = [(p, i) for p in range(3) for i in range(8)]
    expected, labels = on_cpu.collate_fn.batch_to_device(on_cpu.collate_fn(on_cpu.get_samples(keys))[:2], CPU)
    encoded, device_labels, skipped = on_device.collate_fn(on_device.get_samples(keys))
    assert skipped == 0 and [p.dim() for p in encoded.payloads[:8]] == [1, 1, 1, 1, 1, 3, 1, 1]
    images, device_labels = on_device.collate_fn.batch_to_device((encoded, device_labels), CPU)
    assert torch.equal(device_labels, labels) and images.shape == expected.shape == (24, 3, 32, 32)
    levels = (images - expected).abs() * 255 * torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
    assert levels.mean() < 2.5, "same crops and mirrors: only decoder and resampling differences"


def test_device_resize_keeps_same_size_images_and_scales_others():
    from playground.data.images.gpu_decode import resize_on_device

    image = torch.arange(2 * 8 * 8, dtype=torch.uint8).view(2, 8, 8)
    assert resize_on_device(image, 8, 8) is image
    assert resize_on_device(image, 3, 5).shape == (2, 3, 5)
