"""Determined's PyTorchTrialContext (0.2x to 0.38): what a PyTorchTrial is built with and calls while training.

A trial wraps its models, optimizers and LR schedulers here in its `__init__` and calls `backward` /
`step_optimizer` itself in `train_batch`; the context records every wrapped object so playground's trainer
(loop.py) checkpoints and restores all of them. Data parallelism: with several ranks, `step_optimizer`
averages the gradients of the optimizer's parameters over the ranks (one all-reduce, as DDP's) before the step,
and the trainer broadcasts rank 0's parameters and buffers when training starts, so every rank holds the same
weights; a model is returned as it is, moved to the device (no DDP wrapper, so alternating GAN steps and
parameters unused in a step need nothing special). The process group exists only once training starts: a trial
that calls collectives in `__init__` is not supported.

`context.distributed` is Determined's core.DistributedContext (playground/determined/distributed_context.py):
the ranks torchrun's variables give (the runner sets them), its object collectives over the run's process group.
"""
from __future__ import annotations

import logging
import pathlib
from typing import Any, Callable, Iterator

import torch

from playground.determined.distributed_context import DistributedContext
from playground.determined.trials.experimental import ExperimentalContext, not_provided
from playground.determined.trials.lr_scheduler import LRScheduler
from playground.determined.trials.reducers import MetricReducer, SimpleReducer, WrappedReducer
from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import UserError

log = logging.getLogger("playground")


class ContextMisuse(UserError, ValueError):
    """A context call in an order Determined refuses (its InvalidExperimentException); the message says which."""


