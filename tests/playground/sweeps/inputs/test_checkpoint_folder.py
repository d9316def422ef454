"""Each trial of a sweep keeps its checkpoints in a folder of its own (playground/sweeps/inputs/checkpoint_folder.py):
a base whose output.checkpoint_folder every trial would share (absolute, such as the Caffe2 README's placeholder,
or leading out of the run folder) is refused before any trial starts, exit 2, one line; a relative one is
relative to each trial's run folder, where `sweep continue` finds it too."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from playground.cli import main
from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.prepare import prepare_sweep
from playground.sweeps.inputs.spec import parse_spec, upf_spec

README_PLACEHOLDER = "home/your_user_name/model_checkpoint/"   # the README's, under the test's folder
GRID = {"model_param.base_learning_rate": {"type": "categorical", "vals": [0.1, 0.05]}, "epoch_iter.num_epochs": 1}


def _set_folder(base_file: Path, folder: str) -> None:
    blob = json.loads(base_file.read_text())
    blob["opts"]["output"]["checkpoint_folder"] = folder
    base_file.write_text(json.dumps(blob))


@pytest.mark.parametrize("folder, what", [(README_PLACEHOLDER, "an absolute folder"),
                                          ("../shared_checkpoints", "a folder outside each trial's run folder")])
def test_a_base_checkpoint_folder_every_trial_would_share_is_refused_before_any_trial_starts(
        folder, what, write_spec, base_file, tmp_path, capsys):
    folder = str(tmp_path / folder) if folder == README_PLACEHOLDER else folder
    _set_folder(base_file, folder)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(write_spec({"name": "grid"}, GRID)), "--sweep-dir", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert err == (f"playground sweep: error: base opts {base_file}: output.checkpoint_folder is {folder!r}, {what} "
                   "that every trial would share: each trial after the first would refuse the first's checkpoints "
                   "(exit 2). Leave it empty: each trial then keeps its checkpoints in its own run folder "
                   "(trials/<id>/checkpoints); a relative path is relative to each trial's run folder\n")
    assert not (sweep / "trials").exists()


def test_upf_lines_may_name_their_own_absolute_folders_but_not_one_for_two_lines(base_file, tmp_path):
    upf = tmp_path / "runs.txt"

    def prepare(*folders: str):
        upf.write_text("".join(json.dumps({"id": f"run{i}", "output.checkpoint_folder": folder}) + "\n"
                               for i, folder in enumerate(folders)))
        return prepare_sweep(parse_spec(upf_spec(str(upf), str(base_file)), str(tmp_path), origin="--upf"))

    assert prepare(str(tmp_path / "a"), str(tmp_path / "b"), "c").upf_lines     # each its own: accepted
    with pytest.raises(SweepError) as refused:
        prepare(str(tmp_path / "a"), "c", str(tmp_path / "a"))
    assert str(refused.value).startswith(f"{upf}, line 1 (id run0); {upf}, line 3 (id run2): "
                                         f"output.checkpoint_folder is '{tmp_path / 'a'}', an absolute folder that "
                                         "2 trials would share")
    _set_folder(base_file, str(tmp_path / README_PLACEHOLDER))    # a base's shared folder that one line alone keeps is its own
    assert prepare(str(tmp_path / "a"), "").upf_lines


def test_a_relative_checkpoint_folder_is_each_trials_own_and_sweep_continue_finds_it(
        write_spec, base_file, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)     # where a plain run would put it: the trials must not
    _set_folder(base_file, "ckpt")
    spec = write_spec({"name": "grid"}, GRID, contract=False)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    trials = sweep / "trials"
    for trial in ("t0000", "t0001"):
        folder = trials / trial / "ckpt"
        assert os.readlink(folder / "last") == "model_checkpoint_epoch1.pt"
        opts = json.loads((trials / trial / "opts.json").read_text())["opts"]
        assert opts["output"]["checkpoint_folder"] == str(folder)
    assert not (tmp_path / "ckpt").exists()
    capsys.readouterr()
    assert main(["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epochs=2"]) == 0
    assert "added trial t0002: continues t0000 from trials/t0000/ckpt/model_checkpoint_epoch1.pt" in \
        capsys.readouterr().out
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    assert re.search(r"resumed from \S+/trials/t0002/ckpt/model_checkpoint_epoch1\.pt",
                     (trials / "t0002" / "train.log").read_text())
    assert os.readlink(trials / "t0002" / "ckpt" / "last") == "model_checkpoint_epoch2.pt"
    assert not (tmp_path / "ckpt").exists()


def test_a_defaults_files_checkpoint_folder_counts_as_the_bases(write_spec, base_file, tmp_path):
    """The folder a trial gets comes from its own value, else the base opts file, else the defaults file beneath."""
    from playground.sweeps.agents.trial_process import trial_command
    from playground.sweeps.inputs.spec import load_spec
    blob = json.loads(base_file.read_text())
    del blob["opts"]["output"]["checkpoint_folder"]
    base_file.write_text(json.dumps(blob))
    defaults = tmp_path / "defaults.ini"
    defaults.write_text("[Global_Params]\ncheckpoint_folder = ckpt\n")
    spec_file = write_spec({"name": "grid"}, GRID, defaults_file=defaults.name)
    spec = load_spec(str(spec_file))
    run_dir = str(tmp_path / "sweep" / "trials" / "t0000")

    def given(sets: dict) -> list[str]:
        command = trial_command(spec, sets, run_dir)
        return [item for item in command if item.startswith("output.checkpoint_folder=")]

    assert given({}) == [f'output.checkpoint_folder="{run_dir}/ckpt"']
    assert given({"output.checkpoint_folder": "mine"}) == [f'output.checkpoint_folder="{run_dir}/mine"']
    assert given({"output.checkpoint_folder": ""}) == ['output.checkpoint_folder=""']
    _set_folder(base_file, "")            # the base file over the defaults file: each trial's default folder
    assert given({}) == []
    _set_folder(base_file, "/abs/folder")
    assert given({}) == []
    base_file.write_text(json.dumps(blob))
    defaults.write_text(f"[output]\ncheckpoint_folder = {tmp_path / 'shared'}\n")
    with pytest.raises(SweepError, match=rf"^defaults_file {defaults}: output.checkpoint_folder is "
                                         rf"'{tmp_path / 'shared'}', an absolute folder that every trial would share"):
        prepare_sweep(load_spec(str(spec_file)))
