"""The explicit ResNet network: layouts, parameter counts, shapes, initialisation, checkpointed stages."""
from __future__ import annotations

import copy

import pytest
import torch
import torchvision
from torch import nn

from components.networks.explicit_resnet import (BLOCK_COUNTS, BasicBlock, Bottleneck, ExplicitResNet,
                                                  ResNetSpec)


def params(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters())


@pytest.mark.parametrize("depth, count, reference", [(18, 11_689_512, torchvision.models.resnet18),
                                                      (50, 25_557_032, torchvision.models.resnet50)])
def test_depths_18_and_50_match_torchvision_parameter_for_parameter(depth, count, reference):
    ours, theirs = ExplicitResNet(ResNetSpec(depth=depth)), reference(weights=None)
    assert params(ours) == params(theirs) == count
    assert {k: v.shape for k, v in ours.state_dict().items()} == {k: v.shape for k, v in theirs.state_dict().items()}


def test_the_stem_bias_of_the_original_is_an_option():
    with torch.device("meta"):
        plain, biased = ExplicitResNet(ResNetSpec(depth=18)), ExplicitResNet(ResNetSpec(depth=18, conv1_bias=True))
    assert params(biased) - params(plain) == 64 and biased.conv1.bias is not None


@pytest.mark.parametrize("depth", sorted(BLOCK_COUNTS))
def test_every_canonical_depth_has_its_block_counts_and_block_type(depth):
    with torch.device("meta"):
        net = ExplicitResNet(ResNetSpec(depth=depth))
    assert tuple(len(stage) for stage in net.stages()) == BLOCK_COUNTS[depth]
    block = BasicBlock if depth in (18, 34) else Bottleneck
    assert all(isinstance(b, block) for stage in net.stages() for b in stage)
    convs = sum(1 for m in net.modules() if isinstance(m, nn.Conv2d))
    shortcuts = sum(1 for m in net.modules() if isinstance(m, (BasicBlock, Bottleneck)) and m.downsample is not None)
    assert convs - shortcuts + 1 == depth      # weighted layers on the main path + the classifier


def test_custom_block_counts_replace_the_canonical_ones():
    with torch.device("meta"):
        net = ExplicitResNet(ResNetSpec(depth=264, block_counts=(3, 64, 36, 3)))
    assert [len(s) for s in net.stages()] == [3, 64, 36, 3] and isinstance(net.layer2[0], Bottleneck)


def test_v1_5_strides_the_3x3_and_projects_only_where_the_shape_changes():
    net = ExplicitResNet(ResNetSpec(depth=50, width=8))
    first = net.layer2[0]
    assert first.conv1.stride == (1, 1) and first.conv2.stride == (2, 2)
    assert first.downsample[0].stride == (2, 2) and first.downsample[0].kernel_size == (1, 1)
    assert net.layer1[0].downsample is not None          # 8 -> 32 channels at stride 1
    assert all(b.downsample is None for s in net.stages() for b in list(s)[1:])
    basic = ExplicitResNet(ResNetSpec(depth=18, width=8))
    assert basic.layer1[0].downsample is None and basic.layer2[0].conv1.stride == (2, 2)


@pytest.mark.parametrize("size, spec, batch", [
    (32, ResNetSpec(depth=18, stem="small", width=8, num_classes=10), 2),
    (64, ResNetSpec(depth=50, width=8, num_classes=7, in_channels=1), 2),
    (224, ResNetSpec(depth=18, num_classes=1000), 1),
])
def test_any_image_size_class_count_and_channel_count(size, spec, batch):
    net = ExplicitResNet(spec).eval()
    with torch.inference_mode():
        out = net(torch.randn(batch, spec.in_channels, size, size))
    assert out.shape == (batch, spec.num_classes)


def test_the_small_stem_keeps_the_resolution_for_tiny_images():
    net = ExplicitResNet(ResNetSpec(depth=18, stem="small", width=8, in_channels=1))
    assert net.conv1.kernel_size == (3, 3) and net.conv1.stride == (1, 1) and isinstance(net.maxpool, nn.Identity)
    assert net(torch.randn(2, 1, 8, 8)).shape == (2, 1000)


def test_last_bn_gamma_initialises_the_last_batch_norm_of_every_block():
    for depth, last in ((18, "bn2"), (50, "bn3")):
        net = ExplicitResNet(ResNetSpec(depth=depth, width=8, last_bn_gamma=0.0))
        blocks = [b for s in net.stages() for b in s]
        assert all(torch.all(getattr(b, last).weight == 0) for b in blocks)
        assert all(torch.all(b.bn1.weight == 1) for b in blocks)
        assert torch.all(net.bn1.weight == 1)
    plain = ExplicitResNet(ResNetSpec(depth=18, width=8))
    assert all(torch.all(b.bn2.weight == 1) for s in plain.stages() for b in s)


def _one_step(net: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
    net.train()
    nn.functional.cross_entropy(net(x), y).backward()
    return {n: p.grad.clone() for n, p in net.named_parameters()}


def test_checkpointed_stages_give_the_same_gradients_and_batch_norm_statistics():
    torch.manual_seed(0)
    plain = ExplicitResNet(ResNetSpec(depth=18, stem="small", width=8, num_classes=5))
    saving = copy.deepcopy(plain)
    saving.spec = ResNetSpec(depth=18, stem="small", width=8, num_classes=5, checkpoint_stages=True)
    x, y = torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 3])
    grads, saved_grads = _one_step(plain, x, y), _one_step(saving, x, y)
    for name, grad in grads.items():
        torch.testing.assert_close(saved_grads[name], grad, rtol=1e-5, atol=1e-6, msg=name)
    for name, buffer in plain.state_dict().items():
        torch.testing.assert_close(saving.state_dict()[name], buffer, rtol=1e-5, atol=1e-6, msg=name)
    assert int(saving.layer1[0].bn1.num_batches_tracked) == 1


def test_channels_last_gives_the_same_outputs():
    torch.manual_seed(0)
    net = ExplicitResNet(ResNetSpec(depth=18, stem="small", width=8, num_classes=5)).eval()
    fast = copy.deepcopy(net).to(memory_format=torch.channels_last)
    fast.spec = ResNetSpec(depth=18, stem="small", width=8, num_classes=5, channels_last=True)
    x = torch.randn(2, 3, 16, 16)
    with torch.inference_mode():
        torch.testing.assert_close(fast(x), net(x), rtol=1e-4, atol=1e-5)
    assert fast.conv1.weight.is_contiguous(memory_format=torch.channels_last)
