"""explicit_resnet_forward: the opts that shape the network, their validation, and real training runs."""
from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from components.forward_passes.explicit_resnet_forward import gen_forward_pass_builder_fun
from components.networks.explicit_resnet import Bottleneck
from playground.api import run
from playground.options.layers import OptsError
from tests.components.resnet_opts import resnet_opts, resolved, trainer_stub
from tests.conftest import run_cli

GRAY_8X8 = [(torch.zeros(1, 8, 8), 0)]


def build(**model_param) -> nn.Module:
    stub = trainer_stub(resnet_opts(model_param=model_param))
    net, loss_fn = gen_forward_pass_builder_fun(stub, None, GRAY_8X8, True)
    assert isinstance(loss_fn, nn.CrossEntropyLoss) and loss_fn.reduction == "mean"   # reported unscaled
    return net


def test_the_opts_shape_the_network():
    net = build(num_layer=50, width=4, stem="imagenet", custom_bn_init=True, bn_init_gamma=0.0, bn_epsilon=1e-3)
    assert net.conv1.in_channels == 1 and net.conv1.kernel_size == (7, 7) and net.conv1.bias is None
    assert net.fc.out_features == 4 and isinstance(net.layer1[0], Bottleneck)
    assert all(torch.all(b.bn3.weight == 0) for s in net.stages() for b in s)
    assert all(m.eps == 1e-3 for m in net.modules() if isinstance(m, nn.BatchNorm2d))


def test_bn_momentum_is_converted_from_the_caffe2_convention():
    net = build(bn_momentum=0.99)
    norms = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    assert all(m.momentum == pytest.approx(0.01) for m in norms)
    x = torch.randn(4, 1, 8, 8) * 3 + 2
    net.train()(x)
    batch_mean = net.conv1(x).mean(dim=(0, 2, 3))
    torch.testing.assert_close(net.bn1.running_mean, 0.01 * batch_mean, rtol=1e-4, atol=1e-6)


def test_memonger_engine_and_channels_last(monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", False)
    net = build(memonger=True, engine="CUDNN", channels_last=True)
    assert net.spec.checkpoint_stages and torch.backends.cudnn.benchmark
    assert net.conv1.weight.is_contiguous(memory_format=torch.channels_last)
    assert not build(memonger=False).spec.checkpoint_stages


def test_samples_that_are_not_images_are_refused():
    with pytest.raises(ValueError, match=r"needs image samples shaped \(channels, height, width\).*\(64,\)"):
        gen_forward_pass_builder_fun(trainer_stub(resnet_opts()), None, [(torch.zeros(64), 0)], True)


def test_unknown_depths_are_an_opts_error_naming_the_supported_ones():
    with pytest.raises(OptsError) as err:
        resolved(resnet_opts(model_param={"num_layer": 264}))
    assert ("opts.model_param.num_layer: 264 is not a ResNet depth explicit_resnet_forward knows; use one of 18, 34, "
            "50, 101, 152, 200. The original Playground's 264 was the non-standard bottleneck layout "
            "[3, 64, 36, 3]") in str(err.value)
    assert resolved(resnet_opts(model_param={"num_layer": 264, "block_counts": [3, 64, 36, 3]}))
    with pytest.raises(OptsError, match=r"block_counts: expected 4 numbers"):
        resolved(resnet_opts(model_param={"block_counts": [1, 1, 1, 1, 1]}))
    with pytest.raises(OptsError, match=r"opts.model_param.stem: expected one of 'imagenet', 'small'"):
        resolved(resnet_opts(model_param={"stem": "tiny"}))


def test_a_short_run_learns_clearly_better_than_chance(tmp_path):
    opts = resnet_opts(model_param={"memonger": True, "custom_bn_init": True, "bn_init_gamma": 1e-323},
                       epoch_iter={"num_epochs": 3})          # 24 iterations of 32 samples, 4 classes
    metrics = run(opts, run_dir=str(tmp_path / "run"))["metrics"]
    assert metrics["test_accuracy_top1"][-1] >= 0.6          # chance is 0.25
    train_loss = [v for v in metrics["train_loss"] if v is not None]
    assert train_loss[-1] < train_loss[0]


def test_the_command_line_trains_an_explicit_resnet(tmp_path, opts_file):
    run_dir = tmp_path / "cli"
    proc = run_cli("--parameters-file", opts_file(resnet_opts()), "--run-dir", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["metrics"]["test_accuracy_top1"][-1] > 0.4
    assert (run_dir / "checkpoints" / "model_checkpoint_epoch2.pt").is_file()
