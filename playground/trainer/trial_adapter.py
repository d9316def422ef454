"""Runs a trial class (`model.trial_py`, trial.py) in the AnyExp loop by filling the trainer's component
slots from it: input (its data loaders), forward pass (its model and loss), update rule (its optimizer, else the
opts' component), and the training and test steps (its train_batch / evaluate_batch). The loop, the hooks,
checkpoints, record points and resume are the ones every run has.

The functions here become methods of the run's trainer class (trainer_class.py), as a component's would.
A trial's batch is what its data gives, moved to the device: `(inputs, labels)` for array tuples and most datasets.
The values of train_batch's and evaluate_batch's dicts reach the meters as blobs of those names
(`ComputeMean` meters average them over samples and ranks; see docs/trials.md).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from playground.processes.exit_codes import UserError
from playground.trainer.meters import samples_in
from playground.trainer.trial import TrialContext

TRIAL_SLOTS = ("get_model_input_fun", "gen_input_builder_fun", "gen_forward_pass_builder_fun", "gen_optimizer_fun",
               "gen_param_update_builder_fun", "run_testing_net", "train_micro_batch", "trial_hooks")


class TrialError(UserError, TypeError):
    """A trial method returned something the loop cannot use; the message names the method and what it needs."""


def make_trial(self: Any) -> Any:
    """The trial instance of this run, made once (on first use) with this rank's context."""
    trial = getattr(self, "_trial", None)
    if trial is None:
        context = TrialContext(opts=self.opts, hparams=self.opts["model_param"], rank=self.rank,
                               world_size=self.world_size, device=self.device)
        trial = self._trial = self.trial_class(context)
        if not hasattr(trial, "context"):
            trial.context = context
    return trial


def get_model_input_fun(self: Any) -> None:
    """The trial's training and validation data, in any accepted form (adapted by the batch streams)."""
    trial = make_trial(self)
    self.train_dataset = trial.build_training_data_loader()
    self.test_dataset = trial.build_validation_data_loader()


def gen_input_builder_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> Any:
    return dataset


def gen_forward_pass_builder_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> tuple[nn.Module, Any]:
    trial = make_trial(self)
    network = trial.build_model()
    if not isinstance(network, nn.Module):
        raise TrialError(f"{self.trial_class.__name__}.build_model() must return a torch.nn.Module, "
                         f"got {type(network).__name__}")
    build_loss = getattr(trial, "build_loss", None)
    return network, build_loss() if callable(build_loss) else nn.CrossEntropyLoss()


def gen_optimizer_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> Any:
    """The trial's build_optimizer(network), else the opts' optimizer component (the class's base)."""
    return _optimizer(self, model) or super(self.trial_base, self).gen_optimizer_fun(model, dataset, is_train)


def gen_param_update_builder_fun(self: Any, model: Any, dataset: Any, is_train: bool) -> Any:
    """The trial's build_optimizer(network), else the opts' update-rule component."""
    return _optimizer(self, model) or super(self.trial_base, self).gen_param_update_builder_fun(model, dataset,
                                                                                               is_train)


def _optimizer(self: Any, model: Any) -> Any:
    build = getattr(make_trial(self), "build_optimizer", None)
    return build(model.module) if callable(build) else None


def train_micro_batch(self: Any, batch: Any) -> tuple[torch.Tensor, Any, Any, dict]:
    """One micro-batch's forward and loss: (loss, output, labels, named values for the meters)."""
    trial = make_trial(self)
    model = self.train_model
    if not callable(getattr(trial, "train_batch", None)):
        inputs, labels = _inputs_and_labels(batch, "train")
        output = model.net(inputs)
        return model.loss_fn(output, labels), output, labels, {}
    trial.model = model.net
    values = trial.train_batch(batch, self.epoch, self.global_iter)
    if not isinstance(values, dict) or "loss" not in values:
        raise TrialError(f"{type(trial).__name__}.train_batch() must return a dict with 'loss' (a scalar tensor); "
                         f"got {_describe(values)}")
    return values["loss"], None, _labels_or_none(batch), values


def run_testing_net(self: Any) -> None:
    """One validation batch: the trial's evaluate_batch (values to the test meters), else forward and loss."""
    trial = make_trial(self)
    model = self.test_model
    if model is None or model.module is None:
        return
    batch = model.batches.next()
    if not callable(getattr(trial, "evaluate_batch", None)):
        inputs, labels = _inputs_and_labels(batch, "validation")
        with torch.inference_mode(), self._step.autocast():
            output = model.module(self._step.prepare(inputs))
            loss = model.loss_fn(output, labels)
        self.book.add(False, loss, output, labels)
        return
    trial.model = model.module
    with torch.inference_mode(), self._step.autocast():
        values = trial.evaluate_batch(batch)
    if not isinstance(values, dict) or not values:
        raise TrialError(f"{type(trial).__name__}.evaluate_batch() must return a dict of metrics; got {_describe(values)}")
    self.book.add(False, values.get("loss"), None, _labels_or_none(batch), named=values, samples=samples_in(batch))


def trial_hooks(self: Any) -> list:
    """The trial's build_hooks(): Hook instances (their trainer set here) or Hook classes (built here)."""
    from playground.trainer.hook import Hook

    build = getattr(make_trial(self), "build_hooks", None)
    hooks = []
    for item in (build() or []) if callable(build) else []:
        hook = item(self) if isinstance(item, type) and issubclass(item, Hook) else item
        if not isinstance(hook, Hook):
            raise TrialError(f"{type(self._trial).__name__}.build_hooks() must return playground.trainer.Hook "
                             f"objects or classes, got a {type(item).__name__}")
        hook.trainer = self
        hook.name = hook.name or type(hook).__name__
        hooks.append(hook)
    return hooks


def _inputs_and_labels(batch: Any, what: str) -> tuple[Any, Any]:
    if isinstance(batch, (list, tuple)) and len(batch) == 2:
        return batch[0], batch[1]
    raise TrialError(f"the {what} batches are not (inputs, labels) pairs ({_describe(batch)}): define "
                     f"{'train_batch' if what == 'train' else 'evaluate_batch'} in the trial to read them")


def _labels_or_none(batch: Any) -> Any:
    return batch[1] if isinstance(batch, (list, tuple)) and len(batch) == 2 else None


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a dict with keys " + ", ".join(map(repr, value)) if value else "an empty dict"
    return f"a {type(value).__name__}"

