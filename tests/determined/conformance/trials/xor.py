"""An XOR trial in the shape of Determined's XOR fixtures (written here): the four points of XOR, repeated to
`dataset_size` records, a two-layer network of `hidden_size` units, SGD at `learning_rate`, binary cross
entropy; validation reports the loss and the accuracy. Small enough to train in a second, non-linear enough that
a resume that lost any state (weights, momentum, data order, RNG) would not end bitwise equal."""
import os
import time
from typing import Any, Dict

import torch

from determined import pytorch

import observe

POINTS = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
LABELS = torch.tensor([[0.0], [1.0], [1.0], [0.0]])


class Xor(torch.utils.data.Dataset):
    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        return POINTS[index % 4], LABELS[index % 4]


class XorTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        hidden = context.get_hparam("hidden_size")
        self.model = context.wrap_model(torch.nn.Sequential(
            torch.nn.Linear(2, hidden), torch.nn.Tanh(), torch.nn.Dropout(0.1), torch.nn.Linear(hidden, 1),
            torch.nn.Sigmoid()))
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), context.get_hparam("learning_rate"),
                                                          momentum=0.9))
        self.loss_fn = torch.nn.BCELoss()

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        time.sleep(float(os.environ.get("DET_TEST_BATCH_SLEEP", 0)))   # lets a test's signal land mid-run
        data, labels = batch
        loss = self.loss_fn(self.model(data), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        data, labels = batch
        output = self.model(data)
        return {"val_loss": self.loss_fn(output, labels),
                "accuracy": ((output > 0.5).float() == labels).float().mean()}

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Xor(self.context.get_hparam("dataset_size")),
                                  batch_size=self.context.get_per_slot_batch_size(), shuffle=True)

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(Xor(4), batch_size=1)

    def build_callbacks(self) -> Dict[str, pytorch.PyTorchCallback]:
        return {"observer": observe.Observer(self.context)}
