"""torchvision's ResNet-50 with input.num_classes outputs and cross-entropy loss (the original's default network).

Fixes of the original: any class count (it hard-coded 1000), any input channel count (the stem convolution is
rebuilt when samples do not have 3 channels), batch norm in eval mode for test batches (the trainer switches the
shared network to eval there), and the loss reported as computed, not scaled by the device count. Adaptive
pooling makes any image size work. `engine: "CUDNN"` turns on cuDNN autotuning.
"""
from __future__ import annotations

import torch
import torchvision
from torch import nn

from playground.model import input_shape


def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    net = torchvision.models.resnet50(weights=None, num_classes=self.opts["input"]["num_classes"])
    channels = input_shape(dataset, self.opts)[0]
    if channels != 3:
        net.conv1 = nn.Conv2d(channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")
    if self.opts["model_param"]["engine"].upper() == "CUDNN":
        torch.backends.cudnn.benchmark = True
    return net, nn.CrossEntropyLoss()
