"""A Determined PyTorchTrial in the AnyExp loop: the trainer methods that read the trial and its context.

This module is the run's override (`model.additional_override_py`, in the opts fit.py builds); its functions become
methods of the run's trainer class (playground/trainer/trainer_class.py). The trial itself arrives with the job
in the `determined` hook (loop_hook.py: Determined's trial controller), which holds the trial's session
(fit.TrialSession) and which the job (fit.DeterminedFit) gives the trainer before the loop starts; the methods here
read the session through that hook, by name, as any method finds a hook (`self.hooks.get`):

- data: the trial's training and validation loaders, read by playground's seeded, rank-sharded batch streams
  (data position checkpointed); an epoch is the loader's length, its short last batch included (data_loader.py);
- the train model slot holds every wrapped model (an nn.ModuleDict, so evaluation switches all of them to eval
  mode) and the first wrapped optimizer; `networks()` / `optimizers()` name each one, so checkpoints hold them all;
- one training iteration is one `train_batch(batch, epoch_idx, batch_idx)`: the trial steps its optimizers itself;
- a test batch is `evaluate_batch(batch[, batch_idx])`, or the whole validation set through
  `evaluate_full_dataset(data_loader)` once per validation, on rank 0 only (as Determined);
- metrics, LR schedulers and the ranks' agreement: the `determined` hook.
"""
from __future__ import annotations

import os
from typing import Any, Iterable

import torch
from torch import nn

from playground.data.batch_stream import build_test_stream, build_train_stream
from playground.data.forms import IterableSource, as_stream_source
from playground.processes.exit_codes import UserError
from playground.trainer.anyexp import AnyExp
from playground.trainer.meters import samples_in
from playground.checkpoints import state_layout
from playground.determined.trials.loop_hook import batch_checkpoint_name
from playground.determined.trials.data_loader import SlotBatches


class TrialMethodError(UserError, TypeError):
    """A trial method returned what the loop cannot use; the message names the method and what it must return."""


def _session(self: Any) -> Any:
    """The trial's session (fit.TrialSession): the `determined` hook's, the one holder of it."""
    return self.hooks.get("determined").session


def get_model_input_fun(self: Any) -> None:
    session = _session(self)
    self.train_dataset, self.test_dataset = session.train_data, session.validation_data


def init_metrics(self: Any) -> None:
    """No meters yet: the trial's metric names are known from its first batches (loop_hook.py adds them)."""


def prep_a_data_parallel_model(self: Any, model: Any, dataset: Any, is_train: bool) -> None:
    """The slot's batches; the networks are the trial's wrapped models, shared by the train and test slots."""
    if model is None:
        return
    context = _session(self).context
    container = nn.ModuleDict({f"model_{i}": net for i, net in enumerate(context.models)})
    model.net = model.module = container
    if is_train:
        data = as_stream_source(dataset, "training", self.opts["epoch_iter"]["batch_per_device"])
        slots = _slot_batches(self, data)
        if slots is None:
            self._set_epoch_size(data)
        else:
            self.epoch_iterations = slots.epoch_length
        context.record_epoch_length(self.epoch_iterations)
        model.batches = build_train_stream(data, self.opts, self.ctx, self.epoch_iterations, batch_sampler=slots)
        model.optimizer = context.optimizers[0] if context.optimizers else None
    else:
        data = as_stream_source(dataset, "validation")
        model.batches = build_test_stream(data, self.opts, self.ctx) if data is not None else None
        if model.batches is None:
            model.module = None
    if model.batches is not None and not context.experimental.auto_to_device:
        # context.experimental.disable_auto_to_device(): the trial moves its batches itself
        model.batches.device = torch.device("cpu")


def _slot_batches(self: Any, data: Any) -> SlotBatches | None:
    """Determined's batches of the training loader when an epoch is the loader's (data_loader.py); None for an
    epoch of `records_per_epoch` or an iterable dataset: the stream's equal global batches across passes."""
    opts = self.opts
    if opts["epoch_iter"]["num_train_sample_per_epoch"] or isinstance(data, IterableSource):
        return None
    return SlotBatches(len(data), opts["epoch_iter"]["batch_per_device"], self.ctx.world_size, self.ctx.rank,
                       opts["model_param"]["seed"], opts["input"]["shuffle_train"], _session(self).drop_last)


def networks(self: Any) -> dict[str, nn.Module]:
    """Every wrapped model: "model" (the first, as any run's), then "model_1", "model_2"..."""
    return {_name(state_layout.MODEL, i): net for i, net in enumerate(_session(self).context.models)}


def optimizers(self: Any) -> dict[str, torch.optim.Optimizer]:
    return {_name(state_layout.OPTIMIZER, i): opt for i, opt in enumerate(_session(self).context.optimizers)}


def _name(first: str, index: int) -> str:
    return first if index == 0 else f"{first}_{index}"


