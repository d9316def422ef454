"""Data parallel runs with real processes on CPU/gloo: launch, equivalence, evaluation, torchrun, faults
(playground/launch/spawn.py, worker.py, process_group.py, topology.py)."""
from __future__ import annotations

import json
import os
import signal
import sys
import time

import pytest
import torch

from tests.conftest import HANG, REPO, run_cli, tiny_opts

pytestmark = pytest.mark.slow


def mlp_opts(**epoch_iter) -> dict:
    """Tiny opts with an MLP (no batch norm), so data parallel and single-process runs can match exactly."""
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward"}, model_param={"mlp_hidden": [16]},
                     epoch_iter={"num_train_sample_per_epoch": 128, "num_epochs": 2, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 2, "num_test_iter": 1, **epoch_iter})
    opts["output"]["plots"] = []
    return opts


def train(tmp_path, opts_file, name, opts, *extra, env=None, timeout=HANG):
    run_dir = tmp_path / name
    proc = run_cli("--parameters-file", opts_file(opts, f"{name}.json"), "--run-dir", str(run_dir), *extra,
                   env=env, timeout=timeout)
    return proc, run_dir


def train_here(tmp_path, name, opts):
    """A one-process reference run in this process (no command-line start-up to pay); its run folder."""
    from playground.api import run
    run_dir = tmp_path / name
    run(opts, run_dir=str(run_dir))
    return run_dir


def final_weights(run_dir) -> dict:
    last = os.path.join(run_dir, "checkpoints", "last")
    return torch.load(os.path.realpath(last), weights_only=True)["model"]


def test_two_ranks_of_b_reach_the_weights_of_one_rank_of_2b(tmp_path, opts_file):
    two = mlp_opts(batch_per_device=8)
    two["distributed"]["num_cpus"] = 2
    proc2, dir2 = train(tmp_path, opts_file, "two", two)
    assert proc2.returncode == 0, proc2.stderr
    dir1 = train_here(tmp_path, "one", mlp_opts(batch_per_device=16))
    a, b = final_weights(dir2), final_weights(dir1)
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-6, rtol=1e-5), key
    # rank 0 alone wrote: one metrics line per record point, one set of checkpoints
    lines = (dir2 / "metrics.jsonl").read_text().splitlines()
    results = json.loads((dir2 / "results.json").read_text())
    assert len(lines) == results["records"] == len(results["metrics"]["epochs"])
    assert sorted(p.name for p in (dir2 / "checkpoints").glob("*.pt")) == ["model_checkpoint_epoch1.pt",
                                                                           "model_checkpoint_epoch2.pt"]
    # the train loss is the mean over the global batch, so both runs report the same values
    one = json.loads((dir1 / "results.json").read_text())["metrics"]["train_loss"]
    two_ranks = results["metrics"]["train_loss"]
    assert [v is None for v in two_ranks] == [v is None for v in one]
    assert [v for v in two_ranks if v is not None] == pytest.approx([v for v in one if v is not None], rel=1e-5)


