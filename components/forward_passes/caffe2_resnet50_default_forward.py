"""torchvision's ResNet-50 with input.num_classes outputs and cross-entropy loss (the original's default network).

Fixes of the original: any class count (it hard-coded 1000), any input channel count (the stem convolution is
rebuilt when samples do not have 3 channels), batch norm in eval mode for test batches (the trainer switches the
shared network to eval there), and the loss reported as computed, not scaled by the device count. Adaptive
pooling makes any image size work. `engine: "CUDNN"` turns on cuDNN autotuning. Every batch norm takes
`bn_epsilon` and `bn_momentum` (Caffe2's convention, converted to PyTorch's 1 - momentum); `custom_bn_init`
sets the gamma of each bottleneck's last batch norm to `bn_init_gamma`. `memonger` recomputes each of the four
stages' activations in backward (activation checkpointing: components/networks/activation_checkpoint.py), which
is what memonger's sharing of activation blobs did for memory; same loss, gradients and state_dict keys.
"""
from __future__ import annotations

import torch
import torchvision
from torch import nn

from components.networks.activation_checkpoint import CheckpointedSequential
from playground.api import input_shape


# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["input.num_classes",
         "model_param.engine",
         "model_param.bn_epsilon",
         "model_param.bn_momentum",
         "model_param.custom_bn_init",
         "model_param.bn_init_gamma",
         "model_param.memonger"]

def gen_forward_pass_builder_fun(self, model, dataset, is_train):
    net = torchvision.models.resnet50(weights=None, num_classes=self.opts["input"]["num_classes"])
    channels = input_shape(dataset, self.opts)[0]
    if channels != 3:
        net.conv1 = nn.Conv2d(channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")
    p = self.opts["model_param"]
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eps, module.momentum = p["bn_epsilon"], 1.0 - p["bn_momentum"]
    if p["custom_bn_init"]:
        with torch.no_grad():
            for block in net.modules():
                if isinstance(block, torchvision.models.resnet.Bottleneck):
                    block.bn3.weight.fill_(p["bn_init_gamma"])
    if p["memonger"]:
        for stage in ("layer1", "layer2", "layer3", "layer4"):
            setattr(net, stage, CheckpointedSequential(*getattr(net, stage)))
    if p["engine"].upper() == "CUDNN":
        torch.backends.cudnn.benchmark = True
    return net, nn.CrossEntropyLoss()
