"""experiments/first_model, the regression of docs/first-model.md: scikit-learn's diabetes data as components, as a
trial class and as a CANDLE script. Each form trains; "best" follows each metric's direction (MSE down, R² up);
the three train the same model; and every code block of the page is a file the tests run."""
from __future__ import annotations

import json
import os
import re

import pytest

from playground.api import run
from tests.conftest import REPO, load_experiment, run_cli

FIRST = REPO / "experiments" / "first_model"


@pytest.fixture
def at_repo(monkeypatch):
    monkeypatch.chdir(REPO)     # the example's components are named by dotted paths from the repository root


def brief(name: str, epochs: int) -> dict:
    opts = load_experiment(f"first_model/{name}")
    opts["epoch_iter"]["num_epochs"] = epochs
    opts["output"].update(progress="log", plots=[], early_stopping=None)
    return opts


def test_best_of_the_mse_is_its_least_and_best_of_the_r2_its_greatest(tmp_path, opts_file):
    """A regression with input.num_classes null: a clean --dry-run, then a clean run (it failed at run time)."""
    blob = opts_file(brief("diabetes_mlp.json", 8))
    dry = run_cli("--parameters-file", blob, "--dry-run", cwd=REPO)
    assert dry.returncode == 0, dry.stderr
    proc = run_cli("--parameters-file", blob, "--run-dir", str(tmp_path / "run"), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    mse, r2 = results["metrics"]["test_mse"], results["metrics"]["test_r2"]
    assert len(mse) == 8 and min(mse) < max(mse) and min(r2) < max(r2)     # the model overfits: both move
    assert results["best"]["test_mse"]["value"] == min(mse)
    assert results["best"]["test_r2"]["value"] == max(r2)
    best_epoch = r2.index(max(r2)) + 1       # ckpt_save_best_metric test_r2: the greatest is the best checkpoint
    assert os.path.basename(os.path.realpath(tmp_path / "run" / "checkpoints" / "best")) == \
        f"model_checkpoint_epoch{best_epoch}.pt"
    opts = json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]
    assert opts["input"]["num_classes"] is None
    assert [m["mode"] for m in opts["output"]["metrics"]] == ["min", "min", "max"]


def test_the_components_the_trial_class_and_the_candle_script_train_the_same_model(tmp_path, at_repo):
    components = run(brief("diabetes_mlp.json", 1), run_dir=str(tmp_path / "components"))["metrics"]
    trial = run(brief("diabetes_trial.json", 1), run_dir=str(tmp_path / "trial"))["metrics"]
    proc = run_cli("candle", str(FIRST / "diabetes_candle.py"), "--set", "epochs=1", "--run-dir",
                   str(tmp_path / "candle"), script="playground", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    candle = json.loads((tmp_path / "candle" / "results.json").read_text())["metrics"]
    assert trial["test_mse"] == components["test_mse"] and trial["test_r2"] == components["test_r2"]
    assert candle["val_loss"] == pytest.approx(components["test_mse"], rel=1e-5)
    assert candle["val_r2"] == pytest.approx(components["test_r2"], rel=1e-5)


def code_blocks(page: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", page, flags=re.S)


def test_every_code_block_of_docs_first_model_is_in_the_files_the_tests_run():
    """Python and JSON blocks are excerpts of experiments/first_model (whole lines, in order); shell blocks name
    its files."""
    page = (REPO / "docs" / "first-model.md").read_text()
    files = {p.name: p.read_text() for p in FIRST.iterdir() if p.is_file()}
    blocks = code_blocks(page)
    assert len(blocks) >= 6
    for language, block in blocks:
        if language in ("python", "json", "ini"):
            assert any(block in text for text in files.values()), f"not in experiments/first_model:\n{block}"
        else:
            for named in re.findall(r"experiments/first_model/([\w.]+)", block):
                assert named in files, f"{named}: no such file in experiments/first_model"
