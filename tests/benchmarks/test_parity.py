"""The playground loop reaches the very weights of a hand-written loop (benchmarks/parity.py)."""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

import pytest
import torch

from tests import zygote
from tests.conftest import HANG, REPO


def load_benchmark():
    spec = importlib.util.spec_from_file_location("parity_benchmark", REPO / "benchmarks" / "parity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_playground_and_a_plain_loop_end_with_bitwise_equal_weights(tmp_path):
    parity = load_benchmark()
    config = parity.config(argparse.Namespace(samples=256, batch=32, epochs=2, device="cpu"))
    plain, _ = parity.run_plain(config)
    ours, times = parity.run_playground(config, str(tmp_path / "run"))
    assert len(times) == 2
    assert plain.keys() == ours.keys()
    for key in plain:
        assert torch.equal(plain[key], ours[key]), key


def test_bf16_accumulation_clipping_and_ema_match_a_hand_written_loop_bitwise(tmp_path):
    parity = load_benchmark()
    config = parity.config(argparse.Namespace(samples=64, batch=4, epochs=2, device="cpu", case="features"))
    config["shape"] = [3, 8, 8]    # bf16 convolutions are slow on CPU: a small image keeps this in seconds
    assert (config["precision"], config["accum"], config["clip"], config["ema"]) == ("bf16", 4, 1.0, 0.99)
    plain, _ = parity.run_plain(config)
    ours, times = parity.run_playground(config, str(tmp_path / "run"))
    assert len(times) == 2 and any(key.startswith("ema.") for key in plain)
    assert plain.keys() == ours.keys()
    for key in plain:
        assert torch.equal(plain[key], ours[key]), key


def run_parity(tmp_path, *arguments: str) -> subprocess.CompletedProcess:
    return zygote.run([sys.executable, str(REPO / "benchmarks" / "parity.py"), "--trials", "1", "--epochs", "2",
                       "--samples", "128", "--batch", "32", "--workdir", str(tmp_path), *arguments],
                      capture_output=True, text=True, timeout=HANG)


@pytest.mark.slow
def test_peers_trains_the_job_with_lightning_to_bitwise_equal_weights(tmp_path):
    pytest.importorskip("pytorch_lightning", reason="the optional bench extra is not installed: pip install -e "
                        "'.[bench]'")
    done = run_parity(tmp_path, "--peers")
    assert done.returncode == 0, done.stderr
    assert "final weights bitwise equal (plain, playground, lightning): yes" in done.stdout, done.stdout
    table = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["plain"], ["lightning"])]
    assert [row[0] for row in table] == ["plain", "lightning"] and all(len(row) == 7 for row in table), done.stdout


def test_peers_refuses_the_features_case_before_any_work(tmp_path):
    done = run_parity(tmp_path, "--peers", "--case", "features")
    assert done.returncode == 2
    assert "--peers compares the plain case only" in done.stderr and not list(tmp_path.iterdir())
