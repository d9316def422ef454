"""ResNet-50 on the data-pipeline benchmark's JPEG LMDB, on one CUDA GPU: playground against a hand-written loop.

    .venv/bin/python benchmarks/gpu_train.py [--images 4000] [--batch 128] [--steps 60] [--workers N] [--gpu-decode]

Both arms train the same network (components/networks/explicit_resnet.py, --depth 50 by default, channels_last,
bf16 autocast, SGD with momentum) on the same data path: LmdbImageDataset (scale_jitter_type 1, mirror, --imsize
crops, 224 pixels by default) decoded by --workers loader workers into uint8 batches, pinned, copied non-blocking
and normalised on the GPU; with --gpu-decode, JPEGs decoded on the GPU instead (input.gpu_decode). Each arm
runs in a fresh process:

  plain       a hand-written loop: torch DataLoader over the dataset's get_samples (plain_loader.py: an endless
              sampler, as a training loop's), the next batch copied and normalised on a side stream while the
              current one trains; CUDA events around each step's compute
  playground  the real trainer (gfs_IN1k, explicit_resnet_forward, no test model, model_param.precision bf16),
              timed by the override benchmarks/gpu_train_timing.py
  resident    the same step on one batch already on the GPU: the compute-only rate, no input at all

Prints images/s of each after --warmup steps, playground/plain (target >= 0.99), and the fraction of time the GPU
waits for input: for the plain arm measured with CUDA events (gaps between one step's kernels and the next), for
both arms as 1 - rate / resident rate (time the GPU is not computing a step: input, or host overhead). Each arm
also gives the CPU per image of its process and of its loader workers over the timed window, and the cores each
kept busy: a host whose cores the workers fill leaves the training process (kernel launches, pinning) to compete.

A window shorter than the batches the workers prefetch (--workers x 4) trains on batches decoded during the
warm-up: it measures the training process under the workers' load, not the decoders' rate. For the steady state
give --warmup above that (e.g. --warmup 80 --steps 120 with 16 workers).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO, HERE]

SEED, LR, MOMENTUM, WEIGHT_DECAY, CLASSES = 5, 0.1, 0.9, 1e-4, 10


def loadsize(args: argparse.Namespace) -> int:
    """The shorter side images are scaled to before cropping: 256 for 224-pixel crops, in proportion otherwise."""
    return args.imsize * 8 // 7


def spec(args: argparse.Namespace):
    from playground.data.images.augment import AugmentSpec
    return AugmentSpec(is_train=True, loadsize=loadsize(args), imsize=args.imsize, scale_jitter_type=1, mirror=True)


def network(device: str, depth: int):
    import torch
    from components.networks.explicit_resnet import ExplicitResNet, ResNetSpec
    net = ExplicitResNet(ResNetSpec(depth=depth, num_classes=CLASSES, channels_last=True))
    return net.to(device, memory_format=torch.channels_last)


def synchronize(device: str) -> None:
    import torch
    if device == "cuda":
        torch.cuda.synchronize()


def optimizer(net):
    import torch
    return torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)


def plain(args: argparse.Namespace) -> dict:
    """The hand-written loop; returns timed images/s, the GPU's input-wait fraction from CUDA events, and the CPU
    per image of the process and of its loader workers over the timed window."""
    import torch

    from cpu_window import CpuWindow
    from plain_loader import plain_loader
    from playground.data.images.lmdb_dataset import LmdbImageDataset

    torch.manual_seed(SEED)
    torch.backends.cudnn.benchmark = True
    data = LmdbImageDataset(args.db, spec(args), seed=SEED, gpu_decode=args.gpu_decode)
    limit = args.steps + args.warmup + 2 if args.finite_plain else None
    loader = plain_loader(data, args.batch, args.workers, pin_memory=args.device == "cuda", batches=limit,
                          prefetch=args.prefetch or 4)
    net, loss_fn = network(args.device, args.depth), torch.nn.CrossEntropyLoss()
    opt = optimizer(net)
    cuda, device = args.device == "cuda", torch.device(args.device)
    side = torch.cuda.Stream() if cuda else None

    def stage(iterator):
        images, labels, _ = next(iterator)
        if not cuda:
            return data.collate_fn.batch_to_device((images, labels), device)
        with torch.cuda.stream(side):
            return data.collate_fn.batch_to_device((images, labels), device)

    iterator = iter(loader)
    staged = stage(iterator)
    marks = []
    for step in range(args.warmup + args.steps):
        images, labels = staged
        if cuda:
            torch.cuda.current_stream().wait_stream(side)
            images.record_stream(torch.cuda.current_stream())
            labels.record_stream(torch.cuda.current_stream())
        staged = stage(iterator)
        if step == args.warmup:
            synchronize(args.device)
            started, cpu = time.perf_counter(), CpuWindow()
        if cuda:
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
        with torch.autocast(args.device, dtype=torch.bfloat16):
            loss = loss_fn(net(images.contiguous(memory_format=torch.channels_last)), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if cuda:
            end.record()
            if step >= args.warmup:
                marks.append((begin, end))
    synchronize(args.device)
    wall = time.perf_counter() - started
    result = {"images_per_s": args.steps * args.batch / wall, "gpu_wait": None,
              "cpu": cpu.stop(args.steps * args.batch)}
    if marks:
        busy = sum(b.elapsed_time(e) for b, e in marks) / 1000
        span = marks[0][0].elapsed_time(marks[-1][1]) / 1000
        result["gpu_wait"] = 1 - busy / span
    return result


def resident(args: argparse.Namespace) -> dict:
    """The same step on one batch kept on the GPU: the rate with no input pipeline at all."""
    import torch

    from cpu_window import CpuWindow
    torch.manual_seed(SEED)
    torch.backends.cudnn.benchmark = True
    net, loss_fn = network(args.device, args.depth), torch.nn.CrossEntropyLoss()
    opt = optimizer(net)
    images = torch.randn(args.batch, 3, args.imsize, args.imsize, device=args.device)
    images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, CLASSES, (args.batch,), device=args.device)
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            synchronize(args.device)
            started, cpu = time.perf_counter(), CpuWindow()
        with torch.autocast(args.device, dtype=torch.bfloat16):
            loss = loss_fn(net(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    synchronize(args.device)
    return {"images_per_s": args.steps * args.batch / (time.perf_counter() - started),
            "cpu": cpu.stop(args.steps * args.batch)}


def playground_arm(args: argparse.Namespace) -> dict:
    from playground.api import run
    from playground.data import batch_stream

    if args.prefetch:    # a probe of the loader's settings (benchmarks/gpu_probe.sh); the ring follows it
        batch_stream.PREFETCH_FACTOR = args.prefetch
    iterations = args.warmup + args.steps
    opts = {
        "input": {"input_name_py": "gfs_IN1k", "train_input_path": args.db, "test_input_path": "", "num_classes": None,
                  "loadsize": loadsize(args), "imsize": args.imsize, "scale_jitter_type": 1, "mirror": True,
                  "decode_threads": args.workers, "gpu_decode": args.gpu_decode,
                  "reuse_batch_memory": not args.no_ring, "worker_start_method": args.start_method},
        "model": {"model_name_py": "IN1k_resnet_no_test_model", "forward_pass_py": "explicit_resnet_forward",
                  "optimizer_py": "sgd_optimizer", "rendezvous_py": "rendezvous_env",
                  "additional_override_py": "gpu_train_timing"},
        "model_param": {"num_layer": args.depth, "channels_last": True, "engine": "CUDNN", "pretrained_model": None,
                        "memonger": False, "combine_spatial_bn": None, "max_concurrent_distributed_ops": None,
                        "base_learning_rate": LR, "momentum": MOMENTUM, "weight_decay": WEIGHT_DECAY, "seed": SEED,
                        "precision": "bf16"},
        "epoch_iter": {"num_train_sample_per_epoch": iterations * args.batch, "num_test_sample": 0, "num_epochs": 1,
                       "num_epochs_per_flow_schedule": 1, "num_train_iteration_per_test": 1_000_000,
                       "batch_per_device": args.batch, "num_test_iter": 0},
        "distributed": {"num_shards": 1, "num_gpus": int(args.device == "cuda"), "first_gpu_id": 0, "num_cpus": 1, "first_cpu_id": 0},
        "output": {"gen_output_py": "output_generator", "metrics": [
            {"name": "train_loss", "meter_py": "ComputeLoss", "meter_kargs": {"blob_name": "loss"}, "is_train": True}],
            "ckpt_save_interval": 0, "ckpt_save_best": False, "ckpt_restart_mode": "off", "progress": "none"},
    }
    os.environ.update(GPU_TRAIN_WARMUP=str(args.warmup), GPU_TRAIN_DEVICE=args.device)
    timed = run(opts, run_dir=tempfile.mkdtemp(prefix="gpu-train-run-"))["timed"]
    return {"images_per_s": timed["iterations"] * args.batch / timed["seconds"], "cpu": timed["cpu"]}


ARMS = {"plain": plain, "playground": playground_arm, "resident": resident}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=60, help="timed training steps per arm")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--imsize", type=int, default=224, help="crop size (a smoke run uses a small one)")
    parser.add_argument("--depth", type=int, default=50, help="ResNet depth (a smoke run uses 18)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--gpu-decode", action="store_true", help="decode JPEGs on the GPU (input.gpu_decode)")
    parser.add_argument("--arms", default="resident,plain,playground",
                        help="the arms to run, comma-separated (a probe may leave out resident)")
    parser.add_argument("--finite-plain", action="store_true",
                        help="the plain arm's sampler holds only the batches the run takes (as before 2026-12-05): "
                             "its workers go idle once they are decoded")
    parser.add_argument("--prefetch", type=int, help="batches each loader worker prepares ahead, both arms "
                        "(default: 4, playground's PREFETCH_FACTOR)")
    parser.add_argument("--no-ring", action="store_true", help="playground arm: input.reuse_batch_memory false")
    parser.add_argument("--start-method", choices=["auto", "fork", "spawn", "forkserver"], default="auto",
                        help="playground arm: input.worker_start_method")
    parser.add_argument("--data", help="folder for the generated images and LMDB (kept; default: a temporary one)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu: a smoke run of the three arms without a GPU (tiny --batch and --steps); no figures")
    parser.add_argument("--arm-timeout", type=float, default=300,
                        help="seconds an arm may take before it is stopped with its threads' stacks printed")
    parser.add_argument("--arm", choices=list(ARMS), help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm:                                   # a child: one arm, its result as JSON on the last line
        print(json.dumps(ARMS[args.arm](args)))
        return 0
    arms = args.arms.split(",")
    if any(arm not in ARMS for arm in arms):
        parser.error(f"--arms {args.arms!r}: give arms out of {', '.join(ARMS)}, comma-separated")
    if args.prefetch is not None and args.prefetch < 1:
        parser.error(f"--prefetch {args.prefetch}: give 1 or more batches per worker")

    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("gpu_train skipped: no CUDA device here; this benchmark needs one GPU (--device cpu: a smoke run)")
        return 0
    from cpu_window import describe
    from data_pipeline import make_data
    folder = args.data or tempfile.mkdtemp(prefix="gpu-train-")
    made = time.perf_counter()
    _, db = make_data(folder, args.images)
    print(f"data: {args.images} JPEGs in an LMDB ready in {time.perf_counter() - made:.0f} s", flush=True)
    print(f"{torch.cuda.get_device_name() if args.device == 'cuda' else 'CPU smoke run'}, {os.cpu_count()} CPU cores, {args.workers} workers, batch {args.batch}, "
          f"{args.steps} timed steps, {'GPU' if args.gpu_decode else 'CPU'} JPEG decoding; load average "
          f"{os.getloadavg()[0]:.2f}")
    sampler = "only the batches the run takes" if args.finite_plain else "endless"
    print(f"  plain arm's sampler: {sampler}; prefetch {args.prefetch or 4}; playground: ring "
          f"{'off' if args.no_ring else 'on'}, start method {args.start_method}")
    results = {}
    for arm in arms:
        begun = time.perf_counter()
        command = [sys.executable, os.path.abspath(__file__), "--arm", arm, "--db", db, "--batch", str(args.batch),
                   "--steps", str(args.steps), "--warmup", str(args.warmup), "--workers", str(args.workers),
                   "--imsize", str(args.imsize), "--depth", str(args.depth), "--device", args.device,
                   "--start-method", args.start_method]
        command += ["--prefetch", str(args.prefetch)] if args.prefetch else []
        command += [flag for flag, on in (("--gpu-decode", args.gpu_decode), ("--finite-plain", args.finite_plain),
                                          ("--no-ring", args.no_ring)) if on]
        child = subprocess.Popen(command, text=True, cwd=HERE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(os.environ, PYTHONFAULTHANDLER="1"))
        try:
            stdout, stderr = child.communicate(timeout=args.arm_timeout)
        except subprocess.TimeoutExpired:      # a hang is a failure with every thread's stack, never a silent wait
            child.send_signal(signal.SIGABRT)   # faulthandler prints the stacks, then the process ends
            stdout, stderr = child.communicate()
            print(f"{arm} arm still running after {args.arm_timeout:g} s; its stacks:\n{stderr[-8000:]}", flush=True)
            return 1
        if child.returncode != 0:
            print(f"{arm} arm failed:\n{stderr[-4000:]}", flush=True)
            return 1
        results[arm] = json.loads(stdout.strip().splitlines()[-1])
        print(f"  {arm:10s} {results[arm]['images_per_s']:8.3g} images/s ({time.perf_counter() - begun:.0f} s); "
              f"{describe(results[arm]['cpu'])}", flush=True)
    report(results)
    return 0


def report(results: dict) -> None:
    """The ratios of the arms that ran."""
    if "plain" in results and "playground" in results:
        print(f"  playground / plain: {results['playground']['images_per_s'] / results['plain']['images_per_s']:.3f} "
              "(target >= 0.99)")
    if results.get("plain", {}).get("gpu_wait") is not None:
        print(f"  GPU waiting for input, plain (CUDA events): {results['plain']['gpu_wait']:.1%}")
    if "resident" in results:
        for arm in ("plain", "playground"):
            if arm in results:
                print(f"  GPU not computing a step, {arm} (1 - rate / resident rate): "
                      f"{1 - results[arm]['images_per_s'] / results['resident']['images_per_s']:.1%}")


if __name__ == "__main__":
    sys.exit(main())
