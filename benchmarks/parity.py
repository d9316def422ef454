"""Playground against a hand-written PyTorch loop: same network, data, seed, batch size and data order.

    .venv/bin/python benchmarks/parity.py [--trials 3] [--epochs 6] [--samples 2048] [--batch 64] [--case features]
                                          [--peers]

Each trial runs the plain loop and the playground run in fresh child processes, alternating, and prints:
final weights bitwise equal (yes/no), the median step-time ratio playground/plain (epoch time / iterations,
the first epoch excluded as warm-up; playground runs with no test model and no checkpoints, so the step time
is the loop itself), and the peak-memory ratio (peak RSS of the process on CPU, peak CUDA memory on a GPU).
Targets: bitwise equal weights, step-time ratio <= 1.01, memory ratio <= 1.02. A table then gives, for each,
the median step time, the whole child process's wall time (start-up, imports and the run) and the peak memory,
each also as a ratio to the plain loop.

`--peers` adds a third child: the same job trained by a PyTorch Lightning Trainer (benchmarks/parity_lightning.py;
the optional `bench` extra: pip install -e '.[bench]'), the framework most users would pick instead.

`--case features` trains both with bf16 autocast (`--precision fp16`: fp16 with a gradient scaler), gradient
accumulation over 4 micro-batches, clipping by norm and an EMA of the weights (the hand-written loop doing each
by hand); the final weights and the EMA weights must be bitwise equal (an iteration is then 4 batches).

On CUDA every child uses deterministic kernels (torch.use_deterministic_algorithms, CUBLAS_WORKSPACE_CONFIG; the
playground run through model_param.deterministic): without them two runs of the same loop already differ (seen on
an H200 in fp32), and the bitwise comparison would say nothing about the loops.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO, HERE]


FEATURES = {"precision": "bf16", "accum": 4, "clip": 1.0, "ema": 0.99}
PLAIN = {"precision": "fp32", "accum": 1, "clip": 0.0, "ema": 0.0}


def config(args: argparse.Namespace) -> dict:
    return {"seed": 5, "deterministic": args.device == "cuda", "samples": args.samples, "batch": args.batch,
            "epochs": args.epochs, "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "classes": 10,
            "shape": [3, 32, 32], "device": args.device,
            **(FEATURES if getattr(args, "case", "plain") == "features" else PLAIN),
            **({"precision": args.precision} if getattr(args, "case", "plain") == "features"
               and getattr(args, "precision", None) else {})}


def run_playground(c: dict, run_dir: str) -> tuple[dict, list[float]]:
    from playground.api import run
    from parity_job import playground_opts
    result = run(playground_opts(c), run_dir=run_dir)
    return result["weights"], result["epoch_times"]


def run_plain(c: dict) -> tuple[dict, list[float]]:
    """The hand-written loop (with the features of `c` written out by hand)."""
    import contextlib
    import numpy as np
    import torch
    from torch import nn
    from torch.utils.data import DataLoader

    from components.inputs.synthetic_input import SyntheticDataset, make_split
    from parity_components import make_net
    from parity_job import deterministic_kernels, playground_opts

    deterministic_kernels(c)
    random.seed(c["seed"])
    np.random.seed(c["seed"])
    torch.manual_seed(c["seed"])
    opts = playground_opts(c)
    opts["input"]["synthetic_noise"] = 1.0
    data: SyntheticDataset = make_split(opts, c["samples"], salt=2)
    device = torch.device(c["device"])
    net = make_net(c["classes"]).to(device)
    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    loss_fn = nn.CrossEntropyLoss()

    def order():  # the documented data order: pass p is randperm(N) seeded with seed * 1000003 + p
        for data_pass in range(1_000_000):
            g = torch.Generator().manual_seed(c["seed"] * 1_000_003 + data_pass)
            yield from torch.randperm(c["samples"], generator=g).tolist()

    loader = DataLoader(data, batch_size=c["batch"], sampler=order(), num_workers=0,
                        generator=torch.Generator().manual_seed(c["seed"]), pin_memory=device.type == "cuda")
    batches = iter(loader)
    k = c["accum"]
    iterations = c["samples"] // (c["batch"] * k)
    ema = {n: t.detach().clone() for n, t in net.state_dict().items() if t.dtype.is_floating_point}
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(c["precision"])
    scaler = torch.amp.GradScaler(device.type) if c["precision"] == "fp16" else None
    updates = 0
    epoch_times, running = [], 0.0
    for _ in range(c["epochs"]):
        started = time.perf_counter()
        for _ in range(iterations):
            for micro in range(k):
                inputs, labels = next(batches)
                inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
                with torch.autocast(device.type, dtype=half) if half else contextlib.nullcontext():
                    output = net(inputs)
                    loss = loss_fn(output, labels)
                if micro == 0:
                    optimizer.zero_grad(set_to_none=True)
                scaled = loss / k if k > 1 else loss
                (scaler.scale(scaled) if scaler else scaled).backward()
                running += loss.item()
            if scaler:
                scaler.unscale_(optimizer)     # true gradients for the clipping
            if c["clip"] > 0:
                torch.nn.utils.clip_grad_norm_(net.parameters(), c["clip"])
            if scaler:
                scaler.step(optimizer)         # skipped when a gradient overflowed; the scale adapts
                scaler.update()
            else:
                optimizer.step()
            if c["ema"] > 0:
                with torch.no_grad():
                    d = min(c["ema"], (1 + updates) / (10 + updates))
                    for name, weight in net.state_dict().items():
                        if name in ema:
                            ema[name].mul_(d).add_(weight, alpha=1 - d)
                updates += 1
        if device.type == "cuda":
            torch.cuda.synchronize()
        epoch_times.append(time.perf_counter() - started)
    weights = {n: v.detach().cpu() for n, v in net.state_dict().items()}
    if c["ema"] > 0:
        weights.update({f"ema.{n}": v.cpu() for n, v in ema.items()})
    return weights, epoch_times


def child(kind: str, c: dict, out: str) -> None:
    import torch
    run_dir = os.path.join(os.path.dirname(out), f"run-{os.getpid()}")
    if kind == "plain":
        state, times = run_plain(c)
    elif kind == "playground":
        state, times = run_playground(c, run_dir)
    else:
        from parity_lightning import run_lightning
        state, times = run_lightning(c, run_dir)
    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode())
        digest.update(state[key].contiguous().numpy().tobytes())
    peak = (torch.cuda.max_memory_allocated() if c["device"] == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    with open(out, "w") as handle:
        json.dump({"kind": kind, "epoch_times": times, "weights": digest.hexdigest(), "peak_bytes": peak}, handle)


def run_trials(args: argparse.Namespace, kinds: tuple[str, ...]) -> dict[str, list[dict]]:
    """Each trial runs every kind in a fresh process, back to back, the order rotated from trial to trial; each
    result holds the child's wall time from start to exit (`process_secs`: interpreter, imports, the run)."""
    results: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for trial in range(args.trials):
        for kind in kinds[trial % len(kinds):] + kinds[:trial % len(kinds)]:
            out = os.path.join(args.workdir, f"{kind}-{trial}.json")
            started = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--child", kind, "--out", out, "--trials", "1",
                            "--epochs", str(args.epochs), "--samples", str(args.samples), "--batch", str(args.batch),
                            "--device", args.device, "--case", args.case, "--precision", args.precision,
                            "--workdir", args.workdir], check=True, cwd=HERE)
            with open(out) as handle:
                results[kind].append({**json.load(handle), "process_secs": time.perf_counter() - started})
    return results


