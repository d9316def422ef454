"""TrainContext as Determined 0.38.1 has it: metrics reports go to the run folder's metrics.jsonl
(_reports.py says the records), progress and status to the log."""
from __future__ import annotations

import enum
import json
import logging
import os
import pathlib
from typing import Any, Dict, List, Optional

from playground.compat.determined.core._reports import TrialReports, jsonable
from playground.outputs.run_folder import RunFolder

logger = logging.getLogger("determined.core")

GROUP_KINDS = {"training": "train", "validation": "epoch"}


class EarlyExitReason(enum.Enum):
    INVALID_HP = "EXITED_REASON_INVALID_HP"
    USER_REQUESTED_STOP = "EXITED_REASON_USER_REQUESTED_STOP"


class TensorboardMode(enum.Enum):
    """AUTO or MANUAL, accepted for compatibility; playground writes no TensorBoard events for Core API reports
    (get_tensorboard_path() is the run folder's tensorboard/, for a script's own SummaryWriter)."""
    AUTO = "AUTO"
    MANUAL = "MANUAL"


class TrainContext:
    def __init__(self, folder: TrialReports, dist: Any, tensorboard_path: Optional[pathlib.Path] = None) -> None:
        self._folder, self._dist = folder, dist
        self._tensorboard_path = tensorboard_path
        self._metadata: Optional[Dict[str, Any]] = None

    def set_status(self, status: str) -> None:
        logger.info(f"status: {status}")

    def set_metadata(self, metadata: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """Kept in the run folder's det_trial_metadata.json (the trial's metadata on Determined's master)."""
        self._metadata = dict(metadata)
        if self._folder.run_dir:
            with open(RunFolder(self._folder.run_dir).det_trial_metadata, "w", encoding="utf-8") as handle:
                json.dump(jsonable(self._metadata), handle)
        return self._metadata

    def get_metadata(self) -> Optional[Dict[str, Any]]:
        if self._metadata is None and self._folder.record.get("run_dir"):
            path = RunFolder(self._folder.record["run_dir"]).det_trial_metadata
            if os.path.exists(path):
                with open(path, encoding="utf-8") as handle:
                    self._metadata = json.load(handle)
        return self._metadata

    def _report_trial_metrics(self, group: str, steps_completed: int, metrics: Dict[str, Any],
                              batch_metrics: Optional[List[Dict[str, Any]]] = None) -> None:
        if "." in group:
            raise ValueError(f"metrics group name cannot contain '.': {group!r}")
        self._folder.append(GROUP_KINDS.get(group, group), steps_completed, metrics)

    def report_training_metrics(self, steps_completed: int, metrics: Dict[str, Any],
                                batch_metrics: Optional[List[Dict[str, Any]]] = None) -> None:
        logger.info(f"report_training_metrics(steps_completed={steps_completed}, metrics={metrics})")
        self._report_trial_metrics("training", steps_completed, metrics, batch_metrics)

    def report_validation_metrics(self, steps_completed: int, metrics: Dict[str, Any]) -> None:
        logger.info(f"report_validation_metrics(steps_completed={steps_completed}, metrics={metrics})")
        self._report_trial_metrics("validation", steps_completed, metrics)

    def report_metrics(self, group: str, steps_completed: int, metrics: Dict[str, Any]) -> None:
        logger.info(f"report_metrics(group={group}, steps_completed={steps_completed}, metrics={metrics})")
        self._report_trial_metrics(group, steps_completed, metrics)

    def get_tensorboard_path(self) -> pathlib.Path:
        if self._tensorboard_path is None:
            raise ValueError("tensorboard manager is required for this method")
        return self._tensorboard_path

    def upload_tensorboard_files(self, selector: Any = lambda _: True, mangler: Any = lambda p, __: p) -> None:
        pass     # they are in the run folder already

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        logger.info(f"report_early_exit({EarlyExitReason(reason)})")

    def report_progress(self, progress: float) -> None:
        if progress < 0 or progress > 1:
            raise ValueError(f"Progress should be between 0 and 1, not {progress}")
        logger.debug(f"report_progress with progress={progress}")

    def get_experiment_best_validation(self) -> Optional[float]:
        """The best searcher metric among this trial's validation records (playground sees no other trial's)."""
        searcher = (self._folder.record.get("experiment_config") or {}).get("searcher") or {}
        name, smaller = searcher.get("metric"), searcher.get("smaller_is_better", True)
        path = RunFolder(self._folder.record.get("run_dir") or "").metrics
        if not name or not os.path.exists(path):
            return None
        values = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("kind") == "epoch" and isinstance(record.get(name), (int, float)):
                    values.append(record[name])
        return (min(values) if smaller else max(values)) if values else None


class DummyTrainContext(TrainContext):
    def __init__(self, tensorboard_path: Optional[pathlib.Path] = None) -> None:
        super().__init__(TrialReports(None, 0), None, tensorboard_path)
