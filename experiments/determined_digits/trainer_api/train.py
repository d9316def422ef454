"""A Trainer-API experiment (Determined 0.38's `det.pytorch.init()` and `Trainer.fit`), written for playground's
examples: `entrypoint: python3 train.py --epochs 1`. Started by an experiment, the hyperparameters and the
searcher's length are the experiment's; run bare (`python3 train.py`), it trains in local mode with the
hyperparameters of const.yaml beside it."""
import argparse
import logging
import os
import sys
from typing import Any, Dict

import torch
import yaml
from torch import nn

import determined as det
from determined import pytorch

import model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))   # ../digits_data.py
from digits_data import digits  # noqa: E402


class DigitsTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext, hparams: Dict[str, Any]) -> None:
        self.context = context
        self.model = context.wrap_model(model.DigitsNet(hparams["n_filters1"], hparams["n_filters2"],
                                                        hparams["dropout1"], hparams["dropout2"]))
        self.optimizer = context.wrap_optimizer(torch.optim.Adadelta(self.model.parameters(),
                                                                     lr=hparams["learning_rate"]))
        self.batch_size = hparams.get("batch_size", 32)

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=True), batch_size=self.batch_size, shuffle=True)

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(digits(train=False), batch_size=self.batch_size)

    def train_batch(self, batch: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        images, labels = batch
        output = self.model(images)
        loss = nn.functional.nll_loss(output, labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer)
        return {"loss": loss, "accuracy": (output.argmax(dim=1) == labels).float().mean()}   # train_accuracy

    def evaluate_batch(self, batch: pytorch.TorchData, batch_idx: int) -> Dict[str, Any]:
        images, labels = batch
        output = self.model(images)
        return {"validation_loss": nn.functional.nll_loss(output, labels).item(),
                "accuracy": (output.argmax(dim=1) == labels).float().mean().item()}


def run(max_length: pytorch.TrainUnit, local: bool) -> None:
    hparams = None
    if local:      # no experiment: the constants of const.yaml
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "const.yaml")) as handle:
            hparams = yaml.safe_load(handle)["hyperparameters"]
    with pytorch.init(hparams=hparams) as train_context:
        trial = DigitsTrial(train_context, hparams=train_context.get_hparams())
        trainer = pytorch.Trainer(trial, train_context)
        trainer.fit(max_length=max_length, validation_period=pytorch.Batch(45), checkpoint_period=pytorch.Batch(45))


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    run(pytorch.Epoch(args.epochs), local=det.get_cluster_info() is None)
