"""The `determined` hook of a Determined trial's run: its metrics, its LR schedulers and its ranks' agreement.

- Metrics: a trial's metric names are known only from what train_batch / evaluate_batch return, so a meter is
  added the first time a name appears (every rank sees the same names) and the names are part of this hook's
  state, so a resumed run has its meters before their per-rank sums are loaded. Training metrics are recorded as
  `train_<name>` (Determined keeps training and validation metrics apart; one record holds both here), validation
  metrics under their own names. Each is the mean over batches and ranks (Determined's default reducer), or for
  validation what the trial's `evaluation_reducer()` says; `context.wrap_reducer` reducers are meters too.
- Training metrics: after every `reporting_period` batches of the trial (Trainer.fit's, the configuration's
  `scheduling_unit`: 100 by default) a record of the training metrics since the last record (kind "interval").
- Validations: for a validation period in batches (Batch(k) or a schedule), a full test pass after those
  batches of the trial, and at the sweep's ASHA rungs (`after_iter`), one record per validation; the epoch ends
  that validate are loop.py's `validates_at_epoch_end`. Only a full test pass is a validation (`before_test`).
- LR schedulers (context.wrap_lr_scheduler): stepped at epoch ends here (every batch: loop.py); their
  states are checkpointed.
- Callbacks (the trial's build_callbacks(), callbacks.py): called at the matching stages, checkpointed by name.
- Ranks: before training, rank 0's parameters and buffers go to every rank (as DDP does when it wraps a model);
  before each batch, rank 0's buffers (batch-norm statistics), as DDP's forward does.
"""
from __future__ import annotations

from typing import Any


from playground.trainer.hook import Hook
from playground.determined.trials.callbacks import trial_callbacks
from playground.determined.trials.reducers import CustomReducerMeter, ReducedMetric, Reducer
from playground.determined.trials.trial import Batch


