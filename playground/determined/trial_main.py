"""The harness of a trial-class entrypoint (`entrypoint: model_def:MNistTrial`), as Determined's was:
`python -m playground.determined.trial_main module:Class`, run by the runner on every rank with the context
directory as cwd. It imports the class from the context directory, builds it with a PyTorchTrialContext (the
cluster info's hparams; `Trial(context)`, or `Trial(context, hparams)` for a trial that takes them) and trains
it for the searcher's max_length, validating every `min_validation_period` and checkpointing every
`min_checkpoint_period` of the experiment configuration.
"""
from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any

from playground.processes.exit_codes import EXIT_DONE, EXIT_USAGE, UserError

USAGE = "usage: python -m playground.determined.trial_main module:TrialClass"


def load_trial_class(spec: str) -> type:
    """The class `module:Class` names, imported from the current directory (the context directory)."""
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"entrypoint {spec!r}: expected module:TrialClass (e.g. model_def:MNistTrial)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise ValueError(f"entrypoint {spec!r}: importing {module_name}: {err}") from None
        raise ValueError(f"entrypoint {spec!r}: no module {module_name} in {os.getcwd()}") from None
    except ImportError as err:      # a name its imports ask for that is not there (docs list playground's)
        raise ValueError(f"entrypoint {spec!r}: importing {module_name}: {err} (what playground's determined "
                         "provides: docs/determined-pytorch.md)") from None
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise ValueError(f"entrypoint {spec!r}: {module_name} defines no class {class_name}")
    return cls


def build_trial(cls: type, context: Any) -> Any:
    """`cls(context)`, or `cls(context, hparams)` when its __init__ takes a second argument."""
    params = [p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    return cls(context, context.get_hparams()) if len(params) >= 2 else cls(context)


def main(argv: list[str]) -> int:
    from playground.determined.cluster_file import CLUSTER_ENV, read_cluster_file
    from playground.determined.trials.trainer_api import Trainer, init
    from playground.determined.trials.trial import TrainUnit
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return EXIT_USAGE
    cluster = read_cluster_file()
    if cluster is None:
        print(f"playground: error: {CLUSTER_ENV} is not set: the trial harness runs in the processes of a "
              "Determined experiment (playground run EXPERIMENT.yaml)", file=sys.stderr)
        return EXIT_USAGE
    try:
        cls = load_trial_class(argv[0])
    except (ValueError, UserError) as err:
        print(f"playground: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    config = cluster.get("experiment_config") or {}
    batch = (cluster.get("hparams") or {}).get("global_batch_size") or 1
    with init() as context:
        trial = build_trial(cls, context)
        Trainer(trial, context).fit(
            max_length=TrainUnit.from_config(cluster.get("max_length"), batch),
            validation_period=TrainUnit.from_config(config.get("min_validation_period"), batch),
            checkpoint_period=TrainUnit.from_config(config.get("min_checkpoint_period"), batch),
            reporting_period=TrainUnit.from_config({"batches": config.get("scheduling_unit", 100)}, batch),
            test_mode=bool(cluster.get("test_mode")), checkpoint_policy=config.get("checkpoint_policy", "best"))
    return EXIT_DONE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
