"""benchmarks/parity.py's job trained by a PyTorch Lightning Trainer (the `bench` extra): same network, data,
data order, seed, SGD and batch size as the hand-written loop, so the final weights can be compared bitwise.

Only the plain case: Lightning's bf16, accumulation and clipping differ from ours in where they cast and when
they step, and it has no EMA of its own, so `--case features` is not compared here.
"""
from __future__ import annotations

import random
import time

MISSING = ("benchmarks/parity.py --peers trains the job with PyTorch Lightning too, which is not installed: "
           "pip install -e '.[bench]' (the optional bench extra in setup.cfg), or run without --peers")


def available() -> bool:
    import importlib.util
    return importlib.util.find_spec("pytorch_lightning") is not None


def run_lightning(c: dict, run_dir: str) -> tuple[dict, list[float]]:
    """Train the parity job with pytorch_lightning.Trainer; return the final weights and each epoch's seconds."""
    import numpy as np
    import pytorch_lightning as pl
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Sampler

    from components.inputs.synthetic_input import make_split
    from parity_job import deterministic_kernels, playground_opts
    from parity_components import make_net

    deterministic_kernels(c)
    random.seed(c["seed"])
    np.random.seed(c["seed"])
    torch.manual_seed(c["seed"])
    opts = playground_opts(c)
    opts["input"]["synthetic_noise"] = 1.0
    data = make_split(opts, c["samples"], salt=2)

    class Passes(Sampler):
        """The documented data order, one pass per epoch: pass p is randperm(N) seeded with seed * 1000003 + p
        (Lightning iterates the loader afresh each epoch, where the plain loop draws from one endless order)."""

        def __init__(self) -> None:
            self.data_pass = 0

        def __len__(self) -> int:
            return c["samples"]

        def __iter__(self):
            g = torch.Generator().manual_seed(c["seed"] * 1_000_003 + self.data_pass)
            self.data_pass += 1
            return iter(torch.randperm(c["samples"], generator=g).tolist())

    class Job(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net, self.loss_fn = make_net(c["classes"]), nn.CrossEntropyLoss()

        def training_step(self, batch, batch_idx):
            inputs, labels = batch
            return self.loss_fn(self.net(inputs), labels)

        def configure_optimizers(self):
            return torch.optim.SGD(self.net.parameters(), lr=c["lr"], momentum=c["momentum"],
                                   weight_decay=c["weight_decay"])

    class EpochTimes(pl.Callback):
        """The span the plain loop times: the first batch of the epoch fetched to the last step taken."""

        def __init__(self) -> None:
            self.secs: list[float] = []

        def on_train_epoch_start(self, trainer, module) -> None:
            self.started = time.perf_counter()

        def on_train_epoch_end(self, trainer, module) -> None:
            if module.device.type == "cuda":
                torch.cuda.synchronize()
            self.secs.append(time.perf_counter() - self.started)

    job = Job()
    loader = DataLoader(data, batch_size=c["batch"], sampler=Passes(), num_workers=0,
                        generator=torch.Generator().manual_seed(c["seed"]), pin_memory=c["device"] == "cuda")
    times = EpochTimes()
    trainer = pl.Trainer(accelerator="gpu" if c["device"] == "cuda" else "cpu", devices=1, max_epochs=c["epochs"],
                         limit_train_batches=c["samples"] // c["batch"], callbacks=[times], logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         use_distributed_sampler=False, num_sanity_val_steps=0, default_root_dir=run_dir)
    trainer.fit(job, loader)
    return {n: v.detach().cpu() for n, v in job.net.state_dict().items()}, times.secs
