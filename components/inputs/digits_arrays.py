"""scikit-learn's handwritten digits (1,797 8x8 images, shipped with the package) as numpy (inputs, labels) tuples.

Inputs are the 64 pixel values scaled to [0, 1] (float32), labels the digits 0-9. The split is a fixed
permutation (numpy, seeded by input.digits_split_seed) with input.digits_test_fraction held out, so every run,
and the CANDLE script of experiments/candle_digits, sees the same samples.
"""
from __future__ import annotations

import numpy as np

from playground.api import Float, Int

additional_definitions = [
    {"name": "input.digits_test_fraction", "type": Float(0, 1, exclusive_minimum=True, exclusive_maximum=True),
     "default": 0.2, "help": "Fraction of the digits held out as the test set."},
    {"name": "input.digits_split_seed", "type": Int(0), "default": 0, "help": "Seed of the train/test split."},
]


def load_digits_split(test_fraction: float = 0.2, split_seed: int = 0) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_test, y_test): float32 rows of 64 pixels in [0, 1] and int64 labels."""
    pixels, labels = _digits()
    x = (pixels / 16.0).astype(np.float32)
    y = labels.astype(np.int64)
    order = np.random.RandomState(split_seed).permutation(len(y))
    test = int(round(len(y) * test_fraction))
    return x[order[test:]], y[order[test:]], x[order[:test]], y[order[:test]]


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """The values of sklearn.datasets.load_digits(): (1797 x 64 pixel values 0-16, labels), both float64.

    Read from the file scikit-learn ships (the rows load_digits parses) without importing scikit-learn, whose
    import costs about 1.7 s in every process that trains on the digits; load_digits() where the file is not.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")      # finds the package without running it
    shipped = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz" if spec and spec.origin else None
    if shipped is None or not shipped.is_file():
        from sklearn.datasets import load_digits
        digits = load_digits()
        return digits.data, digits.target.astype(np.float64)
    import gzip
    with gzip.open(shipped, mode="rt", encoding="utf-8") as rows:
        table = np.loadtxt(rows, delimiter=",")
    return table[:, :-1], table[:, -1]


def get_input_dataset(opts: dict) -> dict:
    i = opts["input"]
    x_train, y_train, x_test, y_test = load_digits_split(i["digits_test_fraction"], i["digits_split_seed"])
    return {"train": (x_train, y_train), "test": (x_test, y_test)}


def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset
