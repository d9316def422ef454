"""A checkpoint folder shared by runs (an output.checkpoint_folder outside the run folder, such as the README blob's
placeholder path) is never resumed from by a run with other opts in another run folder unless it says --resume
(playground/checkpoints/folder_owner.py); the runs that always resumed still do."""
from __future__ import annotations

import json
import os

from playground.api import run
from tests.conftest import run_cli, tiny_opts

PLACEHOLDER = "home/your_user_name/model_checkpoint/"     # the README's, under the test's folder


def shared_folder_opts(tmp_path, num_epochs: int = 1, **model_param) -> dict:
    opts = tiny_opts(epoch_iter={"num_epochs": num_epochs}, model_param=model_param)
    opts["output"].update(checkpoint_folder=str(tmp_path / PLACEHOLDER), plots=[])
    return opts


def folder_state(folder) -> dict[str, float]:
    return {name: os.lstat(folder / name).st_mtime_ns for name in sorted(os.listdir(folder))}


def train_log(run_dir) -> str:
    return (run_dir / "train.log").read_text()


def test_a_run_with_other_opts_exits_2_naming_both_runs_and_resumes_that_checkpoint_only_with_resume(tmp_path):
    first, second = tmp_path / "runs" / "first", tmp_path / "runs" / "second"
    run(shared_folder_opts(tmp_path), run_dir=str(first))
    folder = tmp_path / PLACEHOLDER
    before = folder_state(folder)
    other = shared_folder_opts(tmp_path, num_epochs=2, base_learning_rate=0.2)
    (tmp_path / "other.json").write_text(json.dumps({"opts": other}))
    command = ["--parameters-file", str(tmp_path / "other.json"), "--run-dir", str(second)]

    refused = run_cli(*command)
    assert refused.returncode == 2, refused.stderr
    assert "Traceback" not in refused.stderr
    assert (f"opts.output.checkpoint_folder: {folder.resolve()} holds another run's checkpoints: its last, "
            f"model_checkpoint_epoch1.pt, is the run in {first} (opts hash ") in refused.stderr
    assert f"this run, in {second} (opts hash " in refused.stderr
    assert "has other opts: epoch_iter.num_epochs (1 -> 2), model_param.base_learning_rate (0.05 -> 0.2)" \
        in refused.stderr
    assert "the placeholder path of Caffe2's README" in refused.stderr and "or add --resume" in refused.stderr
    assert not second.exists() and folder_state(folder) == before      # before any work: nothing written

    resumed = run_cli(*command, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed from" in train_log(second)
    assert "model_param.base_learning_rate (0.05 -> 0.2)" in train_log(second)   # the opts differ: logged
    assert (folder / "model_checkpoint_epoch2.pt").is_file()                   # it trained on from epoch 1

    again = run_cli("--parameters-file", str(first / "opts.json"), "--run-dir", str(first))
    assert again.returncode == 2, again.stderr          # `last` is the second run's now: the first refuses it
    assert f"is the run in {second} (opts hash " in again.stderr and f"this run, in {first} (" in again.stderr


def test_the_runs_that_resumed_a_shared_folder_before_still_do(tmp_path):
    first, longer, same = (tmp_path / "runs" / name for name in ("first", "longer", "same"))
    run(shared_folder_opts(tmp_path), run_dir=str(first))
    # the same run folder with a longer length continues its run
    run(shared_folder_opts(tmp_path, num_epochs=2), run_dir=str(first))
    assert "resumed from" in train_log(first)
    assert [r["epoch"] for r in map(json.loads, (first / "metrics.jsonl").read_text().splitlines())
            if r["kind"] == "epoch"] == [0, 1]
    # the same opts from another run folder (the same command run again) resume it
    run(shared_folder_opts(tmp_path, num_epochs=2), run_dir=str(same))
    assert "model_checkpoint_epoch2.pt (epoch 2, iteration 0" in train_log(same)
    # ckpt_restart_mode off never resumes: nothing to refuse
    off = shared_folder_opts(tmp_path, base_learning_rate=0.2)
    off["output"]["ckpt_restart_mode"] = "off"
    run(off, run_dir=str(tmp_path / "runs" / "off"))
    # a checkpoint written before info files named their run has no owner to compare: resumed as before
    last = (tmp_path / PLACEHOLDER / "last").resolve()
    info = json.loads(last.with_suffix(".json").read_text())
    last.with_suffix(".json").write_text(json.dumps({k: v for k, v in info.items()
                                                     if k not in ("run_dir", "opts_digest")}))
    run(shared_folder_opts(tmp_path, num_epochs=3, base_learning_rate=0.2), run_dir=str(tmp_path / "runs" / "old"))
    assert f"resumed from {last}" in train_log(tmp_path / "runs" / "old")


def test_resume_without_a_run_folder_of_these_opts_resumes_the_shared_folder_in_a_new_run_folder(tmp_path):
    run(shared_folder_opts(tmp_path), run_dir=str(tmp_path / "runs" / "first"))
    (tmp_path / "other.json").write_text(json.dumps({"opts": shared_folder_opts(tmp_path, base_learning_rate=0.2)}))
    resumed = run_cli("--parameters-file", "other.json", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "--resume: no run folder under" in resumed.stderr and "a new one resumes the checkpoint" in resumed.stderr
    [new] = [p for p in (tmp_path / "runs").iterdir() if p.name != "first"]
    assert "resumed from" in train_log(new)
    assert "placeholder path of Caffe2's README: every run that keeps it checkpoints into that one folder" \
        in resumed.stderr


def test_a_relative_checkpoint_folder_is_relative_to_the_working_directory_so_the_same_command_resumes(
        tmp_path, monkeypatch):
    """As in Caffe2's Playground (docs/checkpoints.md, The checkpoint folder): the same command run again from the
    same directory resumes from that folder, whatever run folder each run gets. (A sweep's trials differ: each
    gets its own, tests/playground/sweeps/inputs/test_checkpoint_folder.py.)"""
    monkeypatch.chdir(tmp_path)
    opts = tiny_opts(epoch_iter={"num_epochs": 1})
    opts["output"].update(checkpoint_folder="ckpt", plots=[])
    first, again = tmp_path / "runs" / "first", tmp_path / "runs" / "again"
    run(opts, run_dir=str(first))
    assert os.readlink(tmp_path / "ckpt" / "last") == "model_checkpoint_epoch1.pt"
    assert not (first / "ckpt").exists() and not (first / "checkpoints").exists()
    run(opts, run_dir=str(again))
    assert f"resumed from {tmp_path / 'ckpt' / 'model_checkpoint_epoch1.pt'}" in train_log(again)
    assert json.loads((again / "opts.json").read_text())["opts"]["output"]["checkpoint_folder"] == "ckpt"
