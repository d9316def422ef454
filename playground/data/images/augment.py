"""Training augmentation and test-time preprocessing of uint8 images with OpenCV.

Training (input.scale_jitter_type):
  0  resize the shorter side to `loadsize`, then a random `imsize` x `imsize` crop;
  1  Inception-style: a random crop of 8-100% of the area with aspect ratio 3/4-4/3 (log-uniform), resized to
     `imsize` x `imsize` (`loadsize` is not used);
then a horizontal mirror with probability 1/2 (input.mirror), colour jitter (input.color_jitter) and PCA
lighting noise (input.color_lighting). Test: resize the shorter side to `loadsize`, centre crop `imsize`.

Every random choice for an image comes from `sample_rng(seed, data_pass, index)`, so the augmented image is a
pure function of the opts, the data pass and the record index: a resumed run, another worker count or another
rank layout sees exactly the same pixels. Images stay uint8, written into their slot of the batch buffer
(`augment_into`); the training process normalises whole batches (image_batch.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from playground.data.images.color_augment import add_lighting, jitter_colors

MIN_AREA, MAX_AREA = 0.08, 1.0
MIN_ASPECT, MAX_ASPECT = 3 / 4, 4 / 3
_CROP_ATTEMPTS = 10


@dataclass(frozen=True)
class AugmentSpec:
    """What to do to each image; built from the input opts by the input component."""

    is_train: bool
    loadsize: int
    imsize: int
    scale_jitter_type: int = 0
    mirror: bool = True
    color_jitter: bool = False
    color_lighting: bool = False


def sample_rng(seed: int, data_pass: int, index: int) -> np.random.Generator:
    """The random generator of record `index` in data pass `data_pass`: depends on these three numbers only.

    The loader's workers get the same generators faster from sample_seeds.ReseededGenerator."""
    return np.random.default_rng([seed, data_pass, index])


def augment(pixels: np.ndarray, spec: AugmentSpec, rng: np.random.Generator | None) -> np.ndarray:
    """`pixels` (HxWx3 RGB or HxW gray, uint8) as an imsize x imsize image; `rng` is used only in training."""
    out = np.empty((spec.imsize, spec.imsize, *pixels.shape[2:]), np.uint8)
    augment_into(pixels, spec, rng, out)
    return out


def augment_into(pixels: np.ndarray, spec: AugmentSpec, rng: np.random.Generator | None, out: np.ndarray) -> None:
    """Write what `augment` returns into `out` (imsize x imsize x C, or imsize x imsize for gray; contiguous).

    The last OpenCV step writes straight into `out` (a slot of the batch buffer): the crop's resize, or the
    mirror, or a plain copy of the crop; only colour noise, which makes new images, costs one more copy.
    """
    apply_plan(pixels, plan_augment(pixels.shape[0], pixels.shape[1], spec, rng), spec, out)
    if spec.is_train and (spec.color_jitter or spec.color_lighting):
        noisy = jitter_colors(out, rng) if spec.color_jitter else out
        np.copyto(out, add_lighting(noisy, rng) if spec.color_lighting else noisy)


class Plan(NamedTuple):
    """The geometry chosen for one image: the rectangle (top, left, height, width) of the source it keeps, in the
    source itself (Inception crop) or in the source first resized to `resized` (height, width); and the mirror."""

    y: int
    x: int
    h: int
    w: int
    resized: tuple[int, int] | None
    mirror: bool


def plan_augment(height: int, width: int, spec: AugmentSpec, rng: np.random.Generator | None) -> Plan:
    """The random geometry of an image of `height` x `width` pixels: the draws augment_into makes, in its order.

    It needs the image's size only, so a batch's geometry can be drawn before its images are decoded.
    """
    side = spec.imsize
    if spec.is_train and spec.scale_jitter_type == 1:
        return Plan(*inception_box(height, width, rng), None, spec.mirror and rng.random() < 0.5)
    resized = shorter_side_shape(height, width, max(spec.loadsize, side))
    if not spec.is_train:
        return Plan((resized[0] - side) // 2, (resized[1] - side) // 2, side, side, resized, False)
    y, x = crop_origin(*resized, side, rng)
    return Plan(y, x, side, side, resized, spec.mirror and rng.random() < 0.5)


def apply_plan(pixels: np.ndarray, plan: Plan, spec: AugmentSpec, out: np.ndarray) -> None:
    """Write `pixels` cut, resized and mirrored as `plan` says into `out` (imsize x imsize[, C])."""
    y, x, h, w, resized, mirror = plan
    if resized is None:
        resize(pixels[y:y + h, x:x + w], spec.imsize, spec.imsize, out=out)
        if mirror:
            cv2.flip(out, 1, dst=out)     # in place (OpenCV swaps columns pairwise)
        return
    crop = resize(pixels, *resized)[y:y + h, x:x + w]
    if mirror:
        cv2.flip(crop, 1, dst=out)
    else:
        np.copyto(out, crop)


def resize(pixels: np.ndarray, height: int, width: int, out: np.ndarray | None = None) -> np.ndarray:
    """Bilinear resize; area averaging when shrinking more than twofold (bilinear would alias). With `out`, the
    result is written there (and returned)."""
    if pixels.shape[0] == height and pixels.shape[1] == width:
        if out is None:
            return pixels
        np.copyto(out, pixels)
        return out
    shrink = height < pixels.shape[0] / 2 or width < pixels.shape[1] / 2
    return cv2.resize(pixels, (width, height), dst=out, interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def resize_shorter(pixels: np.ndarray, size: int) -> np.ndarray:
    """Scale so that the shorter side is `size`, keeping the aspect ratio."""
    return resize(pixels, *shorter_side_shape(pixels.shape[0], pixels.shape[1], size))


def shorter_side_shape(height: int, width: int, size: int) -> tuple[int, int]:
    """(height, width) of a height x width image scaled so that its shorter side is `size`."""
    if height <= width:
        return size, max(size, round(width * size / height))
    return max(size, round(height * size / width)), size


def random_crop(pixels: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    y, x = crop_origin(pixels.shape[0], pixels.shape[1], size, rng)
    return pixels[y:y + size, x:x + size]


def crop_origin(height: int, width: int, size: int, rng: np.random.Generator) -> tuple[int, int]:
    """(top, left) of a random size x size crop of a height x width image."""
    return int(rng.integers(0, height - size + 1)), int(rng.integers(0, width - size + 1))


def inception_box(height: int, width: int, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """(top, left, crop height, crop width) of a random crop of 8-100% of the area, aspect 3/4-4/3.

    After ten draws that do not fit inside the image, the largest centred crop whose aspect is within range.
    """
    area = height * width
    log_min, log_max = math.log(MIN_ASPECT), math.log(MAX_ASPECT)
    for _ in range(_CROP_ATTEMPTS):
        target = area * rng.uniform(MIN_AREA, MAX_AREA)
        aspect = math.exp(rng.uniform(log_min, log_max))
        w, h = round(math.sqrt(target * aspect)), round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    aspect = width / height
    if aspect < MIN_ASPECT:
        w, h = width, min(height, round(width / MIN_ASPECT))
    elif aspect > MAX_ASPECT:
        w, h = min(width, round(height * MAX_ASPECT)), height
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w
