"""caffe2_resnet50_default_param_update: the original's step schedule and weight decay, from base_learning_rate."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from torch import nn

from components.networks.explicit_resnet import ExplicitResNet, ResNetSpec
from components.param_updates.caffe2_resnet50_default_param_update import gen_param_update_builder_fun
from tests.components.resnet_opts import resnet_opts, trainer_stub


def test_step_x0_1_every_30_epochs_from_base_learning_rate_whatever_the_policy_says():
    net = ExplicitResNet(ResNetSpec(depth=18, stem="small", width=4, num_classes=3))
    stub = trainer_stub(resnet_opts(model_param={"base_learning_rate": 0.4, "lr_policy": "cosine"}))
    optimizer, schedule = gen_param_update_builder_fun(stub, SimpleNamespace(module=net), None, True)
    assert [schedule(e) for e in (0, 29.99, 30, 60, 95)] == pytest.approx([0.4, 0.4, 0.04, 0.004, 0.0004])
    weights, biases = optimizer.param_groups
    assert weights["weight_decay"] == 1e-4 and biases["weight_decay"] == 0.0
    bn_gammas = {id(m.weight) for m in net.modules() if isinstance(m, nn.BatchNorm2d)}
    assert bn_gammas <= {id(p) for p in weights["params"]}           # Caffe2 decayed the batch-norm scales too
    assert {id(p) for p in biases["params"]} == {id(p) for n, p in net.named_parameters() if n.endswith("bias")}
    assert all(g["momentum"] == 0.9 and g["nesterov"] for g in optimizer.param_groups)
