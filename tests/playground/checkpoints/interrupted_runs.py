"""Real runs of `python AnyExpOnTerm.py` that are started, interrupted and resumed, and how to compare them.

A run uses `checkpoint_opts` (a tiny MLP with dropout, so resuming must restore every RNG) and the override
module `OVERRIDE`, which slows each iteration a little (so signals land inside training) and leaves a marker
`training.rank<R>.<pid>` in the run folder when a rank starts its first iteration (so a test knows which
processes to signal, and when). With PLAYGROUND_TEST_FSYNC_SLEEP set, every fsync sleeps that long (a slow
disk), so checkpoint writes stay in flight long enough for kills to land inside them; with
PLAYGROUND_TEST_KILL_AFTER=module.function:n the process SIGKILLs itself right after the n-th call of that
function (a kill at an exact step of a checkpoint write). A session that only finishes the run goes without
the slowing (`UNHINDERED`).
"""
from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from tests import zygote
from tests.conftest import HANG, REPO, tiny_opts
from tests.proc_state import alive

OVERRIDE_NAME = "slow_marked_iterations"
OVERRIDE = '''
import os, time
_marked = False
if os.environ.get("PLAYGROUND_TEST_FSYNC_SLEEP"):   # a slow disk: checkpoint writes stay in flight longer
    _fsync = os.fsync
    def _slow_fsync(fd):
        time.sleep(float(os.environ["PLAYGROUND_TEST_FSYNC_SLEEP"]))
        _fsync(fd)
    os.fsync = _slow_fsync
if os.environ.get("PLAYGROUND_TEST_KILL_AFTER"):     # "module.function:n": SIGKILL right after its n-th call
    import importlib, signal
    _target, _n = os.environ["PLAYGROUND_TEST_KILL_AFTER"].rsplit(":", 1)
    _module, _name = _target.rsplit(".", 1)
    _module = importlib.import_module(_module)
    _original, _calls = getattr(_module, _name), []
    def _then_die(*args, **kwargs):
        result = _original(*args, **kwargs)
        _calls.append(1)
        if len(_calls) == int(_n):
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    setattr(_module, _name, _then_die)
def fun_per_iter_b4RunNet(self, epoch, epoch_iter):
    global _marked
    if not _marked:
        _marked = True
        open(os.path.join(self.run_dir, f"training.rank{self.rank}.{os.getpid()}"), "w").close()
    time.sleep(float(os.environ.get("PLAYGROUND_TEST_ITER_SLEEP", "0.01")))
'''
TIMING_KEYS = ("samples_per_sec", "secs_per_train", "wall_time")
# For a session that only finishes the run (no signal or kill is aimed at it): full speed, a fast disk.
UNHINDERED = {"PLAYGROUND_TEST_ITER_SLEEP": "0", "PLAYGROUND_TEST_FSYNC_SLEEP": ""}


def checkpoint_opts(ranks: int = 1, **epoch_iter) -> dict:
    """3 epochs of 16 global batches of 16 over 200 samples (passes cross epochs), deterministic, with dropout."""
    opts = tiny_opts(model={"forward_pass_py": "mlp_forward", "additional_override_py": OVERRIDE_NAME},
                     model_param={"mlp_hidden": [32], "dropout": 0.25, "deterministic": True},
                     epoch_iter={"num_train_sample_per_epoch": 256, "num_epochs": 3, "batch_per_device": 16 // ranks,
                                 "num_train_iteration_per_test": 4, "num_test_iter": 1, **epoch_iter})
    opts["input"]["synthetic_train_size"] = 200
    opts["distributed"]["num_cpus"] = ranks
    opts["output"]["plots"] = []
    return opts


