"""Components for benchmarks/parity.py: the benchmark network (shared with the hand-written loop) and a
train-only model, so the playground run has no test model; parity_timing.py times its epochs."""
from __future__ import annotations

from torch import nn

from playground.trainer.model import Model


def make_net(num_classes: int = 10) -> nn.Module:
    """The benchmark network, written out once and used by both loops."""
    def block(cin: int, cout: int, stride: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(*block(3, 32, 1), *block(32, 64, 2), *block(64, 128, 2),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes))


def init_model(self):
    self.train_model = Model("train_model", is_train=True)
    self.test_model = None


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    return make_net(self.opts["input"]["num_classes"]), nn.CrossEntropyLoss()
