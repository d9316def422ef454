"""A one-weight linear trial in the shape of Determined's harness fixture (written here): y = w x with w = 0 at
the start, every record (1, 1), mean squared error, SGD with a fixed rate R. Each batch is one record's worth
of gradient, so after n batches w = 1 - (1 - 2R)^n and the loss of batch n is (1 - w_before)^2: train_batch
returns both the measured and the expected values, which the tests compare batch by batch.

Two wrapped reducers, one a MetricReducer and one a function, sum (label sum x batch index) over what they were
given; in validation (no batch index) the index counts the updates since the last reset. hparams:
`dataloader_type` ("determined", or "torch": a torch DataLoader over determined.pytorch.samplers, with the
reproducibility checks disabled), `lr_step_mode` (an LR scheduler stepped as Determined's StepMode says, whose
rate is its step count), `features` (the weight's shape: another value does not fit a checkpoint).
Callbacks record what they are given in OBSERVED (observe.py).
"""
from typing import Any, Dict, List, Optional

import torch

from determined import pytorch
from determined.pytorch import samplers

import observe

RATE = 0.001


class Ones(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int):
        return torch.ones(1), torch.ones(1)


class LabelIndexSum(pytorch.MetricReducer):
    """sum(label_sum * index), the index being the batch's, or the updates counted since reset()."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0.0
        self.updates = 0

    def update(self, label_sum: torch.Tensor, batch_idx: Optional[int]) -> None:
        index = self.updates if batch_idx is None else batch_idx
        self.total += float(label_sum) * index
        self.updates += 1

    def per_slot_reduce(self) -> Any:
        return self.total

    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        return sum(per_slot_metrics)


def label_index_sum(updates: List) -> float:
    """The function form: the index of an update without one is its place in the (interleaved) list."""
    return sum(float(label_sum) * (place if batch_idx is None else batch_idx)
               for place, (label_sum, batch_idx) in enumerate(updates))


class RateIsStepCount(torch.optim.lr_scheduler.LRScheduler):
    """The rate is RATE x the scheduler's step count (1 after its construction)."""

    def get_lr(self) -> List[float]:
        return [base * self._step_count for base in self.base_lrs]


class OneVarTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        features = context.get_hparams().get("features", 1)
        linear = torch.nn.Linear(features, features, bias=False)
        linear.weight.data.zero_()
        self.model = context.wrap_model(linear)
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), RATE))
        self.loss_fn = torch.nn.MSELoss()
        self.cls_reducer = context.wrap_reducer(LabelIndexSum(), name="cls_reducer")
        self.fn_reducer = context.wrap_reducer(label_index_sum, name="fn_reducer")
        mode = context.get_hparams().get("lr_step_mode")
        self.scheduler = None
        if mode is not None:
            self.scheduler = context.wrap_lr_scheduler(RateIsStepCount(self.opt), pytorch.LRScheduler.StepMode(mode))
        if context.get_hparams().get("dataloader_type") == "torch":
            context.experimental.disable_dataset_reproducibility_checks()

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        data, label = batch
        self.cls_reducer.update(label.sum(), batch_idx)
        self.fn_reducer.update((label.sum(), batch_idx))
        w_before = self.model.weight.data.item()
        loss_exp = (label[0] - data[0] * w_before) ** 2
        w_exp = w_before + 2 * RATE * data[0] * (label[0] - data[0] * w_before)
        loss = self.loss_fn(self.model(data), label)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        out = {"loss": loss, "loss_exp": loss_exp, "w_before": w_before, "w_after": self.model.weight.data.item(),
               "w_exp": w_exp}
        if self.scheduler is not None:
            out["lr"] = self.scheduler.get_last_lr()[0]
            if self.scheduler is not None and self.context.get_hparam("lr_step_mode") == \
                    pytorch.LRScheduler.StepMode.MANUAL_STEP.value:
                self.scheduler.step()
        return out

    def evaluate_batch(self, batch: pytorch.TorchData, batch_idx: int) -> Dict[str, Any]:
        data, label = batch
        self.cls_reducer.update(label.sum(), None)
        self.fn_reducer.update((label.sum(), None))
        return {"val_loss": self.loss_fn(self.model(data), label)}

    def build_training_data_loader(self) -> Any:
        size = self.context.get_per_slot_batch_size()
        if self.context.get_hparams().get("dataloader_type") != "torch":
            return pytorch.DataLoader(Ones(), batch_size=size)
        sampler = samplers.ReproducibleShuffleSampler(torch.utils.data.SequentialSampler(Ones()),
                                                      self.context.get_trial_seed())
        sampler = samplers.RepeatSampler(sampler)
        sampler = samplers.DistributedSampler(sampler, num_workers=self.context.distributed.get_size(),
                                              rank=self.context.distributed.get_rank())
        batches = torch.utils.data.BatchSampler(sampler, size, drop_last=False)
        batches = samplers.SkipBatchSampler(batches, self.context.get_initial_batch())
        return torch.utils.data.DataLoader(Ones(), batch_sampler=batches)

    def build_validation_data_loader(self) -> Any:
        size = self.context.get_per_slot_batch_size()
        if self.context.get_hparams().get("dataloader_type") != "torch":
            return pytorch.DataLoader(Ones(), batch_size=size)
        sampler = samplers.DistributedSampler(torch.utils.data.SequentialSampler(Ones()),
                                              num_workers=self.context.distributed.get_size(),
                                              rank=self.context.distributed.get_rank())
        return torch.utils.data.DataLoader(Ones(), batch_sampler=torch.utils.data.BatchSampler(sampler, size, False))

    def build_callbacks(self) -> Dict[str, pytorch.PyTorchCallback]:
        return {"observer": observe.Observer(self.context)}


class OneVarFullDatasetTrial(OneVarTrial):
    """The same validation loss through evaluate_full_dataset."""

    evaluate_batch = pytorch.PyTorchTrial.evaluate_batch

    def evaluate_full_dataset(self, data_loader: torch.utils.data.DataLoader) -> Dict[str, Any]:
        losses = [self.loss_fn(self.model(data), label) for data, label in data_loader]
        return {"val_loss": sum(losses) / len(losses)}


class OneVarPerMetricReducers(OneVarTrial):
    def evaluate_batch(self, batch: pytorch.TorchData, batch_idx: int) -> Dict[str, Any]:
        data, label = batch
        output = self.model(data)
        return {"val_loss": self.loss_fn(output, label), "mse": torch.mean(torch.square(output - label)),
                "worst": self.loss_fn(output, label)}

    def evaluation_reducer(self) -> Dict[str, pytorch.Reducer]:
        return {"val_loss": pytorch.Reducer.AVG, "mse": pytorch.Reducer.SUM, "worst": pytorch.Reducer.MAX}


class OneVarUnnamedNonDictReducer(OneVarTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        super().__init__(context)
        context.wrap_reducer(lambda values: 1.0)


class OneVarNamedDictReducer(OneVarTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        super().__init__(context)
        context.wrap_reducer(lambda values: {"my_metric": 1.0}, name="my_metric")
