"""Benchmarks in the shapes of CANDLE's Pilot1 PyTorch benchmarks (pilot1/P1B1, pilot1/P1B2, written here:
`import candle`, a Benchmark subclass with file_path and a default model file, load_data through candle's data
utilities, run(params)) on tiny data laid out as the real ones expect ($CANDLE_DATA_DIR/Pilot1/*.csv), run by
`playground candle` with playground's `candle`, and with a user's `candle` when one is on the script's path."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from playground.checkpoints.files import load_state, read_pointer
from tests import zygote
from tests.playground.candle.test_candle_lib_scripts import killable
from tests.conftest import REPO

PILOT1 = Path(__file__).parent / "pilot1"
P1B1 = str(PILOT1 / "P1B1" / "p1b1_baseline_pytorch.py")
P1B2 = str(PILOT1 / "P1B2" / "p1b2_baseline_pytorch.py")
TYPES = ["BRCA", "LUAD", "KIRC"]
N_TEST = 7          # accuracies k/7 show whether a value kept its full precision


def write_pilot1_csv(path: Path, rows: int, features: int, rng: np.random.RandomState) -> None:
    """case_id, cancer_type (a name), then gene columns: the layout of P1B1's and P1B2's files."""
    lines = [",".join(["case_id", "cancer_type"] + [f"g{i}" for i in range(features)])]
    for row in range(rows):
        kind = rng.randint(len(TYPES))
        values = rng.rand(features) + (np.arange(features) % len(TYPES) == kind)
        lines.append(",".join([f"case{row}", TYPES[kind]] + [f"{v:.5f}" for v in values]))
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("candle_data")
    (root / "Pilot1").mkdir()
    rng = np.random.RandomState(0)
    write_pilot1_csv(root / "Pilot1" / "P1B1.dev.train.csv", 40, 10, rng)
    write_pilot1_csv(root / "Pilot1" / "P1B1.dev.test.csv", 10, 10, rng)
    write_pilot1_csv(root / "Pilot1" / "P1B2.train.csv", 40, 12, rng)
    write_pilot1_csv(root / "Pilot1" / "P1B2.test.csv", N_TEST, 12, rng)
    return root


def candle(script: str, *args: str, data_dir: Path, cwd: Path, env: dict | None = None):
    environment = dict(os.environ, PYTHONUNBUFFERED="1", CANDLE_DATA_DIR=str(data_dir), **(env or {}))
    return zygote.run([sys.executable, "-m", "playground", "candle", script, *args], env=environment, cwd=str(cwd),
                      capture_output=True, text=True, timeout=300)


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def p1b1_run(tmp_path_factory, data_dir) -> Path:
    work = tmp_path_factory.mktemp("p1b1")
    done = candle(P1B1, "--run-dir", str(work / "run"), data_dir=data_dir, cwd=work)
    assert done.returncode == 0, done.stderr
    (work / "run" / "stdout.txt").write_text(done.stdout)
    return work / "run"


def test_p1b1s_shape_runs_on_playgrounds_candle_with_its_data_read_by_load_csv_data(p1b1_run):
    lines = records(p1b1_run)
    assert [r["epoch"] for r in lines] == [0, 1, 2]
    printed = [line.rsplit(" ", 1)[1] for line in (p1b1_run / "stdout.txt").read_text().splitlines()
               if line.startswith("====> Epoch:")]
    assert [f"{r['loss']:.4f}" for r in lines] == printed          # the printed loss, as printed
    assert all(isinstance(r["val_loss"], float) for r in lines)    # the callback's value, at full precision
    log = next((p1b1_run / "save").glob(".pytorch.ae.D1=12.D2=6*.log")).read_text()
    assert "Shape x_train: (32, 10)" in log and "Range x_train: [0, 1]" in log   # 40 rows less val_split 0.2


def test_every_output_path_of_a_benchmark_is_inside_its_run_folder(p1b1_run):
    opts = json.loads((p1b1_run / "opts.json").read_text())["opts"]
    assert opts["save_path"] == str(p1b1_run / "save") + "/"
    assert opts["ckpt_directory"] == str(p1b1_run / "checkpoints") and opts["run_id"] == "run"
    assert opts["output_dir"].startswith(str(p1b1_run / "output"))
    assert sorted(p.name for p in p1b1_run.parent.iterdir()) == ["run"]     # nothing in the working folder


@pytest.mark.slow   # three processes of a 3-epoch run
def test_p1b1s_shape_resumes_after_sigkill_bitwise_with_candles_checkpoint_callback(tmp_path, data_dir, p1b1_run):
    (tmp_path / "killable.py").write_text(killable(PILOT1 / "P1B1", "p1b1_baseline_pytorch"))
    killed = candle(str(tmp_path / "killable.py"), "--run-dir", str(tmp_path / "run"), data_dir=data_dir,
                    cwd=tmp_path, env={"KILL_AFTER_EPOCH": "2"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    finished = candle(str(tmp_path / "killable.py"), "--run-dir", str(tmp_path / "run"), data_dir=data_dir,
                      cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr
    resumed, whole = (load_state(read_pointer(str(run / "checkpoints"), "last"))["model"]
                      for run in (tmp_path / "run", p1b1_run))
    assert list(resumed) == list(whole) and all(torch.equal(resumed[k], whole[k]) for k in whole)
    assert [r["val_loss"] for r in records(tmp_path / "run")] == [r["val_loss"] for r in records(p1b1_run)]


def test_p1b2s_shape_reports_its_printed_validation_loss_and_full_precision_test_accuracy(tmp_path, data_dir):
    done = candle(P1B2, "--epochs", "3", "--set", "logfile=logs/p1b2.log", "--run-dir", str(tmp_path / "run"),
                  data_dir=data_dir, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = records(tmp_path / "run")
    printed = [line.rsplit(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("=> Average valid")]
    assert [f"{r['val_loss']:.4f}" for r in lines] == printed and len(lines) == 3
    accuracy = lines[-1]["test_accuracy"]
    assert f"Evaluation on test data: {{'accuracy': {accuracy!r}}}" in done.stdout
    assert abs(accuracy * N_TEST - round(accuracy * N_TEST)) < 1e-12 and "test_accuracy" not in lines[0]
    assert "Shape X_train: (32, 12)" in (tmp_path / "run" / "logs" / "p1b2.log").read_text()   # a relative logfile
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


USER_CANDLE = '''
"""A user's own `candle` in Benchmarks' common/ (which p1b2.py appends to sys.path)."""
from playground.compat.candle import *
from playground.compat.candle import __all__
print("candle from common/")
'''


def test_a_candle_the_script_puts_on_its_path_wins_over_playgrounds(tmp_path, data_dir):
    shutil.copytree(PILOT1 / "P1B2", tmp_path / "Pilot1" / "P1B2")
    (tmp_path / "Pilot1" / "common" / "candle").mkdir(parents=True)
    (tmp_path / "Pilot1" / "common" / "candle" / "__init__.py").write_text(USER_CANDLE)
    script = str(tmp_path / "Pilot1" / "P1B2" / "p1b2_baseline_pytorch.py")
    done = candle(script, "--epochs", "1", "--run-dir", str(tmp_path / "run"), data_dir=data_dir, cwd=tmp_path,
                  env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("candle from common/") == 1 and len(records(tmp_path / "run")) == 1
    assert next((tmp_path / "run").glob("save.torch.A=sigmoid*.log")).is_file()   # save_path 'save', no slash


CALLS_A_MISSING_MEMBER = '''
import candle
def initialize_parameters():
    return {"epochs": 1}
def run(params):
    candle.plot_history("out", None)
'''


def test_a_member_playgrounds_candle_lacks_is_named_once_without_a_traceback(tmp_path, data_dir):
    (tmp_path / "plots.py").write_text(CALLS_A_MISSING_MEMBER)
    done = candle(str(tmp_path / "plots.py"), "--run-dir", str(tmp_path / "run"), data_dir=data_dir, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("candle.plot_history: playground's candle (used because no other `candle` module could "
                             "be imported) does not provide it") == 1
