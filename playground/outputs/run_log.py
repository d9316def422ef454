"""Logging for a run: `train.log` in the run folder (rank 0) and the terminal.

Record-point lines go to the logger "playground.records"; when a progress bar is on screen they go to the
file only, so the bar is not torn. Ranks other than 0 print warnings and errors only, prefixed with their rank.
Once a later attempt has claimed the run folder (playground/restarts/fence.py), lines no longer reach train.log
(the terminal still gets them): an attempt that only looked dead must not write into its successor's log. A line
train.log cannot take (a full disk) ends its writing; the run stops at its next output (take_log_failure) with one
line, as for metrics.jsonl, the file left with whole lines.
"""
from __future__ import annotations

import logging
import os
import sys

from playground.outputs.line_append import append_failure, append_whole
from playground.outputs.run_folder import RunFolder
from playground.restarts.fence import Fence

FORMAT = "%(asctime)s %(levelname)s %(message)s"


class _NotRecords(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("playground.records")


class _TrainLogHandler(logging.FileHandler):
    """train.log: whole lines only, written while this attempt holds the run folder (one `stat` per line).

    A line that cannot be written (a full disk) is cut back, so the file ends with its last whole line; from
    then on nothing more goes to the file (the terminal still gets every line), and the failure waits in
    `failure` for the run to stop with it (take_log_failure), instead of logging's traceback per line. A
    FileHandler (its `baseFilename`) for those who look for the file's handler; its own unbuffered file.
    """

    def __init__(self, path: str, fence: Fence) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.path, self.fence = path, fence
        self.file = open(path, "ab", buffering=0)
        self.failure: str | None = None
        self.failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed or self.file.closed or self.fence.superseded():
            return
        try:
            line = (self.format(record) + "\n").encode("utf-8")
        except Exception:   # a bad format string or argument: logging's own report, as for any handler
            self.handleError(record)
            return
        try:
            append_whole(self.file, line)
        except OSError as err:
            self.failed = True
            self.failure = append_failure("a line", self.path, err)

    def close(self) -> None:
        self.acquire()
        try:
            self.file.close()
        finally:
            self.release()
        super().close()


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
        file_handler = _TrainLogHandler(RunFolder(run_dir).log, Fence.from_env(run_dir))
        file_handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(file_handler)
    return logger


def take_log_failure() -> str | None:
    """The one line saying why train.log lost a line (a full disk), once; None while it has every line."""
    for handler in logging.getLogger("playground").handlers:
        if isinstance(handler, _TrainLogHandler) and handler.failure is not None:
            failure, handler.failure = handler.failure, None
            return failure
    return None


def close_logging() -> None:
    logger = logging.getLogger("playground")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
