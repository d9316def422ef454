"""Trains a Determined PyTorchTrial with playground's trainer: `Trainer.fit` of 0.38 and the trial harness.

The trial's lengths and periods become opts for the AnyExp loop (the trial's own methods fill it: loop.py),
and the run goes through `launch(prepared, job)` like any playground run, in this process: the ranks are the
processes the runner (or torchrun) started. The run folder is the cluster info's `run_dir` (the runner wrote
opts.json, the Determined form, there; it is left alone), or in local mode (no cluster info) a new folder under
runs/. A run resumes from its folder's newest checkpoint by itself, so `latest_checkpoint` needs no value.

Mapping: an epoch is the training loader's length as Determined counts it (its short last batch included;
data_loader.py), or 0.2x's `records_per_epoch` over the global batch; `max_length` Epoch(n)
trains n epochs, Batch(n) stops after n batches. Validations (the validation set once through, a full test pass
record) come where Determined's controller makes them: after every k-th batch of the trial for `validation_period`
Batch(k) (counted from the trial's first batch, as Determined counts), at the end of every k-th epoch for
Epoch(k), after the listed batches or epochs for a schedule (Batch([1, 5])), at a sweep's adaptive ASHA rungs
(`rung_batches`), and once at the end of training unless the last batch was just validated; a stop the trial
requests (`set_stop_requested`) ends with a checkpoint and no validation. Other epoch ends record the training
metrics only (loop.py `validates_at_epoch_end`). `checkpoint_period` Batch(k) / Epoch(k) checkpoints every k
batches / epochs (and every epoch's end, as any playground run). Exit: 0 when done; a stop
signal (SIGTERM) checkpoints and the process exits 75, a failure exits 1, as any playground run.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import Any

from torch.utils.data import DataLoader as TorchLoader, IterableDataset, RandomSampler

from playground.determined.cluster_file import read_cluster_file
from playground.determined.trials.trial import Batch, Epoch, TrainUnit, evaluates_full_dataset, takes_batch_index
from playground.determined.trials.data_loader import DataLoader, epoch_length
from playground.determined.trials.loop_hook import DeterminedHook
from playground.outputs.run_folder import RunFolder
from playground.processes.exit_codes import EXIT_DONE, EXIT_STOPPED, EXIT_USAGE, UserError

LOOP, SLOTS = "playground.determined.trials.loop", "playground.determined.trials.components"


class TrialUsageError(UserError, ValueError):
    """The trial or fit()'s arguments cannot be run; the message says what and how to fix it."""


@dataclass
class TrialSession:
    """What the `determined` hook (loop_hook.py) is given, and the trainer methods of loop.py read through it."""
    trial: Any
    context: Any
    train_data: Any
    drop_last: bool                              # the training loader drops a pass's short last batch
    validation_data: Any
    validation_loader: Any
    full_dataset: bool
    evaluate_takes_index: bool
    max_batches: int | None
    max_length: TrainUnit | None = None          # Batch / Epoch (max_batches holds a length in batches)
    validation_period: TrainUnit | None = None   # Batch / Epoch, a period or a schedule (None: at the end only)
    rung_batches: frozenset[int] = frozenset()     # and one after each of these (the sweep's ASHA rungs)
    rung_epochs: frozenset[int] = frozenset()      # and at the end of each of these epochs (rungs in epochs)
    checkpoint_period: TrainUnit | None = None
    reporting_period: TrainUnit | None = None   # training metrics after these batches (Determined's REPORT)
    test_mode: bool = False
    initial_validation: bool = False
    checkpoint_policy: str = "best"              # after a validation: best, all or none
    searcher_metric: str | None = None
    smaller_is_better: bool = True
    keep_best: bool = True                       # checkpoint_storage.save_trial_best > 0
    under_runner: bool = False      # started by the runner, which writes the ranks' output to train.log


@dataclass(frozen=True)
class DeterminedFit:
    """The job every rank runs (playground/launch/jobs.py): the loop, with the `determined` hook holding the
    trial's session."""
    session: TrialSession

    def run(self, trainer: Any) -> dict | None:
        trainer.add_hook(DeterminedHook(trainer, self.session))
        if self.session.under_runner:
            _leave_train_log_to_the_runner(trainer.run_dir)
        return trainer.buildModelAndTrain(trainer.opts)


def _leave_train_log_to_the_runner(run_dir: str) -> None:
    """The runner copies this process's output into train.log: the loop's own lines would be there twice."""
    import logging
    logger = logging.getLogger("playground")
    for handler in list(logger.handlers):
        if isinstance(handler, logging.FileHandler) and \
                os.path.abspath(handler.baseFilename) == os.path.abspath(RunFolder(run_dir).log):
            logger.removeHandler(handler)
            handler.close()


def fit_trial(trial: Any, context: Any, max_length: TrainUnit | None = None,
              validation_period: TrainUnit | None = None, checkpoint_period: TrainUnit | None = None,
              test_mode: bool = False, step_zero_validation: bool = False,
              reporting_period: TrainUnit | None = Batch(100), checkpoint_policy: str = "best") -> None:
    """Train `trial` to `max_length` (the cluster info's, when it gives one); returns when done, exits the
    process with 75 when stopped (after a checkpoint) or 1 when the run failed."""
    from playground.launch.spawn import launch
    try:
        session, prepared = _prepared_session(trial, context, max_length, validation_period, checkpoint_period,
                                              reporting_period, test_mode)
        session.initial_validation = step_zero_validation or bool(_exp(context).get("perform_initial_validation"))
        if checkpoint_policy not in ("best", "all", "none"):
            raise TrialUsageError(f"fit(): checkpoint_policy {checkpoint_policy!r}: use 'best', 'all' or 'none'")
        session.checkpoint_policy = checkpoint_policy
    except UserError as err:   # before training: one line, exit 2, as for any run's unusable input
        print(f"playground: error: {err}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    code = launch(prepared, DeterminedFit(session))
    if code == EXIT_STOPPED:
        sys.exit(EXIT_STOPPED)
    if code != EXIT_DONE:
        sys.exit(code)


def _prepared_session(trial: Any, context: Any, max_length: TrainUnit | None, validation_period: TrainUnit | None,
                      checkpoint_period: TrainUnit | None, reporting_period: TrainUnit | None,
                      test_mode: bool) -> tuple[TrialSession, Any]:
    cluster = read_cluster_file() or {}
    try:
        max_length = TrainUnit.from_config(cluster.get("max_length"), _global_batch(context)) or max_length
        full_dataset = evaluates_full_dataset(trial)
    except (TypeError, ValueError) as err:
        raise TrialUsageError(str(err)) from None
    test_mode = test_mode or bool(cluster.get("test_mode"))
    if max_length is None and not test_mode:
        raise TrialUsageError("fit(): max_length is required (pytorch.Epoch(n) or pytorch.Batch(n)) when the "
                              "experiment configuration gives no searcher length")
    for what, unit in (("max_length", max_length), ("validation_period", validation_period),
                       ("checkpoint_period", checkpoint_period)):
        if unit is not None and not isinstance(unit, TrainUnit):
            raise TrialUsageError(f"fit(): {what} must be pytorch.Batch(...) or pytorch.Epoch(...), got {unit!r}")
    if reporting_period is not None and not isinstance(reporting_period, Batch):   # "always in batches"
        raise TrialUsageError(f"fit(): reporting_period must be pytorch.Batch(...), got {reporting_period!r}")
    try:
        if max_length is not None:
            max_length.length()
    except ValueError as err:
        raise TrialUsageError(f"fit(): {err}") from None
    train, train_shuffle = _torch_loader(trial.build_training_data_loader(), "build_training_data_loader")
    validation, _ = _torch_loader(trial.build_validation_data_loader(), "build_validation_data_loader")
    session = TrialSession(trial=trial, context=context, train_data=train,
                           drop_last=bool(_loader_setting(train, "drop_last")), validation_data=validation,
                           validation_loader=validation, full_dataset=full_dataset,
                           evaluate_takes_index=takes_batch_index(trial), max_batches=None,
                           under_runner=bool(cluster), max_length=max_length, test_mode=test_mode,
                           checkpoint_period=None if checkpoint_period is None or checkpoint_period.is_never()
                           else checkpoint_period,
                           reporting_period=None if reporting_period is None or reporting_period.is_never()
                           else reporting_period)
    searcher = _exp(context).get("searcher") or {}
    session.searcher_metric = searcher.get("metric")
    session.smaller_is_better = bool(searcher.get("smaller_is_better", True))
    session.rung_batches = rung_batches(cluster, _global_batch(context))
    session.rung_epochs = rung_epochs(cluster)
    run_dir = _run_dir(cluster, context)
    context.run_dir = run_dir
    layers, session.max_batches = _opts_layers(session, context, cluster, max_length, validation_period,
                                               test_mode, train_shuffle)
    return session, _prepare(layers, run_dir)


def rung_batches(cluster: dict, global_batch: int) -> frozenset[int]:
    """The batches after which a sweep's adaptive ASHA ranks this trial (cluster info `rungs`, in max_length's
    unit): validated there, as Determined 0.2x's searcher operations ended at them, so a trial is ranked at its
    rungs whatever its validation period. A rung in records is the first batch reaching it; rungs in epochs are
    epoch ends (rung_epochs); without a searcher max_length (0.38's time_metric) the period alone rules."""
    length, rungs = cluster.get("max_length"), cluster.get("rungs") or []
    unit = next(iter(length)) if isinstance(length, dict) and len(length) == 1 else None
    if unit == "batches":
        return frozenset(rungs)
    if unit == "records":
        return frozenset(math.ceil(rung / global_batch) for rung in rungs)
    return frozenset()


def rung_epochs(cluster: dict) -> frozenset[int]:
    """The epochs at whose end a sweep's adaptive ASHA ranks this trial (rungs of a max_length in epochs)."""
    length = cluster.get("max_length")
    if isinstance(length, dict) and list(length) == ["epochs"]:
        return frozenset(cluster.get("rungs") or [])
    return frozenset()


def _global_batch(context: Any) -> int:
    try:
        return context.get_global_batch_size() or 1
    except ValueError:       # hyperparameters.global_batch_size is not set
        return 1


def _hparams(context: Any) -> dict | None:
    try:
        return context.get_hparams()
    except ValueError:       # init() was given no hparams (local mode)
        return None


def _torch_loader(data: Any, method: str) -> tuple[Any, bool]:
    """(a torch DataLoader or dataset playground's streams read, whether training data is shuffled)."""
    if isinstance(data, DataLoader):
        return data.torch_loader(), data.shuffle
    if isinstance(data, TorchLoader):
        return data, isinstance(data.sampler, RandomSampler)
    if data is None and method == "build_validation_data_loader":
        return None, False
    raise TrialUsageError(f"{method}() must return a determined.pytorch.DataLoader or a torch DataLoader, got "
                          f"{type(data).__name__}")


def _run_dir(cluster: dict, context: Any) -> str:
    if cluster.get("run_dir"):
        return cluster["run_dir"]
    from playground.launch.prepare import default_run_dir
    run_id = os.environ.get("TORCHELASTIC_RUN_ID")
    run_dir = os.path.abspath(os.path.join("runs", f"determined-{run_id}") if run_id and run_id != "none"
                              else default_run_dir("determined"))
    if context.distributed.rank == 0 and not os.path.exists(RunFolder(run_dir).opts):
        from playground.outputs.atomic_files import write_json
        os.makedirs(run_dir, exist_ok=True)
        write_json(RunFolder(run_dir).opts, {"opts": {"hyperparameters": _hparams(context), "local": True},
                                             "determined": True})
    return run_dir


def _opts_layers(session: TrialSession, context: Any, cluster: dict, max_length: TrainUnit | None,
                 validation_period: TrainUnit | None, test_mode: bool, shuffle: bool) -> tuple[list[tuple[str, dict]], int | None]:
    dist = context.distributed
    batch = _batch_size(session.train_data)
    records = cluster.get("records_per_epoch") or _exp(context).get("records_per_epoch") or 0
    epoch_batches = _epoch_batches(session, records, batch, dist.size)
    if test_mode:
        epochs, max_batches = 1, 1
    elif isinstance(max_length, Epoch):
        epochs, max_batches = max_length.length(), None
    else:
        max_batches = max_length.length()
        epochs = math.ceil(max_batches / epoch_batches)
    if not test_mode and dist.rank == 0:
        _warn_short_of_the_searcher(cluster, context, max_batches or epochs * epoch_batches, epoch_batches,
                                    batch * dist.size)
    val_batch = _batch_size(session.validation_data) if session.validation_data is not None else batch
    if validation_period is not None and not validation_period.is_never() and session.validation_data is not None:
        session.validation_period = validation_period      # loop_hook.py and loop.py validate at it
    # Determined's checkpoints are the determined hook's (loop_hook.py): the policy saves nothing by itself
    output = {"ckpt_save_best": False, "ckpt_save_interval": 0, "progress": "log",
              "ckpt_keep_limit": _keep_limit(session, _exp(context).get("checkpoint_storage") or {})}
    cuda = context.device.type == "cuda"
    opts = {
        "input": {"input_name_py": SLOTS, "shuffle_train": shuffle,
                  "decode_threads": int(getattr(session.train_data, "num_workers", 0))},
        "model": {"forward_pass_py": SLOTS, "optimizer_py": SLOTS, "additional_override_py": LOOP},
        "model_param": {"seed": context.get_trial_seed(), "base_learning_rate": 0.1},
        "epoch_iter": {"num_train_sample_per_epoch": records, "num_test_sample": 0, "num_epochs": epochs,
                       "num_train_iteration_per_test": epoch_batches + 1, "batch_per_device": batch,
                       "num_test_iter": 0, "test_batch_per_device": val_batch},
        "distributed": {"num_shards": dist.cross_size, "num_gpus": dist.local_size if cuda else 0,
                        "first_gpu_id": 0, "num_cpus": dist.local_size},
        "output": output,
    }
    return [("the Determined trial", opts)], max_batches


def _epoch_batches(session: TrialSession, records: int, batch: int, ranks: int) -> int:
    """Steps in an epoch: the training loader's length as Determined's harness counts it (data_loader.py); for
    0.2x's records_per_epoch (or an iterable dataset), the whole global batches it holds."""
    dataset = session.train_data.dataset
    if records or isinstance(dataset, IterableDataset):
        return max(1, (records or len(dataset)) // (batch * ranks))
    steps = epoch_length(len(dataset), batch, ranks, session.drop_last)
    if steps == 0:
        raise TrialUsageError(f"the training data loader makes no batch: {len(dataset)} records in batches of "
                              f"{batch} with drop_last; lower the batch size or keep the short batch")
    return steps


def _keep_limit(session: TrialSession, storage: dict) -> int:
    """checkpoint_storage's retention with Determined's defaults (save_trial_latest 1, save_trial_best 1,
    save_experiment_best 0): the newest `save_trial_latest` checkpoints (at least one: a resume or a continue
    needs it) and the best one (the `best` pointer). Keeping more best ones than one is left to the end of the
    trial (retention.py): nothing is deleted by count before it."""
    counts = {}
    for key, default in (("save_trial_latest", 1), ("save_trial_best", 1), ("save_experiment_best", 0)):
        value = storage.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TrialUsageError(f"checkpoint_storage.{key}: a number of checkpoints (0 or more), got {value!r}")
        counts[key] = value
    session.keep_best = counts["save_trial_best"] > 0 or counts["save_experiment_best"] > 0
    if counts["save_trial_best"] > 1 or counts["save_experiment_best"] > 0:
        return 1000000
    return max(1, counts["save_trial_latest"])


def _warn_short_of_the_searcher(cluster: dict, context: Any, batches: int, epoch_batches: int,
                                global_batch: int) -> None:
    """0.38's time_metric: the trial trains for its own fit(max_length); when that ends before the searcher's
    max_time, adaptive ASHA's later rungs are never reached and the trial completes unranked there, as on a
    Determined cluster. Said once, on rank 0, because it is easy to cause by pointing a script at smaller data."""
    searcher = _exp(context).get("searcher") or {}
    unit, max_time = searcher.get("time_metric"), searcher.get("max_time")
    if cluster.get("max_length") or unit not in ("batches", "records", "epochs") or not isinstance(max_time, int):
        return
    trained = {"batches": batches, "records": batches * global_batch, "epochs": batches / epoch_batches}[unit]
    if trained >= max_time:
        return
    missed = [r for r in cluster.get("rungs") or [] if r > trained]
    rungs = f"; adaptive ASHA's rungs at {', '.join(map(str, missed))} {unit} are never reached" if missed else ""
    print(f"playground: warning: this trial trains {trained:g} {unit} (its fit(max_length), {epoch_batches} "
          f"batches per epoch) but the searcher's max_time is {max_time} {unit}{rungs}: it ends there as "
          "complete", file=sys.stderr, flush=True)


def _exp(context: Any) -> dict:
    try:
        return context.get_experiment_config() or {}
    except ValueError:       # init() was given no exp_conf (local mode)
        return {}


def _loader_setting(loader: Any, name: str) -> Any:
    """The loader's `name` (batch_size, drop_last) when set, else its batch sampler's, through Determined's sampler
    wrappers (which keep the wrapped one as `batch_sampler`); None when none sets it."""
    value, sampler = getattr(loader, name, None), getattr(loader, "batch_sampler", None)
    while not value and sampler is not None:
        value = getattr(sampler, name, None)
        sampler = getattr(sampler, "batch_sampler", None)
    return value or None


def _batch_size(loader: Any) -> int:
    """The loader's batch size: its batch_size, else its batch sampler's."""
    size = _loader_setting(loader, "batch_size")
    if not size:
        raise TrialUsageError("a data loader of the trial has no batch size playground can read: give the "
                              "DataLoader batch_size=, or a batch_sampler that has a batch_size (a "
                              "torch.utils.data.BatchSampler, or one of determined.pytorch.samplers around it)")
    return int(size)


def _prepare(layers: list[tuple[str, dict]], run_dir: str) -> Any:
    """The prepared run, without writing opts.json (the run folder's is the Determined experiment's)."""
    from playground.launch.plan import make_plan
    from playground.launch.prepare import PreparedRun
    from playground.options.loader import resolve_opts
    resolved = resolve_opts(layers)
    os.makedirs(run_dir, exist_ok=True)
    return PreparedRun(resolved=resolved, run_dir=run_dir, opts_file=RunFolder(run_dir).opts,
                       plan=make_plan(resolved, run_dir))

