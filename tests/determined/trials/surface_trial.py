"""Trials touching the edges of Determined's API surface: a member playground does not provide, asked for in
__init__ (`context.experimental.<name>` or `context.<name>`, from the hparam `ask`), and the provided
experimental members (use_amp, disable_auto_to_device, disable_dataset_reproducibility_checks)."""
from typing import Any, Dict

import torch

from determined import pytorch

import mnist_trial


class AsksForAMember(mnist_trial.MNistTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        super().__init__(context)
        owner, _, name = context.get_hparam("ask").rpartition(".")
        getattr(context.experimental if owner == "experimental" else context, name)()


class BatchesOnTheCpu(mnist_trial.MNistTrial):
    """disable_auto_to_device: train_batch receives CPU tensors (and says so in its metrics); use_amp and the
    reproducibility switch are accepted on a machine without CUDA."""

    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        context.experimental.use_amp()
        super().__init__(context)
        context.experimental.disable_auto_to_device()
        context.experimental.disable_dataset_reproducibility_checks()

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        on_cpu = float(batch[0].device.type == "cpu")
        out = super().train_batch(self.context.to_device(batch), epoch_idx, batch_idx)
        return {**out, "batch_on_cpu": on_cpu}

    def build_training_data_loader(self) -> Any:
        loader = super().build_training_data_loader()
        sampler = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(loader.dataset),
                                                self.context.get_per_slot_batch_size(), drop_last=False)
        return torch.utils.data.DataLoader(loader.dataset, batch_sampler=pytorch.samplers.SkipBatchSampler(sampler, 0))
