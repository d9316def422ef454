"""A model slot of the trainer (`self.train_model`, `self.test_model`): a network's role in the run.

The original's ModelHelper objects became this small holder. Components fill it through the builder hooks:
the forward pass gives the network and loss, the update rule the optimizer and schedule, the input its data.
The test model shares the train model's network (the original shared parameters by blob name).
"""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

from playground.distribution.run_context import RunContext


class Model:
    def __init__(self, name: str, is_train: bool) -> None:
        self.name = name
        self.is_train = is_train
        self.net: nn.Module | None = None      # what training calls: DistributedDataParallel when world size > 1
        self.module: nn.Module | None = None   # the bare network: state_dict, evaluation
        self.loss_fn: Callable[[Any, Any], torch.Tensor] | None = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.lr_schedule: Callable[[float], float] | None = None
        self.batches: Any = None               # a batch stream: next() gives (inputs, labels) on the device

    def share_network(self, other: "Model") -> None:
        self.net, self.module, self.loss_fn = other.module, other.module, other.loss_fn

    def __repr__(self) -> str:
        return f"Model({self.name!r}, network={type(self.module).__name__ if self.module else None})"


def build_network(model: Model, net: nn.Module, loss_fn: Callable, ctx: RunContext, sync_bn: bool,
                  channels_last: bool = False, compile: bool = False) -> None:
    """Place the network on this rank's device and, with several ranks, wrap it for data parallelism.

    `channels_last` converts 4-d weights before DDP sees them (its gradient buckets keep their strides);
    `compile` compiles what training calls (`model.net`), while `model.module` stays the plain network whose
    state_dict checkpoints hold."""
    if ctx.world_size > 1 and sync_bn:
        # torch's SyncBatchNorm runs only on CUDA; CPU ranks (gloo) combine statistics with our own
        if ctx.device.type == "cuda":
            net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
        else:
            from playground.distribution.cpu_sync_batch_norm import convert_cpu_sync_batchnorm
            net = convert_cpu_sync_batchnorm(net)
    net = net.to(ctx.device)
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    net.train(model.is_train)
    model.module, model.loss_fn = net, loss_fn
    model.net = net
    if ctx.world_size > 1 and model.is_train and any(p.requires_grad for p in net.parameters()):
        from torch.nn.parallel import DistributedDataParallel
        device_ids = [ctx.device.index] if ctx.device.type == "cuda" else None
        # Buffers (batch-norm statistics) are broadcast from rank 0 before each forward, so every rank evaluates
        # with the statistics that rank 0 saves in checkpoints.
        model.net = DistributedDataParallel(net, device_ids=device_ids)
    if compile and model.is_train:
        model.net = torch.compile(model.net)


def build_update_rule(model: Model, built: Any) -> None:
    """Install what an update-rule or optimizer component returned: an optimizer, or (optimizer, schedule)."""
    schedule = None
    if isinstance(built, tuple) and len(built) == 2:
        built, schedule = built
    if not isinstance(built, torch.optim.Optimizer):
        raise TypeError("the update rule / optimizer component must return a torch.optim.Optimizer or "
                        f"(optimizer, schedule), got {type(built).__name__}")
    if schedule is not None and not callable(schedule):
        raise TypeError("the learning-rate schedule must be callable: schedule(fractional_epoch) -> learning rate")
    model.optimizer, model.lr_schedule = built, schedule


def input_shape(dataset: Any, opts: dict) -> tuple[int, ...]:
    """Shape of one input sample: the dataset's `sample_shape` when it has one (so nothing is decoded), else its
    first sample's when it is indexable, else (3, imsize, imsize)."""
    declared = getattr(dataset, "sample_shape", None)
    if declared is not None:
        return tuple(int(s) for s in declared)
    try:
        sample = dataset[0][0]
        return tuple(int(s) for s in sample.shape)
    except (TypeError, IndexError, KeyError, AttributeError):
        size = opts["input"]["imsize"]
        return (3, size, size)
