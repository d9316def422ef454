"""Data-parallel scaling: training throughput with 1, 2, ... processes, as speed-up over one process.

    .venv/bin/python benchmarks/scaling.py [--trials 3] [--batch 64] [--iters 60]

Each trial runs `python AnyExpOnTerm.py` with 1 process, then 2 (CPU, gloo; per-device batch fixed, so the
global batch grows with the processes: weak scaling, as DDP is used), alternating, and reads the samples/s
the run itself recorded (the first record point excluded as warm-up). When CUDA is present it also runs
1, 2, 4, ... N GPU processes (NCCL). Prints the median samples/s of each and the speed-up ratio against
one process measured in the same run. On a CPU host the processes share its cores (each gets cores / N
threads), so the CPU speed-up shows the framework's overhead more than a gain.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def opts(processes: int, device: str, batch: int, iters: int) -> dict:
    per_test = max(1, iters // 6)
    return {
        "input": {"input_name_py": "synthetic_input", "num_classes": 10, "synthetic_shape": [3, 32, 32],
                  "synthetic_train_size": 4096, "synthetic_test_size": 64, "decode_threads": 0},
        "model": {"model_name_py": "basic_model", "forward_pass_py": "small_cnn_forward",
                  "optimizer_py": "sgd_optimizer", "rendezvous_py": "rendezvous_env"},
        "model_param": {"pretrained_model": None, "memonger": False, "combine_spatial_bn": False,
                        "max_concurrent_distributed_ops": None, "base_learning_rate": 0.05, "seed": 3,
                        "cnn_channels": [32, 64, 128]},
        "epoch_iter": {"num_train_sample_per_epoch": iters * batch * processes, "num_test_sample": 64,
                       "num_epochs": 1, "num_epochs_per_flow_schedule": 1, "num_train_iteration_per_test": per_test,
                       "batch_per_device": batch, "num_test_iter": 0},
        "distributed": {"num_shards": 1, "num_gpus": processes if device == "cuda" else 0, "first_gpu_id": 0,
                        "num_cpus": processes if device == "cpu" else 1, "first_cpu_id": 0},
        "output": {"gen_output_py": "output_generator", "metrics": [], "ckpt_save_interval": 0,
                   "ckpt_save_best": False, "ckpt_restart_mode": "off", "progress": "none"},
    }


def throughput(processes: int, device: str, args: argparse.Namespace, workdir: str) -> float:
    run_dir = tempfile.mkdtemp(dir=workdir)
    path = os.path.join(run_dir, "opts.in.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"opts": opts(processes, device, args.batch, args.iters)}, handle)
    proc = subprocess.run([sys.executable, os.path.join(REPO, "AnyExpOnTerm.py"), "--parameters-file", path,
                           "--run-dir", run_dir], capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise SystemExit(f"{processes} x {device} failed:\n{proc.stderr[-3000:]}")
    with open(os.path.join(run_dir, "results.json"), encoding="utf-8") as handle:
        rates = [r for r in json.load(handle)["metrics"]["samples_per_sec"] if r]
    return statistics.median(rates[1:] or rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="batch per process")
    parser.add_argument("--iters", type=int, default=60, help="iterations per run")
    args = parser.parse_args()
    import torch
    configs = [("cpu", n) for n in (1, 2)]
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if gpus:
        configs += [("cuda", n) for n in sorted({1, 2, 4, 8, gpus}) if n <= gpus]
    print(f"host: {os.cpu_count()} cores, {gpus} CUDA device(s); batch {args.batch} per process, "
          f"{args.iters} iterations per run, {args.trials} trials, load {os.getloadavg()[0]:.2f}")
    if not gpus:
        print("GPU runs skipped: no CUDA device here (1, 2, 4 ... GPU processes with NCCL)")
    rates: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory() as workdir:
        for trial in range(args.trials):
            for config in configs:
                rates[config].append(throughput(config[1], config[0], args, workdir))
            print(f"trial {trial + 1}: " + ", ".join(f"{n}x{d} {rates[(d, n)][-1]:.0f}/s" for d, n in configs))
    print(f"\n{'processes':>12} {'samples/s':>12} {'speed-up':>9} {'efficiency':>11}")
    for device in dict.fromkeys(d for d, _ in configs):
        base = statistics.median(rates[(device, 1)])
        for d, n in configs:
            if d == device:
                rate = statistics.median(rates[(d, n)])
                print(f"{f'{n} x {d}':>12} {rate:12.0f} {rate / base:9.2f} {rate / base / n:11.2f}")


if __name__ == "__main__":
    main()
