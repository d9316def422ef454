# Determined's GAN example (Apache-2.0, see ../README.md), with its data pointed at a local copy: the digits.
from typing import Any, Dict

from experiments.determined_mnist.digits_as_mnist import digits_dataset


def get_dataset(data_dir: str, train: bool) -> Any:
    # Normalize((0.5,), (0.5,)) as the original: pixels in [-1, 1], the generator's tanh range.
    return digits_dataset(train, mean=0.5, std=0.5)


def download_dataset(download_directory: str, data_config: Dict[str, Any]) -> str:
    # Nothing to download: data_config["url"] names MNIST on S3; the digits ship with scikit-learn.
    return download_directory
