"""The `determined` hook of a Determined trial's run: Determined's trial controller, stage by stage.

- Windows (boundaries.py): after each batch, when it reaches a boundary, the training window ends: its
  training metrics (and the reducers wrapped for training) are reported in one record, kind "interval"; when a
  validation is due the same record holds the validation (kind "epoch", a full test pass, which a sweep ranks
  on), made after the training values were taken. Then the checkpoint it reached, and after a validation one
  per the configuration's `checkpoint_policy` (best: when the searcher metric is this trial's best so far;
  all; none). The end of training (max_length, test mode) validates unless the window just did, and
  checkpoints; a stop the trial requested (set_stop_requested) ends training at the end of the current window
  with a checkpoint, as Determined's controller checks it there. No other record is made: an epoch end inside
  a window reports nothing (its work, epoch-stepped LR schedulers and on_training_epoch_end, is loop.py's).
- Reducers (reducers.py): reset when a training window starts and before each validation.
- Metrics (trial_metrics.py): names, meters, the callbacks' views.
- Callbacks (the trial's build_callbacks(), callbacks.py): called at the matching stages, checkpointed by name.
- Ranks: before training, rank 0's parameters and buffers go to every rank (as DDP does when it wraps a model);
  before each batch, rank 0's buffers (batch-norm statistics), as DDP's forward does.
- State: metric names, LR schedulers, callbacks, and the wrapped reducers' own attributes when they are plain
  data (a preemption checkpoint can fall inside a window; a reducer holding anything else restarts its window
  value after such a resume, said once in the log).
"""
from __future__ import annotations

import os
from typing import Any

from playground.trainer.hook import Hook
from playground.determined.trials.boundaries import Reached, reached
from playground.determined.trials.callbacks import call_epoch_start, overrides, trial_callbacks
from playground.determined.trials.reducers import reset_all
from playground.determined.trials.trial_metrics import TrialMetrics, plain_state


