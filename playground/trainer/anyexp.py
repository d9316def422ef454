"""AnyExp: the training loop, with the original Playground's method names and call order, and a list of hooks.

The loop knows nothing of models or data: components (bound onto a subclass made per run, see
trainer_class.py) and overrides fill the Caffe2-named methods; the concerns of a training loop (learning rate,
timing, record points, progress, checkpoints, precision, EMA...) are hooks (playground/trainer/). Call order,
as in Caffe2's AnyExp, with the hook stages (playground/trainer/hook.py) in brackets:

    get_model_input_fun, init_model, planning_output (init_metrics, init_plots, init_logs), prep_data_parallel_models,
    loadCheckpoint, [before_train]
    for epoch in list_of_epochs():
        [before_epoch], fun_per_epoch_b4RunNet(epoch)
        for epoch_iter in list_of_epoch_iters():
            [before_iter], fun_per_iter_b4RunNet, run_training_net [after_backward, after_step],
            fun_per_iter_aftRunNetB4Test,
            [after_iter: every num_train_iteration_per_test iterations a record point, run_testing_net x num_test_iter
             (after iterations N-1, 2N-1, ...; or 0, N, 2N, ... as the original with record_points_at "caffe2")],
            fun_per_iter_aftRunNetAftTest, [end_of_iter]
        [after_epoch: end-of-epoch test pass, recorded as its own point], checkpoint(epoch), fun_per_epoch_aftRunNet(epoch)
        (a hook may set should_stop, early stopping does: no further epoch starts)
    [after_train], fun_conclude_operator, createMetricsPlotsModelsOutputs (extendMetricsOutput), assembleAllOutputs

Only rank 0 writes files; every rank runs every method and hook. This file only sequences them.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Iterable

import torch

from playground.checkpoints import checkpointer as ckpt
from playground.data.batch_stream import build_test_stream, build_train_stream
from playground.data.forms import as_stream_source
from playground.outputs.earlier_outputs import set_aside_earlier_outputs
from playground.options.metric_modes import mode_of_meter
from playground.options.registry import resolve
from playground.trainer.meters import MeanTrainingLoss
from playground.trainer.metrics_book import MetricsBook
from playground.trainer.model import Model, build_network, build_update_rule
from playground.outputs.run_outputs import RunOutputs
from playground.checkpoints.pretrained import load_pretrained
from playground.distribution.run_context import RunContext
from playground.trainer.seeding import seed_rank_streams
from playground.trainer.hook_list import HookList, build_hooks
from playground.trainer.train_step import TrainStep
from playground.trainer.trainer_state import TrainerState


class AnyExp(TrainerState):
    """The trainer. `self.opts` is the resolved opts; `ctx` says which rank and device this process is. Its state
    (what a checkpoint holds) is its own: TrainerState (trainer_state.py)."""

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
        # samples per iteration: grad_accum_steps micro-batches of batch_per_device on every rank
        self.total_batch_size = (opts["epoch_iter"]["batch_per_device"] * self.world_size
                                 * opts["model_param"]["grad_accum_steps"])
        self.epoch_iterations = 0
        self.book = MetricsBook()
        # The original's attribute names, which override modules read.
        self.metrics, self.record_epochs = self.book.metrics, self.book.record_epochs
        self.samples_per_sec, self.secs_per_train = self.book.samples_per_sec, self.book.secs_per_train
        self.plotsIngredients: list[dict] = []
        # Caffe2's started as the dict opts['temp_var']['metrics_output'] = {}: an override may add to it before
        # (or without) calling super().extendMetricsOutput()
        self.metrics_output: dict = {}
        self.model_output: str | None = None
        self.model_path: str | None = None
        self.outputs = RunOutputs(self.run_dir, enabled=ctx.is_writer)
        self.checkpointer = ckpt.Checkpointer(opts, self.run_dir, ctx.is_writer, self.world_size, self.log)
        # built after prep_data_parallel_models, when the networks exist; until then the job's hooks (add_hook)
        self.hooks = HookList([])
        self.should_stop = False      # a hook (early stopping) ends the run after the current epoch
        self._step: TrainStep | None = None

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
        if self.opts["input"]["num_classes"] is None:   # stays null for a dataset without classes (a regression)
            found = getattr(self.train_dataset, "num_classes", None) or getattr(self.test_dataset, "num_classes", None)
            self.opts["input"]["num_classes"] = int(found) if found else None

    def init_model(self) -> None:
        """Create the train and test model slots; a model component may set test_model to None."""
        self.train_model = Model("train_model", is_train=True)
        self.test_model = Model("test_model", is_train=False)

    def planning_output(self) -> None:
        """Meters, plots and logs, as the original: init_metrics(), init_plots(), init_logs()."""
        self.init_metrics()
        self.init_plots()
        self.init_logs()

    def init_metrics(self) -> None:
        """One meter per output.metrics entry: add_metric(name, getMeterClass(meter_py)(opts, **meter_kargs), is_train)
        (a mean training loss when none is declared)."""
        if not self.opts["output"]["metrics"]:
            self.add_metric("train_loss", MeanTrainingLoss(self.opts), True)
        for metric in self.opts["output"]["metrics"]:
            meter_class = self.getMeterClass(metric["meter_py"])
            self.add_metric(metric["name"], meter_class(opts=self.opts, **metric["meter_kargs"]), metric["is_train"])

    def getMeterClass(self, meterName: str) -> type:
        """The meter class registered as `meterName` (an output.metrics meter_py)."""
        for metric in self.opts["output"]["metrics"]:
            if metric["meter_py"] == meterName and metric["name"] in self.ctx.meter_classes:
                return self.ctx.meter_classes[metric["name"]]
        return resolve(meterName, "meter").meter_class()

    def add_metric(self, name: str, calculator: Any, is_train: bool) -> None:
        """Measure `calculator` (Reset/Add/Compute) at every record point, as metric `name` (its best by the mode
        the opts resolved for it, else by the meter's higher_is_better, else by its name)."""
        mode = next((m.get("mode") for m in self.opts["output"]["metrics"] if m["name"] == name), None)
        self.book.add_meter(name, calculator, is_train, mode or mode_of_meter(calculator))

    def init_plots(self) -> None:
        """One plot per output.plots entry (add_plot)."""
        for plot in self.opts["output"]["plots"]:
            self.add_plot(plot["x"], plot["x_title"], plot["ys"], plot["y_title"])

    def add_plot(self, x: str, x_title: str, ys: list[str], y_title: str) -> None:
        self.plotsIngredients.append({"x": x, "x_title": x_title, "ys": ys, "y_title": y_title})

    def init_logs(self) -> None:
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
            p = self.opts["model_param"]
            build_network(model, net, loss_fn, self.ctx, sync_bn=bool(p["combine_spatial_bn"]),
                          channels_last=p["channels_last"], compile=p["compile"])
        if is_train:
            self._set_epoch_size(data)
            micro_batches = self.epoch_iterations * self.opts["model_param"]["grad_accum_steps"]
            model.batches = build_train_stream(data, self.opts, self.ctx, micro_batches)
            builder = self.gen_param_update_builder_fun if self.opts["model"]["parameter_update_py"] else self.gen_optimizer_fun
            build_update_rule(model, builder(model, dataset, is_train))
        else:
            model.batches = build_test_stream(data, self.opts, self.ctx)

    def loadCheckpoint(self) -> None:
        """Resume from this run's last good checkpoint (policy), else load pretrained_model weights if given."""
        found = self.checkpointer.restore()
        if found is not None:
            path, state = found
            self.log.info("resumed from %s (epoch %d, iteration %d of the epoch)", path, state["epoch"],
                          state["epoch_iter"])
            changed = ckpt.changed_keys(state.get("opts", {}), self.opts)
            if changed:
                self.log.info("the opts differ from the checkpoint's in: %s", ", ".join(changed))
            self.load_state_dict(state)
            self.model_path = path
            self.outputs.rewrite_records(self.book.records)
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

    def add_hook(self, hook: Any) -> None:
        """Before the loop: a hook the rank's job brings with what only it holds (a Determined trial's controller,
        fit.py, holds the trial's session). build_hooks keeps it, after the opts' hooks; until then, and after,
        the run's methods find it by name as any hook (`self.hooks.get`)."""
        self.hooks = HookList([*self.hooks, hook])

    def trial_hooks(self) -> list:
        """The hooks the run's trial class brings, after the opts' own (hook_list.py): its build_hooks()
        (trial_adapter.py); none for a run of components."""
        return []

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
        """One training step on this rank's next batch(es); outputs go to the train meters (train_step.py)."""
        self._step.run()

    def fun_per_iter_aftRunNetB4Test(self, epoch: int, epoch_iter: int) -> None:
        pass

    def run_testing_net(self) -> None:
        """One test batch through the network in eval mode; outputs go to the test meters."""
        model = self.test_model
        if model is None or model.module is None:
            return
        inputs, labels = model.batches.next()
        with torch.inference_mode(), self._step.autocast():
            output = model.module(self._step.prepare(inputs))
            loss = model.loss_fn(output, labels)
        self.book.add(False, loss, output, labels)

    def fun_per_iter_aftRunNetAftTest(self, epoch: int, epoch_iter: int) -> None:
        pass

    def validates_at_epoch_end(self, epoch: int) -> bool:
        """Whether the end of `epoch` makes a full test pass (an override may say no: the epoch's record then holds
        its training metrics only, kind "interval")."""
        return True

    def records_at_epoch_end(self, epoch: int) -> bool:
        """Whether the end of `epoch` is a record point at all (an override may say no: a trial whose records
        come where its own reporting periods end, such as a Determined trial's)."""
        return True

    def checkpoint(self, epoch: int) -> None:
        """Save the run's full state after `epoch` (0-based) according to the policy, as checkpoint epoch+1."""
        if self.should_stop:     # no epoch follows: the run's final state is saved as after its last epoch
            self.checkpointer.policy.end_at(epoch + 1)
        saved = self.checkpointer.save_epoch(epoch + 1, self.state_capture(), lambda n: self.gen_checkpoint_path(True, n))
        self.model_path = saved or self.model_path

    def gen_checkpoint_path(self, is_checkpoint: bool, epoch: int) -> str:
        folder = self.checkpointer.folder
        name = f"model_checkpoint_epoch{epoch}.pt" if is_checkpoint else "model_final.pt"
        return os.path.join(folder, name)

    def fun_per_epoch_aftRunNet(self, epoch: int) -> None:
        pass

    # ------------------------------------------------------------------ hooks after the loop
    def fun_conclude_operator(self) -> None:
        pass

    def extendMetricsOutput(self) -> None:
        """As Caffe2's: an empty metrics_output gets this session's lists (epochs, samples_per_sec, secs_per_train,
        one per metric); one that holds lists already has each extended. The dict stays the same object, and
        whatever else an override put in it goes into results.json too."""
        lists = self.book.lists()
        if not self.metrics_output:
            self.metrics_output.update(lists)
            return
        for name, values in lists.items():
            self.metrics_output.setdefault(name, []).extend(values)

    def createMetricsPlotsModelsOutputs(self) -> None:
        self.extendMetricsOutput()
        self.model_output = self.model_path
        self.outputs.draw_plots(self.plotsIngredients, {**self.book.lists(), **self.metrics_output}, self.book)

    def assembleAllOutputs(self) -> dict:
        return {"model": self.model_output, "metrics": self.metrics_output}

    # ------------------------------------------------------------------ driver
    def buildModelAndTrain(self, opts: dict | None = None) -> dict:
        """Run every method and hook in the original order; return (and, on rank 0, write) the result dict."""
        self.get_model_input_fun()
        self.init_model()
        self.planning_output()
        self.prep_data_parallel_models()
        seed_rank_streams(self.opts["model_param"]["seed"], self.rank)
        self.hooks = build_hooks(self)
        self._step = TrainStep(self)
        try:
            self.loadCheckpoint()
            self._train_epochs()
            self.fun_conclude_operator()
            self.createMetricsPlotsModelsOutputs()
            result = self.assembleAllOutputs()
            stopper = self.hooks.get("early_stopping")
            self.outputs.write_results(result, self.book, wall_time=self.wall_time(), metrics=self.metrics_output,
                                       early_stopping=stopper.summary() if stopper is not None else None)
        finally:
            self._close_batches()
        return result

    def _train_epochs(self) -> None:
        try:
            self.hooks.call("before_train")
            for epoch in self.list_of_epochs():
                if self.should_stop:
                    break
                self.epoch = epoch
                self._run_epoch(epoch)
            self.hooks.call("after_train")
        finally:
            self.hooks.call("close")

    def _run_epoch(self, epoch: int) -> None:
        hooks = self.hooks
        hooks.call("before_epoch", epoch)
        self.fun_per_epoch_b4RunNet(epoch)
        for epoch_iter in self.list_of_epoch_iters():
            hooks.call("before_iter", epoch, epoch_iter)
            self.fun_per_iter_b4RunNet(epoch, epoch_iter)
            if self.train_model is not None:
                self.run_training_net()
            self.fun_per_iter_aftRunNetB4Test(epoch, epoch_iter)
            self.global_iter += 1
            hooks.call("after_iter", epoch, epoch_iter)
            self.fun_per_iter_aftRunNetAftTest(epoch, epoch_iter)
            hooks.call("end_of_iter", epoch, epoch_iter)
        hooks.call("after_epoch", epoch)
        self.checkpoint(epoch)
        self.fun_per_epoch_aftRunNet(epoch)

    def _close_batches(self) -> None:
        """Stop the data loader workers now: the result dict keeps the models (and so their streams) alive."""
        for model in (self.train_model, self.test_model):
            if model is not None and model.batches is not None:
                model.batches.close()

    def wall_time(self) -> float:
        """Seconds the run has been going, over all its sessions (the interval timer hook keeps the clock)."""
        return self.hooks.get("interval_timer").wall_time()

    def state_capture(self) -> ckpt.StateCapture:
        """The position and state getters a checkpoint save needs."""
        return ckpt.StateCapture(global_iter=self.global_iter, epoch_iterations=self.epoch_iterations,
                                 record=self.book.records[-1] if self.book.records else None,
                                 shared=self.state_dict, rank=self.rank_state_dict)

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
