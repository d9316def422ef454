"""caffe2_resnet50_default_forward: torchvision's ResNet-50 sized to the run's classes and input channels."""
from __future__ import annotations

import torch
import torchvision
from torch import nn

from components.forward_passes.caffe2_resnet50_default_forward import gen_forward_pass_builder_fun
from tests.components.resnet_opts import resnet_opts, trainer_stub


def build(channels: int, classes: int) -> tuple[nn.Module, nn.Module]:
    stub = trainer_stub(resnet_opts(input={"num_classes": classes},
                                    model={"forward_pass_py": "caffe2_resnet50_default_forward"}))
    return gen_forward_pass_builder_fun(stub, None, [(torch.zeros(channels, 16, 16), 0)], True)


def test_any_class_count_and_the_unscaled_loss():
    net, loss_fn = build(channels=3, classes=7)
    reference = torchvision.models.resnet50(weights=None, num_classes=7)
    assert sum(p.numel() for p in net.parameters()) == sum(p.numel() for p in reference.parameters())
    x, y = torch.randn(2, 3, 32, 32), torch.tensor([1, 6])
    out = net.eval()(x)
    assert out.shape == (2, 7)
    torch.testing.assert_close(loss_fn(out, y), nn.functional.cross_entropy(out, y))


def test_grayscale_inputs_get_a_one_channel_stem():
    net, _ = build(channels=1, classes=3)
    assert net.conv1.in_channels == 1 and net.conv1.out_channels == 64
    assert net.eval()(torch.randn(1, 1, 16, 16)).shape == (1, 3)
