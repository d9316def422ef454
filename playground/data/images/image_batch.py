"""Collation: augmented uint8 images -> one uint8 NxHxWxC batch; on the training device, one normalised float32 step.

Workers write each augmented image straight into its slot of a uint8 batch buffer (`fill`; the last OpenCV
step's `dst`), in OpenCV's HxWxC layout, so a batch crosses to the training process, and to a GPU, as a quarter
of the bytes of float32. Inside a DataLoader worker the buffer is in shared memory, as torch's own
default_collate makes it, so handing it over copies nothing; when the loader allows it (`reuse_buffers`), a
worker cycles through a ring of such buffers instead of faulting in fresh pages for every batch, and each buffer
crosses to the training process once, later batches as references to it (batch_ring.py).

`batch_to_device` (called by playground/data/batch_stream.py in the training process) moves the uint8 batch to
the device (non-blocking from pinned memory on CUDA) and turns it into the float32 NxCxHxW batch the network takes:
each value (pixel / 255 - mean[c]) / std[c], RGB order, computed as pixel * scale[c] + offset[c] (one addcmul on
a GPU; on the CPU, OpenCV splits each image into planes and writes each plane's affine map into the output,
equal to the addcmul up to float rounding). The defaults are ImageNet's RGB mean and std.

Records skipped under input.bad_record "skip" arrive as SkippedRecord and are counted: the collate function
returns (images, labels, skipped), the form playground/data/batch_stream.py sums per epoch.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import cv2
import numpy as np
import torch
from torch.utils.data import get_worker_info

from playground.data.images.batch_ring import RingBatch, WorkerRing, new_shared, new_token, receiver

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
_OUTPUT_SLOTS = 2   # float batches the training process reuses on the CPU (the loop keeps only the current one)


class ImageSample(NamedTuple):
    """One augmented image (imsize x imsize x C, or imsize x imsize for gray; uint8 RGB) and its label."""

    pixels: np.ndarray
    label: int


class SkippedRecord(NamedTuple):
    """Stands for a record that failed to decode under input.bad_record "skip"; `reason` names db and key."""

    reason: str


class FilledBatch(NamedTuple):
    """A batch written in place by `ImageBatcher.fill`: what the collate function returns for it."""

    images: torch.Tensor
    labels: torch.Tensor
    skipped: int


class ImageBatcher:
    """collate_fn: ImageSample / SkippedRecord list (or a FilledBatch) -> (uint8 NxHxWxC, int64 N, number skipped);
    `batch_to_device` then gives the normalised float32 NxCxHxW batch on the training device."""

    def __init__(self, channels: int, mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD):
        if len(mean) != channels or len(std) != channels:
            raise ValueError(f"mean and std need {channels} values each (one per channel), got {list(mean)} and "
                             f"{list(std)}")
        self.channels = channels
        self._slots = 0                       # ring size in a loader worker; 0: a fresh buffer per batch
        self._ring: WorkerRing | None = None
        self._token = new_token()             # names this batcher's rings to the training process
        self._receiver = receiver(self._token)   # keeps what arrives in this process while the batcher lives
        self._outputs: list[torch.Tensor] = []   # the training process's float batches on the CPU
        self._planes = np.empty(0, np.uint8)     # one image's uint8 planes, reused by the CPU normalisation
        std_t = torch.tensor(std, dtype=torch.float32).view(channels, 1, 1)
        self._scale = 1.0 / (255.0 * std_t)
        self._offset = -torch.tensor(mean, dtype=torch.float32).view(channels, 1, 1) / std_t
        scale, offset = self._scale.flatten().tolist(), self._offset.flatten().tolist()
        self._affine = list(zip(scale, offset))  # the CPU normalisation's per-channel (scale, offset)
        self._constants: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}

    def __call__(self, samples: Sequence[ImageSample | SkippedRecord] | FilledBatch
                 ) -> tuple[torch.Tensor, torch.Tensor, int] | RingBatch:
        """(uint8 images, labels, number skipped); in a loader worker with a ring, a RingBatch that arrives in
        the training process as that triple."""
        if isinstance(samples, FilledBatch):
            images, labels, skipped = samples
        else:
            kept = [s for s in samples if isinstance(s, ImageSample)]
            if not kept:
                raise all_failed(samples)
            height, width = kept[0].pixels.shape[:2]
            images = self._batch_tensor((len(kept), height, width, self.channels))
            for slot, sample in zip(images.numpy(), kept):
                np.copyto(slot, sample.pixels.reshape(slot.shape))
            labels, skipped = torch.tensor([s.label for s in kept], dtype=torch.int64), len(samples) - len(kept)
        if self._ring is not None and get_worker_info() is not None:
            return self._ring.batch(images, labels.tolist(), skipped)
        return images, labels, skipped

    def __getstate__(self) -> dict:
        """Buffers and device constants stay in the process that made them (a spawned worker gets none)."""
        state = dict(self.__dict__)
        state.update(_ring=None, _receiver=None, _outputs=[], _constants={}, _planes=np.empty(0, np.uint8))
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._receiver = receiver(self._token)

    def fill(self, count: int, height: int, width: int,
             make: Callable[[int, np.ndarray], int | SkippedRecord]) -> FilledBatch:
        """A batch of up to `count` images written in place: `make(k, out)` writes sample k into `out` (HxWxC, or
        HxW for gray) and returns its label, or returns a SkippedRecord (which takes no slot)."""
        images = self._batch_tensor((count, height, width, self.channels))
        slots = images.numpy() if self.channels == 3 else images.numpy()[..., 0]
        labels: list[int] = []
        failures: list[SkippedRecord] = []
        for k in range(count):
            result = make(k, slots[len(labels)])
            if isinstance(result, SkippedRecord):
                failures.append(result)
            else:
                labels.append(result)
        if not labels:
            raise all_failed(failures)
        return FilledBatch(images[:len(labels)], torch.tensor(labels, dtype=torch.int64), len(failures))

    def batch_to_device(self, batch: tuple[torch.Tensor, torch.Tensor], device: torch.device
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """(uint8 NxHxWxC, labels) -> (normalised float32 NxCxHxW, labels) on `device`; in the training process."""
        images, labels = batch
        return self.normalise(images.to(device, non_blocking=True)), labels.to(device, non_blocking=True)

    def normalise(self, images: torch.Tensor, reuse: bool = True) -> torch.Tensor:
        """uint8 NxHxWxC -> float32 NxCxHxW on the same device; on the CPU into a reused buffer if `reuse`."""
        chw = images.permute(0, 3, 1, 2)
        if images.device.type != "cpu":
            scale, offset = self._on(images.device)
            return torch.addcmul(offset, chw, scale)
        out = self._output(tuple(chw.shape)) if reuse and self._slots else torch.empty(chw.shape)
        self._normalise_cpu(images.numpy(), out.numpy())
        return out

    def _normalise_cpu(self, images: np.ndarray, out: np.ndarray) -> None:
        """Write the normalised NxCxHxW `out` of the uint8 NxHxWxC `images`, one image at a time (in cache).

        On the calling thread: torch's parallel ops left the training process's OpenMP threads spinning between
        batches, which cost 10x the work itself (benchmarks/README.md). OpenCV splits an image into planes (a
        quarter of the bytes of the float result) and maps each plane straight into its output plane; torch's
        addcmul with the HWC -> CHW transpose took half as long again (benchmarks/README.md).

        Each plane is followed by the two values 0 and 255, so that min-max normalisation onto [offset, offset +
        255 * scale] is exactly our map without a pass to find the plane's own range (a sixth of the work); their
        two results land on the first two values of the next output plane, written right after. The batch's last
        plane, with nothing after it, takes its range from its pixels (_affine_plane).
        """
        if self.channels == 1:
            for image, target in zip(images, out):
                _affine_plane(image[..., 0], self._affine[0], target[0])
            return
        height, width = images.shape[1:3]
        area = height * width
        if self._planes.shape != (3, area + 2):
            self._planes = np.empty((3, area + 2), np.uint8)
            self._planes[:, area:] = (0, 255)
        planes = [plane[:area].reshape(height, width) for plane in self._planes]
        flat = out.reshape(-1) if out.flags.c_contiguous else np.empty(0, np.float32)   # a view, or no fast path
        for index, image in enumerate(images):
            cv2.split(np.ascontiguousarray(image), planes)
            for channel, (plane, (scale, offset)) in enumerate(zip(self._planes, self._affine)):
                start = (index * 3 + channel) * area
                if scale > 0 and start + area + 2 <= flat.size:
                    # as 1 x n rows: OpenCV makes a 1-D array an n x 1 column, which its min-max scans pixel by pixel
                    cv2.normalize(plane[None], flat[None, start:start + area + 2], offset, offset + 255.0 * scale,
                                  cv2.NORM_MINMAX, cv2.CV_32F)
                else:
                    _affine_plane(planes[channel], (scale, offset), out[index, channel])

    def one(self, sample: ImageSample) -> torch.Tensor:
        """The CxHxW float tensor of a single sample (fresh memory)."""
        pixels = sample.pixels.reshape(1, *sample.pixels.shape[:2], self.channels)
        return self.normalise(torch.from_numpy(np.ascontiguousarray(pixels)), reuse=False)[0]

    def reuse_buffers(self, slots: int) -> None:
        """In loader workers, write batches into a ring of `slots` shared buffers instead of fresh ones.

        The caller (playground/data/batch_stream.py) promises a batch is no longer read once its worker has made
        `slots` more; the trainer process (no worker) gets fresh uint8 tensors, and on the CPU reuses two float
        batches (the loop works on one batch at a time).
        """
        self._slots = slots

    def _on(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        if device not in self._constants:
            self._constants[device] = self._scale.to(device), self._offset.to(device)
        return self._constants[device]

    def _output(self, shape: tuple[int, ...]) -> torch.Tensor:
        if self._outputs and (self._outputs[0].shape[1:] != shape[1:] or self._outputs[0].shape[0] < shape[0]):
            self._outputs = []
        if len(self._outputs) < _OUTPUT_SLOTS:
            self._outputs.append(torch.empty(shape))
        else:
            self._outputs.append(self._outputs.pop(0))
        return self._outputs[-1][:shape[0]]

    def _batch_tensor(self, shape: tuple[int, ...]) -> torch.Tensor:
        if get_worker_info() is None:
            return torch.empty(shape, dtype=torch.uint8)
        if not self._slots:
            return new_shared(shape)
        if self._ring is None or not self._ring.fits(shape):
            self._ring = WorkerRing(self._token, self._slots)   # another image size: a new ring
        return self._ring.take(shape)


def _affine_plane(plane: np.ndarray, affine: tuple[float, float], out: np.ndarray) -> None:
    """out = plane * scale + offset in float32 (plane HxW uint8, out HxW float32, both contiguous).

    OpenCV's fused conversion with scale and shift (Mat::convertTo, one pass) has no Python binding of its own;
    cv2.normalize in min-max mode calls it with the scale and shift that map the plane's [min, max] onto the range
    it is given, so given [offset + min * scale, offset + max * scale] it applies exactly our map (a constant plane
    gets scale 0 and shift offset + min * scale: the same values). A third faster than addWeighted, which converts
    both of its operands first (benchmarks/README.md).
    """
    scale, offset = affine
    if scale <= 0:     # min-max mode orders the range: only an increasing map survives it
        cv2.addWeighted(plane, scale, plane, 0.0, offset, dst=out, dtype=cv2.CV_32F)
        return
    low, high, _, _ = cv2.minMaxLoc(plane)
    cv2.normalize(plane, out, offset + low * scale, offset + high * scale, cv2.NORM_MINMAX, cv2.CV_32F)


def all_failed(samples: Sequence[ImageSample | SkippedRecord]) -> RuntimeError:
    reasons = "; ".join(s.reason for s in samples[:3])
    return RuntimeError(f"every record of a batch of {len(samples)} failed to decode ({reasons}); the "
                        "database looks damaged: rebuild it or check the path")
