"""CANDLE's checkpoint keys on a hand-written loop (playground/candle/checkpoint.py), in process, on real files."""
from __future__ import annotations

import json
import os

import pytest
import torch
from torch import nn

from playground.candle import CandleCheckpoint
from playground.checkpoints.files import CheckpointError, read_pointer


def params_for(tmp_path, **keys) -> dict:
    return {"epochs": 4, "ckpt_directory": str(tmp_path / "ckpts"), "ckpt_save_best_metric": "val_loss", **keys}


def train(params: dict, val_losses=(0.9, 0.5, 0.7, 0.8), crash_after: int | None = None):
    """A loop that draws its data from the global RNG, so only a restored RNG state resumes it exactly.
    With `crash_after` it stops after saving that 0-based epoch, as a killed process would."""
    torch.manual_seed(3)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ckpt = CandleCheckpoint(params, model, optimizer)
    start = ckpt.restart()
    for epoch in range(start, params["epochs"]):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ckpt.save(epoch, {"loss": loss.item(), "val_loss": val_losses[epoch]})
        if epoch == crash_after:
            return model, start, ckpt
    ckpt.report_final()
    return model, start, ckpt


def saved_epochs(folder) -> list[int]:
    return sorted(int(n[len("model_checkpoint_epoch"):-3]) for n in os.listdir(folder) if n.endswith(".pt"))


def assert_same_weights(a: nn.Module, b: nn.Module) -> None:
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name


def test_restart_auto_continues_an_interrupted_loop_bitwise(tmp_path):
    whole, _, _ = train(params_for(tmp_path / "a"))
    train(params_for(tmp_path / "b"), crash_after=1)
    resumed, start, _ = train(params_for(tmp_path / "b"))
    assert start == 2
    assert_same_weights(whole, resumed)
    assert "resumed from model_checkpoint_epoch2.pt" in (tmp_path / "b" / "ckpts" / "ckpt.log").read_text()


def test_restart_off_starts_afresh_and_required_fails_without_a_checkpoint(tmp_path):
    train(params_for(tmp_path), crash_after=1)
    _, start, _ = train(params_for(tmp_path, ckpt_restart_mode="off"))
    assert start == 0
    with pytest.raises(CheckpointError, match="'required'"):
        train(params_for(tmp_path / "empty", ckpt_restart_mode="required"))
    _, start, _ = train(params_for(tmp_path, ckpt_restart_mode="required"))
    assert start == 4                  # the finished run left its final checkpoint


def test_keep_limit_deletes_old_checkpoints_but_keeps_best_and_last(tmp_path):
    _, _, ckpt = train(params_for(tmp_path, ckpt_keep_limit=1))
    folder = tmp_path / "ckpts"
    assert saved_epochs(folder) == [2, 4]                      # epoch 2 has the best val_loss (0.5)
    assert read_pointer(str(folder), "best").endswith("model_checkpoint_epoch2.pt")
    assert read_pointer(str(folder), "last").endswith("model_checkpoint_epoch4.pt")
    assert ckpt.best_path == str(folder / "model_checkpoint_epoch2.pt") and ckpt.last_path.endswith("epoch4.pt")
    log = (folder / "ckpt.log").read_text()
    assert "deleted model_checkpoint_epoch1.pt" in log and "deleted model_checkpoint_epoch3.pt" in log


def test_keep_limit_deletions_in_ckpt_log_name_the_keys_as_a_candle_user_sets_them(tmp_path):
    train(params_for(tmp_path, ckpt_keep_limit=1))
    log = (tmp_path / "ckpts" / "ckpt.log").read_text()
    assert "deleted model_checkpoint_epoch1.pt (ckpt_keep_limit 1, ckpt_keep_mode linear)" in log
    assert "output." not in log                # CANDLE params are flat: there is no output section to set


def test_save_interval_skip_epochs_and_best_decide_what_is_written(tmp_path):
    train(params_for(tmp_path, epochs=5, ckpt_save_interval=2, ckpt_skip_epochs=1, ckpt_save_best=False),
          val_losses=(1, 1, 1, 1, 1))
    assert saved_epochs(tmp_path / "ckpts") == [2, 4, 5]       # every 2nd epoch after the first, and the last
    train(params_for(tmp_path / "best", ckpt_save_interval=0), val_losses=(0.9, 0.5, 0.7, 0.4))
    assert saved_epochs(tmp_path / "best" / "ckpts") == [1, 2, 4]   # interval 0: only improvements


def test_a_corrupt_last_checkpoint_is_reported_and_the_previous_one_used(tmp_path):
    train(params_for(tmp_path, ckpt_checksum=True), crash_after=2)
    folder = tmp_path / "ckpts"
    last = folder / "model_checkpoint_epoch3.pt"
    data = bytearray(last.read_bytes())
    data[len(data) // 2] ^= 0xFF                               # one flipped byte: only the checksum can tell
    last.write_bytes(bytes(data))
    _, start, _ = train(params_for(tmp_path, ckpt_checksum=True))
    assert start == 2
    assert "unusable model_checkpoint_epoch3.pt" in (folder / "ckpt.log").read_text()
    assert "fails its checksum" in (folder / "ckpt.log").read_text()


def test_info_files_hold_metadata_metrics_and_checksum(tmp_path):
    train(params_for(tmp_path, ckpt_metadata="job 7 on node a1", ckpt_checksum=True), crash_after=0)
    info = json.loads((tmp_path / "ckpts" / "model_checkpoint_epoch1.json").read_text())
    assert info["metadata"] == "job 7 on node a1" and info["metrics"]["val_loss"] == 0.9
    assert info["epoch"] == 1 and info["is_best"] and len(info["sha256"]) == 64


@pytest.mark.parametrize("key, value", [("ckpt_keep_mode", "expo"), ("ckpt_keep_limit", 0),
                                        ("ckpt_restart_mode", "sometimes")])
def test_a_script_run_alone_with_a_bad_checkpoint_parameter_is_told_which_before_anything_is_written(tmp_path, key,
                                                                                                      value):
    with pytest.raises(ValueError, match=f"CANDLE checkpoint parameter {key} = {value!r}: expected"):
        CandleCheckpoint(params_for(tmp_path, **{key: value}), torch.nn.Linear(2, 2))
    assert not (tmp_path / "ckpts").exists()
