# Determined's MNIST example (Apache-2.0, see ../README.md), with its data pointed at a local copy: the digits.
import pathlib
from typing import Any

from experiments.determined_mnist.digits_as_mnist import digits_dataset


def get_dataset(data_dir: pathlib.Path, train: bool) -> Any:
    # MNIST's mean and standard deviation, as the original transform normalises with; nothing is downloaded.
    return digits_dataset(train, mean=0.1307, std=0.3081)
