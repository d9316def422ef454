"""What a conformance trial's callbacks were given, written for the test to read: one JSON line per call into
`$CONFORMANCE_LOG.rank<N>` (no variable: nothing written)."""
import json
import os
from typing import Any, Dict

from determined import pytorch


def write(stage: str, rank: int, **data: Any) -> None:
    path = os.environ.get("CONFORMANCE_LOG")
    if path:
        with open(f"{path}.rank{rank}", "a") as out:
            out.write(json.dumps({"stage": stage, **data}, default=_number) + "\n")


def _number(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return repr(value)


class Observer(pytorch.PyTorchCallback):
    """Determined's metrics callback, as a record: training workloads (avg and per-batch metrics), validations,
    checkpoints."""

    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.rank = context.distributed.get_rank()

    def on_training_workload_end(self, avg_metrics: Dict[str, Any], batch_metrics: Any) -> None:
        write("training", self.rank, avg=avg_metrics, batches=batch_metrics)

    def on_validation_end(self, metrics: Dict[str, Any]) -> None:
        write("validation", self.rank, metrics=metrics)

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        write("checkpoint", self.rank, uuid=uuid)
