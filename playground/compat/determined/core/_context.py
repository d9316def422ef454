"""core.init() and core.Context as Determined 0.38.1 has them. In a process playground started for a
Determined experiment, the contexts write to the trial's run folder (cluster info); elsewhere init() gives
Determined's off-cluster context: checkpoints under checkpoint_storage (or the user's data folder for
`determined`), metrics only in the log, one operation of length 1.
"""
from __future__ import annotations

import logging
import os
import pathlib
import types
from typing import Any, Dict, Optional, Union

from playground.compat.determined._errors import InvalidHP
from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE
from playground.compat.determined._info import cluster_record, get_cluster_info
from playground.compat.determined.core._checkpoint import CheckpointContext, DummyCheckpointContext
from playground.compat.determined.core._distributed import DistributedContext, DummyDistributedContext
from playground.compat.determined.core._preempt import DummyPreemptContext, PreemptContext, PreemptMode
from playground.compat.determined.core._reports import TrialReports
from playground.compat.determined.core._searcher import (SearcherContext, SearcherContextMissing,
                                                          DummySearcherContext, _parse_searcher_units)
from playground.compat.determined.core._train import DummyTrainContext, TensorboardMode, TrainContext

logger = logging.getLogger("determined.core")


class DummyProfilerContext:
    """The profiler (system metrics to the master) does nothing here."""

    def on(self, sampling_interval: int = 1, samples_per_report: int = 10) -> None:
        pass

    def off(self) -> None:
        pass

    def _close(self) -> None:
        pass


ProfilerContext = DummyProfilerContext


class DummyExperimentalCoreContext:
    pass


ExperimentalCoreContext = DummyExperimentalCoreContext


class Context:
    """checkpoint, distributed, preempt, searcher, train, profiler, info: use `with core.init() as context`."""

    def __init__(self, checkpoint: CheckpointContext, _session: Any = None,
                 distributed: Optional[DistributedContext] = None, preempt: Optional[PreemptContext] = None,
                 train: Optional[TrainContext] = None, searcher: Optional[SearcherContext] = None,
                 info: Any = None, experimental: Any = None, profiler: Any = None, _folder: Any = None,
                 **_ignored: Any) -> None:
        self.checkpoint = checkpoint
        self.distributed = distributed or DummyDistributedContext()
        self.preempt = preempt or DummyPreemptContext(self.distributed)
        self.train = train or DummyTrainContext()
        self.searcher = searcher or SearcherContextMissing()
        self.info = info
        self.experimental = experimental or DummyExperimentalCoreContext()
        self.profiler = profiler or DummyProfilerContext()
        self._folder = _folder

    def start(self) -> None:
        if self._folder is not None:
            self._folder.start()
        self.preempt.start()

    def __enter__(self) -> "Context":
        self.start()
        return self

    def alert(self, title: Optional[str] = None, description: Optional[str] = None, level: Optional[str] = "info") -> None:
        """Determined posts a webhook; here the alert is a log line."""
        logger.log(logging.WARNING if level in ("warn", "error") else logging.INFO, f"alert: {title}: {description}")

    def close(self, exc_type: Optional[type] = None, exc_val: Optional[BaseException] = None,
              exc_tb: Optional[types.TracebackType] = None) -> None:
        self.preempt.close()
        if exc_type is None:      # peers that raised will not come to say goodbye
            self.distributed.close()
        self.profiler._close()

    def __exit__(self, exc_type: Optional[type], exc_val: Optional[BaseException],
                 exc_tb: Optional[types.TracebackType]) -> None:
        self.close(exc_type, exc_val, exc_tb)
        if isinstance(exc_val, InvalidHP):
            logger.info("InvalidHP detected during Trial init, converting InvalidHP to exit(0)")
            raise SystemExit(EXIT_DONE)


def _storage_path(checkpoint_storage: Optional[Union[str, Dict[str, Any]]]) -> Optional[str]:
    """A directory from core.init()'s checkpoint_storage: a path, or {type: directory, container_path}."""
    if checkpoint_storage is None:
        return None
    if isinstance(checkpoint_storage, (str, os.PathLike)):
        text = os.fspath(checkpoint_storage)
        if "://" in text:
            raise ValueError(f"checkpoint_storage {text!r}: cloud storage is not supported by playground's "
                             "determined; give a directory")
        return text
    if isinstance(checkpoint_storage, dict):
        kind = checkpoint_storage.get("type")
        if kind == "directory" and checkpoint_storage.get("container_path"):
            return str(checkpoint_storage["container_path"])
        if kind == "shared_fs":
            raise ValueError("a checkpoint_storage with type: shared_fs is not allowed in core.init() (as in "
                             "Determined); pass a directory path")
        raise ValueError(f"checkpoint_storage type {kind!r} is not supported by playground's determined; give a "
                         "directory path or {type: directory, container_path: PATH}")
    raise TypeError("checkpoint_storage must be a string, dictionary, or None")


def _dummy_init(*, distributed: Optional[DistributedContext] = None,
                checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
                tensorboard_path: Optional[pathlib.Path] = None,
                preempt_mode: PreemptMode = PreemptMode.WorkersAskChief) -> Context:
    distributed = distributed or DummyDistributedContext()
    base = _storage_path(checkpoint_storage)
    if base is None:
        data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        base = os.path.join(data_home, "determined")
        logger.info(f"no storage_manager provided; storing checkpoints in {base}")
    return Context(distributed=distributed, checkpoint=DummyCheckpointContext(distributed, base),
                   preempt=DummyPreemptContext(distributed, preempt_mode), train=DummyTrainContext(tensorboard_path),
                   searcher=DummySearcherContext(distributed))


def init(*, distributed: Optional[DistributedContext] = None,
         checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
         preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
         tensorboard_mode: TensorboardMode = TensorboardMode.AUTO) -> Context:
    """A core.Context for this task; `with core.init(...) as core_context:`. A multi-slot trial must pass a
    DistributedContext (DistributedContext.from_torch_distributed())."""
    record, info = cluster_record(), get_cluster_info()
    if record is None or info is None:
        return _dummy_init(distributed=distributed, checkpoint_storage=checkpoint_storage)
    if distributed is None and int(record.get("slots_per_trial") or 1) > 1:
        raise ValueError("you must provide a valid DistributedContext for a multi-slot task")
    distributed = distributed or DummyDistributedContext()
    TensorboardMode(tensorboard_mode)
    folder = TrialReports(record, distributed.rank)
    base = _storage_path(checkpoint_storage) or record.get("checkpoint_dir") or \
        RunFolder(record["run_dir"]).checkpoints
    os.makedirs(base, exist_ok=True)
    max_length = record.get("max_length")
    searcher: SearcherContext = SearcherContextMissing()
    if max_length:
        units = _parse_searcher_units({"searcher": {"max_length": max_length}})
        searcher = SearcherContext(distributed, info.trial.trial_id, int(next(iter(max_length.values()))), units,
                                   _on_completed=folder.operation_completed)
    tensorboard_path = pathlib.Path(RunFolder(record["run_dir"]).tensorboard)
    return Context(distributed=distributed, checkpoint=CheckpointContext(distributed, base, folder),
                   preempt=PreemptContext(distributed, preempt_mode, _acknowledge=folder.preempted),
                   train=TrainContext(folder, distributed, tensorboard_path), searcher=searcher, info=info,
                   _folder=folder)
