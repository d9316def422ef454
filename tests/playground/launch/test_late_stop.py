"""A run whose results are written ends with exit 0 even when a stop signal arrives late (playground/launch/spawn.py):
Slurm's SIGTERM at the time limit, or srun's to a finished step, must not turn a finished run into exit 143."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.conftest import REPO, tiny_opts


def test_a_finished_run_hit_by_a_late_sigterm_exits_0(tmp_path):
    opts = tmp_path / "opts.json"
    opts.write_text(json.dumps({"opts": tiny_opts()}))
    for _ in range(3):   # the process may finish before the signal: try again
        run_dir = tmp_path / f"run{_}"
        process = subprocess.Popen([sys.executable, str(REPO / "AnyExpOnTerm.py"), "--parameters-file", str(opts),
                                    "--run-dir", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        for line in process.stdout:
            if line.startswith("run finished:"):   # printed after the results, the trainer and its handlers are gone
                os.kill(process.pid, signal.SIGSTOP)
                break
        alive = process.poll() is None
        if alive:
            os.kill(process.pid, signal.SIGTERM)
            os.kill(process.pid, signal.SIGCONT)
        process.stdout.read()
        code = process.wait(timeout=120)
        if alive:
            assert code == 0
            assert (run_dir / "results.json").is_file()
            return
    raise AssertionError("each run ended before the signal could be sent")
