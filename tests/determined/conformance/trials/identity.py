"""An identity-regression trial in the shape of Determined's harness fixture (written here): y = w x, w = 0 at
the start, record i is (1 + 0.1 i, 1 + 0.1 i) in order (no shuffle), mean squared error, SGD at RATE. Each
validation reports the weight, so the test can follow it against the closed form of consecutive global batches
(the same on any number of slots: the slots' gradients are averaged)."""
from typing import Any, Dict

import torch

from determined import pytorch

import observe

RATE = 0.001


class Counting(torch.utils.data.Dataset):
    def __init__(self, start: float = 1.0) -> None:
        self.start = start

    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int):
        value = torch.tensor([self.start + 0.1 * index])
        return value, value


class IdentityTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        linear = torch.nn.Linear(1, 1, bias=False)
        linear.weight.data.zero_()
        self.model = context.wrap_model(linear)
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), RATE))
        self.loss_fn = torch.nn.MSELoss()

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        data, label = batch
        loss = self.loss_fn(self.model(data), label)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        data, label = batch
        return {"val_loss": self.loss_fn(self.model(data), label), "weight": self.model.weight.data.item()}

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Counting(), batch_size=self.context.get_per_slot_batch_size())

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Counting(20.0), batch_size=self.context.get_per_slot_batch_size())

    def build_callbacks(self) -> Dict[str, pytorch.PyTorchCallback]:
        return {"observer": observe.Observer(self.context)}
