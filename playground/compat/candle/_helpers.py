"""candle_lib's helpers that benchmarks call: paths, logging, seeds, threads, data files, Keras defaults.

`fetch_file` and `get_file` look for the file where candle_lib caches it (`$CANDLE_DATA_DIR/<subdir>/<name>`,
an unpacked folder of the same stem counting too) and in `$CANDLE_DATA_DIR` itself; they never download:
a missing file raises CandleDataMissing, one line naming the path and the URL to fetch by hand.
"""
from __future__ import annotations

import hashlib
import logging
import os
import random
import shutil
import sys

import numpy as np

from playground.compat.candle._errors import CandleDataMissing

_ARCHIVES = (".tar.gz", ".tgz", ".zip")


def verify_path(path: str) -> None:
    """Create the folder part of `path` (everything before the last '/') when it does not exist."""
    folder = os.path.dirname(path)
    if folder and not os.path.exists(folder):
        os.makedirs(folder)


def set_up_logger(logfile: str, logger: logging.Logger, verbose: bool = False,
                  fmt_line: str = "[%(asctime)s %(process)d] %(message)s",
                  fmt_date: str = "%Y-%m-%d %H:%M:%S") -> None:
    """`logger` at DEBUG, to `logfile` (DEBUG) and to stdout (INFO, DEBUG when verbose)."""
    verify_path(logfile)
    to_file = logging.FileHandler(logfile)
    to_file.setFormatter(logging.Formatter(fmt_line, datefmt=fmt_date))
    to_file.setLevel(logging.DEBUG)
    to_stdout = logging.StreamHandler(sys.stdout)
    to_stdout.setFormatter(logging.Formatter(""))
    to_stdout.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.setLevel(logging.DEBUG)
    logger.addHandler(to_file)
    logger.addHandler(to_stdout)


def fetch_file(link: str, subdir: str, unpack: bool = False, md5_hash: str = None) -> str:
    """The local path of the file `link` names (its last path part), as get_file finds it in `subdir`."""
    return get_file(os.path.basename(link), origin=link, unpack=unpack, md5_hash=md5_hash, cache_subdir=subdir)


def get_file(fname: str, origin: str, unpack: bool = False, md5_hash: str = None, cache_subdir: str = "common",
             datadir: str = None) -> str:
    """`fname` in candle_lib's cache, `datadir` (default $CANDLE_DATA_DIR)/`cache_subdir`, else in `datadir`
    itself. An archive (.tar.gz, .tgz, .zip) counts as found when its unpacked folder is there, and is unpacked
    beside itself when only the archive is; the path returned is then the folder's. With `md5_hash`, the file
    must have that MD5. Raises CandleDataMissing (one line: the path, and the URL to fetch by hand)."""
    root = datadir or os.environ.get("CANDLE_DATA_DIR")
    if root is None:
        raise ValueError("Need data directory. Either pass datadir or set CANDLE_DATA_DIR environment variable")
    cache = os.path.join(root, cache_subdir) if cache_subdir is not None else root
    stem = next((fname[:-len(ext)] for ext in _ARCHIVES if fname.endswith(ext)), None)
    url = "http://" + origin[len("ftp://"):] if origin.startswith("ftp://") else origin   # as candle_lib fetches it
    for folder in dict.fromkeys((cache, root)):
        path, unpacked = os.path.join(folder, fname), stem and os.path.join(folder, stem)
        if unpacked and os.path.exists(unpacked):
            return unpacked
        if os.path.exists(path):
            if md5_hash is not None and not validate_file(path, md5_hash):
                raise CandleDataMissing(f"candle.get_file: {path} does not have the MD5 {md5_hash} (incomplete or "
                                        f"outdated); playground's candle does not download: fetch {url} by hand "
                                        "and replace it")
            if unpacked:
                shutil.unpack_archive(path, folder)
                return unpacked
            return path
    raise CandleDataMissing(f"candle.get_file: {os.path.join(cache, fname)} is missing; playground's candle does "
                            f"not download: fetch {url} by hand and put it there")


def validate_file(fpath: str, md5_hash: str) -> bool:
    """Whether the file's MD5 is `md5_hash`."""
    digest = hashlib.md5()
    with open(fpath, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == str(md5_hash)


def keras_default_config() -> dict:
    """The Keras defaults candle_lib uses for optimizers and initializers in every framework."""
    return {"decay_lr": 0.0, "epsilon": 1e-8, "rho": 0.9, "momentum_sgd": 0.0, "nesterov_sgd": False,
            "beta_1": 0.9, "beta_2": 0.999, "decay_schedule_lr": 0.004, "minval_uniform": -0.05,
            "maxval_uniform": 0.05, "mean_normal": 0.0, "stddev_normal": 0.05}


def set_seed(seed: int) -> None:
    """Seed Python's and numpy's generators (and torch's, when torch is imported), as candle_lib does."""
    os.environ["PYTHONHASHSEED"] = "0"
    np.random.seed(int(seed))
    random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(int(seed))


def set_parallelism_threads() -> None:
    """candle_lib sets TensorFlow's thread pools from OMP_NUM_THREADS; for PyTorch, torch's intra-op threads."""
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads and threads.isdigit() and "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(threads))
