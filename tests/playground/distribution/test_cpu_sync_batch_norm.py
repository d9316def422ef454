"""combine_spatial_bn on CPU ranks (playground/distribution/cpu_sync_batch_norm.py): batch-norm statistics over the global
batch of gloo ranks, with the gradients of one process that sees the whole batch."""
from __future__ import annotations

import json

import pytest
import torch

from tests.conftest import tiny_opts
from tests.playground.launch.test_spawn import final_weights, train, train_here

pytestmark = pytest.mark.slow


def cnn_opts(batch_per_device: int, ranks: int) -> dict:
    opts = tiny_opts(model_param={"combine_spatial_bn": True, "cnn_channels": [6, 8]},
                     epoch_iter={"num_train_sample_per_epoch": 96, "num_epochs": 2, "batch_per_device": batch_per_device,
                                 "num_train_iteration_per_test": 3, "num_test_iter": 1})
    opts["distributed"]["num_cpus"] = ranks
    opts["output"]["plots"] = []
    return opts


def test_two_cpu_ranks_of_b_with_combined_batch_norm_reach_the_weights_of_one_rank_of_2b(tmp_path, opts_file):
    proc2, dir2 = train(tmp_path, opts_file, "two", cnn_opts(8, 2))
    assert proc2.returncode == 0, proc2.stderr
    dir1 = train_here(tmp_path, "one", cnn_opts(16, 1))
    a, b = final_weights(dir2), final_weights(dir1)
    assert any("running_var" in key for key in a)
    assert sorted(a) == sorted(b)       # the saved network keeps nn.BatchNorm2d's names
    for key in a:    # 12 steps: conv weights, batch-norm scales, running statistics all match
        assert torch.allclose(a[key].double(), b[key].double(), atol=1e-5, rtol=1e-4), key
    one = json.loads((dir1 / "results.json").read_text())["metrics"]["train_loss"]
    two = json.loads((dir2 / "results.json").read_text())["metrics"]["train_loss"]
    assert [v for v in two if v is not None] == pytest.approx([v for v in one if v is not None], rel=1e-4)
