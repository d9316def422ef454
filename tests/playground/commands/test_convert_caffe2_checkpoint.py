"""`playground convert-caffe2-checkpoint`: original .pkl checkpoints into weights our explicit ResNet loads."""
from __future__ import annotations

import logging
import pickle
from types import SimpleNamespace

import numpy as np
import torch

from components.forward_passes.explicit_resnet_forward import gen_forward_pass_builder_fun
from playground.checkpoints.pretrained import load_pretrained
from tests.components.networks.caffe2_resnet_blobs import caffe2_forward, make_blobs
from tests.components.resnet_opts import resnet_opts, trainer_stub
from playground.cli import main


def convert(capsys, *args: str) -> SimpleNamespace:
    """Run the command in this process (the same parser and code as `playground convert-caffe2-checkpoint`)."""
    code = main(["convert-caffe2-checkpoint", *args])
    out, err = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def write_original_checkpoint(path, blobs: dict[str, np.ndarray]) -> None:
    """As the original saved it: {"blobs": {scoped or unscoped names, epoch, lr, best_metric}}, pickle protocol 2."""
    scoped = {f"gpu_0/{name}": value for name, value in blobs.items()}
    scoped.update({"gpu_0/res2_0_branch2a_w_momentum": np.zeros(1, np.float32), "epoch": 12, "best_metric": 0.5,
                   "lr": np.array(0.05, np.float32)})
    path.write_bytes(pickle.dumps({"blobs": scoped}, protocol=2))


def test_the_converted_checkpoint_loads_as_pretrained_model_and_reproduces_the_original(tmp_path, capsys):
    blobs = make_blobs(False, (2, 2, 2, 2), width=4, in_channels=1, num_classes=4, stem_kernel=3)
    write_original_checkpoint(tmp_path / "original.pkl", blobs)
    proc = convert(capsys, str(tmp_path / "original.pkl"), str(tmp_path / "weights.pt"))
    assert proc.returncode == 0, proc.stderr
    assert "device scopes stripped: gpu_0" in proc.stdout and "epoch 12" in proc.stdout
    assert 'model_param.num_layer 18, model_param.stem "small", model_param.width 4' in proc.stdout
    assert "conv1_b was folded into bn1.running_mean" in proc.stdout

    opts = resnet_opts(model_param={"num_layer": 18, "stem": "small", "width": 4})
    net, _ = gen_forward_pass_builder_fun(trainer_stub(opts), None, [(torch.zeros(1, 8, 8), 0)], True)
    load_pretrained(net, str(tmp_path / "weights.pt"), logging.getLogger("test"))
    x = torch.randn(3, 1, 8, 8)
    with torch.inference_mode():
        torch.testing.assert_close(net.eval()(x), caffe2_forward(blobs, x), rtol=1e-4, atol=1e-5)


def test_opts_describing_another_network_are_refused_and_nothing_is_written(tmp_path, capsys, opts_file):
    write_original_checkpoint(tmp_path / "original.pkl", make_blobs(False, (2, 2, 2, 2), stem_kernel=3))
    experiment = opts_file(resnet_opts(model_param={"num_layer": 50, "stem": "small", "width": 4}))
    proc = convert(capsys, str(tmp_path / "original.pkl"), str(tmp_path / "weights.pt"),
                   "--parameters-file", experiment)
    assert proc.returncode == 2
    assert "the checkpoint does not match the opts" in proc.stderr and "ResNet-18 (basic blocks" in proc.stderr
    assert not (tmp_path / "weights.pt").exists()


def test_a_forward_pass_that_does_not_know_caffe2_names_is_refused(tmp_path, capsys):
    write_original_checkpoint(tmp_path / "original.pkl", make_blobs(False, (2, 2, 2, 2)))
    proc = convert(capsys, str(tmp_path / "original.pkl"), str(tmp_path / "w.pt"),
                   "--forward-pass", "small_cnn_forward")
    assert proc.returncode == 2
    assert "small_cnn_forward" in proc.stderr and "defines no caffe2_blobs_to_state_dict" in proc.stderr
    unsafe = tmp_path / "unsafe.pkl"
    unsafe.write_bytes(b"\x80\x02cos\nsystem\n(X\x04\x00\x00\x00trueR.")
    proc = convert(capsys, str(unsafe), str(tmp_path / "w.pt"))
    assert proc.returncode == 2 and "refused: the file wants to create os.system" in proc.stderr
    assert proc.stdout == ""


def test_the_converted_file_keeps_the_originals_epoch_lr_and_best_metric(tmp_path, capsys):
    blobs = make_blobs(False, (2, 2, 2, 2), width=4, in_channels=1, num_classes=4, stem_kernel=3)
    write_original_checkpoint(tmp_path / "original.pkl", blobs)
    assert convert(capsys, str(tmp_path / "original.pkl"), str(tmp_path / "weights.pt")).returncode == 0
    saved = torch.load(tmp_path / "weights.pt", weights_only=True)
    assert (saved["epoch"], saved["best_metric"]) == (12, 0.5)
    assert abs(saved["lr"] - 0.05) < 1e-7 and isinstance(saved["lr"], float)
    assert set(saved["model"]) >= {"conv1.weight", "bn1.running_mean"}


def test_epoch_lr_and_best_metric_beside_the_blobs_are_kept(tmp_path, capsys):
    # the original's shape: {"blobs": {...}, "epoch": 7, "lr": ..., "best_metric": ...}, numpy scalars, protocol 2
    blobs = make_blobs(False, (2, 2, 2, 2), width=4, in_channels=1, num_classes=4, stem_kernel=3)
    original = {"blobs": {f"gpu_0/{name}": value for name, value in blobs.items()},
                "epoch": np.int64(7), "lr": np.float32(0.025), "best_metric": np.float64(0.75)}
    (tmp_path / "original.pkl").write_bytes(pickle.dumps(original, protocol=2))
    proc = convert(capsys, str(tmp_path / "original.pkl"), str(tmp_path / "weights.pt"))
    assert proc.returncode == 0, proc.stderr
    assert "kept from the checkpoint: best_metric 0.75, epoch 7, lr 0.025" in proc.stdout
    saved = torch.load(tmp_path / "weights.pt", weights_only=True)
    assert (saved["epoch"], saved["best_metric"]) == (7, 0.75) and isinstance(saved["epoch"], int)
    assert abs(saved["lr"] - 0.025) < 1e-7
    assert set(saved["model"]) >= {"conv1.weight", "bn1.running_mean"}
