"""A no-op trial in the shape of Determined's pytorch_no_op fixture (written here): one weight that learns
nothing of note, a dataset of `dataset_len` records whose value is their index, and a log line per batch with
the rank, the batch index, the epoch index train_batch was given and the records it got: what Determined's
test_epoch_sync reads. `drop_last` and `shuffle` are hyperparameters of the training loader."""
from typing import Any, Dict

import torch

from determined import pytorch


class Indices(torch.utils.data.Dataset):
    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor([float(index)])


class RecordsTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        linear = torch.nn.Linear(1, 1, bias=False)
        linear.weight.data.zero_()
        self.model = context.wrap_model(linear)
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), 0.0))

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        loss = torch.nn.functional.mse_loss(self.model(batch), batch)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        records = [int(v) for v in batch.flatten().tolist()]
        print(f"rank {self.context.distributed.get_rank()} finished batch {batch_idx} in epoch {epoch_idx} "
              f"with records {records}", flush=True)
        return {"loss": loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        return {"val_loss": torch.nn.functional.mse_loss(self.model(batch), batch)}

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Indices(self.context.get_hparam("dataset_len")),
                                  batch_size=self.context.get_per_slot_batch_size(),
                                  shuffle=self.context.get_hparam("shuffle"),
                                  drop_last=self.context.get_hparam("drop_last"))

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Indices(4), batch_size=2)
