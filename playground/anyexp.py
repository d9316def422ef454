"""AnyExp: the training loop and its hooks, with the original Playground's method names and call order.

The loop knows nothing of models or data: components (bound onto a subclass made per run, see
trainer_class.py) and overrides fill the hooks. Call order, as in Caffe2's AnyExp:

    get_model_input_fun, init_model, planning_output, prep_data_parallel_models, loadCheckpoint,
    for epoch in list_of_epochs():
        fun_per_epoch_b4RunNet(epoch)
        for epoch_iter in list_of_epoch_iters():
            fun_per_iter_b4RunNet, run_training_net, fun_per_iter_aftRunNetB4Test,
            [every num_train_iteration_per_test iterations: a record point, run_testing_net x num_test_iter],
            fun_per_iter_aftRunNetAftTest
        [end-of-epoch test pass, recorded as its own point], checkpoint(epoch), fun_per_epoch_aftRunNet(epoch)
    fun_conclude_operator, createMetricsPlotsModelsOutputs, assembleAllOutputs

Only rank 0 writes files; every rank runs every hook. Distribution, checkpoints, meters and outputs live in
their own modules; this file only sequences them.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Iterable

import torch

from playground import checkpoint as ckpt
from playground import distributed as dist_utils
from playground.batch_stream import build_test_stream, build_train_stream
from playground.data_forms import as_stream_source
from playground.earlier_outputs import set_aside_earlier_outputs
from playground.metrics_book import MetricsBook
from playground.model import Model, build_network, build_update_rule
from playground.outputs import RunOutputs
from playground.pretrained import load_pretrained
from playground.progress import Progress
from playground.run_context import RunContext
from playground.seeding import seed_rank_streams


class AnyExp:
    """The trainer. `self.opts` is the resolved opts; `ctx` says which rank and device this process is."""

    def __init__(self, opts: dict, ctx: RunContext) -> None:
        self.opts = opts
        self.ctx = ctx
        self.log = logging.getLogger("playground")
        self.rank, self.world_size, self.shard_id = ctx.rank, ctx.world_size, ctx.shard_id
        self.device = ctx.device
        self.run_dir = ctx.run_dir
        self.train_model: Model | None = None
        self.test_model: Model | None = None
        self.train_dataset: Any = None
        self.test_dataset: Any = None
        self.epoch = 0
        self.start_epoch_iter = 0     # first iteration of the first epoch (non-zero after a mid-epoch resume)
        self.global_iter = 0          # training iterations done in the whole run
        self.lr: float | None = None
        self.total_batch_size = opts["epoch_iter"]["batch_per_device"] * self.world_size
        self.epoch_iterations = 0
        self.book = MetricsBook()
        # The original's attribute names, which override modules read.
        self.metrics, self.record_epochs = self.book.metrics, self.book.record_epochs
        self.samples_per_sec, self.secs_per_train = self.book.samples_per_sec, self.book.secs_per_train
        self.plotsIngredients: list[dict] = []
        self.metrics_output: dict | None = None
        self.model_output: str | None = None
        self.model_path: str | None = None
        self.outputs = RunOutputs(self.run_dir, enabled=ctx.is_writer)
        self.checkpointer = ckpt.Checkpointer(self)
        self.progress: Progress | None = None
        self._interval_train_secs = 0.0
        self._interval_iters = 0
        self._started = time.time()

    # ------------------------------------------------------------------ hooks before the loop
    def get_input_dataset(self, opts: dict) -> Any:
        raise NotImplementedError("the input component must define get_input_dataset(opts)")

    def get_model_input_fun(self) -> None:
        """Read the datasets once: get_input_dataset(opts) gives (train, test) or {"train":, "test":}."""
        datasets = self.get_input_dataset(self.opts)
        if isinstance(datasets, dict):
            self.train_dataset, self.test_dataset = datasets.get("train"), datasets.get("test")
        elif isinstance(datasets, (list, tuple)) and len(datasets) == 2:
            self.train_dataset, self.test_dataset = datasets
        else:
            raise TypeError("get_input_dataset(opts) must return (train, test) or {'train': ..., 'test': ...}, "
                            f"got {type(datasets).__name__}")
        self.opts["input"]["datasets"] = [describe_dataset(split, d) for split, d in
                                          (("train", self.train_dataset), ("test", self.test_dataset))]
        if self.opts["input"]["num_classes"] is None:
            found = getattr(self.train_dataset, "num_classes", None) or getattr(self.test_dataset, "num_classes", None)
            if not found:
                raise ValueError("opts.input.num_classes is null and the input component's datasets do not say how "
                                 "many classes there are; set input.num_classes")
            self.opts["input"]["num_classes"] = int(found)

    def init_model(self) -> None:
        """Create the train and test model slots; a model component may set test_model to None."""
        self.train_model = Model("train_model", is_train=True)
        self.test_model = Model("test_model", is_train=False)

    def planning_output(self) -> None:
        """Meters from output.metrics, plots from output.plots, logs."""
        self.book.create_meters(self.opts, self.ctx.meter_classes)
        self.plotsIngredients = list(self.opts["output"]["plots"])
        self.outputs.open_log(self.opts)

    def prep_data_parallel_models(self) -> None:
        self.prep_a_data_parallel_model(self.train_model, self.train_dataset, True)
        self.prep_a_data_parallel_model(self.test_model, self.test_dataset, False)

    def prep_a_data_parallel_model(self, model: Model | None, dataset: Any, is_train: bool) -> None:
        """Give `model` its batches and, for the train model (or a test-only run), its network and update rule."""
        if model is None:
            return
        data = as_stream_source(self.gen_input_builder_fun(model, dataset, is_train), "training" if is_train else "test",
                                self.opts["epoch_iter"]["batch_per_device"])
        shared = self.train_model if not is_train and self.train_model is not None else None
        if shared is not None and shared.module is not None:
            model.share_network(shared)
        else:
            net, loss_fn = _network_and_loss(self.gen_forward_pass_builder_fun(model, dataset, is_train))
            build_network(model, net, loss_fn, self.ctx, sync_bn=bool(self.opts["model_param"]["combine_spatial_bn"]))
        if is_train:
            self._set_epoch_size(data)
            model.batches = build_train_stream(data, self.opts, self.ctx, self.epoch_iterations)
            builder = self.gen_param_update_builder_fun if self.opts["model"]["parameter_update_py"] else self.gen_optimizer_fun
            build_update_rule(model, builder(model, dataset, is_train))
        else:
            model.batches = build_test_stream(data, self.opts, self.ctx)

    def loadCheckpoint(self) -> None:
        """Resume from this run's last good checkpoint (policy), else load pretrained_model weights if given."""
        if self.checkpointer.restore():
            return
        if self.ctx.is_writer:
            set_aside_earlier_outputs(self.run_dir)
        path = self.opts["model_param"]["pretrained_model"]
        model = self.train_model or self.test_model
        if not path or model is None or model.module is None:
            return
        epoch = load_pretrained(model.module, path, self.log)
        if epoch is not None and not self.opts["model_param"]["reset_epoch"]:
            self.epoch = epoch
            self.global_iter = epoch * self.epoch_iterations

    # ------------------------------------------------------------------ the loop
    def list_of_epochs(self) -> Iterable[int]:
        return range(self.epoch, self.opts["epoch_iter"]["num_epochs"])

    def list_of_epoch_iters(self) -> Iterable[int]:
        start, self.start_epoch_iter = self.start_epoch_iter, 0
        return range(start, self.epoch_iterations)

    def fun_per_epoch_b4RunNet(self, epoch: int) -> None:
        pass

    def fun_per_iter_b4RunNet(self, epoch: int, epoch_iter: int) -> None:
        pass

    def run_training_net(self) -> None:
        """One training step on this rank's next batch; outputs go to the train meters."""
        model = self.train_model
        inputs, labels = model.batches.next()
        output = model.net(inputs)
        loss = model.loss_fn(output, labels)
        model.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        model.optimizer.step()
        self.book.add(True, loss, output, labels)

    def fun_per_iter_aftRunNetB4Test(self, epoch: int, epoch_iter: int) -> None:
        pass

    def run_testing_net(self) -> None:
        """One test batch through the network in eval mode; outputs go to the test meters."""
        model = self.test_model
        if model is None or model.module is None:
            return
        inputs, labels = model.batches.next()
        with torch.inference_mode():
            output = model.module(inputs)
            loss = model.loss_fn(output, labels)
        self.book.add(False, loss, output, labels)

    def fun_per_iter_aftRunNetAftTest(self, epoch: int, epoch_iter: int) -> None:
        pass

    def checkpoint(self, epoch: int) -> None:
        """Save the run's full state after `epoch` (0-based) according to the policy, as checkpoint epoch+1."""
        self.model_path = self.checkpointer.save_epoch(epoch + 1) or self.model_path

    def gen_checkpoint_path(self, is_checkpoint: bool, epoch: int) -> str:
        folder = self.checkpointer.folder
        name = f"model_checkpoint_epoch{epoch}.pt" if is_checkpoint else "model_final.pt"
        return os.path.join(folder, name)

    def fun_per_epoch_aftRunNet(self, epoch: int) -> None:
        pass

    # ------------------------------------------------------------------ hooks after the loop
    def fun_conclude_operator(self) -> None:
        pass

    def createMetricsPlotsModelsOutputs(self) -> None:
        self.metrics_output = self.book.lists()
        self.model_output = self.model_path
        self.outputs.draw_plots(self.plotsIngredients, self.metrics_output, self.book)

    def assembleAllOutputs(self) -> dict:
        return {"model": self.model_output, "metrics": self.metrics_output}

    # ------------------------------------------------------------------ driver
    def buildModelAndTrain(self, opts: dict | None = None) -> dict:
        """Run every hook in the original order; return (and, on rank 0, write) the result dict."""
        self.get_model_input_fun()
        self.init_model()
        self.planning_output()
        self.prep_data_parallel_models()
        seed_rank_streams(self.opts["model_param"]["seed"], self.rank)
        self.loadCheckpoint()
        self.progress = Progress(self.opts, self.ctx, self.epoch_iterations)
        try:
            self._train_epochs()
            self.fun_conclude_operator()
            self.createMetricsPlotsModelsOutputs()
            result = self.assembleAllOutputs()
            self.outputs.write_results(result, self.book, wall_time=self._wall_time())
        finally:
            self._close_batches()
        return result

    def _train_epochs(self) -> None:
        try:
            trained = False
            for epoch in self.list_of_epochs():
                trained = True
                self.epoch = epoch
                self._run_epoch(epoch)
            if not trained and self.opts["epoch_iter"]["num_epochs"] == 0 and self._has_test():
                self._record_point(self.epoch, 0, "epoch")   # no training asked for: evaluate (full test pass)
            self.checkpointer.finish()
        finally:
            self.progress.close()

    def _close_batches(self) -> None:
        """Stop the data loader workers now: the result dict keeps the models (and so their streams) alive."""
        for model in (self.train_model, self.test_model):
            if model is not None and model.batches is not None:
                model.batches.close()

    def _run_epoch(self, epoch: int) -> None:
        self.fun_per_epoch_b4RunNet(epoch)
        per_test = self.opts["epoch_iter"]["num_train_iteration_per_test"]
        for epoch_iter in self.list_of_epoch_iters():
            self.checkpointer.raise_pending_error()
            started = time.perf_counter()
            self._apply_learning_rate(epoch, epoch_iter)
            self.fun_per_iter_b4RunNet(epoch, epoch_iter)
            if self.train_model is not None:
                self.run_training_net()
            self.fun_per_iter_aftRunNetB4Test(epoch, epoch_iter)
            self._interval_train_secs += time.perf_counter() - started
            self._interval_iters += 1
            self.global_iter += 1
            self.progress.step(epoch, epoch_iter)
            if (epoch_iter + 1) % per_test == 0:
                self._record_point(epoch, epoch_iter + 1, "interval")
            self.fun_per_iter_aftRunNetAftTest(epoch, epoch_iter)
            self.checkpointer.after_iteration(epoch, epoch_iter + 1)
        if self._interval_iters or self._has_test():
            self._record_point(epoch, self.epoch_iterations, "epoch")
        self._report_skipped(epoch)
        self.checkpoint(epoch)
        self.fun_per_epoch_aftRunNet(epoch)

    def _record_point(self, epoch: int, iters_done: int, kind: str) -> None:
        """Train meters since the last point, test batches ("epoch": the full test pass), throughput."""
        self._run_test_batches(kind)
        iters, secs = self._interval_iters, self._interval_train_secs
        throughput = (iters * self.total_batch_size / secs, secs / iters) if iters and secs > 0 else (None, None)
        record = self.book.record(
            kind=kind, epoch=epoch, epoch_iter=iters_done, iteration=self.global_iter, samples=self._samples_seen(),
            epochs=epoch + iters_done / max(1, self.epoch_iterations), samples_per_sec=throughput[0],
            secs_per_train=throughput[1], lr=self.lr, wall_time=self._wall_time(),
            reduce=dist_utils.all_reduce_sum if self.world_size > 1 else None)
        self._interval_iters, self._interval_train_secs = 0, 0.0
        self.outputs.append_record(record)
        self.progress.record(record)

    def _samples_seen(self) -> int:
        """Training samples so far, counted in global batches of the session that trained them (monotone)."""
        last = self.book.records[-1] if self.book.records else {}
        since, done = last.get("iteration", 0), last.get("samples", last.get("iteration", 0) * self.total_batch_size)
        return int(done + (self.global_iter - since) * self.total_batch_size)

    def _has_test(self) -> bool:
        return self.test_model is not None and self.test_model.batches is not None and self.test_model.module is not None

    def _run_test_batches(self, kind: str) -> None:
        if not self._has_test():
            return
        stream = self.test_model.batches
        count = stream.begin_full_pass() if kind == "epoch" else self.opts["epoch_iter"]["num_test_iter"]
        self.test_model.module.eval()
        try:
            for _ in range(count):
                self.run_testing_net()
        finally:
            if kind == "epoch":
                stream.end_full_pass()
            if self.train_model is not None and self.train_model.module is not None:
                self.train_model.module.train()

    def _report_skipped(self, epoch: int) -> None:
        """Corrupt records dropped this epoch (input.bad_record "skip"), summed over ranks."""
        streams = [m.batches for m in (self.train_model, self.test_model) if m is not None and m.batches is not None]
        local = torch.tensor([float(sum(s.skipped for s in streams))], dtype=torch.float64)
        for stream in streams:
            stream.skipped = 0
        total = int(dist_utils.all_reduce_sum(local).item())
        if total:
            self.log.warning("epoch %d: skipped %d corrupt record(s) (input.bad_record is 'skip')", epoch + 1, total)

    def _wall_time(self) -> float:
        return time.time() - self._started + self.book.prior_wall_time

    def _apply_learning_rate(self, epoch: int, epoch_iter: int) -> None:
        model = self.train_model
        if model is None or model.lr_schedule is None:
            return
        self.lr = model.lr_schedule(epoch + epoch_iter / max(1, self.epoch_iterations))
        for group in model.optimizer.param_groups:
            group["lr"] = self.lr * group.get("lr_scale", 1.0)

    def _set_epoch_size(self, train_data: Any) -> None:
        samples = self.opts["epoch_iter"]["num_train_sample_per_epoch"]
        if samples == 0:
            samples = len(train_data)
        self.epoch_iterations = samples // self.total_batch_size
        if self.epoch_iterations == 0:
            raise ValueError(f"opts.epoch_iter: an epoch of {samples} samples holds no global batch of "
                             f"{self.total_batch_size}; lower batch_per_device or use more data")


def _network_and_loss(built: Any) -> tuple[torch.nn.Module, Any]:
    if isinstance(built, tuple) and len(built) == 2 and isinstance(built[0], torch.nn.Module):
        return built
    raise TypeError("gen_forward_pass_builder_fun must return (network: torch.nn.Module, loss_fn), "
                    f"got {type(built).__name__}")


def describe_dataset(split: str, dataset: Any) -> dict:
    """What opts.input.datasets holds for one dataset the input component returned: JSON-able facts about it
    (the opts are written as JSON), not the object."""
    kind = type(dataset)
    out: dict = {"split": split, "type": None if dataset is None else f"{kind.__module__}.{kind.__qualname__}"}
    try:
        out["size"] = len(dataset) if dataset is not None else 0
    except TypeError:
        out["size"] = None     # an iterable dataset of unknown length
    for name in ("sample_shape", "num_classes"):
        value = getattr(dataset, name, None)
        if isinstance(value, (int, tuple, list)):
            out[name] = list(value) if isinstance(value, (tuple, list)) else value
    return out
