"""What a Determined Trial-API trial costs a batch over the same model in a plain PyTorch loop, on the CPU.

    .venv/bin/python benchmarks/determined_overhead.py [--rounds 3] [--batches 300] [--batch 64] [--threads 1]
                                                        [--net parity|linear]

Both train benchmarks/parity_components.py's network (three conv blocks; `--net linear`: one linear layer,
which costs next to nothing, so the difference is the per-batch overhead itself) on the same synthetic 3x32x32 images
with SGD, batch by batch: the plain loop (a DataLoader, forward, loss, backward, step, zero_grad, `loss.item()`)
and a PyTorchTrial doing the same in train_batch (`context.backward`, `context.step_optimizer`) trained by
`det.pytorch.Trainer.fit` in this process (local mode, Determined's default reporting period of 100 batches:
a training record every 100 batches). Both use `--threads` threads (the trial's run through NUM_INTRA_THREADS,
which playground's worker reads). Each run times every batch from the
start of one batch to the start of the next, in wall time and in this process's CPU time; the first 20 batches
(warm-up) and the run's end (the final validation and checkpoint) are left out. Each round runs both, plain
first in odd rounds and the trial first in even ones; the ratio is trial / plain of the medians over rounds of each run's mean batch time. Prints the load
average beside the numbers (the machine may be shared).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity_components import make_net  # noqa: E402

WARMUP = 20


def images(samples: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(7)
    return TensorDataset(torch.randn(samples, 3, 32, 32, generator=generator),
                         torch.randint(0, 10, (samples,), generator=generator))


class Clock:
    """Wall and CPU time at the start of every batch."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def tick(self) -> None:
        self.wall.append(time.perf_counter())
        self.cpu.append(time.process_time())

    def per_batch(self) -> tuple[float, float]:
        """Mean seconds a batch after the warm-up (wall, CPU), over the batches that started another."""
        def mean(stamps: list[float]) -> float:
            steady = stamps[WARMUP:]
            return (steady[-1] - steady[0]) / (len(steady) - 1)
        return mean(self.wall), mean(self.cpu)


def network(kind: str) -> nn.Module:
    return make_net(10) if kind == "parity" else nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))


def run_plain(batches: int, batch: int, net_kind: str) -> Clock:
    torch.manual_seed(5)
    net = network(net_kind)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(images(batches * batch), batch_size=batch, shuffle=True,
                        generator=torch.Generator().manual_seed(5))
    clock = Clock()
    net.train()
    for inputs, labels in loader:
        clock.tick()
        loss = loss_fn(net(inputs), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss.item()
    clock.tick()
    return clock


def run_trial(batches: int, batch: int, net_kind: str) -> Clock:
    from playground.compat.determined import pytorch
    clock = Clock()

    class BenchmarkTrial(pytorch.PyTorchTrial):
        def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
            self.context = context
            self.net = context.wrap_model(network(net_kind))
            self.optimizer = context.wrap_optimizer(torch.optim.SGD(self.net.parameters(), lr=0.05, momentum=0.9))
            self.loss_fn = nn.CrossEntropyLoss()

        def build_training_data_loader(self) -> pytorch.DataLoader:
            return pytorch.DataLoader(images(batches * batch), batch_size=batch, shuffle=True)

        def build_validation_data_loader(self) -> pytorch.DataLoader:
            return pytorch.DataLoader(images(batch), batch_size=batch)

        def train_batch(self, data: pytorch.TorchData, epoch_idx: int, batch_idx: int) -> dict:
            clock.tick()
            inputs, labels = data
            loss = self.loss_fn(self.net(inputs), labels)
            self.context.backward(loss)
            self.context.step_optimizer(self.optimizer)
            return {"loss": loss}

        def evaluate_batch(self, data: pytorch.TorchData) -> dict:
            inputs, labels = data
            return {"validation_loss": self.loss_fn(self.net(inputs), labels).item()}

    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder), \
            contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        torch.manual_seed(5)
        with pytorch.init(hparams={"global_batch_size": batch}) as context:
            trial = BenchmarkTrial(context)
            pytorch.Trainer(trial, context).fit(max_length=pytorch.Batch(batches))
            clock.tick()     # the last batch's end lies before the final validation: dropped below
            clock.wall.pop()
            clock.cpu.pop()
    return clock


def load_average() -> str:
    with open("/proc/loadavg", encoding="utf-8") as handle:
        return " ".join(handle.read().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch's CPU threads (1: steadier on a shared machine)")
    parser.add_argument("--net", choices=("parity", "linear"), default="parity")
    args = parser.parse_args()
    if args.batches <= WARMUP + 1:
        parser.error(f"--batches must be above the {WARMUP} warm-up batches")
    torch.set_num_threads(args.threads)
    os.environ["NUM_INTRA_THREADS"] = str(args.threads)    # the trial's run sets its threads from it (worker.py)
    results: dict[str, list[tuple[float, float]]] = {"plain": [], "trial": []}
    print(f"load average at the start: {load_average()}")
    for round_index in range(args.rounds):
        order = (("plain", run_plain), ("trial", run_trial))
        for kind, run in order if round_index % 2 == 0 else order[::-1]:     # neither always goes first
            wall, cpu = run(args.batches, args.batch, args.net).per_batch()
            results[kind].append((wall, cpu))
            print(f"round {round_index + 1} {kind:5s}: {wall * 1e3:7.2f} ms wall, {cpu * 1e3:7.2f} ms CPU a batch "
                  f"(load {load_average()})", flush=True)
    medians = {kind: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows))
               for kind, rows in results.items()}
    print(f"median of {args.rounds} rounds, {args.net} net, {args.batches} batches of {args.batch}, "
          f"{args.threads} thread(s): "
          f"plain {medians['plain'][0] * 1e3:.2f} ms wall / {medians['plain'][1] * 1e3:.2f} ms CPU, "
          f"trial {medians['trial'][0] * 1e3:.2f} / {medians['trial'][1] * 1e3:.2f}")
    print(f"trial / plain: {medians['trial'][0] / medians['plain'][0]:.3f} wall, "
          f"{medians['trial'][1] / medians['plain'][1]:.3f} CPU (target <= 1.05); trial - plain "
          f"{(medians['trial'][1] - medians['plain'][1]) * 1e6:.0f} us CPU a batch; load at the end {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
