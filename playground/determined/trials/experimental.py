"""`context.experimental`: Determined's PyTorchExperimentalContext (0.2x to 0.38), and the members of the trial
context that playground does not provide.

- `use_amp()`: automatic mixed precision as Determined's: on CUDA, each wrapped model's forward runs under
  autocast (float16, outputs back to float32), `backward` scales the loss, `step_optimizer` steps through the
  scaler, which is updated once after each batch and checkpointed; on a machine without CUDA it does nothing
  (Determined's GradScaler disables itself there too), said once in the log.
- `disable_dataset_reproducibility_checks()`: lets build_*_data_loader return a torch DataLoader (playground
  accepts one anyway: its dataset is read in playground's seeded, rank-sharded order; see
  docs/determined-pytorch.md, data loaders).
- `disable_auto_to_device()`: batches reach train_batch / evaluate_batch on the CPU; the trial moves them
  (`context.to_device`).
- 0.15's forwards `wrap_reducer`, `reset_reducers`, `reduce_metrics`: the context's, as Determined forwarded
  them then.
Any other member is `NotProvided`: one line naming it and the page that lists what is provided.
"""
from __future__ import annotations

import logging
from typing import Any

from playground.processes.exit_codes import UserError

log = logging.getLogger("playground")
DOC = "docs/determined-pytorch.md"


class NotProvided(UserError, AttributeError):
    """A Determined API member playground does not provide; the message names it and the documentation page."""


def not_provided(owner: str, name: str, why: str = "") -> NotProvided:
    return NotProvided(f"{owner}.{name} is not provided by playground's Determined API{': ' + why if why else ''} "
                       f"(what is: {DOC})")


class ExperimentalContext:
    """`context.experimental` of a PyTorchTrialContext."""

    def __init__(self, parent: Any) -> None:
        self._parent = parent
        self.auto_amp = False
        self.data_repro_checks_disabled = False
        self.auto_to_device = True

    def use_amp(self) -> None:
        import torch
        if not torch.cuda.is_available():
            log.info("context.experimental.use_amp(): no CUDA device, so no mixed precision (as Determined's "
                     "GradScaler disables itself without one)")
            return
        self._parent.wrap_scaler(torch.amp.GradScaler("cuda"))
        self.auto_amp = True

    def disable_dataset_reproducibility_checks(self) -> None:
        self.data_repro_checks_disabled = True
        log.info("disabled dataset reproducibility checks")

    def disable_auto_to_device(self) -> None:
        self.auto_to_device = False
        log.info("disabled automatically moving data to device")

    # Determined 0.15's forwards, removed from Determined's experimental context in 0.18
    def wrap_reducer(self, reducer: Any, name: str | None = None, for_training: bool = True,
                     for_validation: bool = True) -> Any:
        return self._parent.wrap_reducer(reducer, name=name, for_training=for_training,
                                         for_validation=for_validation)

    def reset_reducers(self) -> None:
        from playground.determined.trials.reducers import reset_all
        reset_all(self._parent.reducers)

    def reduce_metrics(self, for_training: bool) -> dict:
        from playground.determined.trials.reducers import reduce_wrapped
        return reduce_wrapped(self._parent.reducers, for_training, self._parent.distributed.allgather)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_provided("context.experimental", name)
