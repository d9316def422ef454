"""Test helper: opts for the resnet demo components on small synthetic images, raw or resolved."""
from __future__ import annotations

from types import SimpleNamespace

from playground.options.loader import resolve_opts
from tests.conftest import tiny_opts


def resnet_opts(**sections) -> dict:
    """A tiny explicit-ResNet run: 1x8x8 synthetic images in 4 classes, ResNet-18 (small stem, width 8)."""
    opts = tiny_opts(
        input={"synthetic_shape": [1, 8, 8], "num_classes": 4, "synthetic_train_size": 512, "synthetic_test_size": 128},
        model={"model_name_py": "IN1k_resnet", "forward_pass_py": "explicit_resnet_forward", "optimizer_py": "",
               "parameter_update_py": "explicit_resnet_param_update"},
        model_param={"num_layer": 18, "stem": "small", "width": 8, "base_learning_rate": 0.1},
        epoch_iter={"num_train_sample_per_epoch": 256, "batch_per_device": 32, "num_epochs": 2,
                    "num_train_iteration_per_test": 4, "num_test_iter": 1, "num_test_sample": 0})
    for section, values in sections.items():
        opts.setdefault(section, {}).update(values)
    return opts


def resolved(opts: dict) -> dict:
    """The opts with every default filled in, as components see them in `self.opts`."""
    return resolve_opts([("opts", opts)], check_devices=False).opts


def trainer_stub(opts: dict, total_batch_size: int = 32) -> SimpleNamespace:
    """What a builder function needs of `self`, for calling one component directly."""
    return SimpleNamespace(opts=resolved(opts), total_batch_size=total_batch_size)
