"""The resnet demo's model: a train model and a test model sharing its network (the original IN1k_resnet).

The original also fed a constant learning rate of 0.05 before every iteration and wrapped each step in a
2000-second kill timer; here the update rule's schedule sets the rate and the default step runs unguarded.
"""
from __future__ import annotations

from playground.api import Model


def init_model(self) -> None:
    self.train_model = Model("train_model", is_train=True)
    self.test_model = Model("test_model", is_train=False)
    self.log.info("Model creation completed")
