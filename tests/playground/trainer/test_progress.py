"""Terminal progress (playground/trainer/progress.py): bar or plain lines, full test passes as lines, the loss always."""
from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

from playground.api import run
from tests.conftest import HANG, REPO, tiny_opts


def test_a_run_with_no_metrics_declared_still_logs_the_training_loss(tmp_path):
    opts = tiny_opts()
    opts["output"].update(metrics=[], plots=[])
    result = run(opts, run_dir=str(tmp_path))
    losses = [v for v in result["metrics"]["train_loss"] if v is not None]
    assert len(losses) == 4 and all(v > 0 for v in losses)
    assert "train_loss" in (tmp_path / "train.log").read_text()


ON_A_TERMINAL = '''
import sys, types
from playground.trainer.progress import Progress, wants_bar
opts = {"output": {"progress": "auto", "metrics": []}, "epoch_iter": {"num_epochs": 1}}
bar = wants_bar(opts, 0)
progress = Progress(opts, types.SimpleNamespace(rank=0), 4)
for i in range(4):
    progress.step(0, i)
progress.record({"index": 0, "kind": "epoch", "epoch": 0, "epoch_iter": 4, "iteration": 4, "epochs": 1.0,
                 "samples_per_sec": None, "lr": None, "test_accuracy": 0.75})
progress.close()
print("BAR" if bar else "NO BAR", file=sys.stderr)
'''


def on_a_terminal(columns: int) -> str:
    """Run ON_A_TERMINAL with stderr on a pseudo-terminal of `columns` columns; what it printed there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-c", ON_A_TERMINAL], cwd=REPO, stderr=follower, env=env)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=HANG)
    os.close(leader)
    return out.decode(errors="replace")


def test_a_bar_shows_each_full_test_pass_as_a_line_and_zero_columns_get_no_bar():
    shown = on_a_terminal(100)
    assert "BAR" in shown and "NO BAR" not in shown
    assert "epoch 1.00 (end of epoch) | iter 4 | test_accuracy 0.7500" in shown
    assert "NO BAR" in on_a_terminal(0)
