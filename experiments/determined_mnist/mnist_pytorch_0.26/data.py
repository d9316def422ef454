# Determined's MNIST example (Apache-2.0, see ../README.md), with its data pointed at a local copy: the digits.
from typing import Any, Dict

from experiments.determined_mnist.digits_as_mnist import digits_dataset


def get_dataset(data_dir: str, train: bool) -> Any:
    # MNIST's mean and standard deviation, as the original transform normalises with.
    return digits_dataset(train, mean=0.1307, std=0.3081)


def download_dataset(download_directory: str, data_config: Dict[str, Any]) -> str:
    # Nothing to download: data_config["url"] names MNIST on S3; the digits ship with scikit-learn.
    return download_directory
