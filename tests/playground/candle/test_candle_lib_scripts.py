"""A benchmark written the candle_lib way (toy_benchmark/: `import candle`, a Benchmark subclass,
finalize_parameters reading sys.argv, CandleCkptPyTorch, no history returned) under `playground candle`
(playground/candle/runner.py, script_process.py; without candle_lib, playground/compat/candle)."""
from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from playground.checkpoints.files import load_state, read_pointer
from tests import zygote
from tests.conftest import REPO

HERE = Path(__file__).parent / "toy_benchmark"
SCRIPT = str(HERE / "toy_baseline_pytorch.py")


def killable(folder: Path, module: str) -> str:
    """A script that is `module` (a benchmark script in `folder`), SIGKILLed right after the checkpoint of the
    epoch KILL_AFTER_EPOCH names (1-based)."""
    return f'''
import os, signal, sys
sys.path.insert(0, {str(folder)!r})
from {module} import *
import candle
_ckpt_epoch = candle.CandleCkptPyTorch.ckpt_epoch
def ckpt_epoch(self, epoch, metric_value):
    _ckpt_epoch(self, epoch, metric_value)
    if epoch + 1 == int(os.environ.get("KILL_AFTER_EPOCH", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
candle.CandleCkptPyTorch.ckpt_epoch = ckpt_epoch
'''


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """CANDLE_DATA_DIR with Toy/toy.csv: 40 rows of 3 inputs and a linear target."""
    root = tmp_path_factory.mktemp("candle_data")
    (root / "Toy").mkdir()
    rng = np.random.RandomState(0)
    x = rng.rand(40, 3)
    np.savetxt(root / "Toy" / "toy.csv", np.c_[x, x @ np.array([1.0, -2.0, 0.5]) + 0.1], delimiter=",", fmt="%.6f")
    return root


