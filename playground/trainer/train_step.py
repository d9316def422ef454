"""The training step behind AnyExp.run_training_net: k micro-batches (model_param.grad_accum_steps), each forward
under the precision hook's autocast, backward of loss / k, DDP gradient sync on the last micro-batch only; then
the `after_backward` hooks (true gradients: clipping), the optimizer step (through the fp16 scaler when there
is one) and the `after_step` hooks (EMA).

With k = 1 and fp32 it performs exactly the operations of a plain PyTorch loop, in the same order, so the
weights match a hand-written loop bitwise. Every micro-batch's outputs go to the train meters, so meters and
throughput count samples, not iterations.
"""
from __future__ import annotations

import contextlib
from typing import Any, ContextManager

import torch
from torch.nn.parallel import DistributedDataParallel

from playground.trainer.meters import samples_in


class TrainStep:
    """Built once per run, after the hooks: it reads the opts and finds the precision hook and the DDP wrapper."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        p = trainer.opts["model_param"]
        self.accum = int(p["grad_accum_steps"])
        self.channels_last = bool(p["channels_last"])
        self.precision = trainer.hooks.get("mixed_precision")

    def autocast(self) -> ContextManager:
        return self.precision.autocast() if self.precision is not None else contextlib.nullcontext()

    def prepare(self, inputs: Any) -> Any:
        """Inputs in the network's memory format."""
        if self.channels_last and isinstance(inputs, torch.Tensor) and inputs.dim() == 4:
            return inputs.contiguous(memory_format=torch.channels_last)
        return inputs

    def forward(self, batch: Any) -> tuple[torch.Tensor, Any, Any, dict]:
        """One micro-batch's (loss, output, labels, named values): the trainer's `train_micro_batch` when it has
        one (a trial class, trial_adapter.py), else the network and loss on (inputs, labels)."""
        custom = getattr(self.trainer, "train_micro_batch", None)
        if custom is not None:
            return custom(batch)
        inputs, labels = batch
        model = self.trainer.train_model
        output = model.net(self.prepare(inputs))
        return model.loss_fn(output, labels), output, labels, {}

    def run(self) -> None:
        trainer = self.trainer
        model = trainer.train_model
        optimizer, k = model.optimizer, self.accum
        ddp = _ddp_of(model.net)
        for micro in range(k):
            batch = model.batches.next()
            # Gradients are all-reduced once per iteration: the earlier micro-batches only accumulate locally.
            sync = ddp.no_sync() if ddp is not None and micro < k - 1 else contextlib.nullcontext()
            with sync:
                with self.autocast():
                    loss, output, labels, named = self.forward(batch)
                _check_scalar(loss)
                if micro == 0:
                    optimizer.zero_grad(set_to_none=True)
                scaled = loss / k if k > 1 else loss
                if self.precision is not None:
                    self.precision.backward(scaled)
                else:
                    scaled.backward()
            trainer.book.add(True, loss, output, labels, named, samples_in(batch) if named else None)
        if self.precision is not None:
            self.precision.unscale(optimizer)
        trainer.hooks.call("after_backward")
        if self.precision is not None:
            self.precision.step(optimizer)
        else:
            optimizer.step()
        trainer.hooks.call("after_step")


def _check_scalar(loss: Any) -> None:
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        shape = f"a tensor of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise ValueError(f"the training loss must be a scalar tensor (reduce it, e.g. with .mean()), got {shape}")


def _ddp_of(net: Any) -> DistributedDataParallel | None:
    """The DDP wrapper, also when torch.compile wrapped it (model_param.compile)."""
    if isinstance(net, DistributedDataParallel):
        return net
    inner = getattr(net, "_orig_mod", None)
    return inner if isinstance(inner, DistributedDataParallel) else None
