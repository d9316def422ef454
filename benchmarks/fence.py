"""Cost of fencing a run (playground/restarts/fence.py): one `stat` of claim-<n+1> before each write.

    .venv/bin/python benchmarks/fence.py [--repeats 200000] [--epochs 2]

Measured in the same process:
- the check itself: `Fence.check` of an attempt whose successor's claim does not exist (the `stat` every write
  of a fenced run pays), and of an unfenced run (no PLAYGROUND_ATTEMPT: no system call);
- against the cheapest write it guards: appending one record line to metrics.jsonl (open, write, close);
- in a real run: a small playground run with PLAYGROUND_ATTEMPT set, counting the checks it made (every record
  point, log line, checkpoint step), their total cost at the measured price, as a share of the run's wall time.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from playground.restarts import fence as fence_module  # noqa: E402
from playground.restarts.fence import ATTEMPT_ENV, Fence, create_claim  # noqa: E402


def per_call(function, repeats: int) -> float:
    """Seconds per call, the best of 5 timed loops."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeats):
            function()
        best = min(best, (time.perf_counter() - started) / repeats)
    return best


def run_checks(folder: str, epochs: int) -> tuple[int, float]:
    """(checks made, wall seconds) of a small fenced run in `folder`."""
    from playground.api import run
    from tests.conftest import tiny_opts

    calls = [0]
    superseded = Fence.superseded

    def counted(self) -> bool:
        calls[0] += 1
        return superseded(self)
    fence_module.Fence.superseded = counted
    opts = tiny_opts()
    opts["epoch_iter"].update(num_epochs=epochs, num_train_sample_per_epoch=256)
    opts["output"].update(ckpt_every_n_iters=4)
    create_claim(folder, 1)
    os.environ[ATTEMPT_ENV] = "1"
    started = time.perf_counter()
    try:
        run(opts, run_dir=folder)
    finally:
        fence_module.Fence.superseded = superseded
        del os.environ[ATTEMPT_ENV]
    return calls[0], time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        fenced, unfenced = Fence(folder, 1), Fence(folder, None)
        check = per_call(lambda: fenced.check("metrics.jsonl"), args.repeats)
        free = per_call(lambda: unfenced.check("metrics.jsonl"), args.repeats)
        line = json.dumps({"index": 0, "kind": "interval", "epoch": 0, "iteration": 4, "train_loss": 2.25,
                           "test_loss": 2.1, "test_accuracy_top1": 0.25, "lr": 0.05}) + "\n"
        path = os.path.join(folder, "metrics.jsonl")

        def append() -> None:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(line)
        write = per_call(append, max(args.repeats // 10, 1000))
        checks, wall = run_checks(os.path.join(folder, "run"), args.epochs)
    print(f"fenced check (one stat):       {check * 1e6:8.2f} us")
    print(f"unfenced check (no attempt):   {free * 1e6:8.2f} us")
    print(f"metrics.jsonl append:          {write * 1e6:8.2f} us   check / append = {check / write:.3f}")
    print(f"a fenced run: {checks} checks in {wall:.2f} s, {checks * check * 1e3:.3f} ms of checks = "
          f"{checks * check / wall * 100:.4f}% of its wall time")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
