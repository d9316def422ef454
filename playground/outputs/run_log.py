"""Logging for a run: `train.log` in the run folder (rank 0) and the terminal.

Record-point lines go to the logger "playground.records"; when a progress bar is on screen they go to the
file only, so the bar is not torn. Ranks other than 0 print warnings and errors only, prefixed with their rank.
Once a later attempt has claimed the run folder (playground/restarts/fence.py), lines no longer reach train.log
(the terminal still gets them): an attempt that only looked dead must not write into its successor's log.
"""
from __future__ import annotations

import logging
import os
import sys

from playground.restarts.fence import Fence

FORMAT = "%(asctime)s %(levelname)s %(message)s"


class _NotRecords(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("playground.records")


class _FencedFileHandler(logging.FileHandler):
    """train.log, written only while this attempt holds the run folder (one `stat` per line)."""

    def __init__(self, path: str, fence: Fence) -> None:
        super().__init__(path, encoding="utf-8")
        self.fence = fence

    def emit(self, record: logging.LogRecord) -> None:
        if not self.fence.superseded():
            super().emit(record)


def setup_logging(run_dir: str | None, rank: int, records_on_console: bool = True) -> logging.Logger:
    logger = logging.getLogger("playground")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    logger.setLevel(logging.INFO)
    logger.propagate = False
    console = logging.StreamHandler(sys.stderr)
    if rank == 0:
        console.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
        console.setLevel(logging.INFO)
        if not records_on_console:
            console.addFilter(_NotRecords())
    else:
        console.setFormatter(logging.Formatter(f"[rank {rank}] %(levelname)s %(message)s"))
        console.setLevel(logging.WARNING)
    logger.addHandler(console)
    if run_dir and rank == 0:
        os.makedirs(run_dir, exist_ok=True)
        file_handler = _FencedFileHandler(os.path.join(run_dir, "train.log"), Fence.from_env(run_dir))
        file_handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(file_handler)
    return logger


def close_logging() -> None:
    logger = logging.getLogger("playground")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
