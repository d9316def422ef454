"""Before any rank starts: the input component's data is in a form the batch stream can read.

Calls the component's `get_input_dataset(opts)` once in the launching process and adapts each split as the
ranks will (forms.py). Only for components whose `gen_input_builder_fun` hands its dataset on unchanged
(the common case): otherwise the builder decides the form, and only the ranks can see it. An exception inside
get_input_dataset is left for the run to report in its own words.
"""
from __future__ import annotations

import copy
from typing import Any

from playground.options.loader import ResolvedOpts
from playground.options.layers import OptsError


def check_input_forms(resolved: ResolvedOpts) -> None:
    """Raise OptsError naming the input component when a split is in no form the stream can batch."""
    from playground.data.forms import DataFormError, IterableSource, as_stream_source

    component = resolved.component("input.input_name_py")
    module = getattr(component, "module", None)
    if module is None or not _passes_dataset_on(module):
        return
    opts = copy.deepcopy(resolved.opts)
    try:
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
            problems.append(f"input component {component.name}: get_input_dataset(opts) gives data it cannot batch: "
                            f"{err}")
            continue
        needs = "num_train_sample_per_epoch" if what == "training" else "num_test_sample"
        if isinstance(source, IterableSource) and not _has_len(source.dataset) and not epoch[needs]:
            problems.append(f"input component {component.name}: the {what} data is an iterable dataset without a "
                            f"length; set opts.epoch_iter.{needs} to say how many samples to read")
    if problems:
        raise OptsError(problems)


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
