"""A train model and a test model sharing its network; every per-iteration hook is the framework's default."""
from __future__ import annotations

from playground.api import Model


def init_model(self) -> None:
    self.train_model = Model("train_model", is_train=True)
    self.test_model = Model("test_model", is_train=False)
