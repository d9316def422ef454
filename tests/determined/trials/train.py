"""The shape of Determined 0.38's MNIST train.py: a trial taking (context, hparams), trained by the Trainer API
from a command (`python3 train.py --epochs 2`); hparams from the cluster info, or init's in local mode."""
import argparse
from typing import Dict

import determined as det  # noqa: F401  (as the tutorial imports it)
from determined import pytorch

import mnist_trial

LOCAL_HPARAMS = {"global_batch_size": 8, "n_filters1": 4, "dropout": 0.25, "learning_rate": 1.0}


class MNistTrial(mnist_trial.MNistTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext, hparams: Dict) -> None:
        super().__init__(context)
        self.hparams = hparams


def run(max_length) -> None:
    with pytorch.init(hparams=LOCAL_HPARAMS) as train_context:
        trial = MNistTrial(train_context, hparams=train_context.get_hparams())
        trainer = pytorch.Trainer(trial, train_context)
        trainer.fit(max_length=max_length, validation_period=pytorch.Batch(2), checkpoint_period=pytorch.Batch(2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--batches", type=int)
    group.add_argument("--epochs", type=int)
    args = parser.parse_args()
    if args.batches:
        length = pytorch.Batch(args.batches)
    elif args.epochs:
        length = pytorch.Epoch(args.epochs)
    else:
        length = pytorch.Batch(100)
    run(length)
