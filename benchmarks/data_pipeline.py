"""Image input throughput: our LMDB + OpenCV pipeline against the decode limit and torchvision, in one run.

    .venv/bin/python benchmarks/data_pipeline.py [--images 2000] [--workers 2] [--batch 64] [--repeat 3]

Generates --images realistic JPEGs (about 500x375: colour gradients, shapes, blur and noise, quality 90), as
class folders and as a playground LMDB holding the same bytes (make-lmdb), then measures images/s of:

  a  raw LMDB reads: every record's value in a random order, one process
  b  the decode limit: a bare loop of cv2.imdecode + crop + resize to --imsize on bytes already in memory,
     split over --workers processes (type 0: shorter side to --loadsize then crop, copied out as an image of its
     own; type 1: crop then resize, which writes its own image)
  c  our training pipeline, built as the trainer builds it: LmdbImageDataset (gfs_IN1k's augmentation with
     mirror, RGB) through playground.data.batch_stream's DataLoader, --workers workers writing uint8 batches, and
     the normalisation to float32 in the training process (counted: every process's CPU time is)
  p  gpu_train.py's plain loader (plain_loader.py: a DataLoader with a batch_sampler over get_samples, fresh
     shared memory per batch) on the same dataset, type 1, its batches normalised in the training process as c's
  d  torchvision ImageFolder + PIL with RandomResizedCrop, RandomHorizontalFlip, ToTensor, Normalize on the
     same images as files, same batch, workers, prefetching and persistent workers

c, p and d are timed after the same number of warm-up batches (worker start-up excluded: forking, and each worker
filling every slot of its reused shared-memory ring once, whose first page writes fault); each figure is the best
of --repeat rounds (the machine is shared), and the ratios are also given as the median of each round's own
ratios (its b and c measured seconds apart, so a slow spell of a shared host weighs on both; b goes first in odd
rounds and c in even ones, so a host that drifts within a round favours neither). With a CUDA device, a GPU
section follows (skipped with a message without one):

  e  c with the batches going to the GPU: pinned uint8, copied non-blocking, normalised there
  g  p with its batches going to the GPU as e's (pinned by the loader)
  f  input.gpu_decode: the workers only read records; JPEG decoding, crop, resize and mirror on the GPU

Prints the ratios c/b per scale_jitter_type and c/d for the Inception-style crop (type 1, the transform
torchvision's RandomResizedCrop does), and c/p (our loader against the plain one, same decoding), with each
pipeline's CPU per image split into its workers and the training process. Targets: c/b >= 0.9, c/d >= 2.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass

import cv2
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from playground.data.images.augment import AugmentSpec, inception_box  # noqa: E402
from playground.data.records.db_records import DbRecords  # noqa: E402
from playground.data.images.image_batch import IMAGENET_MEAN, IMAGENET_STD  # noqa: E402
from playground.data.images.lmdb_dataset import single_threaded_opencv  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_window import cpu_seconds  # noqa: E402

SIZES = ((500, 375), (375, 500), (500, 333), (480, 360), (500, 400))   # (width, height)
CLASSES = 10


def synthetic_photo(rng: np.random.Generator) -> np.ndarray:
    """A BGR image with the structure of a photo: a colour gradient, overlapping shapes, blur and sensor noise."""
    width, height = SIZES[rng.integers(len(SIZES))]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    ramp = (xs * np.cos(angle) + ys * np.sin(angle)) / (width + height)
    top, bottom = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    image = (top + (bottom - top) * ramp[..., None]).astype(np.uint8)
    for _ in range(rng.integers(8, 20)):
        color = tuple(int(c) for c in rng.integers(0, 256, 3))
        center = (int(rng.integers(0, width)), int(rng.integers(0, height)))
        kind = rng.integers(3)
        if kind == 0:
            cv2.circle(image, center, int(rng.integers(5, 120)), color, -1, cv2.LINE_AA)
        elif kind == 1:
            corner = (int(rng.integers(0, width)), int(rng.integers(0, height)))
            cv2.rectangle(image, center, corner, color, -1)
        else:
            axes = (int(rng.integers(5, 150)), int(rng.integers(5, 80)))
            cv2.ellipse(image, center, axes, float(rng.uniform(0, 180)), 0, 360, color, int(rng.integers(2, 12)),
                        cv2.LINE_AA)
    image = cv2.GaussianBlur(image, (0, 0), float(rng.uniform(0.5, 1.5))).astype(np.float32)
    for cell in (64, 16, 4, 2):   # texture at several scales (foliage, fabric, grain), as photos have
        grid = rng.normal(0, 1, (height // cell + 2, width // cell + 2, 3)).astype(np.float32)
        image += 20 * cv2.resize(grid, (width + 2 * cell, height + 2 * cell), interpolation=cv2.INTER_CUBIC)[
            cell:cell + height, cell:cell + width]
    image += rng.normal(0, 6, image.shape).astype(np.float32)     # sensor noise
    return np.clip(image, 0, 255).astype(np.uint8)


def make_data(folder: str, count: int) -> tuple[str, str]:
    """Class folders of JPEGs and the LMDB make-lmdb builds from them (same bytes); reused when present."""
    from playground.data.records.image_sources import from_folder
    from playground.data.records.lmdb_build import BuildOptions, build

    images, db = os.path.join(folder, "images"), os.path.join(folder, "db")
    if not os.path.isdir(db):
        for label in range(min(count, CLASSES)):
            os.makedirs(os.path.join(images, f"class{label}"), exist_ok=True)
        # one process per core: an image takes ~30 ms to make, 2,000 took 78 s in one process on a GPU host
        with multiprocessing.get_context("spawn").Pool(min(os.cpu_count() or 1, max(1, count // 50))) as pool:
            pool.map(write_photo, [(images, index) for index in range(count)], chunksize=16)
        build(from_folder(images), db, BuildOptions(progress=False))
    return images, db


def write_photo(where: tuple[str, int]) -> None:
    """Image `index` of the set: its own seeded generator, so the set does not depend on how the work is split."""
    images, index = where
    ok, jpeg = cv2.imencode(".jpg", synthetic_photo(np.random.default_rng([0, index])), [cv2.IMWRITE_JPEG_QUALITY, 90])
    with open(os.path.join(images, f"class{index % CLASSES}", f"{index:05d}.jpg"), "wb") as handle:
        handle.write(jpeg.tobytes())


@dataclass
class Measure:
    """Images handled in a timed window, its wall-clock seconds and the CPU seconds of every process involved."""

    images: int
    wall: float
    cpu: float
    trainer_cpu: float = 0.0   # the part of `cpu` spent in the training process (c, d: receiving, normalising)

    @property
    def rate(self) -> float:
        return self.images / self.wall

    def cpu_rate(self, cores: int) -> float:
        """Images/s the machine's cores would give if this pipeline had them to itself."""
        return cores * self.images / self.cpu

    def per_image_us(self, trainer: bool = False) -> float:
        """CPU microseconds per image: of every process, or with `trainer` of the training process alone."""
        return (self.trainer_cpu if trainer else self.cpu) / self.images * 1e6