def report(args: argparse.Namespace, c: dict, results: dict[str, list[dict]]) -> None:
    iterations = args.samples // (args.batch * c["accum"])
    step = {k: statistics.median(t / iterations for r in rs for t in r["epoch_times"][1:]) for k, rs in results.items()}
    # Each trial runs the kinds back to back, so the ratio within a trial cancels the machine's slow drift.
    paired = [statistics.median(b["epoch_times"][1:]) / statistics.median(a["epoch_times"][1:])
              for a, b in zip(results["plain"], results["playground"])]
    peak = {k: statistics.median(r["peak_bytes"] for r in rs) for k, rs in results.items()}
    whole = {k: statistics.median(r["process_secs"] for r in rs) for k, rs in results.items()}
    weights = {r["weights"] for rs in results.values() for r in rs}
    print(f"parity: {args.trials} trials x {args.epochs} epochs x {iterations} iterations, batch {args.batch}, "
          f"device {args.device}, case {args.case} ({c['precision']}), {os.cpu_count()} cores, "
          f"load average {load_averages()}")
    if len(weights) == 1:
        verdict = "yes"
    elif any(len({r["weights"] for r in rs}) > 1 for rs in results.values()):
        verdict = "no: trials of the same loop differ (the device's kernels are not deterministic)"
    else:
        groups = [" = ".join(k for k, rs in results.items() if rs[0]["weights"] == w) for w in sorted(weights)]
        verdict = "no: " + "; ".join(groups) + " (each group ends with equal weights)"
    print(f"  final weights bitwise equal ({', '.join(results)}): {verdict}")
    print(f"  median step time: plain {step['plain'] * 1e3:.2f} ms, playground {step['playground'] * 1e3:.2f} ms, "
          f"ratio {step['playground'] / step['plain']:.4f} (target <= 1.01)")
    print(f"  per-trial ratios (each pair back to back): {', '.join(f'{r:.4f}' for r in paired)}; "
          f"median {statistics.median(paired):.4f}")
    print(f"  peak memory: plain {peak['plain'] / 2**20:.1f} MiB, playground {peak['playground'] / 2**20:.1f} MiB, "
          f"ratio {peak['playground'] / peak['plain']:.4f} (target <= 1.02)")
    ratio = f"{'/ plain':>9}"
    print(f"  {'medians':<12}{'step ms':>10}{ratio}{'process s':>11}{ratio}{'peak MiB':>10}{ratio}")
    for kind in results:
        print(f"  {kind:<12}{step[kind] * 1e3:>10.2f}{step[kind] / step['plain']:>9.3f}{whole[kind]:>11.2f}"
              f"{whole[kind] / whole['plain']:>9.3f}{peak[kind] / 2**20:>10.1f}{peak[kind] / peak['plain']:>9.3f}")


