"""CANDLE's checkpoint policy keys, one by one (playground/checkpoints/policy.py, keep.py,
checkpointer.py): which checkpoints a run writes, keeps, points to and resumes from."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import torch

from playground.api import run
from playground.checkpoints.files import CheckpointError
from tests.conftest import tiny_opts


def quick_opts(num_epochs: int = 3, **output) -> dict:
    """A tiny MLP run of `num_epochs` epochs of 4 iterations, no plots; `output` sets policy keys."""
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]},
                     epoch_iter={"num_epochs": num_epochs})
    opts["output"].update({"plots": [], "ckpt_save_best": False, **output})
    return opts


def saved(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pt"))


def pointer(folder, name: str) -> str:
    return os.readlink(os.path.join(folder, name))


def info(folder, name: str) -> dict:
    return json.loads((folder / name.replace(".pt", ".json")).read_text())


def epoch_records(run_dir) -> list[dict]:
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == "epoch"]


# ---------------------------------------------------------------- when to save
def test_save_interval_saves_every_nth_epoch_and_the_final_one(tmp_path):
    run(quick_opts(5, ckpt_save_interval=2), run_dir=str(tmp_path))
    assert saved(tmp_path / "checkpoints") == ["model_checkpoint_epoch2.pt", "model_checkpoint_epoch4.pt",
                                               "model_checkpoint_epoch5.pt"]
    assert pointer(tmp_path / "checkpoints", "last") == "model_checkpoint_epoch5.pt"


def test_save_interval_zero_saves_nothing(tmp_path):
    result = run(quick_opts(2, ckpt_save_interval=0), run_dir=str(tmp_path))
    assert not (tmp_path / "checkpoints").exists() or saved(tmp_path / "checkpoints") == []
    assert result["model"] is None


def test_skip_epochs_writes_nothing_and_tracks_no_best_during_the_first_epochs(tmp_path):
    opts = quick_opts(4, ckpt_skip_epochs=2, ckpt_save_interval=0, ckpt_save_best=True,
                      ckpt_save_best_metric="test_loss", ckpt_save_best_mode="max")
    run(opts, run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    # Best by the highest test loss: only epochs 3 and 4 compete, so epoch 3 is saved as the first best.
    assert "model_checkpoint_epoch3.pt" in saved(folder)
    assert not {"model_checkpoint_epoch1.pt", "model_checkpoint_epoch2.pt"} & set(saved(folder))
    losses = {r["epoch"] + 1: r["test_loss"] for r in epoch_records(tmp_path)}
    best_epoch = 3 if losses[3] >= losses[4] else 4
    assert pointer(folder, "best") == f"model_checkpoint_epoch{best_epoch}.pt"


def test_every_n_iters_saves_inside_epochs_at_global_multiples(tmp_path):
    run(quick_opts(2, ckpt_every_n_iters=3, ckpt_skip_epochs=0), run_dir=str(tmp_path))
    # 4 iterations per epoch: global iterations 3 and 6 fall inside epochs 0 and 1.
    assert saved(tmp_path / "checkpoints") == ["model_checkpoint_epoch0_iter3.pt", "model_checkpoint_epoch1.pt",
                                               "model_checkpoint_epoch1_iter2.pt", "model_checkpoint_epoch2.pt"]
    state = torch.load(tmp_path / "checkpoints" / "model_checkpoint_epoch1_iter2.pt", weights_only=True)
    assert (state["epoch"], state["epoch_iter"], state["global_iter"]) == (1, 2, 6)


def test_every_n_iters_respects_skip_epochs(tmp_path):
    run(quick_opts(2, ckpt_every_n_iters=1, ckpt_skip_epochs=1, ckpt_save_interval=0), run_dir=str(tmp_path))
    assert saved(tmp_path / "checkpoints") == [f"model_checkpoint_epoch1_iter{k}.pt" for k in (1, 2, 3)]


@pytest.mark.parametrize("metric, mode, pick", [("test_accuracy_top1", "auto", max), ("test_loss", "auto", min),
                                                ("test_loss", "max", max)])
def test_save_best_points_best_at_the_best_epoch_end_by_metric_and_direction(tmp_path, metric, mode, pick):
    opts = quick_opts(4, ckpt_save_interval=0, ckpt_save_best=True, ckpt_save_best_metric=metric,
                      ckpt_save_best_mode=mode)
    run(opts, run_dir=str(tmp_path))
    records = epoch_records(tmp_path)
    best_value = pick(r[metric] for r in records)
    best_epoch = next(r["epoch"] + 1 for r in records if r[metric] == best_value)   # ties: the first one
    folder = tmp_path / "checkpoints"
    assert pointer(folder, "best") == f"model_checkpoint_epoch{best_epoch}.pt"
    described = info(folder, pointer(folder, "best"))
    assert described["is_best"] and described["best_metric"] == metric and described["best_value"] == best_value
    # every checkpoint written was an improvement, in the metric's direction
    improvements = [info(folder, name)["best_value"] for name in saved(folder)]
    assert improvements == sorted(improvements, reverse=pick is min)


# ---------------------------------------------------------------- what the files say
def test_each_checkpoint_has_an_info_file_and_a_log_line(tmp_path):
    run(quick_opts(2, ckpt_metadata="job 4242 on node7", ckpt_save_best=True), run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    described = info(folder, "model_checkpoint_epoch2.pt")
    assert described["epoch"] == 2 and described["epoch_iter"] == 0 and described["global_iter"] == 8
    assert described["metadata"] == "job 4242 on node7"
    assert set(described["metrics"]) == {"train_loss", "test_loss", "train_accuracy_top1", "test_accuracy_top1"}
    assert described["metrics"]["test_loss"] == epoch_records(tmp_path)[-1]["test_loss"]
    assert len(described["opts_hash"]) == 16 and described["timestamp"] > 0 and described["world_size"] == 1
    assert described["size"] == os.path.getsize(folder / "model_checkpoint_epoch2.pt")
    log = (folder / "ckpt.log").read_text().splitlines()
    assert [line.split()[2:4] for line in log] == [["saved", "model_checkpoint_epoch1.pt"],
                                                   ["saved", "model_checkpoint_epoch2.pt"]]


def test_checksum_is_stored_when_on_and_absent_when_off(tmp_path):
    import hashlib
    run(quick_opts(1, ckpt_checksum=True), run_dir=str(tmp_path / "on"))
    folder = tmp_path / "on" / "checkpoints"
    data = (folder / "model_checkpoint_epoch1.pt").read_bytes()
    assert info(folder, "model_checkpoint_epoch1.pt")["sha256"] == hashlib.sha256(data).hexdigest()
    run(quick_opts(1, ckpt_checksum=False), run_dir=str(tmp_path / "off"))
    assert info(tmp_path / "off" / "checkpoints", "model_checkpoint_epoch1.pt")["sha256"] is None


# ---------------------------------------------------------------- restart modes
def test_restart_mode_off_starts_afresh_and_overwrites_nothing(tmp_path):
    run(quick_opts(1), run_dir=str(tmp_path))
    first = (tmp_path / "checkpoints" / "model_checkpoint_epoch1.pt").read_bytes()
    result = run(quick_opts(1, ckpt_restart_mode="off"), run_dir=str(tmp_path))
    assert result["metrics"]["epochs"] == [0.5, 1.0, 1.0]         # trained from scratch, not resumed
    assert (tmp_path / "checkpoints" / "model_checkpoint_epoch1.pt").read_bytes() == first
    fresh = [n for n in saved(tmp_path / "checkpoints") if n != "model_checkpoint_epoch1.pt"]
    assert len(fresh) == 1 and fresh[0].startswith("model_checkpoint_epoch1.") and result["model"].endswith(fresh[0])


def test_restart_mode_required_without_a_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match=r"ckpt_restart_mode is 'required' but .*checkpoints holds no usable"):
        run(quick_opts(1, ckpt_restart_mode="required"), run_dir=str(tmp_path))


def test_restart_mode_required_resumes_when_there_is_a_checkpoint(tmp_path):
    run(quick_opts(1), run_dir=str(tmp_path))
    result = run(quick_opts(2, ckpt_restart_mode="required"), run_dir=str(tmp_path))
    assert result["metrics"]["epochs"] == [0.5, 1.0, 1.0, 1.5, 2.0, 2.0]
    assert "resumed from model_checkpoint_epoch1.pt" in (tmp_path / "checkpoints" / "ckpt.log").read_text()


# ---------------------------------------------------------------- keep limit
def test_keep_limit_keeps_the_newest_and_never_the_best_away(tmp_path):
    # Best by the *highest* test loss: an early epoch stays best while later ones are written.
    opts = quick_opts(4, ckpt_keep_limit=1, ckpt_save_best=True, ckpt_save_best_metric="test_loss",
                      ckpt_save_best_mode="max")
    run(opts, run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    best, last = pointer(folder, "best"), pointer(folder, "last")
    assert last == "model_checkpoint_epoch4.pt" and best != last
    assert saved(folder) == sorted([best, last])
    # the deletion names the keys as the opts hold them
    assert "(output.ckpt_keep_limit 1, output.ckpt_keep_mode linear)" in (folder / "ckpt.log").read_text()


def test_keep_limit_never_deletes_the_checkpoint_the_run_resumed_from(tmp_path):
    run(quick_opts(2), run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    subprocess.run(["ln", "-sfn", "model_checkpoint_epoch1.pt", "last"], cwd=folder, check=True)
    run(quick_opts(4, ckpt_keep_limit=1), run_dir=str(tmp_path))
    assert saved(folder) == ["model_checkpoint_epoch1.pt", "model_checkpoint_epoch4.pt"]


def test_keep_limit_never_deletes_files_of_other_runs(tmp_path):
    run(quick_opts(1), run_dir=str(tmp_path / "other"))
    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    for name in ("model_checkpoint_epoch1.pt", "model_checkpoint_epoch1.json"):      # another run's checkpoint
        shutil.copy(tmp_path / "other" / "checkpoints" / name, folder / name)
    (folder / "model_checkpoint_epoch2.pt").write_bytes(b"a file without an info file")
    (folder / "notes.txt").write_text("mine")
    run(quick_opts(3, ckpt_keep_limit=1), run_dir=str(tmp_path / "run"))
    names = set(os.listdir(folder))
    assert {"model_checkpoint_epoch1.pt", "model_checkpoint_epoch1.json", "model_checkpoint_epoch2.pt",
            "notes.txt"} <= names
    assert (folder / "model_checkpoint_epoch2.pt").read_bytes() == b"a file without an info file"
    # epochs 1 and 2 went to names with this run's id (deleted later by the limit), epoch 3 to its own name
    assert saved(folder) == [f"model_checkpoint_epoch{n}.pt" for n in (1, 2, 3)]
    assert pointer(folder, "last") == "model_checkpoint_epoch3.pt"
    assert (folder / "ckpt.log").read_text().count("deleted model_checkpoint_epoch") == 2


def test_exponential_keep_mode_keeps_checkpoints_at_growing_distances_and_never_the_protected_ones(tmp_path):
    # Best by the highest test loss, so an early epoch stays best; epochs 9, 8, 6 and 4 are 0, 1, 3 and 5 back.
    opts = quick_opts(9, ckpt_keep_mode="exponential", ckpt_save_best=True, ckpt_save_best_metric="test_loss",
                      ckpt_save_best_mode="max")
    run(opts, run_dir=str(tmp_path))
    folder = tmp_path / "checkpoints"
    best = pointer(folder, "best")
    assert saved(folder) == sorted({best, *(f"model_checkpoint_epoch{e}.pt" for e in (4, 6, 8, 9))})
    assert "ckpt_keep_mode exponential" in (folder / "ckpt.log").read_text()