def raw_reads(db: str) -> float:
    records = DbRecords(db)
    order = np.random.default_rng(0).permutation(records.count)
    started = time.perf_counter()
    total = sum(len(records.read_value(int(i))) for i in order)
    elapsed = time.perf_counter() - started
    print(f"  a  raw LMDB reads: {records.count / elapsed:.0f} images/s ({total / elapsed / 2 ** 20:.0f} MiB/s, "
          f"mean record {total / records.count / 1024:.0f} KiB), one process")
    return records.count / elapsed


def _decode_loop(db: str, indices: list[int], spec: AugmentSpec, barrier, results) -> None:
    records = DbRecords(db)
    payloads = [records.read(i).payload for i in indices]
    rng = np.random.default_rng(len(indices))
    barrier.wait()
    started, cpu = time.perf_counter(), time.process_time()
    for payload in payloads:
        image = cv2.imdecode(np.frombuffer(payload, np.uint8), cv2.IMREAD_COLOR)
        height, width = image.shape[:2]
        if spec.scale_jitter_type == 1:
            y, x, h, w = inception_box(height, width, rng)
            out = cv2.resize(image[y:y + h, x:x + w], (spec.imsize, spec.imsize), interpolation=cv2.INTER_LINEAR)
        else:
            scale = spec.loadsize / min(height, width)
            image = cv2.resize(image, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_LINEAR)
            out = image[:spec.imsize, :spec.imsize].copy()   # the crop as an image of its own, as type 1's resize
        assert out.shape[0] == spec.imsize
    results.put((time.perf_counter() - started, time.process_time() - cpu))


