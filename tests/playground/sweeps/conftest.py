"""Sweep test fixtures: a tiny base opts file (a few-KB MLP on synthetic data) and spec writers."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import tiny_opts
from tests.playground.sweeps import pg_cluster

CONTRACT_TRIAL = [sys.executable, str(Path(__file__).resolve().parent / "contract_trial.py")]


def tiny_mlp_opts() -> dict:
    opts = tiny_opts()
    opts["model"]["forward_pass_py"] = "mlp_forward"
    opts["model_param"].update(mlp_hidden=[16], deterministic=True)
    del opts["model_param"]["cnn_channels"]
    opts["output"]["plots"] = []
    return opts


@pytest.fixture
def base_file(tmp_path) -> Path:
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"opts": tiny_mlp_opts()}))
    return path


@pytest.fixture
def write_spec(tmp_path, base_file):
    """write_spec(searcher=..., space=..., contract=True, **top) -> path of a JSON spec beside base.json."""
    def write(searcher: dict, space: dict, contract: bool = True, name: str = "spec.json", **top) -> Path:
        spec = {"name": "t", "base": base_file.name, "objective": {"metric": "test_loss", "mode": "min"},
                "searcher": searcher, "space": space, **top}
        if contract:
            spec["trial_program"] = CONTRACT_TRIAL
        path = tmp_path / name
        path.write_text(json.dumps(spec))
        return path
    return write


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server for the whole session (pg_cluster.Cluster: `.url`, `.pg_ctl("restart")`);
    the tests that use it are skipped, with the reason, where no server binaries exist."""
    reason = pg_cluster.skip_reason()
    if reason:
        pytest.skip(reason)
    cluster = pg_cluster.Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