def load_averages() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--case", default="plain", choices=("plain", "features"),
                        help="features: bf16 autocast, accumulation over 4, clipping and EMA in both loops")
    parser.add_argument("--precision", choices=("bf16", "fp16"), default="bf16",
                        help="the autocast type of --case features (fp16: with a gradient scaler in both loops)")
    parser.add_argument("--peers", action="store_true",
                        help="also train the job with a PyTorch Lightning Trainer (needs the bench extra)")
    parser.add_argument("--child", choices=("plain", "playground", "lightning"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", default=os.path.join(REPO, "runs", "bench-parity"))
    args = parser.parse_args()
    c = config(args)
    if args.child:
        child(args.child, c, args.out)
        return 0
    if args.epochs < 2 or args.samples < args.batch * c["accum"]:
        parser.error(f"--epochs {args.epochs} --samples {args.samples}: needs 2 epochs or more (the first is "
                     f"warm-up) and at least one iteration ({args.batch * c['accum']} samples)")
    if args.peers:
        import parity_lightning
        if args.case != "plain":
            parser.error("--peers compares the plain case only (Lightning has no EMA of its own); drop --case")
        if not parity_lightning.available():
            print(parity_lightning.MISSING, file=sys.stderr)
            return 2
    os.makedirs(args.workdir, exist_ok=True)
    report(args, c, run_trials(args, ("plain", "playground", "lightning") if args.peers else ("plain", "playground")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
