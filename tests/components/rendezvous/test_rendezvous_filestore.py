"""Two hosts' commands meet through a shared file store (components/rendezvous/rendezvous_filestore.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from playground.api import run
from tests.conftest import HANG, REPO, run_cli, tiny_opts

pytestmark = pytest.mark.slow


def shard_opts(tmp_path, **model) -> dict:
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward", "rendezvous_py": "rendezvous_filestore", **model},
                     model_param={"mlp_hidden": [16]}, epoch_iter={"num_epochs": 3})
    opts["distributed"].update(num_shards=2, num_cpus=1, rendezvous_path=str(tmp_path / "shared"),
                               run_id="two-hosts", collective_timeout=300)
    opts["output"]["plots"] = []
    return opts


def start_shards(opts_path: str, run_dir, env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """The same command on two 'hosts', shard ids 1 and 0, as separate processes."""
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    procs = [subprocess.Popen([sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file", opts_path,
                               "--run-dir", str(run_dir), "--shard-id", str(shard)], env=full_env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for shard in (1, 0)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=HANG)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done[::-1]   # index = shard id


def test_two_shards_started_separately_train_and_a_later_attempt_ignores_the_dead_ones_file(tmp_path, opts_file):
    # First attempt: rank 1 (the only rank of shard 1) fails in epoch 2. Shard 0 names it, and both exit 1.
    (tmp_path / "fail_rank1.py").write_text(
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        "    if self.rank == 1 and epoch == 1 and epoch_iter == 1:\n"
        "        raise ValueError('injected failure on rank one')\n")
    failing = shard_opts(tmp_path, additional_override_py="fail_rank1")
    run_dir = tmp_path / "run"
    shard0, shard1 = start_shards(opts_file(failing, "failing.json"), run_dir, env={"PYTHONPATH": str(tmp_path)})
    assert shard0.returncode == 1 and shard1.returncode == 1, shard0.stderr + shard1.stderr
    assert "rank 0 stopped because rank 1 failed: ValueError: injected failure on rank one" in shard0.stderr
    assert "rank 1" in shard1.stderr and "injected failure on rank one" in shard1.stderr
    store = tmp_path / "shared" / "playground-two-hosts.store"
    if not store.exists():
        # The failed ranks closed the file on their way out (the last one removes it); an attempt killed outright
        # (SIGKILL, a lost host) leaves it, with its keys and its count of users: such a file, made by a process
        # that dies holding it.
        subprocess.run([sys.executable, "-c", "import os, signal, torch.distributed as dist\n"
                        f"s = dist.FileStore({str(store)!r}, 2)\ns.set('attempt', 'dead')\n"
                        "os.kill(os.getpid(), signal.SIGKILL)"], check=False, timeout=HANG)
    assert os.listdir(tmp_path / "shared") == ["playground-two-hosts.store"]   # a dead attempt's file

    # Second attempt, same run id and file: both shards meet afresh and resume from epoch 1's checkpoint.
    shard0, shard1 = start_shards(opts_file(shard_opts(tmp_path), "opts.json"), run_dir)
    assert shard0.returncode == 0, shard0.stderr
    assert shard1.returncode == 0, shard1.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["metrics"]["epochs"] == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    assert "resumed from" in (run_dir / "train.log").read_text()

    # The same weights as one process training on the global batch (2 x 16) for 3 epochs.
    single = shard_opts(tmp_path)
    single["distributed"].update(num_shards=1, num_cpus=1)
    single["epoch_iter"]["batch_per_device"] = 32
    run(single, run_dir=str(tmp_path / "single"))      # a reference: in this process, no start-up to pay
    a = torch.load(os.path.realpath(run_dir / "checkpoints" / "last"), weights_only=True)["model"]
    b = torch.load(os.path.realpath(tmp_path / "single" / "checkpoints" / "last"), weights_only=True)["model"]
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-6, rtol=1e-5), key


def test_several_hosts_need_a_shared_rendezvous_path(tmp_path, opts_file):
    opts = shard_opts(tmp_path)
    opts["distributed"]["rendezvous_path"] = ""
    proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"), "--shard-id", "0")
    assert proc.returncode == 2
    assert "opts.distributed.rendezvous_path" in proc.stderr and "shared" in proc.stderr