class RunFolder:
    """One run folder and the command that trains into it; every session is a new process of that command."""

    def __init__(self, tmp_path: Path, name: str, opts: dict, env: dict | None = None) -> None:
        self.dir = tmp_path / name
        self.opts_path = tmp_path / f"{name}.json"
        self.opts_path.write_text(json.dumps({"opts": opts}))
        (tmp_path / f"{OVERRIDE_NAME}.py").write_text(OVERRIDE)
        self.env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(tmp_path), **(env or {}))
        self.sessions = 0

    @classmethod
    def existing(cls, tmp_path: Path, name: str) -> "RunFolder":
        """The folder another process made and ran one session in: nothing is written (it may be read now)."""
        folder = cls.__new__(cls)
        folder.dir, folder.opts_path = tmp_path / name, tmp_path / f"{name}.json"
        folder.env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(tmp_path))
        folder.sessions = 1
        return folder

    def start(self, *extra: str, env: dict | None = None, preexec_fn=None) -> subprocess.Popen:
        """Start a session in its own process group (so the whole group can be signalled); `env` adds to the
        folder's environment for this session only; `preexec_fn` runs in the child before the command."""
        for marker in glob.glob(str(self.dir / "training.*")):
            os.unlink(marker)
        self.sessions += 1
        log = open(self.dir.parent / f"{self.dir.name}.session{self.sessions}.log", "w")
        command = [sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file", str(self.opts_path),
                   "--run-dir", str(self.dir), *extra]
        with log:
            return zygote.start(command, env=dict(self.env, **(env or {})), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=preexec_fn)

    def run(self, *extra: str, env: dict | None = None, preexec_fn=None, timeout: float = HANG) -> tuple[int, str]:
        """A whole session; its exit code and output."""
        process = self.start(*extra, env=env, preexec_fn=preexec_fn)
        code = process.wait(timeout=timeout)
        return code, self.output()

    def output(self) -> str:
        return (self.dir.parent / f"{self.dir.name}.session{self.sessions}.log").read_text()

    def rank_pids(self) -> dict[int, int]:
        """Ranks that have started training in this session: rank -> pid."""
        found = {}
        for marker in glob.glob(str(self.dir / "training.rank*")):
            rank, pid = os.path.basename(marker).removeprefix("training.rank").split(".")
            found[int(rank)] = int(pid)
        return found

    def wait_for_training(self, process: subprocess.Popen, ranks: int, timeout: float = HANG) -> bool:
        """Wait until every rank has begun its first iteration; False when the session ended first."""
        deadline = time.monotonic() + timeout
        while len(self.rank_pids()) < ranks:
            if process.poll() is not None:
                return False
            if time.monotonic() > deadline:
                raise TimeoutError(f"no training began in {self.dir} within {timeout} s:\n{self.output()}")
            time.sleep(0.01)
        return True

    def checkpoint(self, pointer: str = "last") -> dict:
        return torch.load(os.path.realpath(self.dir / "checkpoints" / pointer), weights_only=True)

    def progress(self) -> float:
        """Fraction of the run's iterations that the `last` checkpoint holds (0 without one)."""
        info_file = os.path.splitext(os.path.realpath(self.dir / "checkpoints" / "last"))[0] + ".json"
        try:
            info = json.loads(Path(info_file).read_text())
        except (OSError, ValueError):
            return 0.0
        opts = json.loads(self.opts_path.read_text())["opts"]
        global_batch = opts["epoch_iter"]["batch_per_device"] * opts["distributed"]["num_cpus"]
        iterations = opts["epoch_iter"]["num_train_sample_per_epoch"] // global_batch * opts["epoch_iter"]["num_epochs"]
        return info["global_iter"] / iterations

    def results(self) -> dict:
        return json.loads((self.dir / "results.json").read_text())

    def records(self) -> list[dict]:
        return [json.loads(line) for line in (self.dir / "metrics.jsonl").read_text().splitlines()]


def kill_group(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def wait_gone(pids: list[int], timeout: float = HANG) -> None:
    """Wait until none of `pids` is alive (a killed rank's siblings may still be finishing a write)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while alive(pid):
            if time.monotonic() > deadline:
                raise TimeoutError(f"process {pid} is still alive {timeout} s after its run was stopped")
            time.sleep(0.02)


def assert_same_training_state(a: dict, b: dict) -> None:
    """Model and optimizer of two checkpoints are bitwise equal, and they are at the same position."""
    assert (a["epoch"], a["epoch_iter"], a["global_iter"]) == (b["epoch"], b["epoch_iter"], b["global_iter"])
    _assert_equal_tensors(a["model"], b["model"], "model")
    _assert_equal_tensors(a["optimizer"]["state"], b["optimizer"]["state"], "optimizer")


def _assert_equal_tensors(a, b, where: str) -> None:
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            _assert_equal_tensors(a[key], b[key], f"{where}.{key}")
    else:
        assert a == b, where


def assert_same_records(resumed: RunFolder, whole: RunFolder) -> None:
    """The metrics lists and metrics.jsonl of a resumed run equal an uninterrupted run's, timings aside."""
    a, b = resumed.results()["metrics"], whole.results()["metrics"]
    assert a.keys() == b.keys()
    for name in a:
        if name not in TIMING_KEYS:
            assert a[name] == b[name], f"metrics list {name}"
    lines = resumed.records()
    assert [r["index"] for r in lines] == list(range(len(lines))), "metrics.jsonl has duplicated or missing points"
    strip = [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in lines]
    assert strip == [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in whole.records()]