class PyTorchTrialContext:
    """The context a PyTorchTrial receives (`__init__(self, context)`); built by `det.pytorch.init()` or the
    trial harness (trial_main.py) from the cluster info, or from init's arguments in local mode."""

    def __init__(self, hparams: dict | None, exp_conf: dict | None, distributed: DistributedContext | None = None,
                 trial_id: int = 1, experiment_id: int = 1, run_dir: str | None = None, seed: int = 0) -> None:
        self.distributed = distributed or DistributedContext.for_trial()
        self._hparams = dict(hparams) if hparams is not None else None
        self._exp_conf = exp_conf
        self._ids, self._seed = {"trial": trial_id, "experiment": experiment_id}, seed
        self.run_dir = run_dir
        cuda = torch.cuda.is_available()
        self.device = torch.device(f"cuda:{self.distributed.local_rank}" if cuda else "cpu")
        self.models: list[torch.nn.Module] = []
        self.optimizers: list[torch.optim.Optimizer] = []
        self.lr_schedulers: list[LRScheduler] = []
        self.reducers: list[WrappedReducer] = []
        self.experimental = ExperimentalContext(self)
        self._scaler: Any = None
        self._stop_requested = False
        self._enable_tensorboard_logging = True
        self._writer: Any = None
        self._current_batch_idx: int | None = None
        self._initial_batch = 0
        self._epoch_len: int | None = None
        global_batch = (self._hparams or {}).get("global_batch_size")
        self._global_batch_size = int(global_batch) if global_batch is not None else None
        self._per_slot_batch_size = (self._global_batch_size // self.distributed.size
                                     if self._global_batch_size is not None else None)

    # ------------------------------------------------------------------ configuration
    def get_hparams(self) -> dict:
        if self._hparams is None:
            raise ValueError("hparams is undefined in this Trial: pass hparams= to det.pytorch.init() (local mode) "
                             "or run it from an experiment configuration")
        return self._hparams

    def get_hparam(self, name: str) -> Any:
        if name not in self.get_hparams():
            raise ValueError(f"Could not find name '{name}' in experiment hyperparameters. Please check your "
                             "experiment configuration 'hyperparameters' section.")
        return self._hparams[name]

    def get_global_batch_size(self) -> int:
        if self._global_batch_size is None:
            raise ValueError("global_batch_size is undefined in this Trial: set hyperparameters.global_batch_size")
        return self._global_batch_size

    def get_per_slot_batch_size(self) -> int:
        if self._per_slot_batch_size is None:
            raise ValueError("per_slot_batch_size is undefined in this Trial: set hyperparameters.global_batch_size")
        return self._per_slot_batch_size

    def get_experiment_config(self) -> dict:
        if self._exp_conf is None:
            raise ValueError("exp_conf is undefined in this Trial: pass exp_conf= to det.pytorch.init()")
        return self._exp_conf

    def get_data_config(self) -> dict:
        return self.get_experiment_config().get("data", {}) or {}

    def get_trial_id(self) -> int:
        return self._ids["trial"]

    def get_experiment_id(self) -> int:
        return self._ids["experiment"]

    def get_trial_seed(self) -> int:
        return self._seed

    def get_initial_batch(self) -> int:
        """The batch this session of the run started from (0, or where a resumed run continues)."""
        return self._initial_batch

    def get_stop_requested(self) -> bool:
        return self._stop_requested

    def set_stop_requested(self, stop_requested: bool) -> None:
        """Ask the trainer to stop after the current batch: it checkpoints and the process exits 75."""
        if not isinstance(stop_requested, bool):
            raise AssertionError("stop_requested must be a boolean")
        self._stop_requested = stop_requested

    def set_enable_tensorboard_logging(self, enable_tensorboard_logging: bool) -> None:
        self._enable_tensorboard_logging = bool(enable_tensorboard_logging)

    def get_enable_tensorboard_logging(self) -> bool:
        return self._enable_tensorboard_logging

    def get_tensorboard_path(self) -> pathlib.Path:
        """<run-dir>/tensorboard, a pathlib.Path as Determined's."""
        return pathlib.Path(RunFolder(self.run_dir or ".").tensorboard)

    def get_tensorboard_writer(self) -> Any:
        """A SummaryWriter into <run-dir>/tensorboard (rank 0; other ranks get one that writes nothing); without
        the tensorboard package, an object with SummaryWriter's methods that records scalars in
        <run-dir>/tensorboard/scalars.jsonl."""
        if self._writer is None:
            from playground.determined.trials.scalar_writer import writer_for
            self._writer = writer_for(str(self.get_tensorboard_path()), enabled=self.distributed.rank == 0)
        return self._writer

    # ------------------------------------------------------------------ wrapping
    def wrap_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """The model on this rank's device; recorded, so checkpoints hold its state."""
        model = model.to(self.device)
        if self.experimental.auto_amp:
            _autocast_forward(model)
        self.models.append(model)
        return model

    def wrap_optimizer(self, optimizer: torch.optim.Optimizer, backward_passes_per_step: int = 1,
                       fp16_compression: bool | None = None,
                       average_aggregated_gradients: bool | None = None) -> torch.optim.Optimizer:
        if backward_passes_per_step < 1:
            raise ValueError(f"backward_passes_per_step must be >= 1; got {backward_passes_per_step}")
        self.optimizers.append(optimizer)
        return optimizer

    def wrap_lr_scheduler(self, lr_scheduler: Any, step_mode: LRScheduler.StepMode, frequency: int = 1) -> Any:
        """Steps `lr_scheduler` every `frequency` batches or epochs (or never: MANUAL_STEP) and checkpoints it.
        Returns the scheduler, as Determined does."""
        if isinstance(lr_scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau) and \
                step_mode != LRScheduler.StepMode.MANUAL_STEP:
            raise ValueError("wrap_lr_scheduler: ReduceLROnPlateau can only be used with step_mode=MANUAL_STEP")
        optimizer = getattr(lr_scheduler, "optimizer", None)
        if optimizer is not None and not any(optimizer is o for o in self.optimizers):
            raise ValueError("wrap_lr_scheduler: the scheduler must use an optimizer returned by wrap_optimizer()")
        self.lr_schedulers.append(LRScheduler(lr_scheduler, step_mode, frequency))
        return lr_scheduler

    def wrap_reducer(self, reducer: Any, name: str | None = None, for_training: bool = True,
                     for_validation: bool = True) -> Any:
        """A custom metric reduced over every rank (reducers.py): a MetricReducer, or a plain function, which
        becomes a reducer with `update(value)`. With a `name` its value is that metric; without, it returns a
        dict of metrics. Returns the reducer, as Determined does."""
        if any(reducer is w.reducer for w in self.reducers):
            raise ValueError(f"wrap_reducer: the same reducer of type {type(reducer).__name__} was wrapped twice; "
                             "wrap each reducer object once")
        if not isinstance(reducer, MetricReducer):
            if not callable(reducer):
                raise ValueError(f"wrap_reducer: a {type(reducer).__name__} is neither a function nor a "
                                 "pytorch.MetricReducer")
            reducer = SimpleReducer(reducer)
        self.reducers.append(WrappedReducer(reducer, name, for_training, for_validation))
        return reducer

    def wrap_scaler(self, scaler: Any) -> Any:
        """The scaler, recorded: its state is checkpointed with the trial's (Determined's scaler_state_dict).
        Once, before wrap_model (use_amp calls it), as Determined requires."""
        if self._scaler is not None:
            raise ContextMisuse("context.wrap_scaler: please only call wrap_scaler or use_amp once")
        if self.models:
            raise ContextMisuse("context.wrap_scaler: please call wrap_scaler (or experimental.use_amp) before "
                                "wrap_model")
        self._scaler = scaler
        return scaler

    def set_profiler(self, *args: Any, **kwargs: Any) -> None:
        log.info("context.set_profiler(): there is no profiler service; use the PyTorch profiler in train_batch")

    def configure_apex_amp(self, models: Any, optimizers: Any, enabled: bool = True, **kwargs: Any) -> Any:
        if enabled:
            raise not_provided("context", "configure_apex_amp", "NVIDIA apex is not provided; use "
                               "context.experimental.use_amp() or a scaler with wrap_scaler()")
        return models, optimizers

    def autocast_forward_pass(self, to_wrap: torch.nn.Module) -> torch.nn.Module:
        """`to_wrap`, its forward run under CUDA autocast with float32 outputs (the wrapped module is changed)."""
        if torch.cuda.is_available():
            _autocast_forward(to_wrap)
        return to_wrap

    # ------------------------------------------------------------------ training calls
    def to_device(self, data: Any) -> Any:
        from playground.data.batch_stream import to_device
        return to_device(data, self.device)

    def backward(self, loss: torch.Tensor, gradient: torch.Tensor | None = None, retain_graph: bool = False,
                 create_graph: bool = False) -> None:
        if self.experimental.auto_amp:
            loss = self._scaler.scale(loss)
        loss.backward(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph)

    def step_optimizer(self, optimizer: torch.optim.Optimizer,
                       clip_grads: Callable[[Iterator], None] | None = None, auto_zero_grads: bool = True,
                       scaler: Any = None) -> None:
        """Average the gradients over the ranks, clip them (`clip_grads(parameters)`), step, then zero them."""
        if scaler is None and self.experimental.auto_amp:
            scaler = self._scaler
        params = [p for group in optimizer.param_groups for p in group["params"]]
        if self.distributed.size > 1:
            _average_gradients(params, self.distributed.size)
        if scaler is not None:
            scaler.unscale_(optimizer)
        if clip_grads is not None:
            clip_grads(iter(params))
        if scaler is not None:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if auto_zero_grads:
            optimizer.zero_grad()

    def after_train_batch(self) -> None:
        """After each train_batch: use_amp's scaler is updated once (all the batch's steps are done)."""
        if self.experimental.auto_amp:
            self._scaler.update()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_provided("context", name)

    # ------------------------------------------------------------------ what playground's trainer tells and asks
    # (loop.py, loop_hook.py, trainer_api.py): the context keeps its own state; not Determined's API
    def record_epoch_length(self, batches: int) -> None:
        """An epoch of the training data, in batches (current_train_epoch, is_epoch_start and is_epoch_end)."""
        self._epoch_len = batches

    def record_batch(self, batch_index: int) -> None:
        """The batch about to be trained (current_train_batch), 0-based from the trial's first."""
        self._current_batch_idx = batch_index

    def record_initial_batch(self, batch_index: int) -> None:
        """Where this session of the run starts training (get_initial_batch): 0, or where a resumed run goes on."""
        self._initial_batch = batch_index

    def scaler_state_dict(self) -> dict | None:
        """The state of the scaler wrap_scaler recorded (a checkpoint holds it), None without one."""
        return self._scaler.state_dict() if self._scaler is not None else None

    def load_scaler_state_dict(self, state: dict | None) -> None:
        """A checkpoint's scaler state back into the wrapped scaler (nothing without either)."""
        if state is not None and self._scaler is not None:
            self._scaler.load_state_dict(state)

    def close_tensorboard_writer(self) -> None:
        """The end of det.pytorch.init()'s block: the writer get_tensorboard_writer() made, if any, is closed."""
        if self._writer is not None:
            self._writer.close()

    # ------------------------------------------------------------------ position (recorded by the trainer)
    def current_train_batch(self) -> int:
        if self._current_batch_idx is None:
            raise RuntimeError("Training hasn't started.")
        return self._current_batch_idx

    def current_train_epoch(self) -> int:
        return self.current_train_batch() // self._epoch_length()

    def is_epoch_start(self) -> bool:
        return self.current_train_batch() % self._epoch_length() == 0

    def is_epoch_end(self) -> bool:
        return self.current_train_batch() % self._epoch_length() == self._epoch_length() - 1

    def _epoch_length(self) -> int:
        if not self._epoch_len:
            raise RuntimeError("Training DataLoader uninitialized.")
        return self._epoch_len


def _average_gradients(params: list[torch.nn.Parameter], world_size: int) -> None:
    """All-reduce the gradients (flattened into one buffer) and divide by the world size. Parameters without a
    gradient are left out, as on one rank; every rank runs the same program, so all leave out the same ones."""
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()):
        return
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return
    flat = torch.cat([p.grad.reshape(-1) for p in with_grad])
    dist.all_reduce(flat)
    flat /= world_size
    offset = 0
    for p in with_grad:
        n = p.numel()
        p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
        offset += n


def _autocast_forward(module: torch.nn.Module) -> None:
    """Run `module`'s forward under CUDA autocast and give float32 outputs (Determined's autocast_forward_pass),
    by an attribute on the instance: its state_dict keys stay the model's own."""
    forward = module.forward

    def autocast_forward(*args: Any, **kwargs: Any) -> Any:
        with torch.autocast("cuda"):
            out = forward(*args, **kwargs)
        return _to_float32(out)
    module.forward = autocast_forward


def _to_float32(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_to_float32(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_float32(v) for k, v in value.items()}
    return value
