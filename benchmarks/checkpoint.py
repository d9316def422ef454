"""Checkpoint stall: how long the training loop is blocked per checkpoint, as a ratio to a plain synchronous
torch.save of the same state measured in the same run, and how long a restore takes.

    .venv/bin/python benchmarks/checkpoint.py [--arch resnet18] [--trials 3] [--checkpoints 8] [--every 5]
                                              [--threads N]

Each trial is a real playground run (torchvision ResNet built with weights=None, SGD with momentum, synthetic
64x64 images, CPU) that checkpoints every --every iterations. Measured in the same process:
- stall: the time each checkpoint call blocks the loop (gather the ranks' state, wait for the previous write
  if it is still in flight, copy the state into reused buffers, start the writer thread);
- plain save: torch.save of the same state (model, optimizer with momentum, position, RNG, records) to the
  same folder, synchronously, after the loop (no write in flight);
- step slowdown: training steps that started while a background write was running, against the median step
  without one; the extra seconds per checkpoint are the hidden cost of writing in the background;
- restore: a second run of the same command resuming from `last` (checksum check, load, into the network).
Target: median stall / median plain save <= 0.3. The first checkpoint allocates the buffers and is shown
apart. The load average is printed before and after, since the machine may be shared. When the compute threads
take every core (the default on CPU), the writer thread takes its CPU time from the training steps; --threads
leaves cores free to see the difference.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import checkpoint_components  # noqa: E402  (after the path set-up)
import checkpoint_timing as bench  # noqa: E402
import torch  # noqa: E402

from playground.checkpoints import checkpointer as ckpt, choice  # noqa: E402
from playground.api import run  # noqa: E402

BATCH, IMAGE = 16, 64


def opts(args: argparse.Namespace) -> dict:
    iterations = args.every * (args.checkpoints + 1)
    return {
        "input": {"input_name_py": "synthetic_input", "num_classes": 10, "synthetic_shape": [3, IMAGE, IMAGE],
                  "synthetic_train_size": iterations * BATCH, "synthetic_test_size": 16, "decode_threads": 0},
        "model": {"model_name_py": "checkpoint_components", "forward_pass_py": "checkpoint_components",
                  "optimizer_py": "sgd_optimizer", "rendezvous_py": "rendezvous_env",
                  "additional_override_py": "checkpoint_timing"},
        "model_param": {"pretrained_model": None, "memonger": False, "combine_spatial_bn": None,
                        "max_concurrent_distributed_ops": None, "base_learning_rate": 0.05, "seed": 3},
        "epoch_iter": {"num_train_sample_per_epoch": iterations * BATCH, "num_test_sample": 0, "num_epochs": 1,
                       "num_epochs_per_flow_schedule": 1, "num_train_iteration_per_test": 1_000_000,
                       "batch_per_device": BATCH, "num_test_iter": 0},
        "distributed": {"num_shards": 1, "num_gpus": 0, "first_gpu_id": 0, "num_cpus": 1, "first_cpu_id": 0},
        "output": {"gen_output_py": "output_generator", "metrics": [
            {"name": "train_loss", "meter_py": "ComputeLoss", "meter_kargs": {"blob_name": "loss"}, "is_train": True}],
            "plots": [], "progress": "none", "ckpt_save_interval": 0, "ckpt_save_best": False,
            "ckpt_every_n_iters": args.every},
    }


class Timed:
    """Wraps a method of a class to record how long each call takes (seconds, in `secs`)."""

    def __init__(self, owner: type, name: str) -> None:
        self.owner, self.name, self.original, self.secs = owner, name, getattr(owner, name), []
        timed = self

        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return timed.original(*args, **kwargs)
            finally:
                timed.secs.append(time.perf_counter() - started)
        setattr(owner, name, wrapper)

    def undo(self) -> None:
        setattr(self.owner, self.name, self.original)


def trial(args: argparse.Namespace, folder: str) -> dict:
    checkpoint_components.ARCH, bench.SKIP_TRAINING = args.arch, False
    bench.steps.clear()
    bench.baseline_secs.clear()
    stall, write = Timed(ckpt.Checkpointer, "_save"), Timed(ckpt.Checkpointer, "_write")
    try:
        result = run(opts(args), run_dir=folder)
    finally:
        stall.undo()
        write.undo()
    size = os.path.getsize(result["model"])
    clean = [secs for secs, writing in bench.steps[1:] if not writing]
    during = [secs for secs, writing in bench.steps[1:] if writing]
    step = statistics.median(clean)
    slowdown = sum(secs - step for secs in during) / len(stall.secs)

    bench.SKIP_TRAINING = True
    # the writer loads the state while choosing the checkpoint (choice.verified_state); a restore that did not
    # choose loads it in Checkpointer.restore: each module holds its own name for files.load_state
    restore, loads = Timed(ckpt.Checkpointer, "restore"), [Timed(ckpt, "load_state"), Timed(choice, "load_state")]
    try:
        run(opts(args), run_dir=folder)
    finally:
        restore.undo()
        for load in loads:
            load.undo()
    load_secs = [secs for load in loads for secs in load.secs]
    if len(restore.secs) != 1 or len(load_secs) != 1:
        raise SystemExit(f"checkpoint benchmark: expected one restore and one torch.load in the resumed run, timed "
                         f"{len(restore.secs)} and {len(load_secs)}: the checkpoint module's names changed")
    return {"size_mb": size / 1e6, "stalls": stall.secs, "writes": write.secs, "plain": statistics.median(
        bench.baseline_secs), "step": step, "slowdown": slowdown, "restore": restore.secs[0], "load": load_secs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="resnet18", help="a torchvision.models classifier (resnet18, resnet50...)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--checkpoints", type=int, default=8, help="checkpoints per trial")
    parser.add_argument("--every", type=int, default=5, help="iterations between checkpoints")
    parser.add_argument("--threads", type=int, help="torch compute threads (default: torch's, one per core)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores, {torch.get_num_threads()} compute "
          f"threads; {args.arch}, batch {BATCH} of {IMAGE}x{IMAGE}, a checkpoint every {args.every} iterations")
    results = []
    for number in range(args.trials):
        folder = tempfile.mkdtemp(prefix="checkpoint-bench-", dir=os.environ.get("BENCH_DIR"))
        try:
            r = trial(args, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        results.append(r)
        rest = r["stalls"][1:]
        print(f"trial {number + 1}: state {r['size_mb']:.1f} MB | stall first {r['stalls'][0] * 1e3:.0f} ms, then "
              f"median {statistics.median(rest) * 1e3:.1f} ms (max {max(rest) * 1e3:.1f}) | plain torch.save "
              f"{r['plain'] * 1e3:.0f} ms | ratio {statistics.median(rest) / r['plain']:.3f} | background write "
              f"{statistics.median(r['writes']) * 1e3:.0f} ms | step {r['step'] * 1e3:.0f} ms, slowed "
              f"{r['slowdown'] * 1e3:.0f} ms per checkpoint | restore {r['restore']:.2f} s (load {r['load']:.2f} s)")
    stall = statistics.median(s for r in results for s in r["stalls"][1:])
    plain = statistics.median(r["plain"] for r in results)
    slowdown = statistics.median(r["slowdown"] for r in results)
    print(f"median stall per checkpoint {stall * 1e3:.1f} ms / plain torch.save {plain * 1e3:.0f} ms = ratio "
          f"{stall / plain:.3f} (target <= 0.3); with the step slowdown while writing: "
          f"{(stall + slowdown) / plain:.3f}")
    print(f"restore {statistics.median(r['restore'] for r in results):.2f} s "
          f"(of which torch.load {statistics.median(r['load'] for r in results):.2f} s); "
          f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
