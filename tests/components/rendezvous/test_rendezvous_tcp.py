"""Ranks meet at rank 0's TCP store (components/rendezvous/rendezvous_tcp.py)."""
from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import HANG, run_cli, tiny_opts

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_two_ranks_meet_at_the_given_address_and_port(tmp_path, opts_file):
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward", "rendezvous_py": "rendezvous_tcp"},
                     model_param={"mlp_hidden": [16]}, epoch_iter={"num_epochs": 1})
    opts["distributed"].update(num_cpus=2, master_addr="127.0.0.1", master_port=free_port(), collective_timeout=300)
    opts["output"]["plots"] = []
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"), timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["metrics"]["epochs"][-1] == 1.0


def test_a_port_out_of_range_is_refused_before_anything_starts(tmp_path, opts_file):
    opts = tiny_opts(model={"rendezvous_py": "rendezvous_tcp"})
    opts["distributed"]["master_port"] = 70000
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"), "--dry-run")
    assert proc.returncode == 2
    assert "opts.distributed.master_port: 70000 is not a TCP port" in proc.stderr
