"""Batch norm whose training statistics cover the global batch of all CPU ranks (gloo), with exact gradients.

Caffe2's `combine_spatial_bn` existed for CPU training; torch's SyncBatchNorm only runs on CUDA. Here each rank
sums, per channel, its inputs and their squares, and counts its values; one autograd-aware all-reduce adds
them over ranks, so the forward normalises with the global mean and variance and the backward adds every
rank's gradient with respect to those statistics (what a single process with the whole batch computes).
Outside training, or in a single-process run, it is a plain batch norm.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm


class CpuSyncBatchNorm(_BatchNorm):
    """A BatchNorm1d/2d/3d whose batch statistics are summed over the default process group while training."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if not (self.training and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
            return super().forward(input)
        self._check_input_dim(input)
        channels = input.shape[1]
        dims = [0, *range(2, input.dim())]
        # float64 sums: the variance as E[x^2] - E[x]^2 then keeps float32 accuracy
        wide = input.double()
        count = wide.new_full((1,), input.numel() / channels)
        total = _AllReduceSum.apply(torch.cat([wide.sum(dims), (wide * wide).sum(dims), count]))
        n = total[-1]
        mean = total[:channels] / n
        var = (total[channels:2 * channels] / n - mean * mean).clamp_min(0.0)
        if self.track_running_stats:
            self._update_running_stats(mean.detach(), var.detach(), n.item())
        shape = [1, channels] + [1] * (input.dim() - 2)
        scale = torch.rsqrt(var + self.eps).to(input.dtype).view(shape)
        out = (input - mean.to(input.dtype).view(shape)) * scale
        if self.affine:
            out = out * self.weight.view(shape) + self.bias.view(shape)
        return out

    @torch.no_grad()
    def _update_running_stats(self, mean: torch.Tensor, var: torch.Tensor, n: float) -> None:
        self.num_batches_tracked.add_(1)
        momentum = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
        unbiased = var * (n / max(n - 1.0, 1.0))   # the running variance is unbiased, as in nn.BatchNorm
        self.running_mean.mul_(1 - momentum).add_(mean.to(self.running_mean.dtype), alpha=momentum)
        self.running_var.mul_(1 - momentum).add_(unbiased.to(self.running_var.dtype), alpha=momentum)


class _AllReduceSum(torch.autograd.Function):
    """Sum over ranks; its gradient is the sum over ranks of the gradients (each rank's loss uses the total)."""

    @staticmethod
    def forward(ctx: object, tensor: torch.Tensor) -> torch.Tensor:
        total = tensor.clone()
        dist.all_reduce(total)
        return total

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        total = grad.contiguous().clone()
        dist.all_reduce(total)
        return total


def convert_cpu_sync_batchnorm(module: nn.Module) -> nn.Module:
    """Replace every BatchNorm1d/2d/3d in `module` by a CpuSyncBatchNorm with the same parameters and buffers."""
    converted = module
    if isinstance(module, _BatchNorm) and not isinstance(module, CpuSyncBatchNorm):
        converted = CpuSyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                     module.track_running_stats)
        if module.affine:
            with torch.no_grad():
                converted.weight = module.weight
                converted.bias = module.bias
        converted.running_mean = module.running_mean
        converted.running_var = module.running_var
        converted.num_batches_tracked = module.num_batches_tracked
        converted.training = module.training
    for name, child in module.named_children():
        converted.add_module(name, convert_cpu_sync_batchnorm(child))
    return converted
