"""experiments/determined_digits/: the examples written for Determined's four API shapes (Trial API, Trainer API,
two models, Core API); their data, their searches' trial counts (Determined's adaptive ASHA arithmetic), their
entrypoints as the runner starts them, a quick `--test` of the trial, and the Trainer-API script in local mode
through `python -m playground.compat.determined` (no `determined` package needed)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

from playground.cli import main
from tests.conftest import REPO, run_cli

EXAMPLES = REPO / "experiments" / "determined_digits"


def test_the_data_is_the_digits_as_8x8_images():
    spec = importlib.util.spec_from_file_location("digits_data", EXAMPLES / "digits_data.py")
    data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(data)
    train, test = data.digits(train=True), data.digits(train=False)
    assert (len(train), len(test)) == (1438, 359)
    image, label = train[0]
    assert tuple(image.shape) == (1, 8, 8) and 0 <= int(label) <= 9
    raw = data.digits(train=True, normalized=False).tensors[0]
    assert float(raw.min()) == 0.0 and float(raw.max()) == 1.0


def test_the_searches_have_determineds_trial_counts(capsys):
    assert main(["sweep", "preview", str(EXAMPLES / "trial_api" / "adaptive.yaml")]) == 0
    out = capsys.readouterr().out
    assert "16 trials, mode standard, divisor 4, max_time 320 iteration; 2 brackets:" in out
    assert "bracket 0: 3 rungs at [20, 80, 320] iteration, 12 trials" in out
    assert "bracket 1: 2 rungs at [80, 320] iteration, 4 trials" in out
    assert main(["sweep", "preview", str(EXAMPLES / "trainer_api" / "adaptive.yaml")]) == 0
    assert "bracket 0: 3 rungs at [22, 88, 352] iteration, 12 trials" in capsys.readouterr().out
    assert main(["sweep", "preview", str(EXAMPLES / "core_api" / "adaptive.yaml")]) == 0
    out = capsys.readouterr().out
    assert "20 trials" in out and "bracket 0: 3 rungs at [1, 4, 16] epochs, 15 trials" in out
    assert main(["sweep", "preview", str(EXAMPLES / "trainer_api" / "random.yaml")]) == 0
    assert "searcher random\n2 trials over:" in capsys.readouterr().out


def test_the_entrypoints_become_the_trial_harness_and_the_scripts(capsys):
    assert main(["run", str(EXAMPLES / "trial_api" / "const.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert f"command: {sys.executable} -m playground.determined.trial_main model_def:DigitsTrial" in \
        capsys.readouterr().out
    assert main(["run", str(EXAMPLES / "trial_api" / "distributed.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    out = capsys.readouterr().out
    assert "slots (ranks): 8" in out and "global_batch_size 64: 8 per slot on 8 slot(s)" in out
    assert main(["run", str(EXAMPLES / "two_models" / "distributed.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert "global_batch_size 256: 32 per slot on 8 slot(s)" in capsys.readouterr().out
    assert main(["run", str(EXAMPLES / "trainer_api" / "distributed.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert f"command: {sys.executable} train.py --epochs 1" in capsys.readouterr().out
    assert main(["run", str(EXAMPLES / "core_api" / "const.yaml"), "--dry-run", "--run-dir", "r"]) == 0
    assert f"command: {sys.executable} model_def.py --epochs 2" in capsys.readouterr().out


def test_the_trial_runs_with_test(tmp_path):
    done = run_cli("run", str(EXAMPLES / "trial_api" / "const.yaml"), "--test", "--run-dir", str(tmp_path / "run"),
                   script="playground")
    assert done.returncode == 0, done.stderr[-3000:]
    found = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["iteration"]) for r in found] == [("epoch", 1)] and found[0]["validation_loss"] > 0


def test_a_trainer_api_script_runs_in_local_mode_without_the_determined_package(tmp_path):
    """Determined's local mode is a bare `python train.py` with its package installed; without it,
    `python -m playground.compat.determined train.py`: init's hparams (const.yaml's), a folder under runs/."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "playground.compat.determined",
                           str(EXAMPLES / "trainer_api" / "train.py"), "--epochs", "1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (tmp_path / "runs").iterdir()
    found = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert found[-1]["kind"] == "epoch" and found[-1]["iteration"] == -(-1438 // 32)    # the short batch counts
    assert json.loads((run_dir / "opts.json").read_text())["opts"]["local"] is True
