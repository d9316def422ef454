"""`sweep continue DIR ID --set ...` (warm_start.py): a new trial that resumes trial ID's latest checkpoint in its
own folder with changed settings, outside the budget; bad input is refused before anything is written."""
from __future__ import annotations

import json
import re

from playground.cli import main
from playground.sweeps.operations.reports import open_sweep
from playground.sweeps.search.study import counted

SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0},
         "epoch_iter.num_epochs": 2}


def _epoch_records(folder) -> list[dict]:
    return [r for r in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "epoch"]


def test_continue_resumes_the_source_checkpoint_in_a_new_trial_with_the_new_settings(write_spec, tmp_path, capsys):
    # adaptive ASHA: its brackets are full after 2 trials, yet the extra trial runs, and is never stopped at a rung
    spec = write_spec({"name": "adaptive_asha", "max_trials": 2, "max_time": 2, "divisor": 2, "max_rungs": 2,
                       "mode": "aggressive", "seed": 1}, SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    source = sweep / "trials" / "t0001"
    before = {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()}
    source_lr = json.loads((source / "trial.json").read_text())["params"]["model_param.base_learning_rate"]
    capsys.readouterr()

    assert main(["sweep", "continue", str(sweep), "t0001", "--set", "epoch_iter.num_epochs=4",
                 "--set", "model_param.base_learning_rate=0.5"]) == 0
    assert "added trial t0002: continues t0001 from trials/t0001/checkpoint.json" in capsys.readouterr().out
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 0
    # the progress line says the trial is not one of the budget's, whose count stays 2 of 2
    assert re.search(r"\[sweep\] t0002 complete test_loss=\S+ \(\S+ s\) extra, outside the budget \(2/2\)\n",
                     capsys.readouterr().err)

    new = sweep / "trials" / "t0002"
    trial = json.loads((new / "trial.json").read_text())
    assert trial["state"] == "complete" and trial["number"] == 2
    assert trial["params"]["model_param.base_learning_rate"] == 0.5 and trial["params"]["epoch_iter.num_epochs"] == 4
    # it resumed the source's checkpoint: 2 epochs done, their records carried over, then 2 more at the new rate
    resumed = re.findall(r"resumed from \S+ after (\d+) epoch", (new / "sweep-trial.log").read_text())
    assert resumed == ["2"]
    assert json.loads((new / "warm_start.json").read_text())["continued_from"]["checkpoint"] == str(
        source / "checkpoint.json")
    records = _epoch_records(new)
    assert [r["epoch"] for r in records] == [0, 1, 2, 3]
    assert records[:2] == _epoch_records(source)
    assert [r["lr"] for r in records] == [source_lr, source_lr, 0.5, 0.5]
    assert json.loads((new / "checkpoint.json").read_text())["epochs_done"] == 4
    # the source is untouched, and the new trial is outside the budget of 2
    assert {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()} == before
    _, _, study = open_sweep(str(sweep))
    assert len(study.get_trials()) == 3 and len(counted(study.get_trials())) == 2
    assert study.get_trials()[2].value == records[-1]["test_loss"]
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep)]) == 0
    assert "nothing to do" in capsys.readouterr().err
    # the rebuilt study knows the extra trial as one
    summary = (sweep / "summary.csv").read_bytes()
    assert main(["sweep", "summary", str(sweep), "--rebuild"]) == 0
    assert (sweep / "summary.csv").read_bytes() == summary
    _, _, study = open_sweep(str(sweep))
    assert len(study.get_trials()) == 3 and len(counted(study.get_trials())) == 2


def test_continue_refuses_an_unknown_trial_a_trial_without_checkpoint_and_a_bad_key_with_exit_2(
        write_spec, tmp_path, capsys):
    spec = write_spec({"name": "random", "max_trials": 1}, SPACE)
    sweep = tmp_path / "sweep"
    assert main(["sweep", "run", str(spec), "--sweep-dir", str(sweep), "--quiet"]) == 0
    journal = (sweep / "study.journal").read_bytes()
    capsys.readouterr()
    assert main(["sweep", "continue", str(sweep), "t0042"]) == 2
    err = capsys.readouterr().err
    assert "has no trial 't0042' (trials: t0000)" in err and len(err.strip().splitlines()) == 1
    assert main(["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epoch=4"]) == 2
    assert "Did you mean 'epoch_iter.num_epochs'?" in capsys.readouterr().err
    (sweep / "trials" / "t0000" / "checkpoints" / "last").unlink()
    assert main(["sweep", "continue", str(sweep), "t0000", "--set", "epoch_iter.num_epochs=4"]) == 2
    err = capsys.readouterr().err
    assert "trial t0000" in err and "has no checkpoint to continue from" in err
    assert (sweep / "study.journal").read_bytes() == journal
    assert sorted(p.name for p in (sweep / "trials").iterdir()) == ["t0000"]


def test_a_playground_run_resumes_the_linked_checkpoint_and_trains_on_with_the_changed_settings(tmp_path):
    """The trainer's side of `sweep continue`: a real run started in the new trial's folder resumes the
    hard-linked checkpoint (its checksum verified through the linked info file), keeps the source's records, and
    trains the added epoch at the new learning rate; the source's checkpoint files stay as they were."""
    from playground.api import run
    from playground.sweeps.agents.warm_start import latest_checkpoint, link_checkpoint
    from tests.playground.sweeps.conftest import tiny_mlp_opts
    source, new = tmp_path / "trials" / "t0000", tmp_path / "trials" / "t0001"
    opts = tiny_mlp_opts()
    opts["epoch_iter"]["num_epochs"] = 1
    opts["model_param"]["base_learning_rate"] = 0.05
    run(opts, run_dir=str(source))
    checkpoint = latest_checkpoint(str(source))
    assert checkpoint == str(source / "checkpoints" / "model_checkpoint_epoch1.pt")
    kept = {p.name: p.read_bytes() for p in (source / "checkpoints").iterdir() if p.name.startswith("model_")}
    warm = {"trial": "t0000", "checkpoint": "checkpoints/model_checkpoint_epoch1.pt", "set": {}}
    assert link_checkpoint(str(new), warm) is None
    run(opts, run_dir=str(new), sets=["epoch_iter.num_epochs=2", "model_param.base_learning_rate=0.2"])
    log = (new / "checkpoints" / "ckpt.log").read_text().splitlines()
    assert log[0].split(" ", 2)[2].startswith("resumed from model_checkpoint_epoch1.pt")
    assert "saved model_checkpoint_epoch2.pt" in log[1]
    theirs, ours = _epoch_records(source), _epoch_records(new)
    assert [r["epoch"] for r in ours] == [0, 1]
    assert ours[0]["test_loss"] == theirs[0]["test_loss"] and ours[0]["lr"] == 0.05
    assert ours[1]["lr"] == 0.2
    assert {p.name: p.read_bytes() for p in (source / "checkpoints").iterdir() if p.name.startswith("model_")} == kept
