"""What each rank of a run does once its trainer exists: the job that `launch(prepared, job)` hands every rank.

As detectron2's `launch(main_func, ...)` receives the function its processes run, the launcher receives one
of these small picklable values and gives it to every rank it runs (a spawned rank gets it as an argument);
nothing travels in environment variables. `run(trainer)` runs on every rank with the process group up and
returns the result dict (rank 0's is printed and returned) or None.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class Job(Protocol):
    """A rank's work: defined at module level (a spawned rank unpickles it), run on every rank."""

    def run(self, trainer: Any) -> dict | None: ...


@dataclass(frozen=True)
class Train:
    """Train per the opts (`playground run`; `playground eval` is such a run with num_epochs 0)."""

    def run(self, trainer: Any) -> dict | None:
        return trainer.buildModelAndTrain(trainer.opts)


@dataclass(frozen=True)
class OneBatchCheck:
    """`--test`: the shrunk run, then the checkpoint and metrics checks of one_batch_check.py on every rank."""

    def run(self, trainer: Any) -> dict | None:
        from playground.launch.one_batch_check import check_run
        result = trainer.buildModelAndTrain(trainer.opts)
        check_run(trainer)
        return result


@dataclass(frozen=True)
class Predict:
    """`playground predict`: the network's outputs for the test data, from `checkpoint`, written to `output`."""
    checkpoint: str
    output: str

    def run(self, trainer: Any) -> dict | None:
        from playground.launch.predict import predict_rank
        predict_rank(trainer, self.checkpoint, self.output)
        return None


TRAIN = Train()
