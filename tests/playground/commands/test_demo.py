"""`make demo` (playground/commands/demo.py): digits LMDBs built on first use, then a real ResNet run on them."""
from __future__ import annotations

import json

from playground.commands import demo

SHORT = ["--set", "epoch_iter.num_epochs=1", "--set", "input.loadsize=8", "--set", "input.imsize=8",
         "--set", "model_param.lr_policy=fixed", "--set", "model_param.warmup_epochs=0",
         "--set", "output.progress=log"]        # one pass over the training digits at 8 pixels, about 5 s


def test_the_demo_builds_the_digits_and_a_short_run_beats_chance_clearly(tmp_path, capsys):
    data, run_dir = tmp_path / "demo-data" / "digits", tmp_path / "run"
    assert demo.main(["--data", str(data), "--run-dir", str(run_dir), *SHORT]) == 0
    assert (data / "train").is_dir() and (data / "test").is_dir()
    metrics = json.loads((run_dir / "results.json").read_text())["metrics"]
    final = [v for v in metrics["test_accuracy_top1"] if v is not None][-1]
    assert final >= 0.5                                   # 10 classes: chance is 0.1
    out = capsys.readouterr().out
    assert "building the digits LMDBs" in out and f"final test top-1 {final:.4f}" in out
    assert f"checkpoints:       {run_dir / 'checkpoints'}" in out

    assert demo.main(["--data", str(data), "--run-dir", str(tmp_path / "again"), *SHORT,
                      "--set", "epoch_iter.num_train_sample_per_epoch=64", "--set", "epoch_iter.num_epochs=3"]) == 0
    assert "building" not in capsys.readouterr().out     # the LMDBs are reused
    # the demo keeps 'last' and 'best' (or the one before), not every epoch's checkpoint (15 of them, 82 MB)
    assert len(list((tmp_path / "again" / "checkpoints").glob("*.pt"))) == 2
