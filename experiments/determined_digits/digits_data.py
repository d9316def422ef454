"""The examples' data: scikit-learn's handwritten digits (shipped with it: nothing to download) as 1x8x8 float
images with their labels, split as every digits experiment here splits them (components/inputs/digits_arrays.py:
1,438 for training, 359 held out). Each example finds this file in its parent folder (`sys.path`)."""
from __future__ import annotations

import torch
from torch.utils.data import TensorDataset

from components.inputs.digits_arrays import load_digits_split

MEAN, STD = 0.30, 0.38     # of the training pixels (in [0, 1])


def digits(train: bool, normalized: bool = True) -> TensorDataset:
    """The training or held-out digits: (1x8x8 float32 image, int64 label); normalized to mean 0 and std 1,
    else in [0, 1]."""
    x_train, y_train, x_test, y_test = load_digits_split()
    pixels, labels = (x_train, y_train) if train else (x_test, y_test)
    images = torch.from_numpy(pixels).reshape(-1, 1, 8, 8)
    if normalized:
        images = (images - MEAN) / STD
    return TensorDataset(images, torch.from_numpy(labels))