class DeterminedHook(Hook):
    name = "determined"

    def __init__(self, trainer: Any) -> None:
        super().__init__(trainer)
        self.names: dict[str, list[str]] = {"train": [], "validation": []}
        self.eval_batches = 0
        self._skipped: set[str] = set()
        context = trainer.det.context
        self._buffers = [b for net in context.models for b in net.buffers()]
        self._distributed = trainer.world_size > 1
        chosen = getattr(trainer.det.trial, "evaluation_reducer", None)
        chosen = chosen() if callable(chosen) else Reducer.AVG
        self._reducers = chosen if isinstance(chosen, dict) else {}
        self._default_reducer = chosen if isinstance(chosen, Reducer) else Reducer.AVG
        self.callbacks = trial_callbacks(trainer.det.trial)
        for reducer, name, for_training, for_validation in context.reducers:
            trainer.book.add_meter(name if for_validation else _meter_name(name, True),
                                   CustomReducerMeter(reducer, name), not for_validation, None)

    # ------------------------------------------------------------------ metrics
    def add(self, is_train: bool, values: dict, samples: int) -> None:
        """One batch's metrics to the train or validation meters (added on first sight)."""
        named = {}
        for key, value in values.items():
            if not _is_scalar(value):
                self._skip(key, value)
                continue
            name = _meter_name(key, is_train)
            if name not in self.trainer.book.metrics:
                self._add_meter(name, key, is_train)
            named[key] = value
        self.trainer.book.add(is_train, None, None, None, named=named, samples=samples)

    def _skip(self, key: str, value: Any) -> None:
        if value is not None and key not in self._skipped:
            self._skipped.add(key)
            self.trainer.log.warning("metric %s is a %s, not a number: it is not recorded in metrics.jsonl", key,
                                     type(value).__name__)

    def _add_meter(self, name: str, key: str, is_train: bool) -> None:
        book = self.trainer.book
        how = Reducer.AVG if is_train else self._reducers.get(key, self._default_reducer)
        book.add_meter(name, ReducedMetric(key, how), is_train, None)
        book.metrics[name]["output"].extend(record.get(name) for record in book.records)
        self.names["train" if is_train else "validation"].append(key)

    def after_record(self, record: dict) -> None:
        """A record at the end of training inside an epoch (max_length in batches, a stop request) says how far
        into the epoch it is, not that the epoch was completed (ASHA reads `epochs`)."""
        trainer = self.trainer
        done = trainer.global_iter - record["epoch"] * trainer.epoch_iterations
        if record["kind"] == "epoch" and done < trainer.epoch_iterations:
            record["epoch_iter"], record["epochs"] = done, record["epoch"] + done / trainer.epoch_iterations
            trainer.book.record_epochs[-1] = record["epochs"]
        validated = {key: record[key] for key in self.names["validation"] if record.get(key) is not None}
        if validated:
            self._call("on_validation_end", validated)

    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        """Validation period Batch(k) or Batch([...]): after every k-th (or each listed) batch of the trial, and at
        the sweep's ASHA rungs, a full test pass (kind "epoch"), the record every validation of a Determined run
        is (the sweep ranks on it at its step); at an epoch's last batch it is the epoch's own record
        (record_points.py makes no second)."""
        det, done = self.trainer.det, self.trainer.global_iter
        period = det.validation_period
        if (isinstance(period, Batch) and period.should_stop(done)) or done in det.rung_batches:
            self.trainer.hooks.get("record_points").record(epoch, epoch_iter + 1, "epoch")
        elif det.reporting_period is not None and det.reporting_period.should_stop(done) \
                and epoch_iter + 1 < self.trainer.epoch_iterations:
            # Determined's REPORT boundary: the training metrics since the last record (an epoch's last batch
            # has the epoch end's record)
            self.trainer.hooks.get("record_points").record(epoch, epoch_iter + 1, "interval")

    def before_test(self, kind: str) -> None:
        if kind != "epoch":      # an epoch end recording training metrics only: no validation
            return
        self.eval_batches = 0
        self._call("on_validation_start")
        self._call("on_validation_epoch_start")

    def _call(self, stage: str, *args: Any) -> None:
        for callback in self.callbacks.values():
            getattr(callback, stage)(*args)

    # ------------------------------------------------------------------ schedulers and ranks
    def before_train(self) -> None:
        trainer = self.trainer
        trainer.det.context._initial_batch = trainer.global_iter
        self._call("on_trial_startup", trainer.global_iter, None)
        self._call("on_training_start")
        if self._distributed:
            import torch.distributed as dist
            for net in trainer.det.context.models:
                for tensor in [*net.parameters(), *net.buffers()]:
                    dist.broadcast(tensor.data, 0)
        if trainer.det.initial_validation and trainer.global_iter == 0 and not trainer.book.records:
            trainer.hooks.get("record_points").record(trainer.epoch, 0, "epoch")   # perform_initial_validation

    def share_buffers(self) -> None:
        if self._distributed and self._buffers:
            import torch.distributed as dist
            for buffer in self._buffers:
                dist.broadcast(buffer.data, 0)

    def before_epoch(self, epoch: int) -> None:
        if self.trainer.start_epoch_iter == 0:     # not a resume inside the epoch
            self._call("on_training_epoch_start", epoch)

    def after_epoch(self, epoch: int) -> None:
        trainer = self.trainer
        if trainer.global_iter < (epoch + 1) * trainer.epoch_iterations:
            return     # training ended inside this epoch (max_length in batches, a stop request): no epoch end
        for scheduler in self.trainer.det.context.lr_schedulers:
            scheduler.after_epoch(epoch + 1)
        self._call("on_training_epoch_end", epoch)

    def after_train(self) -> None:
        self._call("on_trial_shutdown")

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        return {"metric_names": {k: list(v) for k, v in self.names.items()},
                "lr_schedulers": [s.state_dict() for s in self.trainer.det.context.lr_schedulers],
                "callbacks": {name: callback.state_dict() for name, callback in self.callbacks.items()}}

    def load_state_dict(self, state: dict) -> None:
        for phase, keys in state.get("metric_names", {}).items():
            for key in keys:
                name = _meter_name(key, phase == "train")
                if name not in self.trainer.book.metrics:
                    self._add_meter(name, key, phase == "train")
        schedulers = self.trainer.det.context.lr_schedulers
        saved = state.get("lr_schedulers", [])
        if len(saved) != len(schedulers):
            raise ValueError(f"the checkpoint holds {len(saved)} LR scheduler(s), the trial wraps "
                             f"{len(schedulers)}: it is not this trial's checkpoint")
        for scheduler, scheduler_state in zip(schedulers, saved):
            scheduler.load_state_dict(scheduler_state)
        for name, callback_state in state.get("callbacks", {}).items():
            if name in self.callbacks:
                self.callbacks[name].load_state_dict(callback_state)


def _is_scalar(value: Any) -> bool:
    """A number, or a tensor / array of one element (what a metric's mean can be taken of)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    return callable(getattr(value, "numel", None)) and value.numel() == 1 or getattr(value, "size", None) == 1


def _meter_name(key: str, is_train: bool) -> str:
    return key if not is_train or key.startswith("train_") else f"train_{key}"