def test_two_ranks_count_every_test_sample_once(tmp_path, opts_file, monkeypatch):
    """Evaluation of the same weights: 41 test samples split 21/20 between 2 ranks, no padding duplicates."""
    trained = train_here(tmp_path, "trained", mlp_opts(num_epochs=1))
    checkpoint = os.path.realpath(trained / "checkpoints" / "last")
    (tmp_path / "no_training.py").write_text("def run_training_net(self):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))    # the one-rank evaluation runs here, the two ranks as a command
    for name in ("no_training", "sample_counter"):   # other tests' modules of these names
        monkeypatch.delitem(sys.modules, name, raising=False)
    accuracy = {}
    for ranks in (1, 2):
        opts = mlp_opts(num_epochs=1, num_test_sample=41, test_batch_per_device=4, num_test_iter=0,
                        num_train_iteration_per_test=100)
        opts["input"]["synthetic_test_size"] = 60
        opts["model"]["additional_override_py"] = "no_training"
        opts["model_param"].update(pretrained_model=checkpoint, reset_epoch=True)
        opts["distributed"]["num_cpus"] = ranks
        opts["output"]["ckpt_restart_mode"] = "off"
        opts["output"]["metrics"].append({"name": "test_samples", "meter_py": "sample_counter.CountSamples",
                                          "is_train": False})
        (tmp_path / "sample_counter.py").write_text(
            "from playground.trainer.meters import Meter\n"
            "class CountSamples(Meter):\n"
            "    def Add(self, blobs):\n"
            "        self.total = self.total + len(blobs['label'])\n"
            "        self.count = self.count + 1\n"
            "    def Compute(self):\n"
            "        return float(self.total)\n")
        if ranks == 1:
            run_dir = train_here(tmp_path, "eval1", opts)
        else:
            proc, run_dir = train(tmp_path, opts_file, "eval2", opts, env={"PYTHONPATH": str(tmp_path)})
            assert proc.returncode == 0, proc.stderr
        metrics = json.loads((run_dir / "results.json").read_text())["metrics"]
        assert metrics["test_samples"][-1] == 41.0
        accuracy[ranks] = (metrics["test_accuracy_top1"][-1], metrics["test_loss"][-1])
    assert accuracy[1][0] == accuracy[2][0]
    assert accuracy[1][1] == pytest.approx(accuracy[2][1], rel=1e-6)


def test_a_run_under_torchrun_uses_the_given_ranks(tmp_path, opts_file):
    opts = mlp_opts(num_epochs=1)
    opts["distributed"]["num_cpus"] = 2
    run_dir = tmp_path / "torchrun"
    command = ["-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(_free_port()),
               str(REPO / "AnyExpOnTerm.py"), "--parameters-file", opts_file(opts), "--run-dir", str(run_dir)]
    import subprocess
    proc = subprocess.run([sys.executable, *command], capture_output=True, text=True, timeout=HANG,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert proc.returncode == 0, proc.stderr
    assert "ranks started by torchrun" not in proc.stderr      # (that text belongs to --dry-run)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["metrics"]["epochs"][-1] == 1.0
    assert len((run_dir / "metrics.jsonl").read_text().splitlines()) == results["records"]


def test_a_killed_rank_stops_the_run_with_its_name_and_leaves_the_last_checkpoint(tmp_path, opts_file):
    (tmp_path / "kill_rank1.py").write_text(
        "import os, signal\n"
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        "    if epoch == 0 and epoch_iter == 0:\n"
        "        open(os.path.join(self.run_dir, f'pid{self.rank}'), 'w').write(str(os.getpid()))\n"
        "    if self.rank == 1 and epoch == 1 and epoch_iter == 3:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n")
    opts = mlp_opts(num_epochs=3)
    opts["distributed"].update(num_cpus=2, collective_timeout=600)
    opts["model"]["additional_override_py"] = "kill_rank1"
    started = time.monotonic()
    proc, run_dir = train(tmp_path, opts_file, "killed", opts, env={"PYTHONPATH": str(tmp_path)})
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert "rank 1" in proc.stderr and "SIGKILL" in proc.stderr
    assert elapsed < 600    # stopped on the death, not by rank 0 waiting out its collective timeout
    for rank in (0, 1):
        pid = int((run_dir / f"pid{rank}").read_text())
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    state = torch.load(os.path.realpath(run_dir / "checkpoints" / "last"), weights_only=True)
    assert state["epoch"] == 1


def test_an_exception_on_one_rank_names_it(tmp_path, opts_file):
    (tmp_path / "fail_rank1.py").write_text(
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        "    if self.rank == 1 and epoch_iter == 2:\n"
        "        raise RuntimeError('injected failure on rank one')\n")
    opts = mlp_opts(num_epochs=1)
    opts["distributed"].update(num_cpus=2, collective_timeout=300)
    opts["model"]["additional_override_py"] = "fail_rank1"
    proc, _ = train(tmp_path, opts_file, "failed", opts, env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 1
    # rank 1 prints its own traceback; rank 0, a bystander, names rank 1; the launcher blames rank 1 alone
    assert "rank 0 stopped because rank 1 failed: RuntimeError: injected failure on rank one" in proc.stderr
    assert "playground: rank 1 (pid" in proc.stderr and "playground: rank 0 (pid" not in proc.stderr


def _free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_rank_stuck_in_a_hook_is_named_as_the_one_that_hung(tmp_path, opts_file):
    (tmp_path / "hang_rank1.py").write_text(
        "import time\n"
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        "    if self.rank == 1 and epoch_iter == 2:\n"
        "        time.sleep(3000)\n")
    opts = mlp_opts(num_epochs=1)
    opts["distributed"].update(num_cpus=2, collective_timeout=5)
    opts["model"]["additional_override_py"] = "hang_rank1"
    started = time.monotonic()
    proc, _ = train(tmp_path, opts_file, "hung", opts, env={"PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 1, proc.stderr
    assert time.monotonic() - started < 600    # named by the 5 s collective timeout, not the 3000 s sleep
    last = proc.stderr.strip().splitlines()[-1]
    assert "playground: rank 1 (pid" in last and "hung" in last, proc.stderr
    assert "playground: rank 0 (pid" not in proc.stderr and "killed by SIGKILL" not in proc.stderr
