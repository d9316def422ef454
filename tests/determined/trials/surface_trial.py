"""Trials touching the edges of Determined's API surface: a member playground does not provide, asked for in
__init__ (`context.experimental.<name>` or `context.<name>`, from the hparam `ask`), the provided
experimental members (use_amp, disable_auto_to_device, disable_dataset_reproducibility_checks), and the
context's getters and switches (ContextSurface)."""
import json
import pathlib
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


class ContextSurface(mnist_trial.MNistTrial):
    """The context's getters and switches, each printed on the line `SURFACE <json>` for the test to read: in
    __init__, at this session's first batch, at every batch (its place in the epoch), and every validation
    batch's loss (validations reduce it with Reducer.MIN, one reducer for all metrics). Its own step leaves the
    gradients to it (auto_zero_grads=False)."""

    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.scaler = context.wrap_scaler(torch.amp.GradScaler("cuda", enabled=False))   # before wrap_model
        super().__init__(context)
        models, optimizers = context.configure_apex_amp(self.model, self.optimizer, enabled=False)
        context.set_profiler(sampling_interval=1)
        autocast = context.autocast_forward_pass(self.model)
        context.set_enable_tensorboard_logging(False)
        self._say("init", unchanged=models is self.model and optimizers is self.optimizer,
                  autocast=[isinstance(autocast, type(self.model)),
                            [id(p) for p in autocast.parameters()] == [id(p) for p in self.model.parameters()]],
                  tensorboard=context.get_enable_tensorboard_logging())

    def _say(self, what: str, **values: Any) -> None:
        print("SURFACE " + json.dumps({"what": what, "rank": self.context.distributed.get_rank(), **values}),
              flush=True)

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        context, dist = self.context, self.context.distributed
        if batch_idx == context.get_initial_batch():
            self._say("first", batch_idx=batch_idx, global_batch=context.get_global_batch_size(),
                      per_slot=context.get_per_slot_batch_size(), data=context.get_data_config(),
                      searcher=context.get_experiment_config()["searcher"]["name"],
                      ids=[context.get_experiment_id(), context.get_trial_id()], seed=context.get_trial_seed(),
                      ranks=[dist.get_rank(), dist.get_size(), dist.get_local_rank(), dist.get_local_size(),
                             dist.get_cross_rank(), dist.get_cross_size(), dist.get_num_agents()],
                      stop=context.get_stop_requested(), tensorboard_path=str(context.get_tensorboard_path()),
                      path_is_a_path=isinstance(context.get_tensorboard_path(), pathlib.Path),
                      allgather=dist.allgather(dist.get_rank()), gather=dist.gather(dist.get_rank() * 10),
                      broadcast=dist.broadcast(f"from rank {dist.get_rank()}"),
                      length=[pytorch.data_length(batch), self.get_batch_length(batch)])
        self._say("batch", batch_idx=batch_idx, epoch_idx=epoch_idx, current=context.current_train_batch(),
                  epoch=context.current_train_epoch(), start=context.is_epoch_start(), end=context.is_epoch_end())
        data, labels = batch
        loss = torch.nn.functional.nll_loss(self.model(data), labels)
        context.backward(loss)
        context.step_optimizer(self.optimizer, auto_zero_grads=False)
        kept = any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in self.model.parameters())
        self.optimizer.zero_grad()
        return {"loss": loss, "grads_kept": float(kept)}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        metrics = super().evaluate_batch(batch)
        self._say("validation", loss=metrics["validation_loss"])
        return metrics

    def evaluation_reducer(self) -> pytorch.Reducer:
        return pytorch.Reducer.MIN