def decode_limit(db: str, spec: AugmentSpec, workers: int) -> Measure:
    count = DbRecords(db).count
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(workers), context.Queue()
    processes = [context.Process(target=_decode_loop, args=(db, list(range(w, count, workers)), spec, barrier, results))
                 for w in range(workers)]
    for process in processes:
        process.start()
    times = [results.get() for _ in processes]
    for process in processes:
        process.join()
    return Measure(count, max(wall for wall, _ in times), sum(cpu for _, cpu in times))


def warmup_batches(args: argparse.Namespace, total: int) -> int:
    """Batches taken before the timer starts, the same for every pipeline: until each worker has filled every
    slot of its reused ring once (start-up: the first write of each shared-memory page faults, a cost paid once
    per run), which also covers forking the workers and their first batch; at most half of the `total`."""
    from playground.data.batch_stream import PREFETCH_FACTOR
    return max(1, min(max(1, args.workers) * (PREFETCH_FACTOR + 2), total // 2))


def timed_batches(next_batch, batches: int, batch: int, worker_pids, synchronize=lambda: None,
                  warmup: int = 1) -> Measure:
    for _ in range(warmup):                          # start-up: workers forked, their rings filled once
        next_batch()
    synchronize()
    trainer, workers = [os.getpid()], worker_pids()
    started, trainer_cpu, workers_cpu = time.perf_counter(), cpu_seconds(trainer), cpu_seconds(workers)
    for _ in range(batches):
        next_batch()
    synchronize()                                    # on a GPU: until the last batch is there
    trainer_cpu, workers_cpu = cpu_seconds(trainer) - trainer_cpu, cpu_seconds(workers) - workers_cpu
    return Measure(batches * batch, time.perf_counter() - started, trainer_cpu + workers_cpu, trainer_cpu)


def our_pipeline(db: str, spec: AugmentSpec, args: argparse.Namespace, device: str = "cpu",
                 gpu_decode: bool = False) -> Measure:
    import torch

    from playground.data.batch_stream import build_train_stream
    from playground.data.images.lmdb_dataset import LmdbImageDataset
    from playground.distribution.run_context import RunContext
    from playground.distribution.topology import Topology

    dataset = LmdbImageDataset(db, spec, gpu_decode=gpu_decode)
    opts = {"epoch_iter": {"batch_per_device": args.batch, "num_train_sample_per_epoch": 0},
            "model_param": {"seed": 0},
            "input": {"shuffle_train": True, "decode_threads": args.workers, "worker_start_method": "fork",
                      "reuse_batch_memory": True}}
    ctx = RunContext(run_dir=".", topology=Topology(device, 1, 1, 0, 0, None, "single"), local_rank=0)
    iterations = len(dataset) // args.batch
    stream = build_train_stream(dataset, opts, ctx, iterations)
    synchronize = torch.cuda.synchronize if device == "cuda" else lambda: None
    warmup = warmup_batches(args, iterations * args.passes)
    measure = timed_batches(stream.next, iterations * args.passes - warmup, args.batch,
                            lambda: _worker_pids(stream.loader), synchronize, warmup)
    _stop_workers(stream.loader)
    return measure


def plain_pipeline(db: str, spec: AugmentSpec, args: argparse.Namespace, device: str = "cpu") -> Measure:
    """p: gpu_train.py's plain loader (plain_loader.py) over the same dataset, its batches finished in the training
    process by the same batch_to_device as c's (on the CPU into reused float batches, as c's), so that p and c
    differ only in the loader around get_samples."""
    import torch

    from playground.data.batch_stream import PREFETCH_FACTOR
    from playground.data.images.image_batch import ImageBatcher
    from playground.data.images.lmdb_dataset import LmdbImageDataset
    from plain_loader import plain_loader

    dataset = LmdbImageDataset(db, spec)
    finish = ImageBatcher(3)
    finish.reuse_buffers(PREFETCH_FACTOR + 2)     # used in this process only: c's two reused float batches
    loader = plain_loader(dataset, args.batch, args.workers, pin_memory=device == "cuda")
    batches, target = iter(loader), torch.device(device)

    def next_batch():
        images, labels, _ = next(batches)
        return finish.batch_to_device((images, labels), target)

    total = len(dataset) // args.batch * args.passes
    warmup = warmup_batches(args, total)
    synchronize = torch.cuda.synchronize if device == "cuda" else lambda: None
    measure = timed_batches(next_batch, total - warmup, args.batch, lambda: _worker_pids(loader), synchronize, warmup)
    _stop_workers(loader)
    return measure


def torchvision_pipeline(images: str, args: argparse.Namespace) -> Measure:
    import torch
    from torchvision import datasets, transforms

    transform = transforms.Compose([transforms.RandomResizedCrop(args.imsize), transforms.RandomHorizontalFlip(),
                                    transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
    folder = datasets.ImageFolder(images, transform=transform)
    loader = torch.utils.data.DataLoader(folder, batch_size=args.batch, shuffle=True, num_workers=args.workers,
                                         persistent_workers=True, prefetch_factor=4, drop_last=True,
                                         multiprocessing_context="fork")
    iterator = iter(_endless(loader))
    warmup = warmup_batches(args, len(loader) * args.passes)
    measure = timed_batches(lambda: next(iterator), len(loader) * args.passes - warmup, args.batch,
                            lambda: _worker_pids(loader), warmup=warmup)
    _stop_workers(loader)
    return measure


def _worker_pids(loader) -> list[int]:
    return [worker.pid for worker in loader._iterator._workers] if loader._iterator is not None else []


def _stop_workers(loader) -> None:
    """Shut a persistent-worker loader's processes down now, before the next measurement starts."""
    if loader._iterator is not None:
        loader._iterator._shutdown_workers()
        loader._iterator = None


def _endless(loader):
    while True:
        yield from loader


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="loader/decode worker processes")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--passes", type=int, default=2, help="passes over the images per measurement of c and d")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each figure is the best round")
    parser.add_argument("--imsize", type=int, default=224)
    parser.add_argument("--loadsize", type=int, default=256)
    parser.add_argument("--data", help="folder for the generated images and LMDB (kept; default: a temporary one)")
    args = parser.parse_args()

    folder = args.data or tempfile.mkdtemp(prefix="data-pipeline-")
    cores = os.cpu_count() or 1
    try:
        started = time.perf_counter()
        images, db = make_data(folder, args.images)
        single_threaded_opencv()   # one OpenCV thread per process, set before forking, as the dataset does
        print(f"{args.images} JPEGs (about 500x375, quality 90) ready in {time.perf_counter() - started:.0f} s; "
              f"{cores} cores, load average {os.getloadavg()[0]:.2f}, {args.workers} workers, batch {args.batch}, "
              f"{args.imsize}px crops")
        specs = {t: AugmentSpec(is_train=True, loadsize=args.loadsize, imsize=args.imsize, scale_jitter_type=t)
                 for t in (0, 1)}
        raw_reads(db)
        _note_short_window(args)
        rounds: list[dict[str, Measure]] = []
        for round_number in range(1, args.repeat + 1):
            figures = {}
            for t, spec in specs.items():
                # b before c in odd rounds, c before b in even ones: a host that slows down (or speeds up) within a
                # round does not always favour the same side of the ratio
                keys = [f"b{t}", f"c{t}"] + (["p1"] if t == 1 else [])   # p: the plain loader, gpu_train's crop
                for key in keys if round_number % 2 else keys[::-1]:
                    figures[key] = PIPELINES[key[0]](db, spec, args)
            figures["d"] = torchvision_pipeline(images, args)
            rounds.append(figures)
            print(f"  round {round_number}: " + ", ".join(f"{k} {m.rate:.0f}" for k, m in figures.items())
                  + " images/s; CPU-bound " + ", ".join(f"{k} {m.cpu_rate(cores):.0f}" for k, m in figures.items())
                  + f"; c/b {_ratio(figures, 'c0', 'b0', cores):.2f} / {_ratio(figures, 'c1', 'b1', cores):.2f}"
                  + f"; c/p {_ratio(figures, 'c1', 'p1', cores):.2f}"
                  + f"; load average {os.getloadavg()[0]:.2f}")
        _report(rounds, cores)
        gpu_section(db, specs[1], args, cores)
    finally:
        if not args.data:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def _note_short_window(args: argparse.Namespace) -> None:
    """Say so when c's and p's timed window is too short for steady state: fewer than 40 batches, or a warm-up
    cut to half the batches before every worker's ring is full (the window then pays first writes to fresh shared
    memory, and each worker's first batches, a cost per worker that many workers spread over few batches)."""
    from playground.data.batch_stream import PREFETCH_FACTOR

    per_pass, ring = args.images // args.batch, max(1, args.workers) * (PREFETCH_FACTOR + 2)
    total = per_pass * args.passes
    timed = total - warmup_batches(args, total)
    if timed < 40 or total // 2 < ring:
        enough = -(-max(2 * ring, ring + 40) // max(1, per_pass))
        print(f"  note: c and p time {timed} batches after a warm-up of {total - timed}, too few for steady state "
              f"with {args.workers} workers (their rings hold {ring} batches): their figures are off. Use --passes "
              f"{enough} or more (or more --images).")


def _decode(db: str, spec: AugmentSpec, args: argparse.Namespace) -> Measure:
    return decode_limit(db, spec, args.workers)


PIPELINES = {"b": _decode, "c": our_pipeline, "p": plain_pipeline}
NAMES = {"b0": "b  decode limit, type 0 (resize shorter side, crop)",
         "c0": "c  our pipeline, scale_jitter_type 0",
         "b1": "b  decode limit, type 1 (Inception crop, resize)",
         "c1": "c  our pipeline, scale_jitter_type 1",
         "p1": "p  gpu_train.py's plain loader, type 1",
         "d": "d  torchvision ImageFolder + PIL (RandomResizedCrop)"}


def gpu_section(db: str, spec: AugmentSpec, args: argparse.Namespace, cores: int) -> None:
    """e and f on the CUDA device, best of --repeat rounds; a message without one."""
    import torch

    if not torch.cuda.is_available():
        print("GPU section skipped: no CUDA device here (e: uint8 batches normalised on the GPU; f: input.gpu_decode)")
        return
    rounds = [{"e": our_pipeline(db, spec, args, "cuda"), "g": plain_pipeline(db, spec, args, "cuda"),
               "f": our_pipeline(db, spec, args, "cuda", gpu_decode=True)} for _ in range(args.repeat)]
    print(f"GPU section on {torch.cuda.get_device_name()}, scale_jitter_type 1, best of {len(rounds)} rounds:")
    for key, name in (("e", "e  OpenCV decoding in the workers, normalised on the GPU"),
                      ("g", "g  gpu_train.py's plain loader (p), pinned, normalised on the GPU"),
                      ("f", "f  input.gpu_decode: JPEG decoding and augmentation on the GPU")):
        print(f"  {name:60s} {max(r[key].rate for r in rounds):8.0f} images/s  "
              f"{max(r[key].cpu_rate(cores) for r in rounds):8.0f} CPU-bound images/s ({cores} cores)")
    print("  CPU us per image, median of the rounds: " + "; ".join(_split(rounds, key) for key in ("e", "g", "f")))


def _report(rounds: list[dict[str, Measure]], cores: int) -> None:
    """Best wall-clock rate of the rounds, and the CPU-bound rate (cores / CPU seconds per image), which other
    processes on a shared machine do not distort."""
    wall = {k: max(r[k].rate for r in rounds) for k in NAMES}
    cpu = {k: max(r[k].cpu_rate(cores) for r in rounds) for k in NAMES}
    print(f"best of {len(rounds)} rounds{'':31s} wall images/s   CPU-bound images/s ({cores} cores)")
    for key, name in NAMES.items():
        print(f"  {name:55s} {wall[key]:8.0f} {cpu[key]:14.0f}")
    for label, figures in (("wall", wall), ("CPU-bound", cpu)):
        print(f"  {label:9s}  c/b type 0: {figures['c0'] / figures['b0']:.2f}   c/b type 1: "
              f"{figures['c1'] / figures['b1']:.2f}   c/d (type 1 vs RandomResizedCrop): {figures['c1'] / figures['d']:.2f}")
    medians = {pair: statistics.median(_ratio(r, *pair, cores) for r in rounds)
               for pair in (("c0", "b0"), ("c1", "b1"), ("c1", "d"))}
    print(f"  CPU-bound, median of the rounds' own ratios (b and c measured seconds apart): c/b type 0: "
          f"{medians['c0', 'b0']:.2f}   c/b type 1: {medians['c1', 'b1']:.2f}   c/d: {medians['c1', 'd']:.2f}")
    plain_median = statistics.median(_ratio(r, "c1", "p1", cores) for r in rounds)
    print(f"  CPU-bound, c/p (our loader against gpu_train.py's plain one around the same get_samples, type 1): "
          f"best {cpu['c1'] / cpu['p1']:.2f}, median of the rounds {plain_median:.2f}")
    parts, workers_only = [], []
    for t in (0, 1):
        b, c = (statistics.median(r[k].per_image_us() for r in rounds) for k in (f"b{t}", f"c{t}"))
        trainer = statistics.median(r[f"c{t}"].per_image_us(trainer=True) for r in rounds)
        parts.append(f"type {t}: b {b:.0f}, {_split(rounds, f'c{t}')}")
        workers_only.append(f"type {t}: {b / (c - trainer):.2f}")
    print("  CPU us per image, median of the rounds: " + "; ".join(parts) + "; " + _split(rounds, "p1"))
    print("  for reading only, not a target: b / c's workers alone (c without the training process, whose "
          "normalisation b does not do): " + "   ".join(workers_only))
    print("  targets: c/b >= 0.9, c/d >= 2")


def _split(rounds: list[dict[str, Measure]], key: str) -> str:
    """`key`'s CPU microseconds per image, all and in its parts (median of the rounds)."""
    whole = statistics.median(r[key].per_image_us() for r in rounds)
    trainer = statistics.median(r[key].per_image_us(trainer=True) for r in rounds)
    return f"{key[0]} {whole:.0f} (workers {whole - trainer:.0f}, training process {trainer:.0f})"


def _ratio(figures: dict[str, Measure], top: str, bottom: str, cores: int) -> float:
    return figures[top].cpu_rate(cores) / figures[bottom].cpu_rate(cores)


if __name__ == "__main__":
    sys.exit(main())
