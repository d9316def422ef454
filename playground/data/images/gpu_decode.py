"""input.gpu_decode: JPEG records decoded and augmented on the CUDA device with torchvision's GPU decoder.

Loader workers only read records: a JPEG travels as its bytes (a 1-d uint8 tensor); any other record (PNG, raw
pixels, a raw Caffe Datum) is decoded by OpenCV in the worker and travels as HxWxC uint8 pixels. In the training
process, `GpuJpegBatcher.batch_to_device` decodes the batch's JPEGs in one `torchvision.io.decode_jpeg(...,
device="cuda")` call, then crops, resizes and mirrors each image on the device and normalises the batch as the
CPU path does (image_batch.py). The random choices are the CPU path's: drawn from `sample_rng(seed, pass,
index)` once the image size is known, with the same functions (augment.py), so the crops and mirrors are the
same; resizing is torch's bilinear interpolation (antialiased when shrinking, where OpenCV averages areas), so
pixels differ slightly from CPU decoding. Colour noise is not done here (gfs_IN1k refuses the combination).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from playground.data.images.augment import AugmentSpec, plan_augment, sample_rng
from playground.data.images.image_batch import IMAGENET_MEAN, IMAGENET_STD, ImageBatcher, SkippedRecord, all_failed

JPEG_MAGIC = b"\xff\xd8"


class EncodedSample(NamedTuple):
    """A record as it travels to the GPU: JPEG bytes (1-d uint8) or decoded HxWxC uint8 pixels, label and key."""

    payload: torch.Tensor
    label: int
    data_pass: int
    index: int


class EncodedBatch(NamedTuple):
    """The collated EncodedSamples: payloads, and the (data pass, index) of each as an int64 Nx2 tensor."""

    payloads: list[torch.Tensor]
    keys: torch.Tensor


class GpuJpegBatcher(ImageBatcher):
    """collate_fn of EncodedSamples -> (EncodedBatch, labels, skipped); batch_to_device decodes and augments on CUDA."""

    def __init__(self, spec: AugmentSpec, seed: int, describe: Callable[[int], str], channels: int = 3,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD) -> None:
        super().__init__(channels, mean, std)
        self.spec, self.seed, self._describe = spec, seed, describe

    def __call__(self, samples: Sequence[EncodedSample | SkippedRecord]) -> tuple[EncodedBatch, torch.Tensor, int]:
        kept = [s for s in samples if isinstance(s, EncodedSample)]
        if not kept:
            raise all_failed(samples)
        keys = torch.tensor([(s.data_pass, s.index) for s in kept], dtype=torch.int64).view(-1, 2)
        labels = torch.tensor([s.label for s in kept], dtype=torch.int64)
        return EncodedBatch([s.payload for s in kept], keys), labels, len(samples) - len(kept)

    def batch_to_device(self, batch: tuple[EncodedBatch, torch.Tensor], device: torch.device
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        encoded, labels = batch
        side = self.spec.imsize
        images = torch.empty((len(encoded.payloads), side, side, self.channels), dtype=torch.uint8, device=device)
        for k, (image, (data_pass, index)) in enumerate(zip(self._decode(encoded, device), encoded.keys.tolist())):
            rng = sample_rng(self.seed, data_pass, index) if self.spec.is_train else None
            images[k] = augment_on_device(image, self.spec, rng).permute(1, 2, 0)
        return self.normalise(images), labels.to(device, non_blocking=True)

    def _decode(self, encoded: EncodedBatch, device: torch.device) -> list[torch.Tensor]:
        """Each payload as CxHxW uint8 on `device`: the JPEGs in one batched GPU decode."""
        from torchvision.io import ImageReadMode, decode_jpeg

        mode = ImageReadMode.RGB if self.channels == 3 else ImageReadMode.GRAY
        jpegs = [k for k, p in enumerate(encoded.payloads) if p.dim() == 1]
        images = [p.to(device, non_blocking=True).permute(2, 0, 1) if p.dim() == 3 else None
                  for p in encoded.payloads]
        try:
            decoded = decode_jpeg([encoded.payloads[k] for k in jpegs], mode=mode, device=device) if jpegs else []
        except RuntimeError as err:
            raise self._first_bad(encoded, jpegs, mode, device) from err
        for k, image in zip(jpegs, decoded):
            images[k] = image
        return images

    def _first_bad(self, encoded: EncodedBatch, jpegs: list[int], mode, device: torch.device) -> Exception:
        """The error naming the first JPEG of a failed batch that the GPU decoder refuses on its own."""
        from torchvision.io import decode_jpeg

        from playground.data.records.db_records import RecordReadError

        for k in jpegs:
            try:
                decode_jpeg(encoded.payloads[k], mode=mode, device=device)
            except RuntimeError as err:
                index = int(encoded.keys[k, 1])
                return RecordReadError(f"{self._describe(index)}: the GPU JPEG decoder could not decode the "
                                       f"{encoded.payloads[k].numel()}-byte image ({str(err).strip()})")
        return RuntimeError("the GPU JPEG decoder failed on a batch whose images it decodes one by one")


def augment_on_device(image: torch.Tensor, spec: AugmentSpec, rng: np.random.Generator | None) -> torch.Tensor:
    """CxHxW uint8 -> C x imsize x imsize: augment.augment_into's geometry (the same plan, so the same draws)."""
    y, x, h, w, resized, mirror = plan_augment(image.shape[1], image.shape[2], spec, rng)
    if resized is None:
        image = resize_on_device(image[:, y:y + h, x:x + w], spec.imsize, spec.imsize)
    else:
        image = resize_on_device(image, *resized)[:, y:y + h, x:x + w]
    return image.flip(-1) if mirror else image


def resize_on_device(image: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Bilinear resize of CxHxW uint8, antialiased when shrinking more than twofold (as augment.resize averages)."""
    if image.shape[1] == height and image.shape[2] == width:
        return image
    shrink = height < image.shape[1] / 2 or width < image.shape[2] / 2
    resized = F.interpolate(image[None].float(), size=(height, width), mode="bilinear", align_corners=False,
                            antialias=shrink)
    return resized[0].round_().clamp_(0, 255).to(torch.uint8)


def encoded_payload(payload: bytes) -> torch.Tensor | None:
    """A JPEG file's bytes as a 1-d uint8 tensor (a copy: the LMDB's memory is not ours); None for other data."""
    if payload[:2] != JPEG_MAGIC:
        return None
    return torch.from_numpy(np.frombuffer(payload, np.uint8).copy())
