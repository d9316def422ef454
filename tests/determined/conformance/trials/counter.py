"""A callback counting the calls of each stage (checkpointed with the trial), and one with the legacy
on_training_epoch_start() of Determined before 0.17.8 that keeps no state: both in the shape of Determined's
harness fixture (written here). Each writes its counts when the trial shuts down (observe.py)."""
from typing import Any, Dict

from determined import pytorch

import observe
import onevar


class Counter(pytorch.PyTorchCallback):
    def __init__(self) -> None:
        self.trial_startups = self.trial_shutdowns = self.training_started_times = 0
        self.training_epochs_started = self.training_epochs_ended = self.training_workloads_ended = 0
        self.validation_steps_started = self.validation_steps_ended = 0
        self.checkpoints_written = self.checkpoints_uploaded = 0

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: Any) -> None:
        self.trial_startups += 1

    def on_training_start(self) -> None:
        self.training_started_times += 1

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        self.training_epochs_started += 1

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        self.training_epochs_ended += 1

    def on_training_workload_end(self, avg_metrics: Dict[str, Any], batch_metrics: Any) -> None:
        self.training_workloads_ended += 1

    def on_validation_start(self) -> None:
        self.validation_steps_started += 1

    def on_validation_end(self, metrics: Dict[str, Any]) -> None:
        self.validation_steps_ended += 1

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        self.checkpoints_written += 1

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        self.checkpoints_uploaded += 1

    def on_trial_shutdown(self) -> None:
        self.trial_shutdowns += 1

    def state_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class LegacyEpochStartCounter(pytorch.PyTorchCallback):
    def __init__(self) -> None:
        self.epoch_starts = 0

    def on_training_epoch_start(self) -> None:  # noqa: the form without epoch_idx, deprecated in 0.17.8
        self.epoch_starts += 1


class CountingShutdown(pytorch.PyTorchCallback):
    """Writes the counters' values last, at shutdown (after every other callback's)."""

    def __init__(self, rank: int, counters: Dict[str, Any]) -> None:
        self.rank, self.counters = rank, counters

    def on_trial_shutdown(self) -> None:
        observe.write("counts", self.rank, **{name: dict(c.__dict__) for name, c in self.counters.items()})


class OneVarCallbacksTrial(onevar.OneVarTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        super().__init__(context)
        self.counter, self.legacy = Counter(), LegacyEpochStartCounter()

    def build_callbacks(self) -> Dict[str, pytorch.PyTorchCallback]:
        return {"counter": self.counter, "legacy": self.legacy,
                "zz_report": CountingShutdown(self.context.distributed.get_rank(),
                                              {"counter": self.counter, "legacy": self.legacy})}
