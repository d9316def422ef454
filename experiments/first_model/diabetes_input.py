"""scikit-learn's diabetes data (442 patients, 10 measurements each, a disease progression score) as numpy
(inputs, targets) tuples for a regression: an input component.

The 10 columns and the target are standardised with the training split's mean and standard deviation (so the
MSE is in units of the target's variance); the split is a fixed seeded permutation, input.diabetes_test_fraction
held out. The data are the file scikit-learn ships, read without importing scikit-learn (1.7 s per process).
"""
from __future__ import annotations

import numpy as np

from playground.api import Float, Int

additional_definitions = [
    {"name": "input.diabetes_test_fraction", "type": Float(0, 1, exclusive_minimum=True, exclusive_maximum=True),
     "default": 0.2, "help": "Fraction of the 442 patients held out as the test set."},
    {"name": "input.diabetes_split_seed", "type": Int(0), "default": 0, "help": "Seed of the train/test split."},
]


def load_diabetes_split(test_fraction: float = 0.2, split_seed: int = 0) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_test, y_test): float32 rows of 10 standardised measurements, float32 targets."""
    x, y = _diabetes()
    order = np.random.RandomState(split_seed).permutation(len(y))
    test, train = order[:int(round(len(y) * test_fraction))], order[int(round(len(y) * test_fraction)):]
    x_mean, x_std = x[train].mean(axis=0), x[train].std(axis=0)
    y_mean, y_std = y[train].mean(), y[train].std()
    x, y = ((x - x_mean) / x_std).astype(np.float32), ((y - y_mean) / y_std).astype(np.float32)
    return x[train], y[train], x[test], y[test]


def _diabetes() -> tuple[np.ndarray, np.ndarray]:
    """The unscaled values of sklearn.datasets.load_diabetes(scaled=False): (442 x 10 measurements, targets)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")      # finds the package without running it
    if spec is None or spec.origin is None:
        raise ImportError("the diabetes data ship with scikit-learn, which is not installed: pip install "
                          "scikit-learn (the demo extra installs it)")
    folder = Path(spec.origin).parent / "datasets" / "data"
    return np.loadtxt(folder / "diabetes_data_raw.csv.gz"), np.loadtxt(folder / "diabetes_target.csv.gz")


def get_input_dataset(opts: dict) -> dict:
    i = opts["input"]
    x_train, y_train, x_test, y_test = load_diabetes_split(i["diabetes_test_fraction"], i["diabetes_split_seed"])
    return {"train": (x_train, y_train), "test": (x_test, y_test)}


def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset
