"""0.38's Trainer API: `det.pytorch.init()` (a context manager giving a PyTorchTrialContext) and
`det.pytorch.Trainer(trial, context).fit(...)`, trained by playground (fit.py).

In a process the runner started (cluster info in PLAYGROUND_DETERMINED: cluster_file.py) the hyperparameters,
experiment configuration, trial id and searcher length come from the cluster info, as on a Determined cluster;
without it (a bare `python train.py`) init's own `hparams` / `exp_conf` are used, as in Determined's local mode.
"""
from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any, Iterator

from playground.determined.cluster_file import read_cluster_file, trial_seed
from playground.processes.exit_codes import EXIT_USAGE, UserError
from playground.determined.trials.trial import Batch, TrainUnit
from playground.determined.distributed_context import DistributedContext
from playground.determined.trials.context import PyTorchTrialContext
from playground.determined.trials.experimental import not_provided

log = logging.getLogger("playground")


@contextlib.contextmanager
def init(*, hparams: dict | None = None, exp_conf: dict | None = None,
         distributed: DistributedContext | None = None, aggregation_frequency: int = 1,
         enable_tensorboard_logging: bool = True) -> Iterator[PyTorchTrialContext]:
    """The trial's context, seeded (the trial builds its models inside this block)."""
    from playground.trainer.seeding import seed_everything
    cluster = read_cluster_file()
    if cluster is not None:
        hparams, exp_conf = cluster.get("hparams") or {}, cluster.get("experiment_config") or {}
        trial_id, experiment_id = cluster.get("trial_id") or 1, cluster.get("experiment_id") or 1
    else:
        trial_id = experiment_id = 1
    seed = trial_seed(exp_conf, trial_id)     # ClusterInfo.trial.trial_seed's, as Determined's harness passes it
    context = PyTorchTrialContext(hparams, exp_conf, distributed, trial_id=trial_id, experiment_id=experiment_id,
                                  run_dir=cluster.get("run_dir") if cluster else None, seed=seed)
    context.set_enable_tensorboard_logging(enable_tensorboard_logging)
    seed_everything(seed)
    try:
        yield context
    except UserError as err:    # the trial's construction asked for what is not provided: one line, exit 2
        print(f"playground: error: {err}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    finally:
        context.close_tensorboard_writer()


class Trainer:
    """`det.pytorch.Trainer(trial, context)`."""

    def __init__(self, trial: Any, context: PyTorchTrialContext) -> None:
        self._trial, self._context = trial, context

    def fit(self, checkpoint_period: TrainUnit | None = None, validation_period: TrainUnit | None = None,
            max_length: TrainUnit | None = None, reporting_period: TrainUnit = Batch(100),
            checkpoint_policy: str = "best", latest_checkpoint: str | None = None,
            step_zero_validation: bool = False, test_mode: bool = False, profiling_enabled: bool = False) -> None:
        """Train to `max_length` (the experiment's searcher length, when the cluster info gives one). Training
        metrics are recorded after every `reporting_period` batches and with every validation; the run resumes
        from its run folder's newest checkpoint (`latest_checkpoint` is accepted, not needed);
        `step_zero_validation` (or the configuration's perform_initial_validation) validates before the first
        batch."""
        from playground.determined.trials.fit import fit_trial
        fit_trial(self._trial, self._context, max_length=max_length, validation_period=validation_period,
                  checkpoint_period=checkpoint_period, test_mode=test_mode,
                  step_zero_validation=step_zero_validation, reporting_period=reporting_period,
                  checkpoint_policy=checkpoint_policy)

    def configure_profiler(self, sync_timings: bool = True, enabled: bool = False, begin_on_batch: int = 0,
                           end_after_batch: int | None = None) -> None:
        """Deprecated in Determined 0.38, where it only logs that fit(profiling_enabled=True) replaced it; here
        too (no profiler service either way)."""
        log.warning("trainer.configure_profiler() does nothing: Determined replaced it with fit(..., "
                    "profiling_enabled=True), which playground accepts without effect (no profiler service)")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise not_provided("Trainer", name)
