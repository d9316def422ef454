"""The shape of Determined 0.26's MNIST model_def.py: one model, one optimizer, hparams through the context."""
import os
import time
from typing import Any, Dict

import torch
from torch import nn

import tiny_data
from determined.pytorch import DataLoader, PyTorchTrial, PyTorchTrialContext, TorchData


class MNistTrial(PyTorchTrial):
    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context
        self.model = self.context.wrap_model(nn.Sequential(
            nn.Conv2d(1, self.context.get_hparam("n_filters1"), 3), nn.BatchNorm2d(self.context.get_hparam("n_filters1")),
            nn.ReLU(), nn.Flatten(), nn.Dropout(self.context.get_hparam("dropout")),
            nn.Linear(self.context.get_hparam("n_filters1") * 36, 4), nn.LogSoftmax(dim=1)))
        self.optimizer = self.context.wrap_optimizer(
            torch.optim.Adadelta(self.model.parameters(), lr=self.context.get_hparam("learning_rate")))

    def build_training_data_loader(self) -> DataLoader:
        return DataLoader(tiny_data.dataset(True), batch_size=self.context.get_per_slot_batch_size(), shuffle=True)

    def build_validation_data_loader(self) -> DataLoader:
        return DataLoader(tiny_data.dataset(False, 16), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, torch.Tensor]:
        time.sleep(float(os.environ.get("DET_TEST_BATCH_SLEEP", 0)))   # lets a test's signal land mid-run
        data, labels = batch
        output = self.model(data)
        loss = torch.nn.functional.nll_loss(output, labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        return {"loss": loss}

    def evaluate_batch(self, batch: TorchData) -> Dict[str, Any]:
        data, labels = batch
        output = self.model(data)
        validation_loss = torch.nn.functional.nll_loss(output, labels).item()
        pred = output.argmax(dim=1, keepdim=True)
        accuracy = pred.eq(labels.view_as(pred)).sum().item() / len(data)
        return {"validation_loss": validation_loss, "accuracy": accuracy}
