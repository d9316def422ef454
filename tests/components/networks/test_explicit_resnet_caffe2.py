"""The original's blob names for the explicit ResNet, and conversion of its blobs into our state_dict."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from components.networks.explicit_resnet import BLOCK_COUNTS, ExplicitResNet, ResNetSpec
from components.networks.explicit_resnet_caffe2 import (Caffe2BlobError, blobs_to_state_dict, caffe2_name,
                                                        infer_spec)
from tests.components.networks.caffe2_resnet_blobs import caffe2_forward, make_blobs


def test_each_tensor_has_the_original_blob_name():
    assert caffe2_name("conv1.weight") == "conv1_w" and caffe2_name("conv1.bias") == "conv1_b"
    assert caffe2_name("bn1.running_var") == "res_conv1_bn_riv"
    assert caffe2_name("layer1.0.conv1.weight") == "res2_0_branch2a_w"
    assert caffe2_name("layer3.5.bn3.weight") == "res4_5_branch2c_bn_s"
    assert caffe2_name("layer2.0.downsample.0.weight") == "res3_0_branch1_w"
    assert caffe2_name("layer2.0.downsample.1.running_mean") == "res3_0_branch1_bn_rm"
    assert caffe2_name("fc.weight") == "pred_w" and caffe2_name("fc.bias") == "pred_b"
    assert caffe2_name("layer1.0.bn1.num_batches_tracked") is None


@pytest.mark.parametrize("depth", sorted(BLOCK_COUNTS))
def test_blob_names_are_distinct_for_every_canonical_depth(depth):
    with torch.device("meta"):
        names = [caffe2_name(k) for k in ExplicitResNet(ResNetSpec(depth=depth, conv1_bias=True)).state_dict()]
    blobs = [n for n in names if n is not None]
    assert len(blobs) == len(set(blobs))


def test_the_architecture_is_read_from_the_blobs():
    basic = infer_spec(make_blobs(False, (2, 2, 2, 2), width=4, in_channels=1, num_classes=10, stem_kernel=3))
    assert basic == ResNetSpec(depth=18, num_classes=10, in_channels=1, stem="small", width=4, conv1_bias=True)
    original_200 = infer_spec(make_blobs(True, (3, 32, 36, 3), width=1, conv1_bias=False))
    assert (original_200.block_counts, original_200.depth, original_200.bottleneck) == ((3, 32, 36, 3), 224, True)
    assert infer_spec(make_blobs(True, (3, 4, 6, 3), width=2)).depth == 50


@pytest.mark.parametrize("bottleneck, counts, stem", [(False, (2, 2, 2, 2), 3), (True, (1, 2, 1, 1), 7)])
def test_converted_tensors_reproduce_the_original_network(bottleneck, counts, stem):
    blobs = make_blobs(bottleneck, counts, width=4, stem_kernel=stem)
    spec = infer_spec(blobs)
    x = torch.randn(2, 3, 32, 32)
    expected = caffe2_forward(blobs, x)
    for conv1_bias in (False, True):        # folded into the stem batch norm, or kept as a bias
        state, unused = blobs_to_state_dict(blobs, ResNetSpec(**{**spec.__dict__, "conv1_bias": conv1_bias}))
        net = ExplicitResNet(ResNetSpec(**{**spec.__dict__, "conv1_bias": conv1_bias})).eval()
        net.load_state_dict(state, strict=True)
        with torch.inference_mode():
            torch.testing.assert_close(net(x), expected, rtol=1e-4, atol=1e-5)
        assert unused == []


def test_blobs_of_another_network_are_refused_with_what_was_found():
    with pytest.raises(Caffe2BlobError, match="not a checkpoint of the explicit ResNet.*comp_0_conv_1_w"):
        infer_spec({"conv1_w": np.zeros((64, 3, 7, 7)), "comp_0_conv_1_w": np.zeros(1), "pred_w": np.zeros((2, 2))})


def test_wrong_shapes_are_listed():
    blobs = make_blobs(False, (2, 2, 2, 2))
    blobs["res3_1_branch2b_w"] = np.zeros((8, 8, 1, 1), np.float32)
    with pytest.raises(Caffe2BlobError, match=r"res3_1_branch2b_w has shape \(8, 8, 1, 1\), layer2.1.conv2.weight "
                                              r"needs \(8, 8, 3, 3\)"):
        blobs_to_state_dict(blobs, infer_spec(blobs))
