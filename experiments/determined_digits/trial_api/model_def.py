"""A Trial-API experiment (Determined's PyTorchTrial, `entrypoint: model_def:DigitsTrial`), written for
playground's examples: a small convolutional network on the 8x8 digits, one model, one optimizer, an LR
scheduler stepped every epoch, the hyperparameters read through the context, validation batch by batch."""
import os
import sys
from typing import Any, Dict

import torch
from torch import nn

from determined import pytorch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))   # ../digits_data.py
from digits_data import digits  # noqa: E402


def network(n_filters1: int, n_filters2: int, dropout1: float, dropout2: float) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, n_filters1, 3, padding=1), nn.ReLU(),
        nn.Conv2d(n_filters1, n_filters2, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout(dropout1), nn.Flatten(),
        nn.Linear(n_filters2 * 16, 64), nn.ReLU(), nn.Dropout(dropout2),
        nn.Linear(64, 10), nn.LogSoftmax(dim=1))


class DigitsTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        self.model = self.context.wrap_model(network(
            self.context.get_hparam("n_filters1"), self.context.get_hparam("n_filters2"),
            self.context.get_hparam("dropout1"), self.context.get_hparam("dropout2")))
        self.optimizer = self.context.wrap_optimizer(
            torch.optim.Adadelta(self.model.parameters(), lr=self.context.get_hparam("learning_rate")))
        self.scheduler = self.context.wrap_lr_scheduler(
            torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.9),
            step_mode=pytorch.LRScheduler.StepMode.STEP_EVERY_EPOCH)

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=True), batch_size=self.context.get_per_slot_batch_size(),
                                  shuffle=True)

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=False), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        images, labels = batch
        loss = nn.functional.nll_loss(self.model(images), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        return {"loss": loss}

    def evaluate_batch(self, batch: pytorch.TorchData) -> Dict[str, Any]:
        images, labels = batch
        output = self.model(images)
        return {"validation_loss": nn.functional.nll_loss(output, labels).item(),
                "accuracy": (output.argmax(dim=1) == labels).float().mean().item()}
