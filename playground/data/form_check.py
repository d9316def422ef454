"""Before any rank starts: the input component's data is in a form the batch stream can read.

Calls the component's `get_input_dataset(opts)` once in the launching process (for a trial class,
`build_training_data_loader()` and `build_validation_data_loader()` of a trial made with rank 0's context on the
CPU) and adapts each split as the ranks will (forms.py). Only for components whose `gen_input_builder_fun` hands
its dataset on unchanged (the common case): otherwise the builder decides the form, and only the ranks can see
it. An exception inside get_input_dataset or the trial is left for the run to report in its own words.
"""
from __future__ import annotations

import copy
from typing import Any, Callable

from playground.options.loader import ResolvedOpts
from playground.options.layers import OptsError


def check_input_forms(resolved: ResolvedOpts, make_trial: Callable[[type, dict], Any] | None = None) -> None:
    """Raise OptsError naming the input component (or trial class) when a split is in no form the stream can batch.
    `make_trial(trial_class, opts)` builds a trial for the check (playground/trainer/trial.py: trial_for_checks);
    without it a trial's data is left for the ranks."""
    from playground.data.forms import DataFormError, IterableSource, as_stream_source

    opts = copy.deepcopy(resolved.opts)
    trial = resolved.component("model.trial_py")
    if trial is not None and make_trial is None:
        return
    component = trial or resolved.component("input.input_name_py")
    module = getattr(component, "module", None)
    if module is None or (trial is None and not _passes_dataset_on(module)):
        return
    try:
        if trial is not None:
            instance = make_trial(trial.trial_class(), opts)
            datasets = instance.build_training_data_loader(), instance.build_validation_data_loader()
        else:
            datasets = module.get_input_dataset(opts)
    except Exception:  # noqa: BLE001 - reported by the run itself, as before this check existed
        return
    splits = _splits(datasets)
    if splits is None:
        return
    problems, epoch = [], opts["epoch_iter"]
    for what, data in splits.items():
        try:
            source = as_stream_source(data, what)
        except DataFormError as err:
            problems.append(f"{_giver(component, trial is not None, what)} gives data it cannot batch: {err}")
            continue
        needs = "num_train_sample_per_epoch" if what == "training" else "num_test_sample"
        if isinstance(source, IterableSource) and not _has_len(source.dataset) and not epoch[needs]:
            problems.append(f"{_giver(component, trial is not None, what)}: the {what} data is an iterable dataset "
                            f"without a length; set opts.epoch_iter.{needs} to say how many samples to read")
    if problems:
        raise OptsError(problems)


def _giver(component: Any, is_trial: bool, what: str) -> str:
    if not is_trial:
        return f"input component {component.name}: get_input_dataset(opts)"
    method = "build_training_data_loader" if what == "training" else "build_validation_data_loader"
    return f"trial {component.name}: {method}()"


def _passes_dataset_on(module: Any) -> bool:
    builder = getattr(module, "gen_input_builder_fun", None)
    marker = object()
    try:
        return builder is not None and builder(None, None, marker, True) is marker
    except Exception:  # noqa: BLE001 - a builder that needs the trainer decides the form itself
        return False


def _splits(datasets: Any) -> dict[str, Any] | None:
    if isinstance(datasets, dict):
        return {"training": datasets.get("train"), **({"test": datasets["test"]} if datasets.get("test") is not None
                                                        else {})}
    if isinstance(datasets, (list, tuple)) and len(datasets) == 2:
        return {"training": datasets[0], **({"test": datasets[1]} if datasets[1] is not None else {})}
    return None


def _has_len(dataset: Any) -> bool:
    try:
        len(dataset)
        return True
    except TypeError:
        return False
