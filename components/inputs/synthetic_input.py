"""Synthetic classification data: deterministic tensors from a seed, any shape and class count (for tests).

Each class has its own random mean pattern; a sample is its class mean plus Gaussian noise, so networks can
learn it and accuracy rises above chance. Train and test sets are drawn from separate seeded generators.
"""
from __future__ import annotations

import torch
from torch.utils.data import Dataset

from playground.api import Float, Int, ListOf

additional_definitions = [
    {"name": "input.num_classes", "type": Int(1), "default": 10, "help": "Number of classes of the synthetic data."},
    {"name": "input.synthetic_shape", "type": ListOf(Int(1), min_items=1), "default": [3, 32, 32],
     "help": "Shape of one synthetic sample, e.g. [3, 32, 32] for images or [20] for vectors."},
    {"name": "input.synthetic_train_size", "type": Int(1), "default": 1024, "help": "Synthetic training samples."},
    {"name": "input.synthetic_test_size", "type": Int(1), "default": 256, "help": "Synthetic test samples."},
    {"name": "input.synthetic_noise", "type": Float(0), "default": 1.0, "help": "Noise around each class mean."},
]


class SyntheticDataset(Dataset):
    def __init__(self, inputs: torch.Tensor, labels: torch.Tensor) -> None:
        self.inputs, self.labels = inputs, labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.inputs[index], self.labels[index]


def make_split(opts: dict, size: int, salt: int) -> SyntheticDataset:
    i, seed = opts["input"], opts["model_param"]["seed"]
    shape, classes = [int(s) for s in i["synthetic_shape"]], i["num_classes"]
    means = torch.randn((classes, *shape), generator=torch.Generator().manual_seed(seed * 7 + 1))
    generator = torch.Generator().manual_seed(seed * 7 + salt)
    labels = torch.randint(0, classes, (size,), generator=generator)
    noise = torch.randn((size, *shape), generator=generator) * i["synthetic_noise"]
    return SyntheticDataset(means[labels] + noise, labels)


def dataset_sizes(opts: dict) -> dict[str, int]:
    """Samples per split, known before any process starts (the framework checks the batch against them)."""
    return {"train": opts["input"]["synthetic_train_size"], "test": opts["input"]["synthetic_test_size"]}


def get_input_dataset(opts: dict) -> dict:
    return {"train": make_split(opts, opts["input"]["synthetic_train_size"], salt=2),
            "test": make_split(opts, opts["input"]["synthetic_test_size"], salt=3)}


def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset
