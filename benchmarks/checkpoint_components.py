"""Components for benchmarks/checkpoint.py: a torchvision ResNet (weights=None) trained alone (no test model);
checkpoint_timing.py times the run."""
from __future__ import annotations

import torchvision
from torch import nn

from playground.trainer.model import Model

ARCH = "resnet18"          # set by the benchmark before each run


def init_model(self):
    self.train_model = Model("train_model", is_train=True)
    self.test_model = None


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    return getattr(torchvision.models, ARCH)(weights=None, num_classes=self.opts["input"]["num_classes"]), \
        nn.CrossEntropyLoss()
