"""Checkpoint policy, integrity and exact resume (playground/checkpoint.py, checkpoint_files.py, train_state.py)."""
from __future__ import annotations

import json

import pytest
import torch

from playground.api import run
from playground.checkpoint_files import CheckpointError
from playground.opts_layers import OptsError
from tests.conftest import tiny_opts


def weights(path: str) -> dict:
    return torch.load(path, weights_only=True)["model"]


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_a_resumed_run_matches_an_uninterrupted_one_and_keeps_lists_aligned(tmp_path):
    whole = run(tiny_opts(epoch_iter={"num_epochs": 3}), run_dir=str(tmp_path / "whole"))
    run(tiny_opts(epoch_iter={"num_epochs": 2}), run_dir=str(tmp_path / "parts"))
    resumed = run(tiny_opts(epoch_iter={"num_epochs": 3}), run_dir=str(tmp_path / "parts"))
    assert_same_weights(weights(whole["model"]), weights(resumed["model"]))
    for name in ("epochs", "train_loss", "test_loss", "train_accuracy_top1", "test_accuracy_top1"):
        assert resumed["metrics"][name] == whole["metrics"][name], name
    lengths = {len(v) for v in resumed["metrics"].values()}
    assert lengths == {len(whole["metrics"]["epochs"])}
    lines = (tmp_path / "parts" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(len(lines)))


def test_a_checkpoint_folder_that_cannot_exist_is_refused_before_training(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the checkpoint folder should be")
    opts = tiny_opts()
    opts["output"]["checkpoint_folder"] = str(blocker / "checkpoints")
    with pytest.raises(OptsError, match=r"opts.output.checkpoint_folder: cannot create .* is a file, not a folder"):
        run(opts, run_dir=str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_a_save_that_fails_during_the_run_raises_a_clear_error(tmp_path, monkeypatch):
    # After the first epoch's checkpoint, a file takes the checkpoint folder's place: the next save must fail
    # loudly (never swallowed), naming the file.
    module = tmp_path / "block_folder.py"
    module.write_text(
        "import os, shutil\n"
        "def fun_per_epoch_b4RunNet(self, epoch):\n"
        "    if epoch == 1:\n"
        "        self.checkpointer.finish()  # let the first checkpoint's background write complete\n"
        "        shutil.rmtree(self.checkpointer.folder)\n"
        "        open(self.checkpointer.folder, 'w').write('in the way')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = tiny_opts(model={"additional_override_py": "block_folder"})
    with pytest.raises(CheckpointError, match=r"could not write checkpoint .*checkpoints/model_checkpoint_epoch2.pt"):
        run(opts, run_dir=str(tmp_path / "run"))
