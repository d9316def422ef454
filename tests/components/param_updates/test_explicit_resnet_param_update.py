"""explicit_resnet_param_update: two weight-decay groups, Nesterov SGD, and the learning rate along training."""
from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from torch import nn

from components.networks.explicit_resnet import ExplicitResNet, ResNetSpec
from components.param_updates.explicit_resnet_param_update import gen_param_update_builder_fun
from playground.api import run
from tests.components.resnet_opts import resnet_opts, trainer_stub


def build(total_batch_size: int = 32, **model_param):
    net = ExplicitResNet(ResNetSpec(depth=18, stem="small", width=4, num_classes=3, conv1_bias=True))
    stub = trainer_stub(resnet_opts(model_param=model_param), total_batch_size)
    optimizer, schedule = gen_param_update_builder_fun(stub, SimpleNamespace(module=net), None, True)
    return net, optimizer, schedule


def test_weights_and_batch_norm_or_bias_parameters_get_their_own_decay():
    net, optimizer, _ = build(weight_decay=1e-4, weight_decay_bn=1e-5)
    weights, others = optimizer.param_groups
    ids = lambda params: {id(p) for p in params}
    expected_weights = {id(m.weight) for m in net.modules() if isinstance(m, (nn.Conv2d, nn.Linear))}
    expected_others = {id(p) for m in net.modules() if isinstance(m, nn.BatchNorm2d) for p in (m.weight, m.bias)}
    expected_others |= {id(net.conv1.bias), id(net.fc.bias)}
    assert ids(weights["params"]) == expected_weights and weights["weight_decay"] == 1e-4
    assert ids(others["params"]) == expected_others and others["weight_decay"] == 1e-5
    assert len(expected_weights) + len(expected_others) == len(list(net.parameters()))
    assert all(g["momentum"] == 0.9 and g["nesterov"] for g in optimizer.param_groups)


def test_the_schedule_follows_the_opts():
    _, _, step = build(base_learning_rate=0.2, lr_policy="step", lr_step_epochs=2, lr_gamma=0.5)
    assert [step(e) for e in (0, 1.99, 2, 4.5)] == pytest.approx([0.2, 0.2, 0.1, 0.05])
    _, _, cosine = build(total_batch_size=512, base_learning_rate=0.1, lr_policy="cosine", lr_scale_by_batch=True,
                         warmup_epochs=1.0)
    # num_epochs is 2: warm-up to 0.1 x 512/256 over the first epoch, then half a cosine to 0
    assert [cosine(e) for e in (0, 0.5, 1.0, 1.5, 2.0)] == pytest.approx([0, 0.1, 0.2, 0.1, 0])


def test_the_trainer_sets_the_rate_on_every_group_at_each_iteration(tmp_path, monkeypatch):
    (tmp_path / "record_lr.py").write_text(
        "SEEN = {}\n"
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        "    SEEN[(epoch, epoch_iter)] = [g['lr'] for g in self.train_model.optimizer.param_groups]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("record_lr", None)
    opts = resnet_opts(model={"additional_override_py": "record_lr"},
                       model_param={"base_learning_rate": 0.1, "lr_policy": "multistep", "lr_step_epochs": [1],
                                    "warmup_epochs": 0.5},
                       epoch_iter={"num_epochs": 2, "num_train_sample_per_epoch": 256})   # 8 iterations per epoch
    run(opts, run_dir=str(tmp_path / "run"))
    seen = sys.modules["record_lr"].SEEN
    expected = {(0, 0): 0.0, (0, 2): 0.05, (0, 4): 0.1, (0, 7): 0.1, (1, 0): 0.01, (1, 7): 0.01}
    for point, lr in expected.items():
        assert seen[point] == pytest.approx([lr, lr]), point
