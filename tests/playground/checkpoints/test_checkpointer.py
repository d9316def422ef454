"""Resuming and integrity (playground/checkpoints/checkpointer.py, files.py; the state is the trainer's): resume matches an
uninterrupted run, rollback by re-pointing `last`, falling back from a broken checkpoint, failed writes."""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess

import pytest
import torch

from playground.api import run
from playground.checkpoints.files import CheckpointError
from playground.options.layers import OptsError
from tests.conftest import tiny_opts
from tests.playground.checkpoints.interrupted_runs import (UNHINDERED, RunFolder, assert_same_records,
                                                           assert_same_training_state, checkpoint_opts)


def weights(path: str) -> dict:
    return torch.load(path, weights_only=True)["model"]


def assert_same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def quick_opts(num_epochs: int = 3, **output) -> dict:
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]},
                     epoch_iter={"num_epochs": num_epochs})
    opts["output"].update({"plots": [], **output})
    return opts


def without_timings(run_dir) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in ("samples_per_sec", "secs_per_train", "wall_time")}
            for line in lines]


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


def test_rolling_back_by_repointing_last_redoes_the_later_epochs_identically(tmp_path):
    first = run(quick_opts(3), run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    final_weights, records = weights(first["model"]), without_timings(tmp_path)
    subprocess.run(["ln", "-sfn", "model_checkpoint_epoch1.pt", "last"], cwd=folder, check=True)
    again = run(quick_opts(3), run_dir=str(tmp_path))
    assert again["model"] == str(folder / "model_checkpoint_epoch3.pt")      # overwritten: same run
    assert_same_weights(weights(again["model"]), final_weights)
    assert without_timings(tmp_path) == records
    log = (folder / "ckpt.log").read_text()
    assert "resumed from model_checkpoint_epoch1.pt" in log


def test_checkpoints_in_subfolders_named_by_a_path_component_are_resumed_from(tmp_path, monkeypatch):
    (tmp_path / "dated_paths.py").write_text(
        "import os\n"
        "def gen_checkpoint_path(self, is_checkpoint, epoch):\n"
        "    return os.path.join(self.checkpointer.folder, 'day1', f'epoch{epoch}.pt')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = quick_opts(2, ckpt_save_best=True)
    opts["output"]["gen_checkpoint_path_py"] = "dated_paths"
    run(opts, run_dir=str(tmp_path / "run"))
    folder = tmp_path / "run" / "checkpoints"
    assert os.readlink(folder / "last") == os.path.join("day1", "epoch2.pt")
    opts["epoch_iter"]["num_epochs"] = 3
    result = run(opts, run_dir=str(tmp_path / "run"))
    assert result["metrics"]["epochs"][-1] == 3.0 and len(result["metrics"]["epochs"]) == 9
    assert "resumed from epoch2.pt" in (folder / "ckpt.log").read_text()


@pytest.mark.parametrize("damage, checksum, reason", [("flip a byte", True, "fails its checksum"),
                                                      ("truncate", False, "could not read checkpoint")])
def test_a_broken_newest_checkpoint_is_reported_and_the_previous_one_used(tmp_path, damage, checksum, reason):
    first = run(quick_opts(3, ckpt_checksum=checksum), run_dir=str(tmp_path))
    final_weights = weights(first["model"])
    newest = tmp_path / "checkpoints" / "model_checkpoint_epoch3.pt"
    data = bytearray(newest.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0xFF
    newest.write_bytes(bytes(data))
    again = run(quick_opts(3, ckpt_checksum=checksum), run_dir=str(tmp_path))
    log = (tmp_path / "checkpoints" / "ckpt.log").read_text()
    assert f"unusable model_checkpoint_epoch3.pt: " in log and reason in log
    assert "resumed from model_checkpoint_epoch2.pt" in log
    assert_same_weights(weights(again["model"]), final_weights)     # epoch 3 was trained again


def test_required_with_every_checkpoint_broken_is_a_clear_error(tmp_path):
    run(quick_opts(2), run_dir=str(tmp_path))
    for name in ("model_checkpoint_epoch1.pt", "model_checkpoint_epoch2.pt"):
        (tmp_path / "checkpoints" / name).write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="holds no usable checkpoint"):
        run(quick_opts(2, ckpt_restart_mode="required"), run_dir=str(tmp_path))
    log = (tmp_path / "checkpoints" / "ckpt.log").read_text()
    assert log.count("unusable") == 2


def test_a_checkpoint_folder_that_cannot_exist_is_refused_before_training(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the checkpoint folder should be")
    opts = tiny_opts()
    opts["output"]["checkpoint_folder"] = str(blocker / "checkpoints")
    with pytest.raises(OptsError, match=r"opts.output.checkpoint_folder: cannot create .* is a file, not a folder; "
                                        r"name a folder you can write, or leave it empty for <run-dir>/checkpoints"):
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


def folder_contents(folder) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in os.listdir(folder)
            if not os.path.islink(folder / name) and name != "ckpt.log"}


@pytest.mark.slow
def test_a_full_disk_fails_the_run_clearly_and_leaves_every_earlier_checkpoint_intact(tmp_path, uninterrupted):
    reference = uninterrupted(1).run
    run_folder = RunFolder(tmp_path, "full", checkpoint_opts())
    shutil.copytree(reference.dir, run_folder.dir)          # a finished run of 3 epochs, rolled back to epoch 1
    folder = run_folder.dir / "checkpoints"
    subprocess.run(["ln", "-sfn", "model_checkpoint_epoch1.pt", "last"], cwd=folder, check=True)
    before = folder_contents(folder)

    def limit_file_size() -> None:   # every file this process writes may grow to 40 kB: a checkpoint cannot
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    code, output = run_folder.run(preexec_fn=limit_file_size)
    assert code == 1, output
    assert "could not write checkpoint" in output and "File too large" in output, output
    assert "Earlier checkpoints are intact" in output
    assert folder_contents(folder) == before and os.readlink(folder / "last") == "model_checkpoint_epoch1.pt"
    assert "FAILED model_checkpoint_epoch2.pt" in (folder / "ckpt.log").read_text()

    code, output = run_folder.run(env=UNHINDERED)
    assert code == 0, output
    assert_same_training_state(run_folder.checkpoint(), reference.checkpoint())
    assert_same_records(run_folder, reference)


def test_restart_mode_off_in_a_finished_folder_writes_only_its_own_points_and_keeps_the_earlier_ones(tmp_path):
    run(quick_opts(2), run_dir=str(tmp_path))
    earlier_lines = (tmp_path / "metrics.jsonl").read_text()
    earlier_results = (tmp_path / "results.json").read_text()
    run(quick_opts(1, ckpt_restart_mode="off"), run_dir=str(tmp_path))
    now = without_timings(tmp_path)
    assert [r["index"] for r in now] == list(range(len(now))) and now[-1]["epoch"] == 0
    assert json.loads((tmp_path / "results.json").read_text())["records"] == len(now)
    [aside] = (tmp_path / "earlier").iterdir()          # the earlier run's files, intact, under a clear name
    assert (aside / "metrics.jsonl").read_text() == earlier_lines
    assert (aside / "results.json").read_text() == earlier_results
