"""A trial validated by evaluate_full_dataset, with a custom reducer over every rank's training values, and a stop
request of its own after 4 batches (set_stop_requested: Determined finishes the step, checkpoints and ends), and a
callback that logs each validation's error to the TensorBoard writer. Each call of evaluate_full_dataset and of
on_validation_end prints its rank and what it got (the ranks' outputs are the test's to read)."""
from typing import Any, Dict

import torch
from torch import nn

import tiny_data
from determined import pytorch


class ValidationLog(pytorch.PyTorchCallback):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context, self.validations = context, 0

    def on_validation_end(self, metrics: Dict[str, Any]) -> None:
        self.validations += 1
        print(f"rank {self.context.distributed.get_rank()} on_validation_end {sorted(metrics.items())}", flush=True)
        self.context.get_tensorboard_writer().add_scalar("callback_validation_error", metrics["validation_error"],
                                                         self.validations)

    def state_dict(self) -> Dict[str, Any]:
        return {"validations": self.validations}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.validations = state_dict["validations"]


class FullDatasetTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        self.model = context.wrap_model(nn.Sequential(nn.Flatten(), nn.Linear(64, 4)))
        self.optimizer = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.05))
        self.seen = context.wrap_reducer(lambda values: sum(values), name="samples_seen", for_validation=False)

    def build_callbacks(self) -> Dict[str, pytorch.PyTorchCallback]:
        return {"validation_log": ValidationLog(self.context)}

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(tiny_data.dataset(True), batch_size=self.context.get_per_slot_batch_size())

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(tiny_data.dataset(False, 16), batch_size=4)

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> torch.Tensor:
        data, labels = batch
        loss = nn.functional.cross_entropy(self.model(data), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        self.seen.update(len(labels))
        if self.context.current_train_batch() == 3:
            self.context.set_stop_requested(True)
        return loss

    def evaluate_full_dataset(self, data_loader: torch.utils.data.DataLoader) -> Dict[str, Any]:
        wrong = total = 0
        for data, labels in data_loader:
            wrong += (self.model(data).argmax(1) != labels).sum().item()
            total += len(labels)
        rank = self.context.distributed.get_rank()
        print(f"rank {rank} evaluate_full_dataset", flush=True)
        return {"validation_error": wrong / total, "validated": total, "evaluated_on_rank": rank, "note": "not a number"}
