"""The resnet experiments (experiments/resnetdemo/*.json, experiments/digits_resnet.json) validate as written."""
from __future__ import annotations

import json

import pytest

from playground.api import prepare_opts
from playground.cli import main as playground_main
from tests.conftest import REPO

FILES = sorted((REPO / "experiments" / "resnetdemo").glob("*.json")) + [REPO / "experiments" / "digits_resnet.json"]


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "digits"
    assert playground_main(["make-lmdb", "--digits", str(out), "--test-fraction", "0.2", "--no-progress"]) == 0
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_resnet_experiment_validates_against_the_digits_lmdbs(path, digits, tmp_path):
    opts = json.loads(path.read_text())
    assert opts["opts"]["input"]["train_input_path"] == "demo-data/digits/train"    # where make demo puts them
    prepared = prepare_opts(opts, run_dir=str(tmp_path / "run"), sets=[
        f"input.train_input_path={digits / 'train'}", f"input.test_input_path={digits / 'test'}"])
    assert not prepared.resolved.warnings
    assert prepared.plan.topology.world_size == 1 and prepared.opts["distributed"]["num_gpus"] == 0
