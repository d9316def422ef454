"""`playground eval`: a full test pass of a checkpoint (playground/commands/eval.py), and num_epochs 0."""
from __future__ import annotations

import json

from playground.api import run
from playground.cli import main
from tests.conftest import tiny_opts


def full_passes(folder) -> list[dict]:
    return [r for r in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines()) if r["kind"] == "epoch"]


def test_eval_of_a_run_repeats_its_last_full_test_pass_and_writes_eval_json(tmp_path, capsys):
    run(tiny_opts(), run_dir=str(tmp_path / "run"))
    trained = full_passes(tmp_path / "run")[-1]
    assert main(["eval", str(tmp_path / "run"), "--run-dir", str(tmp_path / "ev")]) == 0
    result = json.loads((tmp_path / "ev" / "eval.json").read_text())
    assert result["checkpoint"].endswith("model_checkpoint_epoch2.pt")
    for name in ("test_loss", "test_accuracy_top1"):
        assert result["metrics"][name] == trained[name], name
    assert f"test_accuracy_top1: {trained['test_accuracy_top1']:.6g}" in capsys.readouterr().out
    assert not (tmp_path / "ev" / "checkpoints").exists()    # nothing trained, nothing saved
    # new opts for the same checkpoint: a different test set size
    assert main(["eval", result["checkpoint"], "--run-dir", str(tmp_path / "ev2"),
                 "--set", "input.synthetic_test_size=24"]) == 0
    assert json.loads((tmp_path / "ev2" / "eval.json").read_text())["metrics"]["test_loss"] != trained["test_loss"]


def test_eval_of_a_folder_without_a_checkpoint_is_an_error(tmp_path, capsys):
    assert main(["eval", str(tmp_path)]) == 2
    assert "is not a run folder: opts.json is missing" in capsys.readouterr().err


def test_zero_epochs_with_a_pretrained_model_evaluates_it(tmp_path):
    first = run(tiny_opts(), run_dir=str(tmp_path / "run"))
    opts = tiny_opts(epoch_iter={"num_epochs": 0}, model_param={"pretrained_model": first["model"]})
    run(opts, run_dir=str(tmp_path / "zero"))
    [record] = full_passes(tmp_path / "zero")
    assert record["test_loss"] == full_passes(tmp_path / "run")[-1]["test_loss"]


def test_eval_and_predict_of_a_candle_run_folder_say_what_they_support(tmp_path, capsys):
    from playground.candle.runner import CandleCommand, run_candle
    from tests.conftest import REPO
    script = str(REPO / "experiments" / "candle_digits" / "digits_mlp_candle.py")
    assert run_candle(CandleCommand(script, sets=["epochs=1"], run_dir=str(tmp_path / "c1"))) == 0
    capsys.readouterr()
    checkpoint = next((tmp_path / "c1" / "checkpoints").glob("*.pt"))
    for command in (["eval", str(tmp_path / "c1")], ["eval", str(checkpoint)],
                    ["predict", str(tmp_path / "c1"), "--output", str(tmp_path / "p.npy")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "opts." not in err, err
        assert f"is from a run of the CANDLE script {script} (`playground candle`)" in err
        assert "read runs of opts blobs and trial classes (`playground run`) only" in err
