"""The resnet demo's model without a test model: training only, no test batches (the original's debugging variant)."""
from __future__ import annotations

from playground.api import Model


def init_model(self) -> None:
    self.train_model = Model("train_model", is_train=True)
    self.test_model = None
    self.log.info("Model creation completed (no test model)")