def list_of_epoch_iters(self: Any) -> Iterable[int]:
    """This epoch's iterations, ending early when the trial's training ended (its max_length in batches, a
    stop at a window's end: the determined hook sets should_stop)."""
    session = _session(self)
    for epoch_iter in AnyExp.list_of_epoch_iters(self):
        if self.should_stop or (session.max_batches is not None and self.global_iter >= session.max_batches):
            self.should_stop = True
            return
        yield epoch_iter


def records_at_epoch_end(self: Any, epoch: int) -> bool:
    """No: a Determined trial reports at its windows' ends only (loop_hook.py), whatever ends an epoch."""
    return False


def checkpoint(self: Any, epoch: int) -> None:
    """At an epoch's end, only a preemption's checkpoint (the determined hook makes Determined's checkpoints);
    nothing when training ended inside the epoch (its last checkpoint names that batch)."""
    if self.global_iter < (epoch + 1) * self.epoch_iterations:
        return
    AnyExp.checkpoint(self, epoch)


def gen_checkpoint_path(self: Any, is_checkpoint: bool, epoch: int) -> str:
    """Named by the batches trained, as every checkpoint of a Determined trial (loop_hook.batch_checkpoint_name)."""
    if not is_checkpoint:
        return AnyExp.gen_checkpoint_path(self, is_checkpoint, epoch)
    return os.path.join(self.checkpointer.folder, batch_checkpoint_name(self.global_iter))


def run_training_net(self: Any) -> None:
    """One `train_batch` on this rank's next batch, then what Determined's controller does after it: metrics to
    the train meters, LR schedulers stepped, and at an epoch's last batch the epoch's end (the hook's
    epoch_ended: epoch-stepped schedulers, on_training_epoch_end), before the batch's boundaries."""
    hook = self.hooks.get("determined")
    session = hook.session
    batch = self.train_model.batches.next()
    session.context.record_batch(self.global_iter)
    hook.share_buffers()
    values = session.trial.train_batch(batch, self.epoch, self.global_iter)
    if isinstance(values, torch.Tensor):
        values = {"loss": values}
    if not isinstance(values, dict):
        raise TrialMethodError(f"{type(session.trial).__name__}.train_batch() must return a dict of metrics or a "
                               f"loss tensor; got a {type(values).__name__}")
    session.context.after_train_batch()
    hook.add(True, values, samples_in(batch))
    for scheduler in session.context.lr_schedulers:
        scheduler.after_batch(self.global_iter + 1)
    if (self.global_iter + 1) % self.epoch_iterations == 0:
        hook.epoch_ended(self.epoch)


def run_testing_net(self: Any) -> None:
    """One validation batch through `evaluate_batch`; with `evaluate_full_dataset`, the whole set once per pass."""
    hook = self.hooks.get("determined")
    session = hook.session
    model = self.test_model
    if model is None or model.module is None:
        return
    trial = session.trial
    if session.full_dataset:
        if hook.eval_batches == 0:
            _validate_full_dataset(trial, session, hook)
        hook.eval_batches += 1
        return
    batch = model.batches.next()
    with torch.no_grad():
        values = (trial.evaluate_batch(batch, hook.eval_batches) if session.evaluate_takes_index
                  else trial.evaluate_batch(batch))
    _check_metrics(trial, "evaluate_batch", values)
    hook.eval_batches += 1
    hook.add(False, values, samples_in(batch))


def _validate_full_dataset(trial: Any, session: Any, hook: Any) -> None:
    """As Determined's controller: `evaluate_full_dataset` on rank 0 only, over the whole validation set. The other
    ranks learn its metric names and add no value, so the validation record (reduced over the ranks) and every
    rank's on_validation_end hold rank 0's metrics, as Determined broadcasts them to the callbacks."""
    values = None
    if session.context.distributed.get_rank() == 0:
        with torch.no_grad():
            values = trial.evaluate_full_dataset(session.validation_loader)
        _check_metrics(trial, "evaluate_full_dataset", values)
        hook.add(False, values, 1)
    hook.metrics.share_names(False, values)


def _check_metrics(trial: Any, method: str, values: Any) -> None:
    if not isinstance(values, dict):
        raise TrialMethodError(f"{type(trial).__name__}.{method}() must return a dict of metrics (empty when its "
                               f"wrapped reducers give them all); got {values!r:.80}")


def createMetricsPlotsModelsOutputs(self: Any) -> None:
    """The run's plots: one of the training metrics and one of the validation metrics, against epochs."""
    names = {True: [], False: []}
    for name, entry in self.book.metrics.items():
        names[entry["is_train"]].append(name)
    for is_train, ys in names.items():
        if ys:
            self.add_plot("epochs", "epochs", ys, "training metrics" if is_train else "validation metrics")
    AnyExp.createMetricsPlotsModelsOutputs(self)

