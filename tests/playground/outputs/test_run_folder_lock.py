"""One live run per run folder (playground/outputs/run_folder_lock.py): a second run on a folder whose run trains
is refused, exit 2, naming the live pid, and moves nothing; the lock dies with its holder (a kill, a stop), the
attempts of `--max-restarts` run under their supervisor's lock, and a sweep's later attempt takes the folder
over from an earlier one that only looked dead (the claim fences the earlier one out)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from playground.restarts.fence import ATTEMPT_ENV, create_claim
from tests import zygote
from tests.conftest import HANG, run_cli, tiny_opts
from tests.playground.checkpoints.interrupted_runs import UNHINDERED, RunFolder, checkpoint_opts
from tests.playground.restarts.test_fenced_runs import wait_for

SLOW = {"PLAYGROUND_TEST_ITER_SLEEP": "0.05"}


def _records(run_dir: Path) -> int:
    path = run_dir / "metrics.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _second_run(run: RunFolder, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli("--parameters-file", str(run.opts_path), "--run-dir", str(run.dir), *extra,
                   env={"PYTHONPATH": run.env["PYTHONPATH"], **UNHINDERED, **(env or {})})


def test_a_second_run_on_a_training_folder_is_refused_naming_the_live_pid_and_moves_nothing(tmp_path):
    run = RunFolder(tmp_path, "run", checkpoint_opts(num_epochs=8), env={"PLAYGROUND_TEST_ITER_SLEEP": "0.2"})
    first = run.start()
    try:
        wait_for(lambda: _records(run.dir) >= 1, first, run.output)
        opts_file = run.dir / "opts.json"
        opts_before = (opts_file.read_bytes(), opts_file.stat().st_mtime_ns)
        second = _second_run(run, "--set", "epoch_iter.num_epochs=2")
        assert second.returncode == 2, second.stderr
        line = second.stderr.strip().splitlines()[-1]
        assert f"--run-dir {run.dir}: a live run holds this folder (pid {first.pid} on " in line, second.stderr
        assert (opts_file.read_bytes(), opts_file.stat().st_mtime_ns) == opts_before
        assert not (run.dir / "earlier").exists() and (run.dir / "metrics.jsonl").exists()
        records = _records(run.dir)
        wait_for(lambda: _records(run.dir) > records, first, run.output)     # the first run trains on
    finally:
        os.killpg(first.pid, signal.SIGTERM)
    assert first.wait(timeout=HANG) == 75, run.output()
    code, output = run.run(env=UNHINDERED)              # the stopped run's lock went with it: the same command resumes
    assert code == 0, output


def test_a_killed_runs_lock_is_gone_so_the_same_command_resumes(tmp_path):
    run = RunFolder(tmp_path, "run", checkpoint_opts(), env=SLOW)
    first = run.start()
    wait_for(lambda: (run.dir / "checkpoints" / "last").exists(), first, run.output)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=HANG)
    holder = json.loads((run.dir / "run.lock").read_text())
    assert holder["pid"] == first.pid                   # the record stays; the kernel released the lock itself
    code, output = run.run(env=UNHINDERED)
    assert code == 0 and "resumed from" in (run.dir / "train.log").read_text(), output


def test_the_attempts_of_max_restarts_run_under_their_supervisors_lock_and_others_are_refused(tmp_path):
    marker, hold = tmp_path / "failed-once", tmp_path / "hold"
    (tmp_path / "fail_once.py").write_text(
        "import os, time\n"
        "def fun_per_iter_b4RunNet(self, epoch, epoch_iter):\n"
        f"    if os.path.exists({str(hold)!r}):\n"
        "        time.sleep(0.05)\n"
        f"    if epoch == 1 and not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        raise ValueError('injected failure in epoch 2 of the first attempt')\n")
    hold.write_text("")
    opts = tiny_opts(model={"additional_override_py": "fail_once"}, epoch_iter={"num_epochs": 30})
    (tmp_path / "opts.json").write_text(json.dumps({"opts": opts}))
    run_dir = tmp_path / "run"
    supervisor = zygote.start([sys.executable, "-m", "playground", "run", "--parameters-file",
                               str(tmp_path / "opts.json"), "--run-dir", str(run_dir), "--max-restarts", "1"],
                              env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONUNBUFFERED": "1"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + HANG
        while not _second_attempt_started(run_dir):
            assert supervisor.poll() is None and time.monotonic() < deadline, supervisor.communicate()
            time.sleep(0.05)
        other = run_cli("--parameters-file", str(tmp_path / "opts.json"), "--run-dir", str(run_dir),
                        env={"PYTHONPATH": str(tmp_path)})
        assert other.returncode == 2 and f"(pid {supervisor.pid} on " in other.stderr, other.stderr
    finally:
        hold.unlink()
    _, err = supervisor.communicate(timeout=HANG)
    assert supervisor.returncode == 0 and "restart 1 of max_restarts 1" in err, err   # attempt 2 was not refused


def _second_attempt_started(run_dir: Path) -> bool:
    path = run_dir / "attempts.jsonl"
    return path.exists() and any(json.loads(line).get("attempt") == 2 for line in path.read_text().splitlines())


def test_a_later_attempt_takes_the_folder_over_from_one_that_only_looked_dead(tmp_path):
    """Attempt 1 is stopped (SIGSTOP: alive, holding the lock); the agent that adopts the trial creates claim-2
    and starts attempt 2, which trains; attempt 1, woken, is fenced out (exit 75) and a plain run is refused."""
    run = RunFolder(tmp_path, "trial", checkpoint_opts(), env=SLOW)
    assert create_claim(str(run.dir), 1)
    first = run.start(env={ATTEMPT_ENV: "1"})
    wait_for(lambda: _records(run.dir) >= 1, first, run.output)
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        assert create_claim(str(run.dir), 2)
        plain = _second_run(run)
        assert plain.returncode == 2 and f"(pid {first.pid} on " in plain.stderr, plain.stderr
        adopted = _second_run(run, env={ATTEMPT_ENV: "2"})
        assert adopted.returncode == 0, adopted.stderr
        assert f"takes {run.dir} over from attempt 1 (pid {first.pid}" in adopted.stderr
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    assert first.wait(timeout=HANG) == 75, run.output()
    assert json.loads((run.dir / "run.lock").read_text())["attempt"] == 2
