"""A Core API script in the shape of Determined's tutorial (model_def_distributed.py + searcher operations),
written so that a resume is exact: its checkpoint holds the model, optimizer, scheduler, epoch and every rank's
random state (the tutorial's own load_state discards the restored model). One or more ranks (gloo, DDP).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import determined as det
from local_mnist import datasets


class Net(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.conv1 = nn.Conv2d(1, hparams["n_filters1"], 3, 1)
        self.conv2 = nn.Conv2d(hparams["n_filters1"], hparams["n_filters2"], 3, 1)
        self.dropout1 = nn.Dropout(hparams["dropout1"])
        self.fc1 = nn.Linear(144 * hparams["n_filters2"], 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        return F.log_softmax(self.fc1(torch.flatten(self.dropout1(x), 1)), dim=1)


def evaluate(model, loader):
    model.eval()
    loss = 0.0
    with torch.no_grad():
        for data, target in loader:
            loss += F.nll_loss(model(data), target, reduction="sum").item()
    model.train()
    return loss / len(loader.dataset)


def main(core_context, args):
    info = det.get_cluster_info()
    assert info is not None, "this example only runs on-cluster"
    hparams = info.trial.hparams
    rank, size = core_context.distributed.rank, core_context.distributed.size
    torch.manual_seed(args.seed)
    model = Net(hparams)
    if size > 1:
        model = DDP(model)
    optimizer = optim.Adadelta(model.parameters(), lr=hparams["learning_rate"])
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    epochs_completed = 0
    if info.latest_checkpoint is not None:
        with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
            state = torch.load(path / "state.pt", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"][rank])
        epochs_completed = state["epochs"]
        print(f"rank {rank} resumed from {info.latest_checkpoint} after epoch {epochs_completed}", flush=True)

    train_set = datasets.MNIST("../data", train=True)
    sampler = DistributedSampler(train_set, num_replicas=size, rank=rank, shuffle=True, seed=args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    test_loader = DataLoader(datasets.MNIST("../data", train=False), batch_size=32)

    for op in core_context.searcher.operations():
        while epochs_completed < op.length:
            sampler.set_epoch(epochs_completed)
            for batch_idx, (data, target) in enumerate(train_loader):
                optimizer.zero_grad()
                loss = F.nll_loss(model(data), target)
                loss.backward()
                optimizer.step()
                if rank == 0:
                    core_context.train.report_training_metrics(
                        steps_completed=batch_idx + 1 + epochs_completed * len(train_loader),
                        metrics={"train_loss": loss.item()})
            epochs_completed += 1
            steps_completed = epochs_completed * len(train_loader)
            test_loss = evaluate(model, test_loader)
            if rank == 0:
                core_context.train.report_validation_metrics(
                    steps_completed=steps_completed, metrics={"test_loss": test_loss, "epochs": epochs_completed})
                op.report_progress(epochs_completed)
            scheduler.step()
            rng = core_context.distributed.allgather(torch.get_rng_state())
            if rank == 0:
                with core_context.checkpoint.store_path({"steps_completed": steps_completed}) as (path, storage_id):
                    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                                "scheduler": scheduler.state_dict(), "rng": rng, "epochs": epochs_completed},
                               path / "state.pt")
            time.sleep(args.pause)
            if core_context.preempt.should_preempt():
                print(f"rank {rank} preempted after epoch {epochs_completed}", flush=True)
                return
        if rank == 0:
            op.report_completed(test_loss)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds of sleep after each epoch")
    arguments = parser.parse_args()
    distributed = None
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group("gloo")
        distributed = det.core.DistributedContext.from_torch_distributed()
    with det.core.init(distributed=distributed) as context:
        main(context, arguments)
    if distributed is not None:
        dist.destroy_process_group()