def candle(*args: str, data_dir: Path | None, script: str = SCRIPT, env: dict | None = None):
    """`playground candle SCRIPT ARGS` as a real process, with CANDLE_DATA_DIR set to `data_dir` (or unset)."""
    environment = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    environment.pop("CANDLE_DATA_DIR", None)
    if data_dir is not None:
        environment["CANDLE_DATA_DIR"] = str(data_dir)
    return zygote.run([sys.executable, "-m", "playground", "candle", script, *args], env=environment,
                      capture_output=True, text=True, timeout=300)


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def final_weights(run_dir: Path) -> dict:
    return load_state(read_pointer(str(run_dir / "checkpoints"), "last"))["model"]


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory, data_dir) -> Path:
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    done = candle("--epochs", "3", "--set", "hidden=[5,4]", "--run-dir", str(run_dir), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    (run_dir / "stdout.txt").write_text(done.stdout)
    return run_dir


def test_the_script_reads_its_own_command_line_built_from_set_and_candles_form(whole_run):
    opts = json.loads((whole_run / "opts.json").read_text())["opts"]
    assert (opts["epochs"], opts["hidden"], opts["batch_size"]) == (3, [5, 4], 8)
    final_params = next((whole_run / "output").rglob("final_params.txt")).read_text()
    assert "'epochs': 3" in final_params and "'hidden': [5, 4]" in final_params


def test_a_set_value_is_what_the_scripts_parser_made_of_it(tmp_path, data_dir):
    done = candle("--set", "hidden=6", "--epochs", "1", "--set", "noise=yes", "--run-dir", str(tmp_path / "run"),
                  data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    opts = json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]
    assert (opts["hidden"], opts["noise"], opts["epochs"]) == ([6], True, 1)


def test_opts_json_records_what_candle_lib_puts_in_params_by_name(whole_run):
    opts = json.loads((whole_run / "opts.json").read_text())["opts"]
    assert opts["data_type"] == "numpy.float32" and opts["noise"] is False and opts["timeout"] == 3600


def test_the_run_folders_hold_candles_output_and_checkpoint_folders(whole_run):
    opts = json.loads((whole_run / "opts.json").read_text())["opts"]
    assert opts["ckpt_directory"] == str(whole_run / "checkpoints")
    assert opts["output_dir"] == str(whole_run / "output" / whole_run.parent.name / "run")
    assert (opts["experiment_id"], opts["run_id"]) == (whole_run.parent.name, "run")
    names = sorted(p.name for p in (whole_run / "checkpoints").glob("*.pt"))
    assert names == ["model_checkpoint_epoch2.pt", "model_checkpoint_epoch3.pt"]      # ckpt_keep_limit = 2


def test_the_values_handed_to_the_checkpoint_callback_are_the_runs_metrics(whole_run):
    lines = records(whole_run)
    assert [(r["epoch"], r["epochs"]) for r in lines] == [(0, 1.0), (1, 2.0), (2, 3.0)]
    printed = [line for line in (whole_run / "stdout.txt").read_text().splitlines() if line.startswith("====>")]
    assert [f"{r['val_loss']:.4f}" for r in lines] == [line.rsplit(" ", 1)[1] for line in printed]
    results = json.loads((whole_run / "results.json").read_text())
    assert results["metrics"]["val_loss"] == [r["val_loss"] for r in lines]
    assert results["model"].endswith("model_checkpoint_epoch3.pt")
    assert f"final metrics (after epoch 3): val_loss {lines[-1]['val_loss']!r}, loss " in \
        (whole_run / "stdout.txt").read_text()


@pytest.mark.slow   # three processes of a 3-epoch run
def test_resume_after_sigkill_matches_the_uninterrupted_run_bitwise(tmp_path, data_dir, whole_run):
    (tmp_path / "killable.py").write_text(killable(HERE, "toy_baseline_pytorch"))
    command = ["--epochs", "3", "--set", "hidden=[5,4]", "--run-dir", str(tmp_path / "run")]
    killed = candle(*command, data_dir=data_dir, script=str(tmp_path / "killable.py"), env={"KILL_AFTER_EPOCH": "2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    finished = candle(*command, data_dir=data_dir, script=str(tmp_path / "killable.py"))
    assert finished.returncode == 0, finished.stderr
    resumed, whole = final_weights(tmp_path / "run"), final_weights(whole_run)
    assert list(resumed) == list(whole) and all(torch.equal(resumed[k], whole[k]) for k in whole)
    assert [r["val_loss"] for r in records(tmp_path / "run")] == [r["val_loss"] for r in records(whole_run)]
    assert "resumed from model_checkpoint_epoch2.pt" in (tmp_path / "run" / "checkpoints" / "ckpt.log").read_text()


def test_a_second_run_of_the_same_script_never_resumes_the_first_ones_checkpoint(tmp_path, data_dir, whole_run):
    done = candle("--epochs", "3", "--set", "hidden=[5,4]", "--run-dir", str(tmp_path / "other"), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert "resumed" not in (tmp_path / "other" / "checkpoints" / "ckpt.log").read_text()
    assert not list((whole_run / "checkpoints").glob("*epoch4*"))
    assert [r["val_loss"] for r in records(tmp_path / "other")] == [r["val_loss"] for r in records(whole_run)]


def test_another_runs_opts_json_reproduces_it_in_this_runs_own_folders(tmp_path, data_dir, whole_run):
    done = candle("--parameters-file", str(whole_run / "opts.json"), "--run-dir", str(tmp_path / "again"),
                  data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    opts = json.loads((tmp_path / "again" / "opts.json").read_text())["opts"]
    assert opts["ckpt_directory"] == str(tmp_path / "again" / "checkpoints") and opts["run_id"] == "again"
    assert opts["data_type"] == "numpy.float32" and opts["hidden"] == [5, 4]
    assert "resumed" not in (tmp_path / "again" / "checkpoints" / "ckpt.log").read_text()
    assert [r["val_loss"] for r in records(tmp_path / "again")] == [r["val_loss"] for r in records(whole_run)]


def test_without_candle_data_dir_the_data_folder_is_the_runs_and_fetch_file_says_it_cannot_download(tmp_path):
    done = candle("--run-dir", str(tmp_path / "run"), data_dir=None)
    assert done.returncode == 1
    assert done.stderr.count(f"candle.get_file: {tmp_path / 'run' / 'data' / 'Toy' / 'toy.csv'} is missing; "
                             "playground's candle does not download: fetch http://example.org/candle/toy/toy.csv by "
                             "hand and put it there") == 1
    assert "Traceback" not in done.stderr


def test_a_value_the_scripts_parser_refuses_exits_2_with_its_message(tmp_path, data_dir):
    done = candle("--epochs", "ten", "--run-dir", str(tmp_path / "run"), data_dir=data_dir)
    assert done.returncode == 2
    assert "toy_baseline: error: argument --epochs: invalid int value" in done.stderr
    assert "initialize_parameters() exited with code 2" in done.stderr and "Traceback" not in done.stderr


STAND_IN = """
import os
class CandleCkptPyTorch:
    def __init__(self, params):
        self.save_best_metric, self.folder = "val_corr", params["ckpt_directory"]
    def ckpt_epoch(self, epoch, metric_value):
        os.makedirs(self.folder, exist_ok=True)
        open(os.path.join(self.folder, "own-%d" % epoch), "w").close()
"""
WHICH = """
import sys
import candle
def initialize_parameters():
    return {"epochs": 2}
def run(params):
    print("candle is", candle.__name__, sys.argv[1:3])
    if candle.__name__ == "candle":
        ckpt = candle.CandleCkptPyTorch(params)
        for epoch, value in enumerate([0.5, 0.75]):
            ckpt.ckpt_epoch(epoch, value)
"""


def test_an_installed_candle_is_used_and_its_checkpoint_callbacks_values_are_the_metrics(tmp_path, data_dir):
    # A stand-in for candle_lib: what matters here is which `candle` the script imports, and that the values
    # its CandleCkptPyTorch is handed are recorded while it still does its own work.
    (tmp_path / "site" / "candle").mkdir(parents=True)
    (tmp_path / "site" / "candle" / "__init__.py").write_text(STAND_IN)
    (tmp_path / "which.py").write_text(WHICH)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(REPO)])}
    done = candle("--run-dir", str(tmp_path / "run"), data_dir=data_dir, script=str(tmp_path / "which.py"), env=env)
    assert done.returncode == 0, done.stderr
    assert f"candle is candle ['--output_dir', '{tmp_path / 'run' / 'output'}']" in done.stdout
    assert [(r["epoch"], r["val_corr"]) for r in records(tmp_path / "run")] == [(0, 0.5), (1, 0.75)]
    assert sorted(p.name for p in (tmp_path / "run" / "checkpoints").iterdir()) == ["own-0", "own-1"]
    plain = candle("--run-dir", str(tmp_path / "run2"), data_dir=data_dir, script=str(tmp_path / "which.py"))
    assert plain.returncode == 0 and "candle is playground.compat.candle" in plain.stdout, plain.stderr
