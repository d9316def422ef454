"""Build an image LMDB for the gfs_IN1k input from a class-per-folder tree, a `path label` list, or the digits.

    playground make-lmdb IMAGES/ OUT                           one sub-folder per class -> the LMDB OUT
    playground make-lmdb IMAGES/ OUT --list train.txt          `path label` lines, paths relative to IMAGES/
    playground make-lmdb --digits OUT --test-fraction 0.2      scikit-learn's digits -> OUT/train and OUT/test

With --test-fraction, OUT holds two LMDBs, OUT/train and OUT/test (give them to input.train_input_path and
input.test_input_path). OUT appears only once the build is complete. Exit codes: 0 built, 1 failed while
writing, 2 unusable source or command line (nothing was written), 130 interrupted. See docs/data.md.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

AUTO_WORKERS_FROM = 2000   # images; smaller builds are checked in this process (starting workers costs more)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", nargs="?", metavar="SOURCE",
                        help="folder of images: one sub-folder per class, or the root of the --list paths")
    parser.add_argument("output", metavar="OUTPUT", help="the LMDB folder to create (a folder of two with --test-fraction)")
    origin = parser.add_mutually_exclusive_group()
    origin.add_argument("--list", metavar="FILE", dest="list_file",
                        help="read `path label` lines from FILE (paths relative to SOURCE) instead of class folders")
    origin.add_argument("--digits", action="store_true",
                        help="use scikit-learn's handwritten digits (1,797 8x8 images, 10 classes); no SOURCE")
    parser.add_argument("--test-fraction", type=float, default=0.0, metavar="F",
                        help="put this share of each class in OUTPUT/test and the rest in OUTPUT/train (default 0: "
                             "no split, OUTPUT is one LMDB)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the train/test split (default 0)")
    parser.add_argument("--resize", type=int, default=0, metavar="N",
                        help="shrink images so the shorter side is N pixels (re-encodes them; default: keep)")
    parser.add_argument("--format", choices=("keep", "jpg", "png", "raw"), default="keep", dest="image_format",
                        help="store the given bytes (keep, the default), re-encode as jpg or png, or raw RGB pixels")
    parser.add_argument("--quality", type=int, default=95, help="JPEG quality for --format jpg or --resize (default 95)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help=f"processes that read and check images (default: 0 below {AUTO_WORKERS_FROM} images, "
                             "else up to 8, one per core)")
    parser.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists (only once the new "
                                                                 "build is complete)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def main(args: argparse.Namespace) -> int:
    problem = _check_arguments(args)
    if problem:
        return _fail(problem, 2)
    from playground.data.records.image_sources import SourceError

    try:
        with _sigterm_interrupts():
            class_count, written = _build(args)
    except (SourceError, FileExistsError) as err:
        return _fail(str(err), 2)
    except KeyboardInterrupt:
        return _fail(f"interrupted; nothing was written at {args.output}", 130)
    except OSError as err:
        return _fail(f"the build failed and was removed: {err}", 1)
    for path, count in written.items():
        print(f"{path}: {count} images, {class_count} classes")
    if len(written) == 2:
        train, test = written
        print(f"train on it with --set input.input_name_py=gfs_IN1k --set input.train_input_path={train} "
              f"--set input.test_input_path={test}")
    return 0


def _build(args: argparse.Namespace) -> tuple[int, dict[str, int]]:
    """Read the source and build; returns (number of classes, {database path: images})."""
    from playground.data.records.image_sources import from_digits, from_folder, from_list
    from playground.data.records.lmdb_build import BuildOptions, build

    source = (from_digits() if args.digits else
              from_list(args.source, args.list_file) if args.list_file else from_folder(args.source))
    workers = args.workers if args.workers is not None else (
        0 if len(source.images) < AUTO_WORKERS_FROM else min(8, os.cpu_count() or 1))
    options = BuildOptions(test_fraction=args.test_fraction, seed=args.seed, resize=args.resize,
                           image_format=args.image_format, quality=args.quality, workers=workers,
                           overwrite=args.overwrite, progress=not args.no_progress)
    return len(source.class_names), build(source, args.output, options)


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Within the block SIGTERM (a scheduler's cancel) unwinds like Ctrl-C, so an unfinished build is removed;
    the previous handler is restored after (make-lmdb may run inside another program, such as the demo)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check_arguments(args: argparse.Namespace) -> str:
    if args.digits and args.source:
        return "--digits takes only OUTPUT (no SOURCE folder)"
    if not args.digits and not args.source:
        return "give SOURCE and OUTPUT (or --digits OUTPUT)"
    if not 0.0 <= args.test_fraction < 1.0:
        return f"--test-fraction must be at least 0 and below 1, got {args.test_fraction}"
    if args.resize < 0 or not 1 <= args.quality <= 100 or (args.workers is not None and args.workers < 0):
        return "--resize and --workers must not be negative, --quality must be 1-100"
    return ""


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _fail(message: str, code: int) -> int:
    print(f"playground make-lmdb: error: {message}", file=sys.stderr)
    return code
