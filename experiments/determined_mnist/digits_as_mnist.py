"""scikit-learn's handwritten digits shaped as MNIST (1x28x28 float images, labels 0-9), for Determined's MNIST
examples here: no download. Each 8x8 digit (0-16) is scaled to [0, 1], enlarged 3x (nearest) to 24x24 and
padded by 2 pixels to 28x28, then normalised as the example's own transform does. The train/test split is the
one every digits experiment uses (components/inputs/digits_arrays.py: 20% held out, seed 0).
"""
from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import TensorDataset

from components.inputs.digits_arrays import load_digits_split


def digits_dataset(train: bool, mean: float, std: float) -> TensorDataset:
    """The train (1,438) or test (359) digits as a dataset of (1x28x28 float tensor, int64 label)."""
    x_train, y_train, x_test, y_test = load_digits_split()
    pixels, labels = (x_train, y_train) if train else (x_test, y_test)
    images = np.kron(pixels.reshape(-1, 8, 8), np.ones((3, 3), dtype=np.float32))
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))[:, None]
    return TensorDataset(torch.from_numpy((images - mean) / std), torch.from_numpy(labels))
