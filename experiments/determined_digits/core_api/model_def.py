"""A Core-API experiment (Determined's `det.core.init()`), written for playground's examples: a plain PyTorch
loop on the 8x8 digits that reports training and validation metrics, stores a checkpoint after every epoch
(`checkpoint.pt`, and `state`: epochs done and the trial id), continues from the latest one it is given, and
stops after the epoch in which a preemption is asked for. The hyperparameters are the trial's (an experiment's
search) or the flags' defaults. `entrypoint: python3 model_def.py --epochs 2`."""
import argparse
import os
import pathlib
import sys

import torch
from torch import nn

import determined as det

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))   # ../digits_data.py
from digits_data import digits  # noqa: E402


class Net(nn.Module):
    def __init__(self, hparams: dict) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, hparams["n_filters1"], 3, padding=1)
        self.conv2 = nn.Conv2d(hparams["n_filters1"], hparams["n_filters2"], 3, padding=1)
        self.dropout1, self.dropout2 = nn.Dropout(hparams["dropout1"]), nn.Dropout(hparams["dropout2"])
        self.fc1 = nn.Linear(hparams["n_filters2"] * 16, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.max_pool2d(torch.relu(self.conv2(torch.relu(self.conv1(x)))), 2)
        x = torch.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
        return torch.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def train_epoch(args, model, loader, optimizer, epoch_idx: int, core_context) -> None:
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        loss = nn.functional.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if (batch_idx + 1) % args.log_interval == 0:
            steps_completed = epoch_idx * len(loader) + batch_idx + 1
            print(f"Train epoch {epoch_idx}: batch {batch_idx + 1}/{len(loader)}, loss {loss.item():.4f}")
            core_context.train.report_training_metrics(steps_completed=steps_completed,
                                                       metrics={"train_loss": loss.item()})


def evaluate(model, loader, core_context, steps_completed: int, epochs_completed: int) -> float:
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            total += nn.functional.nll_loss(output, target, reduction="sum").item()
            correct += (output.argmax(dim=1) == target).sum().item()
    test_loss = total / len(loader.dataset)
    print(f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(loader.dataset)}")
    core_context.train.report_validation_metrics(
        steps_completed=steps_completed,
        metrics={"test_loss": test_loss, "accuracy": correct / len(loader.dataset), "epochs": epochs_completed})
    return test_loss


def restore(path: pathlib.Path, model: nn.Module, trial_id: int) -> int:
    """Epochs done by the checkpoint at `path` when it is this trial's; its weights are loaded either way."""
    model.load_state_dict(torch.load(path / "checkpoint.pt", weights_only=True))
    epochs, checkpoint_trial = (int(v) for v in (path / "state").read_text().split(","))
    return epochs if checkpoint_trial == trial_id else 0


def main(core_context) -> None:
    parser = argparse.ArgumentParser(description="digits, the Core API way")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--test-batch-size", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--log-interval", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    info = det.get_cluster_info()
    hparams = {"learning_rate": 1.0, "n_filters1": 16, "n_filters2": 32, "dropout1": 0.25, "dropout2": 0.5}
    trial_id = 0
    if info is not None:
        hparams.update(info.trial.hparams)
        trial_id = info.trial.trial_id
    torch.manual_seed(args.seed)
    model = Net(hparams)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=hparams["learning_rate"])
    epochs_completed = 0
    if info is not None and info.latest_checkpoint is not None:
        with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
            epochs_completed = restore(path, model, trial_id)

    train_loader = torch.utils.data.DataLoader(digits(train=True), batch_size=args.batch_size, shuffle=True)
    test_loader = torch.utils.data.DataLoader(digits(train=False), batch_size=args.test_batch_size)
    for epoch_idx in range(epochs_completed, args.epochs):
        train_epoch(args, model, train_loader, optimizer, epoch_idx, core_context)
        epochs_completed = epoch_idx + 1
        steps_completed = epochs_completed * len(train_loader)
        evaluate(model, test_loader, core_context, steps_completed, epochs_completed)
        with core_context.checkpoint.store_path({"steps_completed": steps_completed}) as (path, storage_id):
            torch.save(model.state_dict(), path / "checkpoint.pt")
            (path / "state").write_text(f"{epochs_completed},{trial_id}")
        if core_context.preempt.should_preempt():
            return


if __name__ == "__main__":
    with det.core.init() as core_context:
        main(core_context)
