"""A stand-in trial program for sweep tests: speaks the run-folder contract of `playground run` in ~50 ms.

Same arguments (--parameters-file, --set KEY=VALUE, --run-dir), same files (opts.json, metrics.jsonl with
"interval" and "epoch" records, results.json, a checkpoint per epoch), same exit codes (0 done, 2 unusable
opts, 75 stopped by SIGTERM after a checkpoint) and exact resume from the checkpoint. No torch: the learning
curve is a closed-form function of the parameters, so sweep tests can run dozens of trials in seconds.
The sweep layer under test is real; only the trainer is replaced.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time

from playground.restarts.fence import Fence, Fenced

stop_requested = False
epochs_at_stop = -1     # epochs finished when SIGTERM came (what a pause or pruning test checks)
progress = 0            # epochs finished so far
stop_time = 0.0         # when SIGTERM came
fence: Fence | None = None


def main() -> int:
    try:
        return run()
    except Fenced as err:
        print(f"contract trial: {err}", file=sys.stderr)
        return 75


def _open(path: str, mode: str):
    """open() for writing, after the fence check (a superseded attempt writes nothing)."""
    assert fence is not None
    fence.check(os.path.basename(path))
    return open(path, mode, encoding="utf-8")


def run() -> int:
    global fence, progress
    began = time.time()
    parser = argparse.ArgumentParser()
    parser.add_argument("--parameters-file", required=True)
    parser.add_argument("--defaults-file")
    parser.add_argument("--set", action="append", default=[], dest="sets")
    parser.add_argument("--run-dir", required=True)
    args = parser.parse_args()
    with open(args.parameters_file, encoding="utf-8") as handle:
        opts = json.load(handle)["opts"]
    # a start-up this long before the stop handler exists (a real run imports torch): SIGTERM meanwhile kills it
    time.sleep(float(opts["model_param"].get("contract_startup_seconds", 0)))
    signal.signal(signal.SIGTERM, _request_stop)
    for item in args.sets:
        key, _, text = item.partition("=")
        section, _, name = key.partition(".")
        try:
            opts.setdefault(section, {})[name] = json.loads(text)
        except json.JSONDecodeError:
            print(f"error: --set {item}: not JSON", file=sys.stderr)
            return 2
    fence = Fence.from_env(args.run_dir)
    os.makedirs(args.run_dir, exist_ok=True)
    with _open(os.path.join(args.run_dir, "opts.json"), "w") as handle:
        json.dump({"opts": opts}, handle)
    epochs = int(opts["epoch_iter"]["num_epochs"])
    lr = float(opts["model_param"]["base_learning_rate"])
    decay = float(opts["model_param"].get("weight_decay", 0.0))
    seconds = float(opts["model_param"].get("contract_epoch_seconds", 0.02))
    busy = bool(opts["model_param"].get("contract_busy", False))  # burn CPU instead of sleeping (benchmarks)
    attempt = _count_attempt(args.run_dir)
    param = opts["model_param"]
    if attempt <= int(param.get("contract_fail_attempts", 0)) or lr in param.get("contract_fail_learning_rates", []):
        print(f"contract trial: failing attempt {attempt} on purpose", file=sys.stderr)
        return 1
    if param.get("contract_oom"):
        print("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", file=sys.stderr)
        return 1
    preempt = attempt <= int(param.get("contract_preempt_attempts", 0))
    checkpoint = os.path.join(args.run_dir, "checkpoint.json")
    metrics = os.path.join(args.run_dir, "metrics.jsonl")
    done, records = 0, []
    if os.path.isfile(checkpoint):
        with open(checkpoint, encoding="utf-8") as handle:
            state = json.load(handle)
        done, records = state["epochs_done"], state["records"]
        print(f"contract trial: resumed from {os.path.realpath(checkpoint)} after {done} epoch(s)", file=sys.stderr)
    _rewrite(metrics, records)
    hold = param.get("contract_hold_file")   # wait for this file before training (tests that need overlap)
    while hold and not os.path.exists(hold) and not stop_requested:
        time.sleep(0.02)
    for epoch in range(done, epochs):
        progress = epoch
        with _open(os.path.join(args.run_dir, "contract_epochs"), "a") as handle:
            handle.write(f"{epoch}\n")    # every epoch begun, for tests that count work lost to kills
        _spend(seconds, busy)
        loss = curve(lr, decay, epoch + 1)
        for kind in ("interval", "epoch"):
            record = {"index": len(records), "kind": kind, "epoch": epoch, "iteration": 4 * (epoch + 1),
                      "epochs": float(epoch + 1), "lr": lr, "wall_time": 0.0, "test_loss": loss,
                      "test_accuracy_top1": 1.0 - loss / 4.0}
            records.append(record)
            with _open(metrics, "a") as handle:
                handle.write(json.dumps(record) + "\n")
        _write_checkpoint(checkpoint, epoch + 1, records)
        if (stop_requested or preempt) and epoch + 1 < epochs:
            if stop_requested:
                print(f"contract trial: SIGTERM at {stop_time!r} in epoch {epochs_at_stop + 1}, stopped after "
                      f"epoch {epoch + 1}", file=sys.stderr)
            return 75
    with _open(os.path.join(args.run_dir, "results.json"), "w") as handle:
        json.dump({"metrics": {"test_loss": [r["test_loss"] for r in records]}}, handle)
    with _open(os.path.join(args.run_dir, "contract_times.json"), "w") as handle:
        json.dump({"began": began, "finished": time.time()}, handle)
    return 0


def _count_attempt(run_dir: str) -> int:
    path = os.path.join(run_dir, "contract_attempts")
    count = int(open(path).read()) + 1 if os.path.isfile(path) else 1
    with _open(path + ".tmp", "w") as handle:   # replaced whole: a kill or a full disk midway never empties it
        handle.write(str(count))
    fence.check(os.path.basename(path))
    os.replace(path + ".tmp", path)
    return count


def _spend(seconds: float, busy: bool) -> None:
    if not busy:
        time.sleep(seconds)
        return
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def curve(lr: float, decay: float, epoch: int) -> float:
    """Loss after `epoch` epochs: best near lr = 0.1, decaying towards a floor set by the parameters."""
    floor = (math.log10(lr) + 1.0) ** 2 + 100 * decay
    return floor + 2.0 / epoch


def _request_stop(signum, frame) -> None:
    global stop_requested, epochs_at_stop, stop_time
    if not stop_requested:
        epochs_at_stop, stop_time = progress, time.time()
    stop_requested = True


def _rewrite(path: str, records: list[dict]) -> None:
    tmp = path + ".tmp"
    with _open(tmp, "w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)
    fence.check(os.path.basename(path))
    os.replace(tmp, path)


def _write_checkpoint(path: str, done: int, records: list[dict]) -> None:
    tmp = path + ".tmp"
    with _open(tmp, "w") as handle:
        json.dump({"epochs_done": done, "records": records}, handle)
    fence.check(os.path.basename(path))
    os.replace(tmp, path)
    # the `last` pointer of playground's checkpoint folder, which `sweep continue` follows
    pointer = os.path.join(os.path.dirname(path), "checkpoints", "last")
    if not os.path.islink(pointer):
        fence.check("checkpoints/last")
        os.makedirs(os.path.dirname(pointer), exist_ok=True)
        os.symlink(os.path.join("..", os.path.basename(path)), pointer)


if __name__ == "__main__":
    sys.exit(main())
