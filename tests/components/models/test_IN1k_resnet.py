"""IN1k_resnet and IN1k_resnet_no_test_model: the demo's model slots, in real runs."""
from __future__ import annotations

import torch

from playground.api import run
from tests.components.resnet_opts import resnet_opts


def test_the_original_readme_components_train_together(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", False)      # engine CUDNN turns it on
    opts = resnet_opts(input={"synthetic_shape": [3, 8, 8]},
                       model={"forward_pass_py": "caffe2_resnet50_default_forward"},
                       model_param={"memonger": True, "custom_bn_init": True, "bn_init_gamma": 1e-323,
                                    "weight_decay_bn": 1e-323, "engine": "CUDNN"},
                       epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 8, "batch_per_device": 4,
                                   "num_train_iteration_per_test": 1, "num_test_sample": 8},
                       output={"ckpt_save_interval": 0})       # no 200 MB checkpoint to write
    result = run(opts, run_dir=str(tmp_path / "run"))
    metrics = result["metrics"]
    assert result["test_model"].module is result["train_model"].module     # the test model shares the network
    assert all(v is not None for v in metrics["test_loss"]) and all(v is not None for v in metrics["train_loss"][:-1])


def test_without_a_test_model_there_are_no_test_batches_but_checkpoints_are_written(tmp_path):
    opts = resnet_opts(model={"model_name_py": "IN1k_resnet_no_test_model"}, epoch_iter={"num_epochs": 1})
    result = run(opts, run_dir=str(tmp_path / "run"))
    assert result["test_model"] is None
    assert all(v is None for v in result["metrics"]["test_accuracy_top1"])
    assert any(v is not None for v in result["metrics"]["train_accuracy_top1"])
    assert result["model"].endswith("model_checkpoint_epoch1.pt")
