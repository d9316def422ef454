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


def test_batch_norm_keys_of_the_readme_blob_are_honoured():
    opts = resnet_opts(input={"num_classes": 3}, model={"forward_pass_py": "caffe2_resnet50_default_forward"},
                       model_param={"bn_epsilon": 1e-3, "bn_momentum": 0.95, "custom_bn_init": True,
                                    "bn_init_gamma": 0.25})
    net, _ = gen_forward_pass_builder_fun(trainer_stub(opts), None, [(torch.zeros(3, 16, 16), 0)], True)
    norms = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    assert norms and all(m.eps == 1e-3 and abs(m.momentum - 0.05) < 1e-12 for m in norms)
    assert all(torch.all(block.bn3.weight == 0.25) for block in net.modules()
               if isinstance(block, torchvision.models.resnet.Bottleneck))
    assert torch.all(net.bn1.weight == 1.0)


def test_memonger_recomputes_the_stages_with_the_same_loss_gradients_and_statistics():
    def built(memonger: bool) -> tuple[nn.Module, nn.Module]:
        torch.manual_seed(0)
        opts = resnet_opts(input={"num_classes": 4}, model={"forward_pass_py": "caffe2_resnet50_default_forward"},
                           model_param={"memonger": memonger})
        return gen_forward_pass_builder_fun(trainer_stub(opts), None, [(torch.zeros(3, 16, 16), 0)], True)

    (plain, loss_fn), (saving, _) = built(False), built(True)
    assert plain.state_dict().keys() == saving.state_dict().keys()
    assert all(type(getattr(saving, s)).__name__ == "CheckpointedSequential" for s in ("layer1", "layer4"))
    x, y = torch.randn(2, 3, 32, 32), torch.tensor([1, 3])
    losses = []
    for net in (plain, saving):
        net.train()
        loss = loss_fn(net(x), y)
        loss.backward()
        losses.append(loss.detach())
    torch.testing.assert_close(losses[1], losses[0])
    grads = dict(saving.named_parameters())
    for name, p in plain.named_parameters():
        torch.testing.assert_close(grads[name].grad, p.grad, rtol=1e-5, atol=1e-6, msg=name)
    for name, buffer in plain.state_dict().items():
        torch.testing.assert_close(saving.state_dict()[name], buffer, rtol=1e-5, atol=1e-6, msg=name)
