"""Colour augmentation on uint8 images (HxWx3 RGB or HxW gray), saturating at 0 and 255.

`jitter_colors`: brightness, contrast and saturation, each scaled by a factor drawn uniformly from
[1 - 0.4, 1 + 0.4], applied in a random order (as in fb.resnet.torch's ColorJitter).
`add_lighting`: AlexNet's PCA lighting noise: add eigvec @ (alpha * eigval) with alpha ~ N(0, 0.1) per
component, using the RGB principal components of ImageNet's pixels (values in [0, 1], scaled to 0-255 here).
"""
from __future__ import annotations

import cv2
import numpy as np

JITTER_STRENGTH = 0.4
LIGHTING_STD = 0.1
# Principal components of ImageNet's RGB pixel covariance (AlexNet; the values fb.resnet.torch publishes).
IMAGENET_EIGVAL = np.array([0.2175, 0.0188, 0.0045])
IMAGENET_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                            [-0.5808, -0.0045, -0.8140],
                            [-0.5836, -0.6948, 0.4203]])


def jitter_colors(pixels: np.ndarray, rng: np.random.Generator, strength: float = JITTER_STRENGTH) -> np.ndarray:
    """Brightness, contrast and saturation jitter in a random order; gray images get no saturation change."""
    factors = rng.uniform(1 - strength, 1 + strength, size=3)
    for step in rng.permutation(3):
        pixels = _JITTERS[step](pixels, float(factors[step]))
    return pixels


def add_lighting(pixels: np.ndarray, rng: np.random.Generator, std: float = LIGHTING_STD) -> np.ndarray:
    """Add PCA lighting noise: one offset per channel for the whole image (the mean offset for gray images)."""
    alpha = rng.normal(0.0, std, size=3)
    offset = 255.0 * (IMAGENET_EIGVEC @ (alpha * IMAGENET_EIGVAL))
    if pixels.ndim == 2:
        return cv2.add(pixels, float(offset.mean()))
    return cv2.add(pixels, (float(offset[0]), float(offset[1]), float(offset[2]), 0.0))


def _brightness(pixels: np.ndarray, factor: float) -> np.ndarray:
    return cv2.addWeighted(pixels, factor, pixels, 0.0, 0.0)


def _contrast(pixels: np.ndarray, factor: float) -> np.ndarray:
    mean = float(_gray(pixels).mean())
    return cv2.addWeighted(pixels, factor, pixels, 0.0, mean * (1.0 - factor))


def _saturation(pixels: np.ndarray, factor: float) -> np.ndarray:
    if pixels.ndim == 2:
        return pixels
    gray = cv2.cvtColor(_gray(pixels), cv2.COLOR_GRAY2RGB)
    return cv2.addWeighted(pixels, factor, gray, 1.0 - factor, 0.0)


def _gray(pixels: np.ndarray) -> np.ndarray:
    return pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)


_JITTERS = (_brightness, _contrast, _saturation)