class DeterminedHook(Hook):
    name = "determined"

    def __init__(self, trainer: Any, session: Any) -> None:
        """`session`: the trial, its context, lengths and periods (fit.TrialSession); the job (fit.DeterminedFit)
        gives the trainer this hook before the loop starts."""
        super().__init__(trainer)
        self.session = session
        context = session.context
        self.callbacks = trial_callbacks(session.trial)
        self.metrics = TrialMetrics(trainer, session.trial, context.reducers,
                                    keep_batches=overrides(self.callbacks, "on_training_workload_end"))
        self.eval_batches = 0
        self._buffers = [b for net in context.models for b in net.buffers()]
        self._distributed = trainer.world_size > 1
        self._validation_reducers: dict = {}
        self._unsaved_reducers: set[str] = set()

    def add(self, is_train: bool, values: dict, samples: int) -> None:
        self.metrics.add(is_train, values, samples)

    # ------------------------------------------------------------------ windows
    def after_iter(self, epoch: int, epoch_iter: int) -> None:
        trainer = self.trainer
        epoch_ended = epoch_iter + 1 == trainer.epoch_iterations
        ends = reached(self.session, trainer.global_iter, epoch + 1 if epoch_ended else None)
        if ends.ends_window():
            self._end_window(epoch, epoch_iter + 1, ends)

    def _end_window(self, epoch: int, iters_done: int, ends: Reached) -> None:
        trainer, session = self.trainer, self.session
        stop = session.context.get_stop_requested()
        validate = (ends.validate and not (stop and ends.train_end)) or (ends.train_end and not stop)
        self._report_training(epoch, iters_done)
        record = trainer.hooks.get("record_points").record(epoch, iters_done, "epoch" if validate else "interval")
        reset_all(session.context.reducers)          # the next window starts
        best = validate and self._is_best(record)
        policy = session.checkpoint_policy
        if ends.checkpoint or ends.train_end or stop or (validate and (policy == "all" or (policy == "best" and best))):
            self._checkpoint(epoch, iters_done, best and session.keep_best, record)
        if ends.train_end or stop:
            trainer.should_stop = True

    def _report_training(self, epoch: int, iters_done: int) -> None:
        values = self.metrics.close_training_window()
        if self.metrics.keep_batches:
            trainer = self.trainer
            averages, per_batch = self.metrics.workload_view(values, trainer.global_iter,
                                                             trainer.global_iter // trainer.epoch_iterations)
            self._call("on_training_workload_end", averages, per_batch)

    def before_test(self, kind: str) -> None:
        if kind != "epoch":      # a training report: no validation
            return
        reset_all(self.session.context.reducers)
        self.eval_batches = 0
        self._call("on_validation_start")
        self._call("on_validation_epoch_start")

    def after_test(self, kind: str) -> None:
        if kind == "epoch":
            self._validation_reducers = self.metrics.close_validation()

    def after_record(self, record: dict) -> None:
        if record["kind"] == "epoch":
            self._call("on_validation_end", self.metrics.validation_view(record, self._validation_reducers))
            self._validation_reducers = {}

    def _is_best(self, record: dict) -> bool:
        """Whether the record's searcher metric beats every earlier validation of this trial (Determined compares
        with its experiment's best; a playground trial sees its own records)."""
        metric = self.session.searcher_metric
        value = record.get(metric) if metric else None
        if value is None or value != value:
            return False
        earlier = [r.get(metric) for r in self.trainer.book.records[:-1] if r.get("kind") == "epoch"]
        earlier = [v for v in earlier if v is not None and v == v]
        if not earlier:
            return True
        return value < min(earlier) if self.session.smaller_is_better else value > max(earlier)

    def _checkpoint(self, epoch: int, iters_done: int, best: bool, record: dict) -> None:
        trainer = self.trainer
        checkpointer = trainer.checkpointer
        path = os.path.join(checkpointer.folder, batch_checkpoint_name(trainer.global_iter))
        value = record.get(self.session.searcher_metric) if best else None
        saved = checkpointer.save_now(epoch, iters_done, trainer.state_capture(), path, best=best, best_value=value)
        trainer.model_path = saved or trainer.model_path
        if overrides(self.callbacks, "on_checkpoint_write_end", "on_checkpoint_upload_end", "on_checkpoint_end"):
            checkpointer.finish()      # written: the callbacks may read it
            self._call("on_checkpoint_write_end", checkpointer.folder)
            self._call("on_checkpoint_end", checkpointer.folder)
            self._call("on_checkpoint_upload_end", os.path.basename(saved or path))

    def _call(self, stage: str, *args: Any) -> None:
        for callback in self.callbacks.values():
            method = getattr(callback, stage, None)
            if method is not None:
                method(*args)

    # ------------------------------------------------------------------ the run's start and end, ranks
    def before_train(self) -> None:
        trainer = self.trainer
        context = self.session.context
        context.record_initial_batch(trainer.global_iter)
        self._call("on_trial_startup", trainer.global_iter, None)
        if trainer.global_iter == 0 and not trainer.book.records:
            reset_all(context.reducers)
        self._call("on_training_start")
        if self._distributed:
            import torch.distributed as dist
            for net in context.models:
                for tensor in [*net.parameters(), *net.buffers()]:
                    dist.broadcast(tensor.data, 0)
        if self.session.initial_validation and trainer.global_iter == 0 and not trainer.book.records:
            trainer.hooks.get("record_points").record(trainer.epoch, 0, "epoch")   # perform_initial_validation
            reset_all(context.reducers)

    def share_buffers(self) -> None:
        if self._distributed and self._buffers:
            import torch.distributed as dist
            for buffer in self._buffers:
                dist.broadcast(buffer.data, 0)

    def before_epoch(self, epoch: int) -> None:
        if self.trainer.start_epoch_iter == 0:     # not a resume inside the epoch
            for callback in self.callbacks.values():
                call_epoch_start(callback, epoch)

    def epoch_ended(self, epoch: int) -> None:
        """After the epoch's last batch, before its boundaries (Determined's _step_batch)."""
        for scheduler in self.session.context.lr_schedulers:
            scheduler.after_epoch(epoch + 1)
        self._call("on_training_epoch_end", epoch)

    def after_train(self) -> None:
        self._call("on_trial_shutdown")

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        reducers = {}
        for index, wrapped in enumerate(self.session.context.reducers):
            state = plain_state(wrapped.reducer)
            if state is None and wrapped.name not in self._unsaved_reducers:
                self._unsaved_reducers.add(wrapped.name)
                self.trainer.log.info("the reducer %s holds more than plain data: a checkpoint inside a training "
                                      "window does not keep its values so far", wrapped.name)
            reducers[str(index)] = state
        return {**self.metrics.state_dict(),
                "scaler": self.session.context.scaler_state_dict(),
                "lr_schedulers": [s.state_dict() for s in self.session.context.lr_schedulers],
                "callbacks": {name: callback.state_dict() for name, callback in self.callbacks.items()},
                "reducers": reducers}

    def load_state_dict(self, state: dict) -> None:
        self.metrics.load_state_dict(state)
        context = self.session.context
        saved = state.get("lr_schedulers", [])
        if len(saved) != len(context.lr_schedulers):
            raise ValueError(f"the checkpoint holds {len(saved)} LR scheduler(s), the trial wraps "
                             f"{len(context.lr_schedulers)}: it is not this trial's checkpoint")
        for scheduler, scheduler_state in zip(context.lr_schedulers, saved):
            scheduler.load_state_dict(scheduler_state)
        context.load_scaler_state_dict(state.get("scaler"))
        for name, callback_state in state.get("callbacks", {}).items():
            if name in self.callbacks:
                self.callbacks[name].load_state_dict(callback_state)
        for index, wrapped in enumerate(context.reducers):
            reducer_state = state.get("reducers", {}).get(str(index))
            if reducer_state is not None:
                wrapped.reducer.__dict__.update(reducer_state)


def batch_checkpoint_name(batches: int) -> str:
    """A Determined trial's checkpoints are named by the batches trained (Determined's steps_completed)."""
    return f"model_checkpoint_batch{batches}.pt"
